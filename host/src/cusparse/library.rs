//! A small safe layer over cuSPARSE's generic API (cudarc's raw `sys` bindings, loaded at run
//! time): the handle, CSR and dense-matrix descriptors (each destroyed when dropped), and the
//! three routines the cuSPARSE path calls — SDDMM, SpMM and a gather — on `f32` values and 32-bit
//! indices, one head of an `[nodes, H, F]` array at a time.
//!
//! Every routine checks its arguments' shapes first (a mismatch is [`Error::ShapeMismatch`], a
//! size past cuSPARSE's 32-bit indices [`Error::Unsupported`]), then, unless the call is only
//! being measured ([`crate::Workspace::Measure`]: nothing runs), sets the handle's stream to the
//! backend's current one, asks cuSPARSE for its workspace size, takes that workspace from the
//! backend (counted like any buffer) and queues the routine. A status other than success is
//! [`Error::Cusparse`]; so is a missing `libcusparse`, found before the first call (never a panic).
//!
//! Layout: a head `h` of a row-major `[nodes, H, F]` array is the row-major `nodes × F` matrix
//! that starts `h·F` elements in, with rows `H·F` elements apart (the leading dimension): cuSPARSE
//! reads and writes it in place, with no copy. A head's sparse values are a contiguous run of
//! `nnz` values (cuSPARSE's CSR has no value stride), so per-edge arrays are `[H, E]`.

use std::ffi::c_void;

use cudarc::cusparse::sys;

use crate::backend::{Backend, Buffer};
use crate::error::{Error, Result};

/// cuSPARSE's SpMM algorithms for a non-transposed CSR and row-major dense operands, the ones the
/// path can be told to use (the GPU test tries each).
///
/// The path uses [`SpmmAlgorithm::Csr3`], which cuSPARSE documents as giving the same bits on
/// every run. With ALG2 (which the path used first) the path's `dq` bits differed between two
/// runs on an H200 (CUDA 12.6). cuSPARSE also documents that products with the transposed sparse matrix
/// may differ from run to run, so the path never asks for one: it multiplies by the transpose's
/// own CSR (the graph's CSC) instead.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpmmAlgorithm {
    /// `CUSPARSE_SPMM_CSR_ALG1`.
    Csr1,
    /// `CUSPARSE_SPMM_CSR_ALG2`.
    Csr2,
    /// `CUSPARSE_SPMM_CSR_ALG3`.
    Csr3,
}

impl SpmmAlgorithm {
    /// Every algorithm, for tests.
    pub const ALL: [SpmmAlgorithm; 3] = [SpmmAlgorithm::Csr1, SpmmAlgorithm::Csr2, SpmmAlgorithm::Csr3];

    /// cuSPARSE's name for it.
    pub fn name(self) -> &'static str {
        match self {
            SpmmAlgorithm::Csr1 => "CUSPARSE_SPMM_CSR_ALG1",
            SpmmAlgorithm::Csr2 => "CUSPARSE_SPMM_CSR_ALG2",
            SpmmAlgorithm::Csr3 => "CUSPARSE_SPMM_CSR_ALG3",
        }
    }

    fn raw(self) -> sys::cusparseSpMMAlg_t {
        match self {
            SpmmAlgorithm::Csr1 => sys::cusparseSpMMAlg_t::CUSPARSE_SPMM_CSR_ALG1,
            SpmmAlgorithm::Csr2 => sys::cusparseSpMMAlg_t::CUSPARSE_SPMM_CSR_ALG2,
            SpmmAlgorithm::Csr3 => sys::cusparseSpMMAlg_t::CUSPARSE_SPMM_CSR_ALG3,
        }
    }
}

/// `status` as a result: [`Error::Cusparse`] naming `during` unless it is success.
fn check(status: sys::cusparseStatus_t, during: impl FnOnce() -> String) -> Result<()> {
    if status == sys::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cusparse { during: during(), status: format!("{status:?}") })
    }
}

/// `n` as one of cuSPARSE's 32-bit (signed) indices: the path's patterns hold indices, offsets and
/// edge counts that way.
pub(crate) fn index(n: usize, what: &str) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::Unsupported {
        what: format!("{what} = {n} on the cuSPARSE path (its indices are 32-bit: at most {})", i32::MAX),
    })
}

