//! Attention dropout's mask as a counter-based random stream: whether edge `e` (its CSR id) keeps
//! head `h` is a pure function of `(seed, e, h)`, so a backward pass regenerates the forward's
//! mask without storing it, in any order and on any schedule.
//!
//! The stream is Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy
//! as 1, 2, 3", SC 2011): counter `(e mod 2^32, e / 2^32, h, 0)`, key `(seed mod 2^32, seed /
//! 2^32)`; the edge keeps the head when the first output word is at least
//! [`DropoutParams::threshold`] (`⌊p·2^32⌋`), i.e. with probability `1 − p` up to 2^-32. Integer
//! arithmetic only, so the emulator and the GPU give the same mask bit for bit.

use crate::abi::DropoutParams;

/// Philox-4x32's multipliers and Weyl key increments.
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// The high and low words of `a·b`.
#[inline(always)]
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    ((p >> 32) as u32, p as u32)
}

/// Philox-4x32 with 10 rounds of `counter` under `key`.
#[inline(always)]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut x, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let (hi0, lo0) = mul_hi_lo(M0, x[0]);
        let (hi1, lo1) = mul_hi_lo(M1, x[2]);
        x = [hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0];
    }
    x
}

/// Whether edge `edge` (its CSR id) keeps head `head` under `dropout`.
#[inline(always)]
pub fn keep(dropout: &DropoutParams, edge: u64, head: u32) -> bool {
    let key = [dropout.seed as u32, (dropout.seed >> 32) as u32];
    philox4x32_10([edge as u32, (edge >> 32) as u32, head, 0], key)[0] >= dropout.threshold
}

/// The factor of edge `edge`'s weight for `head` in a pass compiled with `DROPOUT`: `scale` where
/// kept, 0 where dropped; 1 without dropout (`DROPOUT` false, or `threshold` 0), with no mask
/// computed. The passes take `DROPOUT` as a const parameter, so that the kernels without it
/// compile to exactly the code they had before dropout existed (no registers spent on it).
#[inline(always)]
pub fn factor<const DROPOUT: bool>(dropout: &DropoutParams, edge: u64, head: u32) -> f32 {
    if !DROPOUT || dropout.threshold == 0 {
        1.0
    } else if keep(dropout, edge, head) {
        dropout.scale
    } else {
        0.0
    }
}
