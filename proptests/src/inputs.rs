//! Seeded inputs of the checks: node features, output gradients, AGNN's β and GAT's attention
//! vectors.
//!
//! Features are uniform in `[-1, 1)`. GT's `q` and `k` may be scaled up ([`GtCase::magnitude`])
//! so that the scores are large and the softmax peaky (every rescale of the online softmax is
//! taken). AGNN's features have some all-zero (node, head) vectors, where the norm's clamp is
//! active and the normalised vector is 0.
//!
//! [`GtCase::magnitude`]: crate::GtCase::magnitude

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `len` values uniform in `[-m, m)`.
pub fn uniform(rng: &mut ChaCha8Rng, len: usize, m: f32) -> Vec<f32> {
    (0..len).map(|_| m * rng.random_range(-1.0f32..1.0)).collect()
}

/// The inputs of one GT check.
#[derive(Clone, Debug, PartialEq)]
pub struct GtInputs {
    /// `[N_dst, H, F]`.
    pub q: Vec<f32>,
    /// `[N_src, H, F]`.
    pub k: Vec<f32>,
    /// `[N_src, H, F]`.
    pub v: Vec<f32>,
    /// `[N_dst, H, F]`, the gradient of the loss with respect to the output.
    pub d_out: Vec<f32>,
}

impl GtInputs {
    /// Inputs for `num_dst` × `num_src` nodes of `heads` × `feat` features, from `seed`; `q` and
    /// `k` are scaled by `magnitude`.
    pub fn random(num_dst: usize, num_src: usize, heads: u32, feat: u32, magnitude: f32, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let hf = heads as usize * feat as usize;
        Self {
            q: uniform(&mut rng, num_dst * hf, magnitude),
            k: uniform(&mut rng, num_src * hf, magnitude),
            v: uniform(&mut rng, num_src * hf, 1.0),
            d_out: uniform(&mut rng, num_dst * hf, 1.0),
        }
    }
}

/// The inputs of one AGNN check.
#[derive(Clone, Debug, PartialEq)]
pub struct AgnnInputs {
    /// `[N, H, F]` features, with some all-zero (node, head) vectors.
    pub h: Vec<f32>,
    /// `[N, H, F]`, the gradient of the loss with respect to the output.
    pub d_out: Vec<f32>,
    /// The temperature, in `[-2, 4)`.
    pub beta: f32,
}

impl AgnnInputs {
    /// Inputs for `nodes` nodes of `heads` × `feat` features, from `seed`. About one (node, head)
    /// vector in 13 is zero.
    pub fn random(nodes: usize, heads: u32, feat: u32, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xa6e7);
        let f = feat as usize;
        let mut h = uniform(&mut rng, nodes * heads as usize * f, 1.0);
        for vector in h.chunks_mut(f.max(1)) {
            if rng.random_range(0..13) == 0 {
                vector.fill(0.0);
            }
        }
        let d_out = uniform(&mut rng, h.len(), 1.0);
        let beta = rng.random_range(-2.0f32..4.0);
        Self { h, d_out, beta }
    }
}

/// The inputs of one GAT check.
#[derive(Clone, Debug, PartialEq)]
pub struct GatInputs {
    /// `[N_src, H, F]` source features (aggregated, scored with `a_src`).
    pub h: Vec<f32>,
    /// `[N_dst, H, F]` destination features (scored with `a_dst`).
    pub h_dst: Vec<f32>,
    /// `[H, F]`.
    pub a_dst: Vec<f32>,
    /// `[H, F]`.
    pub a_src: Vec<f32>,
    /// `[N_dst, H, F]`, the gradient of the loss with respect to the output.
    pub d_out: Vec<f32>,
}

impl GatInputs {
    /// Inputs for `num_dst` × `num_src` nodes of `heads` × `feat` features, from `seed`; the
    /// attention vectors are scaled by `magnitude` (the scores grow with it). On a square graph
    /// an even seed gives the destinations the sources' features, as a GAT layer has them (the
    /// library then scores both from one read: [`run_gat`](crate::gat::run_gat) passes one buffer).
    pub fn random(num_dst: usize, num_src: usize, heads: u32, feat: u32, magnitude: f32, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6a7);
        let hf = heads as usize * feat as usize;
        let h = uniform(&mut rng, num_src * hf, 1.0);
        let h_dst =
            if num_dst == num_src && seed.is_multiple_of(2) { h.clone() } else { uniform(&mut rng, num_dst * hf, 1.0) };
        Self {
            h,
            h_dst,
            a_dst: uniform(&mut rng, hf, magnitude),
            a_src: uniform(&mut rng, hf, magnitude),
            d_out: uniform(&mut rng, num_dst * hf, 1.0),
        }
    }
}

/// The inputs of one GATv2 check.
#[derive(Clone, Debug, PartialEq)]
pub struct GatV2Inputs {
    /// `[N_src, H, F]` source features (scored and aggregated).
    pub xl: Vec<f32>,
    /// `[N_dst, H, F]` destination features (scored).
    pub xr: Vec<f32>,
    /// `[H, F]` the attention vector.
    pub a: Vec<f32>,
    /// `[N_dst, H, F]`, the gradient of the loss with respect to the output.
    pub d_out: Vec<f32>,
}

impl GatV2Inputs {
    /// Inputs for `num_dst` × `num_src` nodes of `heads` × `feat` features, from `seed`; the
    /// attention vector is scaled by `magnitude` (the scores grow with it).
    pub fn random(num_dst: usize, num_src: usize, heads: u32, feat: u32, magnitude: f32, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6a72);
        let hf = heads as usize * feat as usize;
        Self {
            xl: uniform(&mut rng, num_src * hf, 1.0),
            xr: uniform(&mut rng, num_dst * hf, 1.0),
            a: uniform(&mut rng, hf, magnitude),
            d_out: uniform(&mut rng, num_dst * hf, 1.0),
        }
    }
}