/// One head of a row-major `[nodes, heads, feat]` array as a dense matrix: `rows × cols`
/// (`nodes × feat`), starting `offset` elements in, rows `ld` (`heads·feat`) elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeadMatrix {
    /// Elements before the first one of the head.
    pub offset: usize,
    /// Rows (nodes).
    pub rows: usize,
    /// Columns (features of one head).
    pub cols: usize,
    /// Elements from one row to the next.
    pub ld: usize,
}

impl HeadMatrix {
    /// Head `head` of an array of `len` elements that should be `[nodes, heads, feat]`; `what`
    /// names it in errors.
    pub fn of(what: &'static str, len: usize, nodes: usize, heads: u32, feat: u32, head: u32) -> Result<Self> {
        if heads == 0 || feat == 0 || head >= heads {
            return Err(Error::Unsupported { what: format!("head {head} of {heads} heads x {feat} features") });
        }
        let ld = heads as usize * feat as usize;
        let expected = nodes.checked_mul(ld).ok_or_else(|| Error::Unsupported {
            what: format!("{nodes} nodes x {heads} heads x {feat} features: the size overflows"),
        })?;
        if len != expected {
            return Err(Error::ShapeMismatch { op: "cusparse", what, expected, got: len });
        }
        Ok(Self { offset: head as usize * feat as usize, rows: nodes, cols: feat as usize, ld })
    }
}

/// A sparse pattern on the device in cuSPARSE's CSR: `offsets` (`rows + 1`) and `indices`
/// (`nnz`), both 32-bit, validated when built (the host side's `Csr`).
pub(crate) struct Csr32 {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row offsets.
    pub offsets: Buffer<i32>,
    /// Column of each entry, sorted within each row.
    pub indices: Buffer<i32>,
}

impl Csr32 {
    /// Entries.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Uploads a validated pattern (`offsets` of `rows + 1` nondecreasing values from 0 to
    /// `indices.len()`, every index below `cols`), refusing sizes past 32-bit indices.
    pub fn upload(backend: &Backend, rows: usize, cols: usize, offsets: &[u64], indices: &[u32]) -> Result<Self> {
        index(rows, "rows")?;
        index(cols, "columns")?;
        index(indices.len(), "edges")?;
        // Every offset is at most the edge count and every index below the columns, both checked
        // to fit above, so the conversions are exact.
        let offsets: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        let indices: Vec<i32> = indices.iter().map(|&i| i as i32).collect();
        Ok(Self { rows, cols, offsets: backend.upload(&offsets)?, indices: backend.upload(&indices)? })
    }
}

/// A cuSPARSE handle (destroyed when dropped).
pub(crate) struct Handle {
    raw: sys::cusparseHandle_t,
}

impl Handle {
    /// A handle on the CUDA device of `backend` (whose primary context becomes current):
    /// [`Error::Cusparse`] when `libcusparse` cannot be loaded, [`Error::Unsupported`] under the
    /// emulator.
    pub fn new(backend: &Backend) -> Result<Self> {
        raw_stream(backend)?;
        // SAFETY: only probes whether the shared library can be loaded; nothing of it is called.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Cusparse {
                during: "loading the cuSPARSE library".to_string(),
                status: "libcusparse.so was not found: put the folder that holds it (the CUDA toolkit's lib64, or \
                         site-packages/nvidia/cu13/lib of the nvidia-cusparse wheel) on LD_LIBRARY_PATH"
                    .to_string(),
            });
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid place for the new handle; the library is loaded (checked above)
        // and the device's primary context is current on this thread (`raw_stream`).
        check(unsafe { sys::cusparseCreate(&mut raw) }, || "creating a handle".to_string())?;
        Ok(Self { raw })
    }

    /// The handle, set to queue its work on the backend's current stream.
    fn on(&self, backend: &Backend) -> Result<sys::cusparseHandle_t> {
        let stream = raw_stream(backend)?;
        // SAFETY: the handle is live (owned by `self`); `stream` is a live stream of the device's
        // primary context, the backend's own or its call scope's, either of which outlives the
        // work queued here (`Backend::raw_stream`).
        check(unsafe { sys::cusparseSetStream(self.raw, stream as sys::cudaStream_t) }, || {
            "setting the handle's stream".to_string()
        })?;
        Ok(self.raw)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `cusparseCreate` and is destroyed only here, once. Work queued
        // with it keeps its own resources; a failure to destroy leaks, which is no worse.
        let _ = unsafe { sys::cusparseDestroy(self.raw) };
    }
}

