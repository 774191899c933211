//! The context every fused pass starts from: this lane's place in the [`LaneMap`], how node
//! features are indexed, and the loop over the passes that cover all heads.

use core::marker::PhantomData;

use crate::abi::{FeatureShape, LaneMap, Slot};
use crate::kernels::common::segment::Work;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, GSlice, GSliceMut};

/// One lane's view of a launch's feature shape, for vectors `V`.
#[derive(Clone, Copy)]
pub struct Lanes<V> {
    /// This lane's index in its warp.
    pub lane: u32,
    /// The launch's lane mapping.
    pub map: LaneMap,
    /// Heads `H`.
    pub heads: u32,
    /// Vectors per head `Fv = F / WIDTH`.
    pub vectors: u32,
    /// This lane's team (which of the step's edges it takes).
    pub team: u32,
    /// Teams per warp (edges per step and team count).
    pub teams: u32,
    /// Edge `c` of a step is `base + c·edge_stride + edge_offset`: the warp's teams interleave
    /// over one row (`teams`, `team`), or each strides over its own row when packed (1, 0).
    pub edge_stride: u32,
    /// See [`Lanes::edge_stride`].
    pub edge_offset: u32,
    /// Whether this lane's team writes the results ([`Work::writes`]; team 0 by default).
    pub writes: bool,
    _vector: PhantomData<V>,
}

impl<V: Vector> Lanes<V> {
    /// The view of `shape` for the calling lane.
    #[inline(always)]
    pub fn new(shape: &FeatureShape) -> Self {
        let lane = simt::lane_id();
        let map = shape.lanes;
        Self {
            lane,
            map,
            heads: shape.heads,
            vectors: shape.feat / V::WIDTH as u32,
            team: map.team(lane),
            teams: map.teams(),
            edge_stride: map.teams(),
            edge_offset: map.team(lane),
            writes: map.team(lane) == 0,
            _vector: PhantomData,
        }
    }

    /// The view of `shape` for the calling lane working on `work` (`PACKED`: [`Work::packed`]):
    /// when packed, each team strides over its own row's edges and writes its own row.
    #[inline(always)]
    pub fn for_work<const PACKED: bool>(shape: &FeatureShape, work: &Work) -> Self {
        let lanes = Self::new(shape);
        if PACKED { Self { edge_stride: 1, edge_offset: 0, writes: work.writes, ..lanes } } else { lanes }
    }

    /// Where `node`'s vector for `slot` sits in an `[N, H, Fv]` array: `(node·H + head)·Fv + vector`.
    #[inline(always)]
    pub fn at(&self, node: u32, slot: Slot) -> usize {
        // One 32×32→64-bit multiply per node (a row of H·Fv vectors fits 32 bits).
        node as usize * (self.heads * self.vectors) as usize + (slot.head * self.vectors + slot.vector) as usize
    }

    /// Where `node`'s scalar for `slot`'s head sits in an `[N, H]` array.
    #[inline(always)]
    pub fn scalar(&self, node: u32, slot: Slot) -> usize {
        node as usize * self.heads as usize + slot.head as usize
    }

    /// This lane's slots in the pass that starts at head `head0`.
    #[inline(always)]
    pub fn slots<const SLOTS: usize>(&self, head0: u32) -> [Slot; SLOTS] {
        core::array::from_fn(|s| self.map.slot(s as u32, self.lane, head0, self.heads, self.vectors))
    }

    /// `node`'s vectors of `x` for `slots` (zero where a slot is inactive).
    #[inline(always)]
    pub fn load<const SLOTS: usize>(&self, x: &GSlice<V>, node: u32, slots: &[Slot; SLOTS]) -> [V; SLOTS] {
        core::array::from_fn(|s| if slots[s].active { x.load(self.at(node, slots[s])) } else { V::zero() })
    }

    /// The writing team ([`Lanes::writes`]) writes `node`'s vectors for the active `slots` into
    /// `x`, each times `factor`.
    #[inline(always)]
    pub fn store<const SLOTS: usize>(
        &self,
        x: &GSliceMut<f32>,
        node: u32,
        slots: &[Slot; SLOTS],
        values: &[V; SLOTS],
        factor: f32,
    ) {
        if self.writes {
            let x = x.cast::<V>();
            unroll!(SLOTS, |s| {
                if slots[s].active {
                    x.store(self.at(node, slots[s]), values[s].scale(factor));
                }
            });
        }
    }

    /// Runs `body(s, slot)` for each active slot that holds its head's vector 0, in the writing
    /// team: the one lane and slot that writes a head's per-node scalars.
    #[inline(always)]
    pub fn each_head_leader<const SLOTS: usize>(&self, slots: &[Slot; SLOTS], mut body: impl FnMut(usize, Slot)) {
        if self.writes {
            unroll!(SLOTS, |s| {
                if slots[s].active && slots[s].vector == 0 {
                    body(s, slots[s]);
                }
            });
        }
    }

    /// Edge `c` of this team's share of the step that starts at edge `base` (its own row's
    /// `base + c` when packed).
    #[inline(always)]
    pub fn edge(&self, base: u64, c: usize) -> u64 {
        base + (c as u32 * self.edge_stride + self.edge_offset) as u64
    }

    /// Edges of a row one step of `step` edges per team covers: the whole warp's, or one
    /// team's when packed.
    #[inline(always)]
    pub fn step_edges(&self, step: usize) -> u64 {
        (step as u32 * self.edge_stride) as u64
    }

    /// Runs `body(head0)` for each pass over the heads (warp-uniform).
    #[inline(always)]
    pub fn each_head_pass(&self, mut body: impl FnMut(u32)) {
        let mut head0 = 0;
        while head0 < self.heads {
            body(head0);
            head0 += self.map.heads_per_pass();
        }
    }
}
