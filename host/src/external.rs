//! The attention ops on memory someone else owns: PyTorch tensors, given by address and length.
//!
//! The Python package (`python/`) hands dfgnn the addresses of its tensors (`data_ptr()`, after
//! checking dtype, device, contiguity and 16-byte alignment) and gets the results written into
//! tensors it allocated. Inputs are read in place ([`crate::Backend::borrow_external`]), so under the
//! emulator a CPU tensor is never copied on the way in. Each op still plans on every call and
//! allocates its outputs and workspaces on the backend, then copies the outputs into the caller's
//! memory; the backward runs the forward again for the softmax statistics it needs (the forward's
//! saved state is private to [`crate::gt`] and [`crate::agnn`]).
//!
//! The GPU is not served yet: a CUDA backend refuses to copy into external memory, so these
//! functions fail on it with [`Error::Unsupported`]; launching on a borrowed stream (torch's) and
//! writing outputs in place come with it.

use crate::agnn::{Agnn, AgnnConfig};
use crate::backend::Buffer;
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::gt::{Gt, GtConfig};

/// `len` `f32`s at `addr`, owned by the caller (device memory on the GPU, host memory under the
/// emulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct External {
    /// The address of the first element.
    pub addr: u64,
    /// Elements.
    pub len: usize,
}

/// Borrows `input` on `graph`'s backend.
///
/// # Safety
/// As [`crate::Backend::borrow_external`].
unsafe fn borrow(graph: &DeviceGraph<'_>, input: External) -> Result<Buffer<f32>> {
    // SAFETY: forwarded contract.
    unsafe { graph.backend().borrow_external(input.addr, input.len) }
}

/// Copies `result` into the caller's `out`, which must have exactly its length.
///
/// # Safety
/// As [`crate::Backend::borrow_external`], for `out` (written).
unsafe fn write(
    graph: &DeviceGraph<'_>,
    op: &'static str,
    what: &'static str,
    result: &Buffer<f32>,
    out: External,
) -> Result<()> {
    if out.len != result.len() {
        return Err(Error::ShapeMismatch { op, what, expected: result.len(), got: out.len });
    }
    // SAFETY: forwarded contract.
    let mut dst = unsafe { borrow(graph, out)? };
    graph.backend().copy(result, &mut dst)
}

/// GT's forward: `out = softmax(c·q·kᵀ over the edges)·v`, written into `out` (`[N_dst, H, F]`).
/// `q` is `[N_dst, H, F]`, `k` and `v` are `[N_src, H, F]` (lengths checked).
///
/// # Safety
/// Every [`External`] must satisfy [`crate::Backend::borrow_external`]'s contract on `graph`'s
/// backend for the length of the call; `out` must not overlap the inputs.
pub unsafe fn gt_forward(
    graph: &DeviceGraph<'_>,
    config: &GtConfig,
    q: External,
    k: External,
    v: External,
    out: External,
) -> Result<()> {
    // SAFETY: forwarded contract (for the length of this call).
    let (q, k, v) = unsafe { (borrow(graph, q)?, borrow(graph, k)?, borrow(graph, v)?) };
    let gt = Gt::new(graph, config)?;
    let fwd = gt.forward(&q, &k, &v)?;
    // SAFETY: forwarded contract.
    unsafe { write(graph, "gt forward", "out", &fwd.out, out) }
}

/// GT's backward: the gradients of `Σ d_out ⊙ out` with respect to `q`, `k` and `v`, written into
/// `dq` (`[N_dst, H, F]`), `dk` and `dv` (`[N_src, H, F]`). Runs the forward first.
///
/// # Safety
/// As [`gt_forward`]; the three outputs overlap neither each other nor the inputs.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gt_backward(
    graph: &DeviceGraph<'_>,
    config: &GtConfig,
    q: External,
    k: External,
    v: External,
    d_out: External,
    dq: External,
    dk: External,
    dv: External,
) -> Result<()> {
    // SAFETY: forwarded contract (for the length of this call).
    let (q, k, v, d_out) = unsafe { (borrow(graph, q)?, borrow(graph, k)?, borrow(graph, v)?, borrow(graph, d_out)?) };
    let gt = Gt::new(graph, config)?;
    let fwd = gt.forward(&q, &k, &v)?;
    let grads = gt.backward(&fwd, &d_out)?;
    // SAFETY: forwarded contract.
    unsafe {
        write(graph, "gt backward", "dq", &grads.dq, dq)?;
        write(graph, "gt backward", "dk", &grads.dk, dk)?;
        write(graph, "gt backward", "dv", &grads.dv, dv)
    }
}

/// AGNN's forward: `out = softmax(β·cos(h_i, h_j) over the edges)·h`, written into `out`. `h` and
/// `out` are `[N, H, F]` (the graph must be square).
///
/// # Safety
/// As [`gt_forward`].
pub unsafe fn agnn_forward(
    graph: &DeviceGraph<'_>,
    config: &AgnnConfig,
    h: External,
    beta: f32,
    out: External,
) -> Result<()> {
    // SAFETY: forwarded contract (for the length of this call).
    let h = unsafe { borrow(graph, h)? };
    let agnn = Agnn::new(graph, config)?;
    let fwd = agnn.forward(&h, beta)?;
    // SAFETY: forwarded contract.
    unsafe { write(graph, "agnn forward", "out", fwd.out(), out) }
}