/// The backend's current CUDA stream with its context current, or [`Error::Unsupported`] under
/// the emulator.
fn raw_stream(backend: &Backend) -> Result<cudarc::driver::sys::CUstream> {
    backend.raw_stream()?.ok_or_else(|| Error::Unsupported {
        what: "the cuSPARSE path on the emulator (it runs on a CUDA device only)".to_string(),
    })
}

/// A CSR matrix descriptor over a pattern and one run of values (destroyed when dropped).
struct SparseMatrix {
    raw: sys::cusparseSpMatDescr_t,
}

impl SparseMatrix {
    /// The pattern with the `nnz` values at device address `values`.
    ///
    /// # Safety
    /// `values` holds `pattern.nnz()` live `f32` of the pattern's device for as long as the
    /// descriptor is used, written by no one else while a routine writes them.
    unsafe fn csr(pattern: &Csr32, values: u64) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid place for the descriptor; the pattern's arrays are live device
        // buffers of `rows + 1` and `nnz` 32-bit indices (`Csr32`), the values as the caller
        // promises; cuSPARSE only records the pointers here.
        check(
            unsafe {
                sys::cusparseCreateCsr(
                    &mut raw,
                    pattern.rows as i64,
                    pattern.cols as i64,
                    pattern.nnz() as i64,
                    pattern.offsets.device_addr() as *mut c_void,
                    pattern.indices.device_addr() as *mut c_void,
                    values as *mut c_void,
                    sys::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    sys::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                    sys::cudaDataType_t::CUDA_R_32F,
                )
            },
            || format!("describing a {} x {} CSR matrix of {} entries", pattern.rows, pattern.cols, pattern.nnz()),
        )?;
        Ok(Self { raw })
    }
}

impl Drop for SparseMatrix {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `cusparseCreateCsr` and is destroyed only here, once; routines
        // that used it have been queued, and cuSPARSE needs no descriptor to run them.
        let _ = unsafe { sys::cusparseDestroySpMat(self.raw as sys::cusparseConstSpMatDescr_t) };
    }
}

/// A dense row-major matrix descriptor (destroyed when dropped).
struct DenseMatrix {
    raw: sys::cusparseDnMatDescr_t,
}

impl DenseMatrix {
    /// The head `m` of the `f32` array at device address `base`.
    ///
    /// # Safety
    /// `base` holds the whole array `m` was made from ([`HeadMatrix::of`]), live on the device for
    /// as long as the descriptor is used, written by no one else while a routine writes it.
    unsafe fn head(base: u64, m: HeadMatrix) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        let values = base + (m.offset * std::mem::size_of::<f32>()) as u64;
        // SAFETY: `raw` is a valid place for the descriptor; every element the matrix covers,
        // `offset + r·ld + c` for `r < rows`, `c < cols`, lies in the array (`HeadMatrix::of`
        // checked its length) that the caller promises is live; cuSPARSE only records the pointer.
        check(
            unsafe {
                sys::cusparseCreateDnMat(
                    &mut raw,
                    m.rows as i64,
                    m.cols as i64,
                    m.ld as i64,
                    values as *mut c_void,
                    sys::cudaDataType_t::CUDA_R_32F,
                    sys::cusparseOrder_t::CUSPARSE_ORDER_ROW,
                )
            },
            || format!("describing a {} x {} dense matrix (leading dimension {})", m.rows, m.cols, m.ld),
        )?;
        Ok(Self { raw })
    }

    fn input(&self) -> sys::cusparseConstDnMatDescr_t {
        self.raw as sys::cusparseConstDnMatDescr_t
    }
}

impl Drop for DenseMatrix {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `cusparseCreateDnMat` and is destroyed only here, once.
        let _ = unsafe { sys::cusparseDestroyDnMat(self.raw as sys::cusparseConstDnMatDescr_t) };
    }
}

/// A routine's workspace of `bytes` bytes from the backend (`None` for none), and its address.
fn workspace(backend: &Backend, bytes: usize) -> Result<(Option<Buffer<u64>>, *mut c_void)> {
    if bytes == 0 {
        return Ok((None, std::ptr::null_mut()));
    }
    let buffer = backend.alloc::<u64>(bytes.div_ceil(8))?;
    let addr = buffer.device_addr() as *mut c_void;
    Ok((Some(buffer), addr))
}

