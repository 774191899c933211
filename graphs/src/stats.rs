//! Graph statistics in one pass over the CSR: degrees, histogram, hubs, self loops, duplicates
//! and the row-group maxima the kernel scheduler needs.

use std::fmt;

use crate::csr::Csr;

/// Degrees below this are counted in a dense table; larger ones are kept as a sorted list, so
/// [`DegreeSummary::count_above`] is exact for every threshold at a small, fixed cost.
const DENSE_DEGREES: usize = 4096;

/// The row-group sizes for which [`GraphStats`] keeps the largest group total.
pub const ROW_GROUP_SIZES: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// A summary of one degree distribution (in-degrees of rows or out-degrees of sources).
#[derive(Clone, Debug, PartialEq)]
pub struct DegreeSummary {
    /// The number of nodes.
    pub nodes: usize,
    /// The smallest degree (0 for no nodes).
    pub min: u64,
    /// The largest degree (0 for no nodes).
    pub max: u64,
    /// The mean degree (0 for no nodes).
    pub mean: f64,
    /// The population standard deviation of the degree.
    pub std_dev: f64,
    /// The coefficient of variation, `std_dev / mean` (0 when the mean is 0).
    pub cv: f64,
    /// The number of nodes of degree 0.
    pub zero: usize,
    /// Log2 buckets: `histogram[0]` counts degree 0, `histogram[k]` degrees in
    /// `[2^(k-1), 2^k)` (1, 2-3, 4-7, ...). Trailing empty buckets are dropped.
    pub histogram: Vec<u64>,
    dense: Vec<u64>,
    heavy: Vec<u64>,
}

impl DegreeSummary {
    /// Summarises a degree sequence.
    pub fn from_degrees(degrees: impl IntoIterator<Item = u64>) -> DegreeSummary {
        DegreeSummary::from_degrees_and_zeros(degrees, 0)
    }

    /// Summarises a degree sequence plus `zeros` more nodes of degree 0, in O(1) for the zeros.
    pub fn from_degrees_and_zeros(degrees: impl IntoIterator<Item = u64>, zeros: u64) -> DegreeSummary {
        let mut nodes = zeros as usize;
        let mut histogram = vec![0u64; 65];
        let mut dense = vec![0u64; DENSE_DEGREES];
        histogram[0] = zeros;
        dense[0] = zeros;
        let (mut min, mut max) = (if zeros > 0 { 0 } else { u64::MAX }, 0u64);
        let (mut sum, mut sum_sq) = (0u128, 0u128);
        let mut heavy = Vec::new();
        for d in degrees {
            nodes += 1;
            min = min.min(d);
            max = max.max(d);
            sum += d as u128;
            sum_sq += d as u128 * d as u128;
            histogram[bucket(d)] += 1;
            if (d as usize) < DENSE_DEGREES {
                dense[d as usize] += 1;
            } else {
                heavy.push(d);
            }
        }
        heavy.sort_unstable();
        while histogram.len() > 1 && histogram.last() == Some(&0) {
            histogram.pop();
        }
        if nodes == 0 {
            histogram.clear();
            min = 0;
        }
        let n = nodes as f64;
        let mean = if nodes == 0 { 0.0 } else { sum as f64 / n };
        // The variance numerator n * sum_sq - sum^2 is exact in u128 for any realistic graph.
        let var = match (nodes as u128).checked_mul(sum_sq).zip(sum.checked_mul(sum)) {
            _ if nodes == 0 => 0.0,
            Some((a, b)) => a.saturating_sub(b) as f64 / (n * n),
            None => (sum_sq as f64 / n - mean * mean).max(0.0),
        };
        let std_dev = var.sqrt();
        let cv = if mean > 0.0 { std_dev / mean } else { 0.0 };
        let zero = dense[0] as usize;
        DegreeSummary { nodes, min, max, mean, std_dev, cv, zero, histogram, dense, heavy }
    }

