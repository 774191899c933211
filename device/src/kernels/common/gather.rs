//! The gather every fused pass starts each step with: one step of edges per team, with an
//! operand and the vectors of each edge's neighbour (the row passes: key and value of the
//! source; the column pass: row operand and output gradient of the destination) — every load of
//! the step issued before any is used, so they are in flight together.

use crate::abi::Slot;
use crate::kernels::attention::score::{SlotValue, load_slot};
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::GSlice;

/// One step of `STEP` edges of one team: whether each is real, its neighbour, and the
/// neighbour's operand (slots of `K`) of the first gathered array and vectors of the second.
pub struct Step<V, K, const SLOTS: usize, const STEP: usize> {
    /// Whether edge `c` of the step exists (the unit may end inside the step).
    pub valid: [bool; STEP],
    /// Edge `c`'s neighbour (0 where not valid).
    pub nodes: [u32; STEP],
    /// `first[c][s]`: slot `s` of the first array's operand of edge `c`'s neighbour (zero where
    /// inactive).
    pub first: [[K; SLOTS]; STEP],
    /// `second[c][s]`: the same of the second array.
    pub second: [[V; SLOTS]; STEP],
}

/// Gathers the step that starts at edge `base` for this lane's team: edge `c` of the step is
/// [`Lanes::edge`]`(base, c)`, real when below `end`; its neighbour is `neighbours[edge]`. For
/// each real edge and active slot, `also(c, node, s)` runs right after that slot's vector loads,
/// so that loads of its own (the column pass's per-row scalars) are in flight with them.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn gather<V: Vector, K: SlotValue<V>, const SLOTS: usize, const STEP: usize>(
    lanes: &Lanes<V>,
    neighbours: &GSlice<u32>,
    first: &K::Array,
    second: &GSlice<V>,
    slots: &[Slot; SLOTS],
    base: u64,
    end: u64,
    mut also: impl FnMut(usize, u32, usize),
) -> Step<V, K, SLOTS, STEP> {
    let mut step = Step {
        valid: [false; STEP],
        nodes: [0; STEP],
        first: [[K::zero(); SLOTS]; STEP],
        second: [[V::zero(); SLOTS]; STEP],
    };
    unroll!(STEP, |c| {
        let e = lanes.edge(base, c);
        step.valid[c] = e < end;
        if step.valid[c] {
            let node = neighbours.load(e as usize);
            step.nodes[c] = node;
            unroll!(SLOTS, |s| {
                if slots[s].active {
                    step.first[c][s] = load_slot(lanes, first, node, slots[s]);
                    step.second[c][s] = second.load(lanes.at(node, slots[s]));
                    also(c, node, s);
                }
            });
        }
    });
    step
}
