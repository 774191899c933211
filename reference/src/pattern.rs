//! The lightweight CSR view every function takes ([`Pattern`]), the per-node shape ([`Dims`]), and
//! the length checks shared by all public functions.

use core::ops::Range;

use crate::RefError;

/// A borrowed CSR sparsity pattern whose rows are destination nodes.
///
/// Row `i` lists the in-neighbours `j` of destination `i` in
/// `columns[offsets[i]..offsets[i + 1]]`; edge `e = offsets[i] + k` is the `k`-th entry of row `i`,
/// and every per-edge array is indexed by that `e`. Duplicate columns and self loops are ordinary
/// edges, rows may be empty, and `num_dst` may differ from `num_src` (a bipartite block).
///
/// The fields are public so a caller can build a view over its own arrays; every function of the
/// crate re-validates the pattern (O(E)) before using it, so an invalid view gives an error, never
/// a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern<'a> {
    /// Number of destination nodes, i.e. CSR rows.
    pub num_dst: usize,
    /// Number of source nodes, i.e. the exclusive bound on the column indices.
    pub num_src: usize,
    /// Row offsets, length `num_dst + 1`: starts at 0, non-decreasing, ends at `columns.len()`.
    pub offsets: &'a [u64],
    /// Source node of each edge, length E, every entry `< num_src`.
    pub columns: &'a [u32],
}

impl<'a> Pattern<'a> {
    /// Builds a validated view.
    ///
    /// - `num_dst`: number of destination nodes (rows).
    /// - `num_src`: number of source nodes (columns).
    /// - `offsets`: `[num_dst + 1]` row offsets; `offsets[0] == 0`, non-decreasing, and the last
    ///   entry equals `columns.len()`.
    /// - `columns`: `[E]` source node of each edge, each `< num_src`.
    ///
    /// Returns [`RefError::InvalidPattern`] naming the first rule that is broken.
    pub fn new(num_dst: usize, num_src: usize, offsets: &'a [u64], columns: &'a [u32]) -> Result<Self, RefError> {
        let pattern = Self { num_dst, num_src, offsets, columns };
        pattern.validate()?;
        Ok(pattern)
    }

    /// Checks every rule listed on [`Pattern::new`].
    pub fn validate(&self) -> Result<(), RefError> {
        let bad = |what, at| Err(RefError::InvalidPattern { what, at });
        if self.num_dst.checked_add(1) != Some(self.offsets.len()) {
            return bad("offsets length should be num_dst + 1", self.offsets.len());
        }
        if self.offsets[0] != 0 {
            return bad("offsets should start at 0", 0);
        }
        for (r, pair) in self.offsets.windows(2).enumerate() {
            if pair[1] < pair[0] {
                return bad("offsets should be non-decreasing", r + 1);
            }
        }
        let last = self.offsets[self.num_dst];
        if usize::try_from(last).ok() != Some(self.columns.len()) {
            return bad("the last offset should equal columns.len()", self.num_dst);
        }
        if let Some(e) = self.columns.iter().position(|&j| usize::try_from(j).map_or(true, |j| j >= self.num_src)) {
            return bad("column index should be < num_src", e);
        }
        Ok(())
    }

    /// Number of edges E.
    pub fn num_edges(&self) -> usize {
        self.columns.len()
    }

    /// Whether sources and destinations are one node set (`num_dst == num_src`).
    pub fn is_square(&self) -> bool {
        self.num_dst == self.num_src
    }

    /// Edge ids of row `i` (destination `i`), for `i < num_dst` of a validated pattern.
    pub(crate) fn row(&self, i: usize) -> Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    /// Source node of edge `e`.
    pub(crate) fn col(&self, e: usize) -> usize {
        self.columns[e] as usize
    }
}

/// The per-node feature shape: `heads` attention heads of `feat` features each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Number of heads H, at least 1.
    pub heads: usize,
    /// Features per head F, at least 1.
    pub feat: usize,
}