    /// The number of nodes with degree strictly above `t`.
    pub fn count_above(&self, t: u64) -> u64 {
        let dense: u64 = if (t as usize) < DENSE_DEGREES { self.dense[t as usize + 1..].iter().sum() } else { 0 };
        let heavy = self.heavy.len() - self.heavy.partition_point(|&d| d <= t);
        dense + heavy as u64
    }

    /// The degree range `[lo, hi]` of histogram bucket `k`.
    pub fn bucket_range(k: usize) -> (u64, u64) {
        match k {
            0 => (0, 0),
            64 => (1 << 63, u64::MAX),
            _ => (1 << (k - 1), (1u64 << k) - 1),
        }
    }
}

/// The log2 bucket of a degree: 0 for 0, else `floor(log2 d) + 1`.
fn bucket(d: u64) -> usize {
    (u64::BITS - d.leading_zeros()) as usize
}

/// Statistics of a graph, computed by [`GraphStats::of`] in one pass over the CSR (plus one pass
/// over the sources for out-degrees). Print it with `{}` for a readable report.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphStats {
    /// The number of destination nodes (rows).
    pub num_dst: usize,
    /// The number of source nodes.
    pub num_src: usize,
    /// The number of edges.
    pub nnz: usize,
    /// In-degrees of the rows.
    pub in_degree: DegreeSummary,
    /// Out-degrees of the sources (what the column pass sees).
    pub out_degree: DegreeSummary,
    /// Edges `i -> i` (column equal to row, also counted in bipartite graphs).
    pub self_loops: u64,
    /// Edges that repeat an earlier edge of the same row (`nnz - dedup().nnz()`).
    pub duplicate_edges: u64,
    /// Rows whose sources are not in non-decreasing order.
    pub unsorted_rows: u64,
    /// `(r, max_edges_in_row_group(r))` for each r in [`ROW_GROUP_SIZES`].
    pub row_groups: Vec<(usize, u64)>,
}

impl GraphStats {
    /// Computes the statistics: O(E + num_dst + num_src) time and O(num_src) extra memory when
    /// the sources are not far more than the graph's edges and rows; otherwise (sparse ids) the
    /// out-degrees come from a sorted copy of the columns and duplicates from sorted rows, so the
    /// extra memory stays O(E) whatever `num_src` claims.
    pub fn of(g: &Csr) -> GraphStats {
        let dense = g.num_src() as u64 <= (g.nnz() as u64 + g.num_dst() as u64).saturating_mul(2) + 4096;
        GraphStats::compute(g, dense)
    }

    fn compute(g: &Csr, dense: bool) -> GraphStats {
        let mut out = vec![0u64; if dense { g.num_src() } else { 0 }];
        // Dense: `seen[j] == i + 1` marks source j as present in row i. Sparse: `row_copy` holds
        // the sorted sources of the current row.
        let mut seen = vec![0u64; if dense { g.num_src() } else { 0 }];
        let mut row_copy: Vec<u32> = Vec::new();
        let (mut self_loops, mut duplicate_edges, mut unsorted_rows) = (0u64, 0u64, 0u64);
        let mut group_sum = [0u64; ROW_GROUP_SIZES.len()];
        let mut group_max = [0u64; ROW_GROUP_SIZES.len()];
        let in_degree = DegreeSummary::from_degrees((0..g.num_dst()).map(|i| {
            let row = g.row(i);
            let mark = i as u64 + 1;
            let mut prev = 0u32;
            let mut sorted = true;
            for &j in row {
                let j_us = j as usize;
                self_loops += u64::from(j_us == i);
                if dense {
                    out[j_us] += 1;
                    if seen[j_us] == mark {
                        duplicate_edges += 1;
                    } else {
                        seen[j_us] = mark;
                    }
                }
                sorted &= j >= prev;
                prev = j;
            }
            if !dense {
                row_copy.clear();
                row_copy.extend_from_slice(row);
                row_copy.sort_unstable();
                duplicate_edges += row_copy.windows(2).filter(|w| w[0] == w[1]).count() as u64;
            }
            unsorted_rows += u64::from(!sorted);
            let d = row.len() as u64;
            for (k, &r) in ROW_GROUP_SIZES.iter().enumerate() {
                group_sum[k] += d;
                if (i + 1) % r == 0 || i + 1 == g.num_dst() {
                    group_max[k] = group_max[k].max(group_sum[k]);
                    group_sum[k] = 0;
                }
            }
            d
        }));
        let out_degree = if dense {
            DegreeSummary::from_degrees(out.iter().copied())
        } else {
            let mut columns = g.columns().to_vec();
            columns.sort_unstable();
            let runs: Vec<u64> = columns.chunk_by(|a, b| a == b).map(|run| run.len() as u64).collect();
            DegreeSummary::from_degrees_and_zeros(runs.iter().copied(), (g.num_src() - runs.len()) as u64)
        };
        GraphStats {
            num_dst: g.num_dst(),
            num_src: g.num_src(),
            nnz: g.nnz(),
            in_degree,
            out_degree,
            self_loops,
            duplicate_edges,
            unsorted_rows,
            row_groups: ROW_GROUP_SIZES.iter().copied().zip(group_max).collect(),
        }
    }

