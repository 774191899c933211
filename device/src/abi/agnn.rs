//! Parameters of AGNN's normalisation kernels (`kernels::agnn`).

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// `agnn_normalize`: `hn = h / max(‖h‖, eps)` per node and head, and the norm.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AgnnNormalizeParams {
    /// `[N, H, F]` features.
    pub h: GSlice<f32>,
    /// `[N, H, F]` normalised features.
    pub hn: GSliceMut<f32>,
    /// `[N, H]` the norms `‖h‖` (before the clamp).
    pub norm: GSliceMut<f32>,
    /// Nodes `N`.
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The clamp of the norm (1e-12, as `torch.nn.functional.normalize`).
    pub eps: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for AgnnNormalizeParams {}
const _: () = assert!(core::mem::size_of::<AgnnNormalizeParams>() == 64);

/// `agnn_normalize_backward`: `dh = dv + ∂hn/∂h ᵀ β(dq + dk)` per node and head, from the
/// attention's unscaled query and key gradients, and each (node, head)'s share of dβ.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AgnnNormalizeBackwardParams {
    /// `[N, H, F]` normalised features from the forward.
    pub hn: GSlice<f32>,
    /// `[N, H]` norms from the forward.
    pub norm: GSlice<f32>,
    /// `[N, H, F]` gradient reaching `hn` as queries, before the factor β: `Σ_j ds_ij·hn_j`.
    pub dq: GSlice<f32>,
    /// `[N, H, F]` gradient reaching `hn` as keys, before the factor β: `Σ_i ds_ij·hn_i`.
    pub dk: GSlice<f32>,
    /// `[N, H, F]` gradient reaching `h` as values.
    pub dv: GSlice<f32>,
    /// `[N, H, F]` the gradient of `h`.
    pub dh: GSliceMut<f32>,
    /// `[N, H]` each node and head's share of dβ, `hn_i·dq_i = Σ_j ds_ij·(hn_i·hn_j)`.
    pub d_beta: GSliceMut<f32>,
    /// Nodes `N`.
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The clamp of the norm.
    pub eps: f32,
    /// The temperature β (the factor of `dq` and `dk`).
    pub beta: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for AgnnNormalizeBackwardParams {}
const _: () = assert!(core::mem::size_of::<AgnnNormalizeBackwardParams>() == 136);
