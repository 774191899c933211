//! The chain demo: the two proof-of-chain kernels (`dfgnn_device::kernels::demo`) behind safe
//! functions, and a check that runs them on random CSR data against plain Rust.
//!
//! `dfgnn demo` runs [`check_chain`] on whichever backend is present; `cargo test` runs it on the
//! emulator, and on the GPU too when one is found.

use dfgnn_device::abi::{RowSoftmaxParams, SegmentSumParams};
use dfgnn_device::kernels::demo::{ROW_SOFTMAX, SEGMENT_SUM};
use dfgnn_device::simt::{Dim3, LaunchConfig, WARP_SIZE};
use dfgnn_reference::allowed_error;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use dfgnn::Backend;

use crate::error::{CliError, Result};

/// Threads per block of both demo kernels.
const BLOCK: u32 = 256;
/// Values per block of `segment_sum`: 4 per thread.
const SEGMENT_TILE: u32 = 4 * BLOCK;

/// Checks that `offsets` is a CSR offsets array over `nnz` values and returns the row count.
fn validate_offsets(op: &'static str, offsets: &[u64], nnz: usize) -> Result<usize> {
    let Some((&first, _)) = offsets.split_first() else {
        return Err(CliError::Usage {
            what: format!("{op}: offsets is empty (it holds at least the 0 that starts row 0)"),
        });
    };
    let bad = |what: String| Err(CliError::Usage { what: format!("{op}: {what}") });
    if first != 0 {
        return bad(format!("offsets[0] is {first}, not 0"));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return bad(format!("offsets decrease at row {i}: {} then {}", offsets[i], offsets[i + 1]));
    }
    let last = *offsets.last().unwrap_or(&0);
    if last != nnz as u64 {
        return bad(format!("offsets end at {last}, but there are {nnz} values"));
    }
    let rows = offsets.len() - 1;
    if rows > u32::MAX as usize {
        return bad(format!("{rows} rows (at most {})", u32::MAX));
    }
    Ok(rows)
}

/// Softmax of `values` within each CSR row, and each row's log-sum-exp (`-inf` when empty).
pub fn row_softmax(backend: &Backend, offsets: &[u64], values: &[f32]) -> Result<(Vec<f32>, Vec<f32>)> {
    let rows = validate_offsets("row_softmax", offsets, values.len())?;
    let d_offsets = backend.upload(offsets)?;
    let d_values = backend.upload(values)?;
    let mut out = backend.zeros::<f32>(values.len())?;
    let mut lse = backend.zeros::<f32>(rows)?;
    if rows > 0 {
        let warps_per_block = BLOCK / WARP_SIZE;
        let config = LaunchConfig {
            grid: Dim3::x((rows as u32).div_ceil(warps_per_block)),
            block: Dim3::x(BLOCK),
            shared_bytes: 0,
        };
        let params = RowSoftmaxParams {
            offsets: d_offsets.view(),
            values: d_values.view(),
            out: out.view_mut(),
            lse: lse.view_mut(),
            num_rows: rows as u32,
        };
        // SAFETY: all four buffers are live for the launch (dropped after the downloads below),
        // the inputs are only read and are distinct from the outputs, and the offsets were
        // validated against the values, so every access the kernel makes is in bounds.
        unsafe { backend.launch(&ROW_SOFTMAX, &config, &params)? };
    }
    Ok((backend.download(&out)?, backend.download(&lse)?))
}

/// What [`segment_sum`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentSums {
    /// The sum of each segment.
    pub sums: Vec<f32>,
    /// The number of values of each segment.
    pub counts: Vec<u32>,
    /// How many values the kernel processed in all (equal to their number when correct).
    pub processed: u32,
}

/// Sums and counts of the values of each CSR segment (block-cooperative, with atomics).
pub fn segment_sum(backend: &Backend, offsets: &[u64], values: &[f32]) -> Result<SegmentSums> {
    let segments = validate_offsets("segment_sum", offsets, values.len())?;
    if values.len() > u32::MAX as usize {
        return Err(CliError::Usage { what: format!("segment_sum: {} values (at most 2^32 - 1)", values.len()) });
    }
    let d_offsets = backend.upload(offsets)?;
    let d_values = backend.upload(values)?;
    let mut sums = backend.zeros::<f32>(segments)?;
    let mut counts = backend.zeros::<u32>(segments)?;
    let mut processed = backend.zeros::<u32>(1)?;
    if !values.is_empty() {
        let cap = SEGMENT_TILE;
        let config = LaunchConfig {
            grid: Dim3::x((values.len() as u32).div_ceil(SEGMENT_TILE)),
            block: Dim3::x(BLOCK),
            shared_bytes: 8 * cap + 8,
        };
        let params = SegmentSumParams {
            offsets: d_offsets.view(),
            values: d_values.view(),
            sums: sums.view_mut(),
            counts: counts.view_mut(),
            processed: processed.view_mut(),
            num_segments: segments as u32,
            tile: SEGMENT_TILE,
        };
        // SAFETY: all buffers are live for the launch; inputs are read-only and distinct from the
        // zeroed outputs; the offsets were validated, so every segment id is below `segments`.
        unsafe { backend.launch(&SEGMENT_SUM, &config, &params)? };
    }
    Ok(SegmentSums {
        sums: backend.download(&sums)?,
        counts: backend.download(&counts)?,
        processed: backend.download(&processed)?[0],
    })
}

/// One random CSR input of the chain check.
struct Case {
    name: &'static str,
    offsets: Vec<u64>,
    values: Vec<f32>,
}