/// The start address of part `part` of `parts` runs of `nnz` values in `values`
/// (`[parts, nnz]`); `what` names it in errors.
fn values_part(what: &'static str, values: &Buffer<f32>, parts: usize, part: usize, nnz: usize) -> Result<u64> {
    let expected = parts
        .checked_mul(nnz)
        .filter(|_| part < parts)
        .ok_or_else(|| Error::Unsupported { what: format!("part {part} of {parts} runs of {nnz} values") })?;
    if values.len() != expected {
        return Err(Error::ShapeMismatch { op: "cusparse", what, expected, got: values.len() });
    }
    Ok(values.device_addr() + (part * nnz * std::mem::size_of::<f32>()) as u64)
}

/// The heads and features of one routine: which head of `[nodes, heads, feat]` arrays it reads
/// and writes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    /// Heads `H` of the arrays.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The head.
    pub head: u32,
}

impl Head {
    fn of(self, what: &'static str, array: &Buffer<f32>, nodes: usize) -> Result<HeadMatrix> {
        HeadMatrix::of(what, array.len(), nodes, self.heads, self.feat, self.head)
    }
}

/// SDDMM of one head: `values[head] = alpha·(a_h·b_hᵀ) ∘ spy(pattern)`, the values of part
/// `head` of the `[H, nnz]` array `values`, `a` `[pattern.rows, H, F]`, `b` `[pattern.cols, H, F]`.
pub(crate) fn sddmm(
    backend: &Backend,
    handle: &Handle,
    pattern: &Csr32,
    (a, b): (&Buffer<f32>, &Buffer<f32>),
    at: Head,
    alpha: f32,
    values: &mut Buffer<f32>,
) -> Result<()> {
    let (ma, mb) = (at.of("a", a, pattern.rows)?, at.of("b", b, pattern.cols)?);
    let out = values_part("values", values, at.heads as usize, at.head as usize, pattern.nnz())?;
    if backend.measuring() || pattern.nnz() == 0 {
        return Ok(());
    }
    let beta = 0.0f32;
    let handle = handle.on(backend)?;
    // SAFETY: `a` and `b` are live buffers of the whole arrays `ma` and `mb` describe, `out` the
    // head's run of `nnz` values inside `values` (checked above); the inputs are only read.
    let (da, db, c) = unsafe {
        (
            DenseMatrix::head(a.device_addr(), ma)?,
            DenseMatrix::head(b.device_addr(), mb)?,
            SparseMatrix::csr(pattern, out)?,
        )
    };
    let (op_a, op_b) = (
        sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
        sys::cusparseOperation_t::CUSPARSE_OPERATION_TRANSPOSE,
    );
    let alg = sys::cusparseSDDMMAlg_t::CUSPARSE_SDDMM_ALG_DEFAULT;
    let f32_type = sys::cudaDataType_t::CUDA_R_32F;
    let (alpha_p, beta_p) = (&alpha as *const f32 as *const c_void, &beta as *const f32 as *const c_void);
    let mut bytes = 0usize;
    // SAFETY: the handle and descriptors are live; alpha and beta are host scalars (the default
    // pointer mode); `bytes` is a valid place for the size.
    check(
        unsafe {
            sys::cusparseSDDMM_bufferSize(
                handle,
                op_a,
                op_b,
                alpha_p,
                da.input(),
                db.input(),
                beta_p,
                c.raw,
                f32_type,
                alg,
                &mut bytes,
            )
        },
        || "sizing an SDDMM's workspace".to_string(),
    )?;
    let (_workspace, buffer) = workspace(backend, bytes)?;
    backend.count_library_call();
    // SAFETY: as above; `buffer` is a live device workspace of at least `bytes` bytes, freed (in
    // stream order) only after this call is queued; the output values are distinct from the
    // dense inputs (a separate buffer).
    check(
        unsafe {
            sys::cusparseSDDMM(
                handle,
                op_a,
                op_b,
                alpha_p,
                da.input(),
                db.input(),
                beta_p,
                c.raw,
                f32_type,
                alg,
                buffer,
            )
        },
        || {
            format!(
                "SDDMM of head {} ({} x {} x {}, {} entries)",
                at.head,
                pattern.rows,
                at.feat,
                pattern.cols,
                pattern.nnz()
            )
        },
    )
}

