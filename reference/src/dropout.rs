//! Attention dropout's mask, written independently of the kernels' (`dfgnn_device`'s
//! `kernels::common::dropout`) and checked against the same published known answers: edge `e`
//! (its CSR id) keeps head `h` when the first word of Philox-4x32-10 of counter
//! `(e mod 2^32, e / 2^32, h, 0)` under key `(seed mod 2^32, seed / 2^32)` is at least
//! `⌊p·2^32⌋`. A kept weight is scaled by `1 / (1 − p)`, so the output's expectation is the
//! undropped one.

use num_traits::Float;

use crate::pattern::check_edges;
use crate::{Pattern, RefError};

/// One Philox-4x32 round: the two products of the multipliers with words 0 and 2, then the
/// permuted words with the key mixed in.
fn round(x: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let p0 = u64::from(0xD251_1F53u32) * u64::from(x[0]);
    let p1 = u64::from(0xCD9E_8D57u32) * u64::from(x[2]);
    [(p1 >> 32) as u32 ^ x[1] ^ key[0], p1 as u32, (p0 >> 32) as u32 ^ x[3] ^ key[1], p0 as u32]
}

/// Philox-4x32-10 of `counter` under `key`.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    (0..10u32).fold(counter, |x, r| {
        let k = [key[0].wrapping_add(r.wrapping_mul(0x9E37_79B9)), key[1].wrapping_add(r.wrapping_mul(0xBB67_AE85))];
        round(x, k)
    })
}

/// The keep threshold of dropout probability `p` (`0 ≤ p < 1`): `⌊p·2^32⌋`.
pub fn dropout_threshold(p: f64) -> u32 {
    (p * 4_294_967_296.0).floor() as u32
}

/// Whether edge `edge` keeps head `head` under dropout probability `p` with `seed`.
pub fn dropout_keep(seed: u64, p: f64, edge: u64, head: u32) -> bool {
    let key = [seed as u32, (seed >> 32) as u32];
    philox4x32_10([edge as u32, (edge >> 32) as u32, head, 0], key)[0] >= dropout_threshold(p)
}

/// The `[E, H]` mask of `num_edges` edges and `heads` heads as factors: `1 / (1 − p)` where kept,
/// 0 where dropped.
pub fn dropout_factors(seed: u64, p: f64, num_edges: usize, heads: usize) -> Vec<f64> {
    let scale = 1.0 / (1.0 - p);
    (0..num_edges * heads)
        .map(|i| if dropout_keep(seed, p, (i / heads) as u64, (i % heads) as u32) { scale } else { 0.0 })
        .collect()
}

/// `alpha ⊙ factors` (`[E, H]` both), or `alpha` itself without dropout: the masked weights every
/// model's dropout forward aggregates and its backward multiplies the aggregation's gradient by.
pub(crate) fn dropped<T: Float>(
    op: &'static str,
    pattern: &Pattern<'_>,
    heads: usize,
    alpha: Vec<T>,
    factors: Option<&[T]>,
) -> Result<Vec<T>, RefError> {
    let Some(factors) = factors else { return Ok(alpha) };
    check_edges(op, "factors", factors, pattern, heads)?;
    Ok(alpha.iter().zip(factors).map(|(&x, &f)| x * f).collect())
}
