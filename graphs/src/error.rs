//! The one error type of the crate: what is wrong with a graph, a parameter or a file, and where.

use std::io;

/// Everything that can go wrong in `dfgnn-graphs`.
///
/// Validation errors name the row, position and value at fault; file errors name the file and
/// either the 1-based line (text formats) or the byte offset (binary formats; for compressed
/// files, the offset in the uncompressed stream).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// `offsets` does not have `num_dst + 1` entries.
    #[error("offsets has {found} entries, but {num_dst} destination rows need num_dst + 1 = {expected}")]
    OffsetsLength {
        /// The number of destination rows.
        num_dst: usize,
        /// `num_dst + 1`.
        expected: usize,
        /// The length that was given.
        found: usize,
    },
    /// `offsets[0]` is not 0.
    #[error("offsets[0] is {found}, but the first row must start at 0")]
    OffsetsStart {
        /// The value of `offsets[0]`.
        found: u64,
    },
    /// `offsets[row] > offsets[row + 1]`.
    #[error("offsets decrease at row {row}: offsets[{row}] = {start} > offsets[{row} + 1] = {end}")]
    OffsetsDecrease {
        /// The row whose end lies before its start.
        row: usize,
        /// `offsets[row]`.
        start: u64,
        /// `offsets[row + 1]`.
        end: u64,
    },
    /// The last offset is not the number of column indices.
    #[error("offsets end at {found}, but there are {nnz} column indices")]
    OffsetsEnd {
        /// The last entry of `offsets`.
        found: u64,
        /// `columns.len()`.
        nnz: usize,
    },
    /// A column index is not below `num_src`.
    #[error("column {column} of edge {position} (row {row}) is out of range: num_src = {num_src}")]
    ColumnOutOfRange {
        /// The destination row holding the edge.
        row: usize,
        /// The edge id (index into `columns`).
        position: usize,
        /// The offending column index.
        column: u32,
        /// The number of source nodes.
        num_src: usize,
    },
    /// An edge given as a `(dst, src)` pair lies outside the graph.
    #[error("edge {index} = (dst {dst}, src {src}) is out of range for {num_dst} x {num_src} nodes")]
    EdgeOutOfRange {
        /// The position of the edge in the input.
        index: usize,
        /// Its destination.
        dst: u64,
        /// Its source.
        src: u64,
        /// The number of destination nodes.
        num_dst: usize,
        /// The number of source nodes.
        num_src: usize,
    },
    /// A count does not fit the graph's index types (u32 node ids, u64 offsets).
    #[error("{what} = {count} is too large: the limit is {limit} ({reason})")]
    TooLarge {
        /// What was counted.
        what: &'static str,
        /// The count.
        count: u64,
        /// The largest allowed value.
        limit: u64,
        /// Which index type sets the limit.
        reason: &'static str,
    },
    /// An operation defined only for square graphs got a bipartite one.
    #[error("{operation} needs a square graph, but this one has {num_dst} destination and {num_src} source nodes")]
    NotSquare {
        /// The operation.
        operation: &'static str,
        /// The number of destination nodes.
        num_dst: usize,
        /// The number of source nodes.
        num_src: usize,
    },
    /// A generator or operation got a parameter outside its domain.
    #[error("{context}: {message}")]
    InvalidParameter {
        /// The generator or operation.
        context: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A benchmark graph name that the grammar does not cover.
    #[error("cannot generate graph {name:?}: {reason}\n{grammar}")]
    UnknownName {
        /// The name that was asked for.
        name: String,
        /// Why it does not parse.
        reason: String,
        /// The grammar of valid names.
        grammar: &'static str,
    },
    /// Malformed text input.
    #[error("{file}:{line}: {message}")]
    Text {
        /// The file (or stream name).
        file: String,
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Malformed binary input.
    #[error("{file}: at byte {offset}: {message}")]
    Binary {
        /// The file (or stream name); for an archive member, `archive:member`.
        file: String,
        /// The byte offset (in the uncompressed stream).
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A file whose parts parse but do not fit together (missing keys, inconsistent shapes).
    #[error("{file}: {message}")]
    Content {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A file name whose extension names no supported format.
    #[error("{file}: unknown graph format ({message})")]
    UnknownFormat {
        /// The file.
        file: String,
        /// The supported extensions.
        message: String,
    },
    /// An I/O error, with the file it happened on.
    #[error("{file}: {error}")]
    Io {
        /// The file.
        file: String,
        /// The underlying error.
        #[source]
        error: io::Error,
    },
    /// An allocation the input asks for exceeds the memory budget ([`crate::Limits`]).
    #[error("{what} needs {bytes} bytes, over the memory budget of {budget} bytes")]
    OverBudget {
        /// What would be allocated.
        what: &'static str,
        /// The bytes it needs (`u64::MAX` when the size overflows).
        bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// A file whose node count is far above what its edges use (sparse ids).
    #[error(
        "{file}: {nodes} nodes ({side} ids up to {nodes}) for {nnz} edges: the ids are far sparser than the \
         edges; relabel them (ReadOptions::relabel, CLI --relabel) to compact the ids and keep the mapping"
    )]
    SparseIds {
        /// The file.
        file: String,
        /// `destination` or `source`.
        side: &'static str,
        /// The node count the ids imply.
        nodes: u64,
        /// The number of edges.
        nnz: u64,
    },
    /// A SMILES string that does not parse.
    #[error("SMILES {smiles} at character {position}: {message}")]
    Smiles {
        /// The SMILES string (an escaped prefix when it is long).
        smiles: String,
        /// The 0-based byte position.
        position: usize,
        /// What is wrong.
        message: String,
    },
}

/// At most this many bytes of the input are quoted in a message.
const PREVIEW_BYTES: usize = 40;

/// A short, escaped quote of input bytes for error messages: at most [`PREVIEW_BYTES`] bytes,
/// non-printable ones as `\xNN`, with the full length when it is cut. Binary garbage is never
/// echoed raw or whole.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(PREVIEW_BYTES)];
    let quoted = format!("\"{}\"", shown.escape_ascii());
    if shown.len() < bytes.len() { format!("{quoted}... ({} bytes)", bytes.len()) } else { quoted }
}

/// The crate's result type.
pub type Result<T, E = GraphError> = std::result::Result<T, E>;

impl GraphError {
    /// Wraps an I/O error with the file it happened on.
    pub fn io(file: impl Into<String>, error: io::Error) -> Self {
        GraphError::Io { file: file.into(), error }
    }

    pub(crate) fn text(file: &str, line: u64, message: impl Into<String>) -> Self {
        GraphError::Text { file: file.to_string(), line, message: message.into() }
    }

    pub(crate) fn binary(file: &str, offset: u64, message: impl Into<String>) -> Self {
        GraphError::Binary { file: file.to_string(), offset, message: message.into() }
    }

    pub(crate) fn content(file: &str, message: impl Into<String>) -> Self {
        GraphError::Content { file: file.to_string(), message: message.into() }
    }

    pub(crate) fn param(context: &'static str, message: impl Into<String>) -> Self {
        GraphError::InvalidParameter { context, message: message.into() }
    }
}