/// SpMM of one head with `algorithm`: `out_h = alpha·(S·x_h)` (overwriting `out_h`), `S` the pattern with part
/// `part` of the `[parts, nnz]` array `values`, `x` `[pattern.cols, H, F]`, `out`
/// `[pattern.rows, H, F]`. A pattern without entries runs nothing (`out_h` keeps what it holds:
/// the path zeroes its outputs first).
#[allow(clippy::too_many_arguments)]
pub(crate) fn spmm(
    backend: &Backend,
    handle: &Handle,
    pattern: &Csr32,
    (values, parts, part): (&Buffer<f32>, usize, usize),
    x: &Buffer<f32>,
    at: Head,
    (alpha, algorithm): (f32, SpmmAlgorithm),
    out: &mut Buffer<f32>,
) -> Result<()> {
    let (mx, mo) = (at.of("x", x, pattern.cols)?, at.of("out", out, pattern.rows)?);
    let weights = values_part("values", values, parts, part, pattern.nnz())?;
    if backend.measuring() || pattern.nnz() == 0 {
        return Ok(());
    }
    let beta = 0.0f32;
    let handle = handle.on(backend)?;
    // SAFETY: `x` and `out` are live buffers of the whole arrays `mx` and `mo` describe, `weights`
    // the part's run of `nnz` values inside `values` (checked above); `out` is distinct from both
    // inputs (`&mut`), which are only read.
    let (a, b, c) = unsafe {
        (
            SparseMatrix::csr(pattern, weights)?,
            DenseMatrix::head(x.device_addr(), mx)?,
            DenseMatrix::head(out.device_addr(), mo)?,
        )
    };
    let op = sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
    let f32_type = sys::cudaDataType_t::CUDA_R_32F;
    let a_in = a.raw as sys::cusparseConstSpMatDescr_t;
    let (alpha_p, beta_p) = (&alpha as *const f32 as *const c_void, &beta as *const f32 as *const c_void);
    let mut bytes = 0usize;
    // SAFETY: the handle and descriptors are live; alpha and beta are host scalars; `bytes` is a
    // valid place for the size.
    check(
        unsafe {
            sys::cusparseSpMM_bufferSize(
                handle,
                op,
                op,
                alpha_p,
                a_in,
                b.input(),
                beta_p,
                c.raw,
                f32_type,
                algorithm.raw(),
                &mut bytes,
            )
        },
        || "sizing an SpMM's workspace".to_string(),
    )?;
    let (_workspace, buffer) = workspace(backend, bytes)?;
    backend.count_library_call();
    // SAFETY: as above; `buffer` is a live device workspace of at least `bytes` bytes, freed (in
    // stream order) only after this call is queued.
    check(
        unsafe {
            sys::cusparseSpMM(
                handle,
                op,
                op,
                alpha_p,
                a_in,
                b.input(),
                beta_p,
                c.raw,
                f32_type,
                algorithm.raw(),
                buffer,
            )
        },
        || {
            format!(
                "SpMM ({algorithm:?}) of head {} ({} x {} x {}, {} entries)",
                at.head,
                pattern.rows,
                pattern.cols,
                at.feat,
                pattern.nnz()
            )
        },
    )
}

/// A sparse vector descriptor over device indices and values (destroyed when dropped).
struct SparseVector {
    raw: sys::cusparseSpVecDescr_t,
}

impl Drop for SparseVector {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: `raw` came from `cusparseCreateSpVec` and is destroyed only here, once.
            let _ = unsafe { sys::cusparseDestroySpVec(self.raw as sys::cusparseConstSpVecDescr_t) };
        }
    }
}

/// A read-only dense vector descriptor (destroyed when dropped).
struct DenseVector {
    raw: sys::cusparseConstDnVecDescr_t,
}

impl Drop for DenseVector {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: `raw` came from `cusparseCreateConstDnVec` and is destroyed only here, once.
            let _ = unsafe { sys::cusparseDestroyDnVec(self.raw) };
        }
    }
}

