//! The chain demo's kernels against plain Rust: on the emulator always, on the GPU with `--ignored`.

use dfgnn::Backend;
use dfgnn_cli::CliError;

#[test]
fn chain_kernels_match_plain_rust_on_the_emulator() {
    let backend = Backend::emulator();
    for seed in [1, 2, 3] {
        let reports = dfgnn_cli::demo::check_chain(&backend, seed, 1).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(reports.len(), 5);
        assert!(reports.iter().any(|r| r.softmax_error > 0.0), "inputs should exercise rounding");
    }
}

#[test]
#[ignore = "needs a CUDA device: run with --ignored on the GPU machine"]
fn chain_kernels_match_plain_rust_on_the_gpu() {
    let backend = Backend::cuda(0).unwrap_or_else(|e| panic!("no usable GPU: {e}"));
    let reports = dfgnn_cli::demo::check_chain(&backend, 7, 4).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reports.len(), 5);
}

#[test]
fn emulator_results_are_bit_identical_run_after_run() {
    let backend = Backend::emulator();
    let offsets: Vec<u64> = (0..=200u64)
        .map(|r| r * (r % 5))
        .scan(0, |acc, d| {
            *acc += d;
            Some(*acc)
        })
        .collect();
    let offsets: Vec<u64> = std::iter::once(0).chain(offsets.windows(2).map(|w| w[1])).collect();
    let nnz = *offsets.last().unwrap() as usize;
    let values: Vec<f32> = (0..nnz).map(|i| ((i * 7919) % 1000) as f32 / 97.0 - 5.0).collect();
    let first = dfgnn_cli::demo::segment_sum(&backend, &offsets, &values).unwrap();
    let (alpha, lse) = dfgnn_cli::demo::row_softmax(&backend, &offsets, &values).unwrap();
    for _ in 0..3 {
        assert_eq!(dfgnn_cli::demo::segment_sum(&backend, &offsets, &values).unwrap(), first);
        let (a, l) = dfgnn_cli::demo::row_softmax(&backend, &offsets, &values).unwrap();
        assert_eq!(
            a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            alpha.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(
            l.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            lse.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn malformed_offsets_are_clear_errors() {
    let backend = Backend::emulator();
    let values = [1.0f32, 2.0, 3.0];
    for (offsets, needle) in [
        (vec![], "offsets is empty"),
        (vec![1, 3], "offsets[0] is 1"),
        (vec![0, 2, 1, 3], "decrease at row 1"),
        (vec![0, 2], "end at 2"),
    ] {
        let err = dfgnn_cli::demo::row_softmax(&backend, &offsets, &values).unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
        let err = dfgnn_cli::demo::segment_sum(&backend, &offsets, &values).unwrap_err();
        assert!(matches!(err, CliError::Usage { .. }), "{err}");
    }
}