/// AGNN's backward: the gradient of `Σ d_out ⊙ out` with respect to `h`, written into `dh`
/// (`[N, H, F]`), and the gradient of β, returned. Runs the forward first.
///
/// # Safety
/// As [`gt_forward`].
pub unsafe fn agnn_backward(
    graph: &DeviceGraph<'_>,
    config: &AgnnConfig,
    h: External,
    beta: f32,
    d_out: External,
    dh: External,
) -> Result<f32> {
    // SAFETY: forwarded contract (for the length of this call).
    let (h, d_out) = unsafe { (borrow(graph, h)?, borrow(graph, d_out)?) };
    let agnn = Agnn::new(graph, config)?;
    let fwd = agnn.forward(&h, beta)?;
    let grads = agnn.backward(&fwd, &d_out)?;
    // SAFETY: forwarded contract.
    unsafe { write(graph, "agnn backward", "dh", &grads.dh, dh)? };
    Ok(grads.d_beta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backend;

    fn external(data: &[f32]) -> External {
        External { addr: data.as_ptr() as u64, len: data.len() }
    }

    /// 16 bytes, aligned as the kernels' vector loads need.
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Quad([f32; 4]);

    /// 16-byte aligned host memory of `len` floats filled by `f`.
    struct Aligned(Vec<Quad>, usize);

    impl Aligned {
        fn new(len: usize, f: impl Fn(usize) -> f32) -> Self {
            let mut quads = vec![Quad([0.0; 4]); len.div_ceil(4)];
            for i in 0..len {
                quads[i / 4].0[i % 4] = f(i);
            }
            Self(quads, len)
        }

        fn slice(&self) -> &[f32] {
            // SAFETY: `Quad` is four `f32`s with no padding; the vector holds at least `len` of them.
            unsafe { std::slice::from_raw_parts(self.0.as_ptr() as *const f32, self.1) }
        }

        fn external(&self) -> External {
            external(self.slice())
        }
    }

    #[test]
    fn gt_on_external_memory_matches_gt_on_buffers() {
        let backend = Backend::emulator();
        let csr = dfgnn_graphs::Csr::from_rows(5, &[vec![0u32, 1], vec![], vec![2, 2, 4], vec![3]]).unwrap();
        let graph = DeviceGraph::new(&backend, &csr).unwrap();
        let config = GtConfig::new(2, 4);
        let q = Aligned::new(4 * 8, |i| (i as f32 * 0.37).sin());
        let k = Aligned::new(5 * 8, |i| (i as f32 * 0.11).cos());
        let v = Aligned::new(5 * 8, |i| i as f32 * 0.05);
        let d = Aligned::new(4 * 8, |i| 1.0 - i as f32 * 0.01);
        let gt = Gt::new(&graph, &config).unwrap();
        let upload = |a: &Aligned| backend.upload(a.slice()).unwrap();
        let (bq, bk, bv, bd) = (upload(&q), upload(&k), upload(&v), upload(&d));
        let fwd = gt.forward(&bq, &bk, &bv).unwrap();
        let grads = gt.backward(&fwd, &bd).unwrap();

        let out = Aligned::new(4 * 8, |_| f32::NAN);
        // SAFETY: all buffers are live, aligned, distinct and of the stated lengths.
        unsafe { gt_forward(&graph, &config, q.external(), k.external(), v.external(), out.external()).unwrap() };
        assert_eq!(out.slice(), backend.download(&fwd.out).unwrap());
        let (dq, dk, dv) =
            (Aligned::new(4 * 8, |_| f32::NAN), Aligned::new(5 * 8, |_| f32::NAN), Aligned::new(5 * 8, |_| f32::NAN));
        // SAFETY: as above.
        unsafe {
            let (q, k, v, d) = (q.external(), k.external(), v.external(), d.external());
            gt_backward(&graph, &config, q, k, v, d, dq.external(), dk.external(), dv.external()).unwrap();
        }
        assert_eq!(dq.slice(), backend.download(&grads.dq).unwrap());
        assert_eq!(dk.slice(), backend.download(&grads.dk).unwrap());
        assert_eq!(dv.slice(), backend.download(&grads.dv).unwrap());
    }

    #[test]
    fn wrong_lengths_and_misaligned_addresses_are_errors() {
        let backend = Backend::emulator();
        let csr = dfgnn_graphs::Csr::from_rows(3, &[vec![0u32, 1], vec![2]]).unwrap();
        let graph = DeviceGraph::new(&backend, &csr).unwrap();
        let config = GtConfig::new(1, 4);
        let x = Aligned::new(3 * 4 + 4, |i| i as f32);
        let rows2 = External { addr: x.external().addr, len: 2 * 4 };
        let rows3 = External { addr: x.external().addr, len: 3 * 4 };
        let (out2, out3) = (Aligned::new(2 * 4, |_| 0.0), Aligned::new(3 * 4, |_| 0.0));
        // SAFETY: every view lies within a live buffer; the outputs are distinct from the inputs.
        let err = unsafe { gt_forward(&graph, &config, rows2, rows3, rows3, out3.external()) }.unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { what: "out", expected: 8, got: 12, .. }), "{err}");
        // SAFETY: as above.
        let err = unsafe { gt_forward(&graph, &config, rows3, rows3, rows3, out2.external()) }.unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { what: "q", .. }), "{err}");
        let misaligned = External { addr: x.external().addr + 4, len: 3 * 4 };
        // SAFETY: as above (the misaligned view is refused before any use).
        let err = unsafe { gt_forward(&graph, &config, rows2, misaligned, rows3, out2.external()) }.unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("aligned")), "{err}");
        // SAFETY: as above.
        unsafe { gt_forward(&graph, &config, rows2, rows3, rows3, out2.external()) }.unwrap();
        assert!(out2.slice().iter().all(|x| x.is_finite()));
    }
}
