//! The error type of the command-line tool: the library's errors, and what only the tool can say
//! (a failed check, a bad argument, a graph that cannot be read).

/// Everything that can stop a `dfgnn` command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The library refused or failed.
    #[error(transparent)]
    Library(#[from] dfgnn::Error),
    /// A graph could not be read, generated or validated.
    #[error(transparent)]
    Graph(#[from] dfgnn_graphs::GraphError),
    /// The CPU reference rejected its inputs.
    #[error("reference: {0}")]
    Reference(#[from] dfgnn_reference::RefError),
    /// A result failed its check against the reference.
    #[error("check failed: {what}")]
    CheckFailed {
        /// What differed, and by how much.
        what: String,
    },
    /// The command would need more host memory than it may use.
    #[error(
        "out of host memory: {during} needs about {} and may use {} (the memory available, or --max-memory)",
        bytesize::ByteSize(*requested as u64),
        bytesize::ByteSize(*limit as u64)
    )]
    HostMemory {
        /// What the command was about to do.
        during: String,
        /// Bytes it would need.
        requested: usize,
        /// Bytes it may use.
        limit: usize,
    },
    /// An argument the command cannot use.
    #[error("{what}")]
    Usage {
        /// What and why.
        what: String,
    },
}

/// `Result` with [`CliError`].
pub type Result<T, E = CliError> = std::result::Result<T, E>;
