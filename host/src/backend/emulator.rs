//! The emulator backend: buffers are host vectors, launches run under `dfgnn_device::simt::emu`.

use super::DeviceLimits;

/// The SIMT emulator, reporting the H200's limits so the scheduler plans as for the GPU.
pub(super) struct EmuBackend {
    limits: DeviceLimits,
}

impl EmuBackend {
    pub fn new() -> Self {
        Self { limits: DeviceLimits::h200() }
    }

    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }
}
