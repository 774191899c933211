//! Shared test helpers: a seeded random graph builder with the corner cases every check needs
//! (a super node, empty rows, self loops, duplicate edges), random data, a dense attention oracle
//! that does not use the CSR edge order, and a central-difference gradient checker.

use dfgnn_reference::{Dims, Pattern};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The (heads, feat) shapes every model is checked with.
pub const DIMS: [Dims; 3] = [Dims { heads: 1, feat: 1 }, Dims { heads: 2, feat: 3 }, Dims { heads: 3, feat: 7 }];

/// An owned CSR graph, rows = destinations.
#[derive(Debug, Clone)]
pub struct Graph {
    pub num_dst: usize,
    pub num_src: usize,
    pub offsets: Vec<u64>,
    pub columns: Vec<u32>,
}

impl Graph {
    /// Builds a graph from per-row column lists.
    pub fn from_rows(num_src: usize, rows: &[&[u32]]) -> Self {
        let mut offsets = vec![0u64];
        let mut columns = Vec::new();
        for row in rows {
            columns.extend_from_slice(row);
            offsets.push(columns.len() as u64);
        }
        Self { num_dst: rows.len(), num_src, offsets, columns }
    }

    /// A random graph with one super row (3·num_src + 5 edges, so it must repeat columns), about
    /// a quarter of the rows empty (at least one), self loops on every third row of a square
    /// graph, and one explicitly duplicated edge in an ordinary row.
    pub fn random(seed: u64, num_dst: usize, num_src: usize) -> Self {
        assert!(num_dst >= 4 && num_src >= 1, "too small for the corner cases");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let super_row = rng.random_range(0..num_dst);
        let forced_empty = (super_row + 1) % num_dst;
        let duplicated = (super_row + 2) % num_dst;
        let mut rows: Vec<Vec<u32>> = Vec::with_capacity(num_dst);
        for i in 0..num_dst {
            let degree = if i == super_row {
                3 * num_src + 5
            } else if i == forced_empty || (i != duplicated && rng.random_range(0..4) == 0) {
                0
            } else {
                rng.random_range(1..=4)
            };
            let mut row: Vec<u32> = (0..degree).map(|_| rng.random_range(0..num_src) as u32).collect();
            if num_dst == num_src && i % 3 == 0 && degree > 0 {
                row.push(i as u32);
            }
            if i == duplicated {
                row.push(row[0]);
            }
            rows.push(row);
        }
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        Self::from_rows(num_src, &refs)
    }

    pub fn pattern(&self) -> Pattern<'_> {
        Pattern::new(self.num_dst, self.num_src, &self.offsets, &self.columns).expect("test graphs should be valid")
    }

    pub fn num_edges(&self) -> usize {
        self.columns.len()
    }

    pub fn row(&self, i: usize) -> &[u32] {
        &self.columns[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// How many edges go from source `j` to destination `i`.
    pub fn multiplicity(&self, i: usize, j: usize) -> usize {
        self.row(i).iter().filter(|&&c| c as usize == j).count()
    }
}

/// The graphs the gradient checks run on: two square ones and two bipartite ones.
pub fn test_graphs(seed: u64) -> Vec<Graph> {
    vec![
        Graph::random(seed, 9, 9),
        Graph::random(seed + 1, 6, 6),
        Graph::random(seed + 2, 7, 5),
        Graph::random(seed + 3, 5, 8),
    ]
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// `n` values uniform in `[-1, 1)`.
pub fn uniform(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// Dense `[n, H, F]` length.
pub fn dense_len(n: usize, dims: Dims) -> usize {
    n * dims.heads * dims.feat
}

/// Independent oracle for any attention forward: for each destination `i` and head `h`, the
/// softmax over the distinct in-neighbours `j` weighted by their edge multiplicity, of
/// `score(i, j, h)`, aggregating `v` `[num_src, H, F]`. Returns `(out, lse)`.
pub fn dense_attention(
    g: &Graph,
    dims: Dims,
    score: impl Fn(usize, usize, usize) -> f64,
    v: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (hs, fs) = (dims.heads, dims.feat);
    let mut out = vec![0.0; dense_len(g.num_dst, dims)];
    let mut lse = vec![f64::NEG_INFINITY; g.num_dst * hs];
    for i in 0..g.num_dst {
        let nbrs: Vec<(usize, f64)> =
            (0..g.num_src).map(|j| (j, g.multiplicity(i, j) as f64)).filter(|&(_, m)| m > 0.0).collect();
        if nbrs.is_empty() {
            continue;
        }
        for h in 0..hs {
            let m = nbrs.iter().map(|&(j, _)| score(i, j, h)).fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = nbrs.iter().map(|&(j, c)| c * (score(i, j, h) - m).exp()).sum();
            lse[i * hs + h] = m + z.ln();
            for &(j, c) in &nbrs {
                let w = c * (score(i, j, h) - m).exp() / z;
                for f in 0..fs {
                    out[(i * hs + h) * fs + f] += w * v[(j * hs + h) * fs + f];
                }
            }
        }
    }
    (out, lse)
}

/// `Σ a ⊙ b`.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Relative step of the central differences.
const STEP: f64 = 1e-6;

/// The relative error the gradient checks accept.
pub const GRAD_TOL: f64 = 1e-6;

/// Central-difference gradient of `L(x) = Σ d_out ⊙ f(x)` compared with `analytic`. Returns
/// `max |numeric − analytic| / max(max |analytic|, 1e-2)`.
pub fn gradient_error(x: &[f64], analytic: &[f64], d_out: &[f64], f: impl Fn(&[f64]) -> Vec<f64>) -> f64 {
    assert_eq!(x.len(), analytic.len(), "gradient length");
    let loss = |x: &[f64]| dot(d_out, &f(x));
    let mut xp = x.to_vec();
    let mut worst: f64 = 0.0;
    for idx in 0..x.len() {
        let step = STEP * x[idx].abs().max(1.0);
        xp[idx] = x[idx] + step;
        let up = loss(&xp);
        xp[idx] = x[idx] - step;
        let down = loss(&xp);
        xp[idx] = x[idx];
        let numeric = (up - down) / (2.0 * step);
        worst = worst.max((numeric - analytic[idx]).abs());
    }
    worst / max_abs(analytic).max(1e-2)
}

/// Asserts that `analytic` is the gradient of `Σ d_out ⊙ f(x)` within [`GRAD_TOL`].
#[track_caller]
pub fn assert_gradient(what: &str, x: &[f64], analytic: &[f64], d_out: &[f64], f: impl Fn(&[f64]) -> Vec<f64>) {
    let err = gradient_error(x, analytic, d_out, f);
    assert!(err <= GRAD_TOL, "{what}: relative gradient error {err:e} > {GRAD_TOL:e}");
}

/// Asserts that two arrays agree within `tol` (absolute, elementwise).
#[track_caller]
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let same = g == w || (g - w).abs() <= tol;
        assert!(same, "{what}[{k}]: got {g}, want {w} (tol {tol:e})");
    }
}