impl Dims {
    /// Checks `heads >= 1`, `feat >= 1`, and that `heads * feat` fits in `usize`.
    pub(crate) fn validate(&self, op: &'static str) -> Result<(), RefError> {
        check_heads(op, self.heads)?;
        if self.feat == 0 {
            return Err(RefError::InvalidArgument { op, what: "feat should be at least 1" });
        }
        product(op, &[self.heads, self.feat]).map(|_| ())
    }

    /// The `[heads * feat]`-long feature slice of node `n`, head `h` in an `[N, H, F]` array.
    pub(crate) fn at<'x, T>(&self, x: &'x [T], n: usize, h: usize) -> &'x [T] {
        let start = (n * self.heads + h) * self.feat;
        &x[start..start + self.feat]
    }

    /// Mutable version of [`Dims::at`].
    pub(crate) fn at_mut<'x, T>(&self, x: &'x mut [T], n: usize, h: usize) -> &'x mut [T] {
        let start = (n * self.heads + h) * self.feat;
        &mut x[start..start + self.feat]
    }
}

/// Checks `heads >= 1`.
pub(crate) fn check_heads(op: &'static str, heads: usize) -> Result<(), RefError> {
    if heads == 0 {
        return Err(RefError::InvalidArgument { op, what: "heads should be at least 1" });
    }
    Ok(())
}

/// `a * b * c`, or an error if the product overflows `usize`.
pub(crate) fn product(op: &'static str, dims: &[usize]) -> Result<usize, RefError> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or(RefError::InvalidArgument { op, what: "array size overflows usize" })
}

/// Checks that `x` has exactly `expected` elements.
pub(crate) fn check_len<T>(
    op: &'static str,
    arg: &'static str,
    layout: &'static str,
    x: &[T],
    expected: usize,
) -> Result<(), RefError> {
    if x.len() != expected {
        return Err(RefError::ShapeMismatch { op, arg, layout, expected, got: x.len() });
    }
    Ok(())
}

/// Layout names used in shape errors.
pub(crate) mod layout {
    pub const DST_NODES: &str = "[num_dst, heads, feat]";
    pub const SRC_NODES: &str = "[num_src, heads, feat]";
    pub const NODES: &str = "[num_nodes, heads, feat]";
    pub const EDGES: &str = "[num_edges, heads]";
    pub const DST_SCALARS: &str = "[num_dst, heads]";
    pub const SRC_SCALARS: &str = "[num_src, heads]";
    pub const NODE_SCALARS: &str = "[num_nodes, heads]";
    pub const HEAD_VECTORS: &str = "[heads, feat]";
}

/// Checks a dense `[n, heads, feat]` argument.
pub(crate) fn check_dense<T>(
    op: &'static str,
    arg: &'static str,
    layout: &'static str,
    x: &[T],
    n: usize,
    dims: Dims,
) -> Result<(), RefError> {
    check_len(op, arg, layout, x, product(op, &[n, dims.heads, dims.feat])?)
}

/// Checks a per-node scalar `[n, heads]` argument.
pub(crate) fn check_scalars<T>(
    op: &'static str,
    arg: &'static str,
    layout: &'static str,
    x: &[T],
    n: usize,
    heads: usize,
) -> Result<(), RefError> {
    check_len(op, arg, layout, x, product(op, &[n, heads])?)
}

/// Checks a per-edge `[num_edges, heads]` argument.
pub(crate) fn check_edges<T>(
    op: &'static str,
    arg: &'static str,
    x: &[T],
    pattern: &Pattern<'_>,
    heads: usize,
) -> Result<(), RefError> {
    check_scalars(op, arg, layout::EDGES, x, pattern.num_edges(), heads)
}

/// Checks the shapes of the saved forward state and the incoming gradient of an attention
/// backward: `out` and `d_out` `[num_dst, H, F]`, `lse` `[num_dst, H]`.
pub(crate) fn check_saved<T>(
    op: &'static str,
    pattern: &Pattern<'_>,
    dims: Dims,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<(), RefError> {
    check_dense(op, "out", layout::DST_NODES, out, pattern.num_dst, dims)?;
    check_scalars(op, "lse", layout::DST_SCALARS, lse, pattern.num_dst, dims.heads)?;
    check_dense(op, "d_out", layout::DST_NODES, d_out, pattern.num_dst, dims)
}