    /// The number of rows with in-degree strictly above `t`.
    pub fn rows_above(&self, t: u64) -> u64 {
        self.in_degree.count_above(t)
    }

    /// The number of empty rows (in-degree 0).
    pub fn empty_rows(&self) -> usize {
        self.in_degree.zero
    }

    /// The largest edge count of an aligned group of `r` rows, for `r` in [`ROW_GROUP_SIZES`]
    /// (`None` otherwise; [`Csr::max_edges_in_row_group`] answers any `r`).
    pub fn max_edges_in_row_group(&self, r: usize) -> Option<u64> {
        self.row_groups.iter().find(|&&(s, _)| s == r).map(|&(_, m)| m)
    }
}

impl fmt::Display for GraphStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = if self.num_dst == self.num_src { "square" } else { "bipartite" };
        writeln!(f, "nodes: {} dst x {} src ({shape}), edges: {}", self.num_dst, self.num_src, self.nnz)?;
        for (name, d) in [("in-degree ", &self.in_degree), ("out-degree", &self.out_degree)] {
            writeln!(
                f,
                "{name}: min {}, max {}, mean {:.3}, std {:.3}, cv {:.3}, zero {}",
                d.min, d.max, d.mean, d.std_dev, d.cv, d.zero
            )?;
        }
        writeln!(
            f,
            "self loops: {}, duplicate edges: {}, unsorted rows: {}",
            self.self_loops, self.duplicate_edges, self.unsorted_rows
        )?;
        write!(f, "rows with in-degree >")?;
        for t in [32, 128, 1000, 10_000, 100_000] {
            write!(f, " {t}: {}", self.rows_above(t))?;
        }
        writeln!(f)?;
        write!(f, "max edges per aligned row group of r rows:")?;
        for &(r, m) in &self.row_groups {
            write!(f, " r={r}: {m}")?;
        }
        writeln!(f)?;
        writeln!(f, "in-degree histogram:")?;
        let peak = self.in_degree.histogram.iter().copied().max().unwrap_or(0).max(1);
        for (k, &count) in self.in_degree.histogram.iter().enumerate() {
            let (lo, hi) = DegreeSummary::bucket_range(k);
            let label = if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") };
            let bar = "#".repeat((count * 40).div_ceil(peak) as usize);
            writeln!(f, "  {label:>21} {count:>12} {bar}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_a_small_graph() {
        // Rows: 0 <- {0, 1, 1}, 1 <- {}, 2 <- {2, 0}, 3 <- {3, 1, 0, 2}; rows 2 and 3 are
        // unsorted.
        let g = Csr::from_rows(4, &[vec![0, 1, 1], vec![], vec![2, 0], vec![3, 1, 0, 2]]).unwrap();
        let s = GraphStats::of(&g);
        assert_eq!((s.num_dst, s.num_src, s.nnz), (4, 4, 9));
        assert_eq!((s.in_degree.min, s.in_degree.max, s.in_degree.zero), (0, 4, 1));
        assert!((s.in_degree.mean - 2.25).abs() < 1e-12);
        // Degrees 3, 0, 2, 4: variance = (9 + 0 + 4 + 16) / 4 - 2.25^2 = 2.1875.
        assert!((s.in_degree.std_dev - 2.1875f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.in_degree.histogram, vec![1, 0, 2, 1]);
        assert_eq!(s.self_loops, 3);
        assert_eq!(s.duplicate_edges, 1);
        assert_eq!(s.unsorted_rows, 2);
        assert_eq!(s.rows_above(2), 2);
        assert_eq!(s.rows_above(3), 1);
        assert_eq!(s.rows_above(4), 0);
        assert_eq!(s.out_degree.max, 3);
        assert_eq!(s.max_edges_in_row_group(2), Some(6));
        assert_eq!(s.max_edges_in_row_group(1), Some(4));
        assert_eq!(s.max_edges_in_row_group(3), None);
        let text = s.to_string();
        assert!(text.contains("edges: 9"), "{text}");
        assert!(text.contains("2-3"), "{text}");
    }

    #[test]
    fn heavy_degrees_are_counted_exactly() {
        let degrees = [0u64, 5000, 5000, 70_000, 3];
        let d = DegreeSummary::from_degrees(degrees);
        assert_eq!(d.count_above(4999), 3);
        assert_eq!(d.count_above(5000), 1);
        assert_eq!(d.count_above(2), 4);
        assert_eq!(d.count_above(100_000), 0);
        assert_eq!(d.histogram[13], 2, "5000 lies in [4096, 8191]");
    }

    #[test]
    fn sparse_sources_give_the_same_stats_without_a_per_source_array() {
        for g in [
            Csr::from_rows(4, &[vec![0, 1, 1], vec![], vec![2, 0], vec![3, 1, 0, 2]]).unwrap(),
            crate::generate::inject_hubs(&crate::generate::erdos_renyi(300, 4.0, 3).unwrap(), 2, 900, 1).unwrap(),
            Csr::empty(3, 0).unwrap(),
        ] {
            assert_eq!(GraphStats::compute(&g, false), GraphStats::compute(&g, true));
        }
        // 4e9 sources, 3 edges: the dense arrays would take 64 GB.
        let g = Csr::new(3, 4_000_000_000, vec![0, 1, 1, 3], vec![3_999_999_999, 5, 5]).unwrap();
        let s = GraphStats::of(&g);
        assert_eq!((s.out_degree.nodes, s.out_degree.zero, s.out_degree.max), (4_000_000_000, 3_999_999_998, 2));
        assert_eq!(s.duplicate_edges, 1);
    }

    #[test]
    fn stats_of_empty_graph() {
        let s = GraphStats::of(&Csr::empty(0, 0).unwrap());
        assert_eq!(s.in_degree.nodes, 0);
        assert_eq!(s.in_degree.mean, 0.0);
        assert!(s.in_degree.histogram.is_empty());
        assert_eq!(s.max_edges_in_row_group(8), Some(0));
        assert!(s.to_string().contains("edges: 0"));
    }

    #[test]
    fn row_groups_match_the_csr_method() {
        let rows: Vec<Vec<u32>> = (0..37u32).map(|i| vec![0; (i * 7 % 11) as usize]).collect();
        let g = Csr::from_rows(1, &rows).unwrap();
        let s = GraphStats::of(&g);
        for &(r, m) in &s.row_groups {
            assert_eq!(m, g.max_edges_in_row_group(r), "r = {r}");
        }
    }
}
