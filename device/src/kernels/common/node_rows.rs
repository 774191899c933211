//! The lane layout of the per-(node, head) kernels (GAT's node scores, AGNN's normalisation):
//! each (node, head) pair is a **row** of `F` contiguous floats of an `[N, H, F]` array, and a
//! warp takes several rows at once, a group of lanes per row sized to the row's vectors, so that
//! a row of few features does not leave most of the warp idle and every lane has several loads in
//! flight.

use crate::simt::{self, F4, GSlice, WARP_SIZE};

/// Rows each lane group takes one after the other, their loads in flight together (a row of 64
/// features is one 16-byte load per lane, too little to cover the memory's latency).
pub const ROWS_IN_FLIGHT: usize = 4;

/// Lanes per row at most in GAT's node kernels (its node scores and its backward row pass from
/// the positive part): at 128 features 8 lanes and four rows side by side take fewer shuffles per
/// row than 32 lanes and one, and were faster on every GAT case measured (an H100, thirty-second
/// session in docs/results.md: er-1M-d16 4×64 forward −1.7 %, mol-16384 1×128 −8.5 %).
pub const GAT_LANES: usize = 8;

/// Lanes per row at most in AGNN's normalisation: a whole warp. At 8 its er-1M-d16 forwards were
/// 3–4 % slower (the same run).
pub const AGNN_LANES: usize = WARP_SIZE as usize;

/// How a warp spreads rows of `F` features over its lanes: loads of `width` features (4 when
/// `F % 4 == 0`, else 1), `lanes` lanes per row (the vectors `F / width` rounded up to a power of
/// two, at most the kernel's cap: [`GAT_LANES`], [`AGNN_LANES`]), so `32 / lanes` rows side by
/// side, each group [`ROWS_IN_FLIGHT`] rows. Lane `ℓ` of a row's group takes the row's vectors
/// `ℓ, ℓ + lanes, …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLanes {
    /// Features per load: 1 or 4.
    pub width: usize,
    /// Lanes per row: a power of two, 1 to 32.
    pub lanes: usize,
}

impl NodeLanes {
    /// The layout for `feat` features per head, at most `max_lanes` (a power of two, 1 to 32)
    /// lanes per row.
    pub const fn new(feat: usize, max_lanes: usize) -> Self {
        let width = if feat.is_multiple_of(4) { 4 } else { 1 };
        let vectors = feat / width;
        let mut lanes = 1;
        while lanes < vectors && lanes < max_lanes {
            lanes *= 2;
        }
        Self { width, lanes }
    }

    /// Rows one warp takes.
    pub const fn rows_per_warp(self) -> usize {
        (WARP_SIZE as usize / self.lanes) * ROWS_IN_FLIGHT
    }
}

/// This lane's rows of `total` under `layout` (whose width the kernel's `WIDE` matches): the
/// warp's first row is `w · rows_per_warp` for the grid's warp `w`, and slot `u` of the lane's
/// group is row `first + u · (32 / lanes) + group`. `None` for a warp past the last row (the
/// whole warp returns, so the groups' butterflies see every lane).
#[derive(Clone, Copy, Debug)]
pub struct LaneRows {
    /// Each slot's row (flat (node, head) index).
    pub rows: [usize; ROWS_IN_FLIGHT],
    /// Whether each slot's row exists.
    pub valid: [bool; ROWS_IN_FLIGHT],
    /// This lane's index in its row's group.
    pub member: usize,
}

impl LaneRows {
    /// This lane's rows, or `None` when the warp has none.
    #[inline(always)]
    pub fn of_warp(layout: NodeLanes, total: usize) -> Option<Self> {
        let warps = simt::block_dim().x / WARP_SIZE;
        let w = simt::block_idx().x as u64 * warps as u64 + simt::warp_id() as u64;
        let first = w * layout.rows_per_warp() as u64;
        if first >= total as u64 {
            return None;
        }
        let lane = simt::lane_id() as usize;
        let (group, member) = (lane / layout.lanes, lane % layout.lanes);
        let side = WARP_SIZE as usize / layout.lanes;
        let rows = core::array::from_fn(|u| first as usize + u * side + group);
        Some(Self { rows, valid: core::array::from_fn(|u| rows[u] < total), member })
    }
}

/// The vector of features `[at, at + width)` of `x`: 16 bytes when `WIDE` (`at` a multiple of 4),
/// else one float in the first component.
#[inline(always)]
pub fn load_vector<const WIDE: bool>(x: GSlice<f32>, at: usize) -> F4 {
    if WIDE { x.cast::<F4>().load(at / 4) } else { F4([x.load(at), 0.0, 0.0, 0.0]) }
}

/// The dot product of two vectors of [`load_vector`]: `(x₀y₀ + x₁y₁) + (x₂y₂ + x₃y₃)` when
/// `WIDE`, else `x₀y₀`.
#[inline(always)]
pub fn dot_vector<const WIDE: bool>(x: F4, y: F4) -> f32 {
    let (x, y) = (x.0, y.0);
    if WIDE { (x[0] * y[0] + x[1] * y[1]) + (x[2] * y[2] + x[3] * y[3]) } else { x[0] * y[0] }
}