/// `out[i] = values[part][indices[i]]` for every `i`: part `part` of the `[parts, n]` array
/// `values` permuted by `indices` (`n` of them, each below `n`), into `out` (`n`).
pub(crate) fn gather(
    backend: &Backend,
    handle: &Handle,
    (values, parts, part): (&Buffer<f32>, usize, usize),
    indices: &Buffer<i32>,
    out: &mut Buffer<f32>,
) -> Result<()> {
    let n = indices.len();
    let src = values_part("values", values, parts, part, n)?;
    if out.len() != n {
        return Err(Error::ShapeMismatch { op: "cusparse gather", what: "out", expected: n, got: out.len() });
    }
    index(n, "gathered values")?;
    if backend.measuring() || n == 0 {
        return Ok(());
    }
    let handle = handle.on(backend)?;
    let mut x = SparseVector { raw: std::ptr::null_mut() };
    // SAFETY: `x.raw` is a valid place for the descriptor; `indices` and `out` are live device
    // buffers of `n` elements (checked above); cuSPARSE only records the pointers.
    check(
        unsafe {
            sys::cusparseCreateSpVec(
                &mut x.raw,
                n as i64,
                n as i64,
                indices.device_addr() as *mut c_void,
                out.device_addr() as *mut c_void,
                sys::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                sys::cudaDataType_t::CUDA_R_32F,
            )
        },
        || format!("describing a sparse vector of {n} entries"),
    )?;
    let mut y = DenseVector { raw: std::ptr::null() };
    // SAFETY: `y.raw` is a valid place for the descriptor; `src` is the part's live run of `n`
    // values (checked above), only read.
    check(
        unsafe {
            sys::cusparseCreateConstDnVec(&mut y.raw, n as i64, src as *const c_void, sys::cudaDataType_t::CUDA_R_32F)
        },
        || format!("describing a dense vector of {n} entries"),
    )?;
    backend.count_library_call();
    // SAFETY: the handle and both descriptors are live; every index is below `n` (the caller's
    // permutation), so every read stays in the run; `out` is distinct from both inputs.
    check(unsafe { sys::cusparseGather(handle, y.raw, x.raw) }, || format!("gathering {n} values"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_a_strided_view_of_the_whole_array() {
        let m = HeadMatrix::of("q", 10 * 3 * 7, 10, 3, 7, 2).unwrap();
        assert_eq!(m, HeadMatrix { offset: 14, rows: 10, cols: 7, ld: 21 });
        // The last element it covers is the array's last.
        assert_eq!(m.offset + (m.rows - 1) * m.ld + m.cols - 1, 10 * 3 * 7 - 1);
        assert_eq!(HeadMatrix::of("q", 0, 0, 1, 64, 0).unwrap().rows, 0);
    }

    #[test]
    fn heads_past_the_array_and_wrong_lengths_are_refused() {
        assert!(matches!(HeadMatrix::of("q", 210, 10, 3, 7, 3), Err(Error::Unsupported { .. })));
        assert!(matches!(HeadMatrix::of("q", 210, 10, 0, 7, 0), Err(Error::Unsupported { .. })));
        assert!(matches!(HeadMatrix::of("q", 210, 10, 3, 0, 0), Err(Error::Unsupported { .. })));
        match HeadMatrix::of("k", 209, 10, 3, 7, 0) {
            Err(Error::ShapeMismatch { what: "k", expected: 210, got: 209, .. }) => {}
            other => panic!("expected a shape mismatch, got {other:?}"),
        }
        assert!(matches!(HeadMatrix::of("q", 0, usize::MAX, 2, 2, 0), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn sizes_past_32_bit_indices_are_refused() {
        assert_eq!(index(i32::MAX as usize, "edges").unwrap(), i32::MAX);
        let err = index(i32::MAX as usize + 1, "edges").unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("32-bit")), "{err}");
    }

    #[test]
    fn value_runs_are_checked_against_their_array() {
        let backend = Backend::emulator();
        let values = backend.zeros::<f32>(12).unwrap();
        let base = values.device_addr();
        assert_eq!(values_part("v", &values, 3, 2, 4).unwrap(), base + 32);
        assert!(matches!(values_part("v", &values, 3, 3, 4), Err(Error::Unsupported { .. })));
        assert!(matches!(values_part("v", &values, 2, 0, 4), Err(Error::ShapeMismatch { expected: 8, got: 12, .. })));
        assert!(matches!(values_part("v", &values, usize::MAX, 0, 4), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn the_emulator_has_no_cusparse_handle() {
        let err = Handle::new(&Backend::emulator()).err().expect("no handle on the emulator");
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("emulator")), "{err}");
    }
}