fn random_case(name: &'static str, rng: &mut ChaCha8Rng, degrees: &[usize]) -> Case {
    let mut offsets = Vec::with_capacity(degrees.len() + 1);
    offsets.push(0u64);
    for &d in degrees {
        offsets.push(offsets.last().unwrap_or(&0) + d as u64);
    }
    let nnz = *offsets.last().unwrap_or(&0) as usize;
    let values = (0..nnz).map(|_| rng.random_range(-8.0f32..8.0)).collect();
    Case { name, offsets, values }
}

fn cases(seed: u64, scale: usize) -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mixed: Vec<usize> = (0..97 * scale)
        .map(|i| match i % 7 {
            0 => 0,
            1 => 1,
            2 => rng.random_range(2..33),
            3 => rng.random_range(33..200),
            _ => rng.random_range(0..12),
        })
        .collect();
    let mut hub: Vec<usize> = (0..50 * scale).map(|_| rng.random_range(0..5)).collect();
    hub[7] = 5000 * scale;
    let sparse: Vec<usize> = (0..3000 * scale).map(|i| if i % 500 == 0 { 3 } else { 0 }).collect();
    vec![
        random_case("mixed degrees", &mut rng, &mixed),
        random_case("super node", &mut rng, &hub),
        random_case("mostly empty rows", &mut rng, &sparse),
        random_case("single row", &mut rng, &[37]),
        random_case("no values", &mut rng, &[0, 0, 0]),
    ]
}

/// One line of the chain report.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// The input's name.
    pub name: &'static str,
    /// Rows and values.
    pub rows: usize,
    /// Values.
    pub nnz: usize,
    /// Largest |α − α_f64| of the softmax kernel.
    pub softmax_error: f64,
    /// Largest |α − α_f64| of a plain f32 softmax (the naive baseline).
    pub softmax_naive_error: f64,
    /// Largest |sum − sum_f64| / (Σ|v| of the segment) of the segment-sum kernel.
    pub segment_relative_error: f64,
}

/// Runs both demo kernels on random CSR inputs (mixed degrees, a super node, empty rows, a single
/// row, no values) and checks them against plain Rust; returns one report line per input.
///
/// Softmax and log-sum-exp: the project's tolerance rule (`dfgnn_reference::precision`) with a
/// plain f32 softmax as the naive run. Segment sums: counts exact, every value processed once, sums within 1e-5
/// of Σ|v| per segment (the atomics' order varies on the GPU).
pub fn check_chain(backend: &Backend, seed: u64, scale: usize) -> Result<Vec<CaseReport>> {
    let mut reports = Vec::new();
    for case in cases(seed, scale.max(1)) {
        let rows = case.offsets.len() - 1;
        let (alpha, lse) = row_softmax(backend, &case.offsets, &case.values)?;
        let (mut err, mut naive_err, mut lse_err, mut lse_naive_err) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut lse_magnitude = 0.0f64;
        for (r, &row_lse) in lse.iter().enumerate() {
            let (s, e) = (case.offsets[r] as usize, case.offsets[r + 1] as usize);
            let row = &case.values[s..e];
            if row.is_empty() {
                if row_lse != f32::NEG_INFINITY {
                    return Err(CliError::CheckFailed {
                        what: format!("{}: empty row {r} has lse {row_lse}", case.name),
                    });
                }
                continue;
            }
            let m64 = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
            let l64: f64 = row.iter().map(|&v| (v as f64 - m64).exp()).sum();
            let m32 = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let l32: f32 = row.iter().map(|&v| (v - m32).exp()).sum();
            for (k, &v) in row.iter().enumerate() {
                let exact = (v as f64 - m64).exp() / l64;
                err = err.max((alpha[s + k] as f64 - exact).abs());
                naive_err = naive_err.max((((v - m32).exp() / l32) as f64 - exact).abs());
            }
            let lse64 = m64 + l64.ln();
            lse_err = lse_err.max((row_lse as f64 - lse64).abs());
            lse_magnitude = lse_magnitude.max(lse64.abs());
            lse_naive_err = lse_naive_err.max(((m32 + l32.ln()) as f64 - lse64).abs());
        }
        // α ≤ 1: its magnitude for the rule is 1.
        if err > allowed_error(naive_err, 1.0) || lse_err > allowed_error(lse_naive_err, lse_magnitude) {
            return Err(CliError::CheckFailed {
                what: format!(
                    "{}: softmax error {err:.3e} (naive f32 {naive_err:.3e}), lse error {lse_err:.3e} (naive {lse_naive_err:.3e})",
                    case.name
                ),
            });
        }

        let got = segment_sum(backend, &case.offsets, &case.values)?;
        if got.processed as usize != case.values.len() {
            return Err(CliError::CheckFailed {
                what: format!("{}: segment_sum processed {} of {} values", case.name, got.processed, case.values.len()),
            });
        }
        let mut rel = 0.0f64;
        for r in 0..rows {
            let (s, e) = (case.offsets[r] as usize, case.offsets[r + 1] as usize);
            if got.counts[r] as usize != e - s {
                return Err(CliError::CheckFailed {
                    what: format!("{}: segment {r} counted {} values, has {}", case.name, got.counts[r], e - s),
                });
            }
            let exact: f64 = case.values[s..e].iter().map(|&v| v as f64).sum();
            let magnitude: f64 = case.values[s..e].iter().map(|&v| (v as f64).abs()).sum::<f64>().max(1e-30);
            rel = rel.max((got.sums[r] as f64 - exact).abs() / magnitude);
        }
        if rel > 1e-5 {
            return Err(CliError::CheckFailed {
                what: format!("{}: segment sums off by {rel:.3e} of Σ|v|", case.name),
            });
        }
        reports.push(CaseReport {
            name: case.name,
            rows,
            nnz: case.values.len(),
            softmax_error: err,
            softmax_naive_error: naive_err,
            segment_relative_error: rel,
        });
    }
    Ok(reports)
}
