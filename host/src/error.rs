//! The one error type of the host library.

use dfgnn_device::simt::emu::EmuError;

/// Everything that can go wrong in a dfgnn call, by kind.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA device could be used (no driver, no GPU, or the driver refused).
    #[error("no CUDA device: {reason}")]
    NoDevice {
        /// Why.
        reason: String,
    },
    /// A CUDA driver call failed.
    #[error("CUDA driver error during {during}: {source}")]
    Driver {
        /// What the library was doing.
        during: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
    /// The device ran out of memory, or an allocation would pass the backend's memory budget
    /// (`Backend::with_memory_budget`; under the emulator, the machine's available memory).
    #[error("out of device memory: {during} needs {requested} bytes, {free} of {total} bytes free")]
    OutOfMemory {
        /// What the library was doing.
        during: String,
        /// Bytes asked for.
        requested: usize,
        /// Bytes free at the time.
        free: usize,
        /// Device memory in all, or the budget.
        total: usize,
    },
    /// The emulator found a defect in a kernel (or a launch the GPU would refuse).
    #[error("emulator: {0}")]
    Emulator(#[from] EmuError),
    /// A graph failed validation.
    #[error("invalid graph: {0}")]
    InvalidGraph(#[from] dfgnn_graphs::GraphError),
    /// An argument's shape does not match what the operation needs.
    #[error("shape mismatch in {op}: {what} should have {expected} elements, has {got}")]
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// The argument.
        what: &'static str,
        /// Elements expected.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// A cuSPARSE call failed, or the library could not be loaded (the `cusparse` feature).
    #[cfg(feature = "cusparse")]
    #[error("cuSPARSE error during {during}: {status}")]
    Cusparse {
        /// What the library was doing.
        during: String,
        /// cuSPARSE's status, or why the library is missing.
        status: String,
    },
    /// A size or option the library does not support (with the limit).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What and why.
        what: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches "what the library was doing" to driver errors.
pub(crate) trait DriverContext<T> {
    fn during(self, during: impl FnOnce() -> String) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn during(self, during: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Driver { during: during(), source })
    }
}
