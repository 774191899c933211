//! The one error type of the crate: every misuse of the public functions (a malformed pattern, a
//! slice of the wrong length, a zero dimension, a non-square pattern where one is required) is
//! reported as a [`RefError`] instead of a panic.

/// What went wrong in a call into `dfgnn-reference`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RefError {
    /// A dense or per-edge argument does not have the length its shape implies.
    #[error("{op}: argument `{arg}` {layout} should have {expected} elements, got {got}")]
    ShapeMismatch {
        /// The public function that rejected the call.
        op: &'static str,
        /// The argument's name, as in the function's signature.
        arg: &'static str,
        /// The argument's logical shape, e.g. `[num_dst, heads, feat]`.
        layout: &'static str,
        /// The length the shape implies.
        expected: usize,
        /// The length that was passed.
        got: usize,
    },
    /// The CSR pattern breaks one of the rules listed on [`crate::Pattern::new`].
    #[error("invalid pattern: {what} (at index {at})")]
    InvalidPattern {
        /// Which rule is broken.
        what: &'static str,
        /// The offending index into `offsets` or `columns` (or the length that is wrong).
        at: usize,
    },
    /// The model needs one node set for sources and destinations (AGNN).
    #[error("{op} needs a square pattern, got num_dst = {num_dst}, num_src = {num_src}")]
    NotSquare {
        /// The public function that rejected the call.
        op: &'static str,
        /// Number of destination nodes (CSR rows).
        num_dst: usize,
        /// Number of source nodes (CSR columns).
        num_src: usize,
    },
    /// A scalar argument is out of range: a zero head or feature count, a head index past the
    /// head count, or sizes whose product overflows `usize`.
    #[error("{op}: {what}")]
    InvalidArgument {
        /// The public function that rejected the call.
        op: &'static str,
        /// What is wrong with the argument.
        what: &'static str,
    },
}
