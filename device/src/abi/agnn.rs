//! Parameters of AGNN's normalisation kernels (`kernels::agnn`).

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// `agnn_normalize`: `hn = h / max(‖h‖, eps)` per node and head, the norm, its inverse
/// `1 / max(‖h‖, eps)`, and the queries `q = β·hn` of the attention (which then runs with score
/// scale 1). `hn` may be empty, and is then not written: the fused passes make their keys from
/// `h` and `inv`; GT's forward over tiles and the baselines read a stored `hn`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AgnnNormalizeParams {
    /// `[N, H, F]` features.
    pub h: GSlice<f32>,
    /// `[1]` the temperature β, read from memory (never a launch parameter: a captured CUDA
    /// graph reads the β of each replay).
    pub beta: GSlice<f32>,
    /// `[N, H, F]` normalised features (the attention's keys), or empty.
    pub hn: GSliceMut<f32>,
    /// `[N, H, F]` `β·hn`, the attention's queries.
    pub q: GSliceMut<f32>,
    /// `[N, H]` the norms `‖h‖` (before the clamp).
    pub norm: GSliceMut<f32>,
    /// `[N, H]` the inverse norms `1 / max(‖h‖, eps)` (the factor of `hn`).
    pub inv: GSliceMut<f32>,
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
const _: () = assert!(core::mem::size_of::<AgnnNormalizeParams>() == 112);

/// `agnn_normalize_backward`: `dh = dv + ∂hn/∂h ᵀ (β·dq + dk)` per node and head, from the
/// attention's query and key gradients (with `q = β·hn`, `k = hn`, score scale 1), and each
/// (node, head)'s share of dβ.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AgnnNormalizeBackwardParams {
    /// `[N, H, F]` the features (the kernel normalises them as the forward did).
    pub h: GSlice<f32>,
    /// `[N, H]` norms from the forward.
    pub norm: GSlice<f32>,
    /// `[1]` the temperature β of the forward (the factor of `dq`), read from memory.
    pub beta: GSlice<f32>,
    /// `[N, H, F]` gradient of the queries `q = β·hn`: `Σ_j ds_ij·hn_j` (reaching `hn` times β).
    pub dq: GSlice<f32>,
    /// `[N, H, F]` gradient of the keys `hn`: `Σ_i ds_ij·β·hn_i`.
    pub dk: GSlice<f32>,
    /// `[N, H, F]` gradient reaching `h` as values.
    pub dv: GSlice<f32>,
    /// `[N, H, F]` the gradient of `h`.
    pub dh: GSliceMut<f32>,
    /// `[N, H]` each node and head's share of dβ, `hn_i·dq_i = Σ_j ds_ij·(hn_i·hn_j)` (summed
    /// on the device by `kernels::util::SUM_PARTIALS` and `SUM_FINISH`).
    pub d_beta_shares: GSliceMut<f32>,
    /// Nodes `N`.
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The clamp of the norm.
    pub eps: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for AgnnNormalizeBackwardParams {}
const _: () = assert!(core::mem::size_of::<AgnnNormalizeBackwardParams>() == 144);

/// What AGNN's fused column pass needs to carry a source node's key gradient through the
/// normalisation itself (`ScoreGradient::key_into_value`): it then writes `dh` as the value
/// gradient, as `agnn_normalize_backward` would from `dq`, `dk` and `dv`, and dβ's shares, so
/// neither `dk` nor `dv` is stored. Part of GT's column-pass parameters, whose table AGNN's
/// shares; GT's kernels ignore it ([`NormalizeGrads::NONE`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NormalizeGrads {
    /// `[N, H]` norms from the forward.
    pub norm: GSlice<f32>,
    /// `[1]` the temperature β of the forward, read from memory.
    pub beta: GSlice<f32>,
    /// `[N, H, F]` the row pass's query gradient `Σ_j ds_ij·hn_j` (written before the column
    /// pass runs).
    pub dq: GSlice<f32>,
    /// `[N, H]` each node and head's share of dβ, `hn_i·dq_i` (as in
    /// [`AgnnNormalizeBackwardParams`]).
    pub d_beta_shares: GSliceMut<f32>,
    /// The clamp of the norm.
    pub eps: f32,
}

impl NormalizeGrads {
    /// For the models that do not normalise (GT).
    pub const NONE: Self = Self {
        norm: GSlice::empty(),
        beta: GSlice::empty(),
        dq: GSlice::empty(),
        d_beta_shares: GSliceMut::empty(),
        eps: 0.0,
    };
}
