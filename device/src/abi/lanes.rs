//! How a warp's lanes cover the features of all heads of one edge ("level 2" of the schedule):
//! the [`LaneMap`] the host planner builds and every fused kernel reads.
//!
//! A node's features are `H` heads of `F` floats, loaded as `Fv = F / WIDTH` vectors per head.
//! Each head gets `G` **head lanes** (`G = pow2ceil(Fv)` up to 32); when a head needs more than
//! 32 vectors it spans `SPH = pow2ceil(Fv) / 32` register slots of all 32 lanes. A lane holds
//! `SLOTS` vectors; in slot `s` it covers
//!
//! ```text
//! head   = head0 + (s / SPH) · (EL / G) + (lane mod EL) / G
//! vector = (s mod SPH) · G + lane mod G          (inactive when head ≥ H or vector ≥ Fv)
//! ```
//!
//! where the **edge lanes** `EL` are the lanes that take one edge: 32, or fewer when all heads of
//! an edge need fewer lanes than a warp. Then the warp splits into `32 / EL` **teams** that take
//! different edges of the row, and their partial results are merged at the end. One pass covers
//! `(SLOTS / SPH) · (EL / G)` heads; more heads take more passes over the row.

/// Lanes per warp (the mapping's arithmetic assumes 32).
const WARP: u32 = 32;

/// The lane mapping of one launch. Built only by [`LaneMap::new`], which checks the invariants
/// every kernel relies on.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneMap {
    head_lanes: u32,
    slots_per_head: u32,
    edge_lanes: u32,
    heads_per_pass: u32,
}

/// Where one lane's slot points: a head and a vector index within it.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// Head, counted from head 0 of the node.
    pub head: u32,
    /// Vector index within the head's `Fv` vectors.
    pub vector: u32,
    /// Whether the slot covers a real feature (head < H and vector < Fv).
    pub active: bool,
}

impl LaneMap {
    /// The mapping with `head_lanes` lanes per head (a power of two, 1..=32), `slots_per_head`
    /// slots per head (a power of two, 1 unless `head_lanes` is 32), `edge_lanes` lanes per edge
    /// (a power of two multiple of `head_lanes`, at most 32) and `heads_per_pass` heads per pass
    /// (at least 1); `None` when any of these fails.
    pub const fn new(head_lanes: u32, slots_per_head: u32, edge_lanes: u32, heads_per_pass: u32) -> Option<Self> {
        let ok = head_lanes.is_power_of_two()
            && head_lanes <= WARP
            && slots_per_head.is_power_of_two()
            && (slots_per_head == 1 || head_lanes == WARP)
            && edge_lanes.is_power_of_two()
            && edge_lanes <= WARP
            && edge_lanes.is_multiple_of(head_lanes)
            && heads_per_pass >= 1;
        if ok { Some(Self { head_lanes, slots_per_head, edge_lanes, heads_per_pass }) } else { None }
    }

    /// Lanes per head (`G`).
    #[inline(always)]
    pub const fn head_lanes(&self) -> u32 {
        self.head_lanes
    }

    /// Register slots per head (`SPH`).
    #[inline(always)]
    pub const fn slots_per_head(&self) -> u32 {
        self.slots_per_head
    }

    /// Lanes per edge (`EL`).
    #[inline(always)]
    pub const fn edge_lanes(&self) -> u32 {
        self.edge_lanes
    }

    /// Heads one pass over a row covers.
    #[inline(always)]
    pub const fn heads_per_pass(&self) -> u32 {
        self.heads_per_pass
    }

    /// The slot `s` of `lane` in the pass starting at `head0`.
    #[inline(always)]
    pub fn slot(&self, s: u32, lane: u32, head0: u32, heads: u32, vectors_per_head: u32) -> Slot {
        let lane_in_edge = lane % self.edge_lanes;
        let head =
            head0 + (s / self.slots_per_head) * (self.edge_lanes / self.head_lanes) + lane_in_edge / self.head_lanes;
        let vector = (s % self.slots_per_head) * self.head_lanes + lane_in_edge % self.head_lanes;
        Slot { head, vector, active: head < heads && vector < vectors_per_head && head < head0 + self.heads_per_pass }
    }

    /// This lane's team (the edge it takes among the warp's `teams()` edges per step).
    #[inline(always)]
    pub fn team(&self, lane: u32) -> u32 {
        lane / self.edge_lanes
    }

    /// Teams per warp: edges a warp takes per step.
    #[inline(always)]
    pub fn teams(&self) -> u32 {
        WARP / self.edge_lanes
    }
}
