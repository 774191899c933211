//! The device sum (`Backend::sum_into`, the kernels `SUM_PARTIALS` and `SUM_FINISH`) against an
//! f64 sum of the same terms: empty, one term, just under and over a warp, a few blocks, a length
//! past the most blocks (where each block takes more terms), a large odd length; terms that an
//! f32 running sum gets badly wrong. The same bits on every run, and on the GPU the emulator's
//! bits (CUDA device 0, `--ignored`; ignored otherwise, and failing without a device).

use dfgnn::{Backend, Error};
use dfgnn_device::kernels::util::{SUM_MAX_BLOCKS, SUM_TERMS_PER_BLOCK, sum_shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The lengths checked: the edges of a warp, of a block's threads (256) and of a block's terms,
/// a few blocks, past the most blocks, and a large odd length.
fn lengths() -> Vec<usize> {
    let most = SUM_MAX_BLOCKS * SUM_TERMS_PER_BLOCK;
    vec![
        0,
        1,
        2,
        31,
        32,
        33,
        255,
        257,
        SUM_TERMS_PER_BLOCK,
        SUM_TERMS_PER_BLOCK + 1,
        3 * SUM_TERMS_PER_BLOCK + 7,
        1_000_003,
        most + 4097,
    ]
}

/// Terms of length `n` from `seed`: uniform in [-1, 1), plus a few of 1e7 (an f32 running sum
/// loses the small terms next to them; an f64 one does not).
fn terms(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|i| if i % 997 == 5 { 1.0e7 } else { rng.random_range(-1.0f32..1.0) }).collect()
}

fn device_sum(backend: &Backend, x: &[f32]) -> f32 {
    let x = backend.upload(x).unwrap();
    let mut out = backend.upload(&[f32::NAN]).unwrap();
    backend.sum_into(&x, &mut out).unwrap();
    backend.download(&out).unwrap()[0]
}

/// `got` within half an ulp of the exact sum's f32 (the one rounding) plus the few f64 roundings
/// of the additions.
fn assert_close(n: usize, got: f32, x: &[f32]) {
    let exact: f64 = x.iter().map(|&v| v as f64).sum();
    let magnitude: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
    let allowed = 0.5 * f32::EPSILON as f64 * exact.abs() + 1e-13 * magnitude + f64::from(f32::MIN_POSITIVE);
    assert!((got as f64 - exact).abs() <= allowed, "n = {n}: {got} against the f64 sum {exact} (allowed {allowed:e})");
}

fn check(backend: &Backend) -> Vec<u32> {
    let mut bits = Vec::new();
    for (i, n) in lengths().into_iter().enumerate() {
        let x = terms(n, 17 + i as u64);
        let got = device_sum(backend, &x);
        assert_close(n, got, &x);
        assert_eq!(got.to_bits(), device_sum(backend, &x).to_bits(), "n = {n}: the same bits on a second run");
        bits.push(got.to_bits());
    }
    bits
}

#[test]
fn the_sum_matches_an_f64_sum_on_the_emulator() {
    check(&Backend::emulator());
}

#[test]
fn the_launch_shape_is_a_function_of_the_length() {
    assert_eq!(sum_shape(0), (1, 0));
    assert_eq!(sum_shape(1), (1, 1));
    assert_eq!(sum_shape(SUM_TERMS_PER_BLOCK), (1, SUM_TERMS_PER_BLOCK as u64));
    assert_eq!(sum_shape(SUM_TERMS_PER_BLOCK + 1), (2, SUM_TERMS_PER_BLOCK as u64 / 2 + 1));
    let most = SUM_MAX_BLOCKS * SUM_TERMS_PER_BLOCK;
    assert_eq!(sum_shape(most + 4097), (SUM_MAX_BLOCKS, (most as u64 + 4097).div_ceil(SUM_MAX_BLOCKS as u64)));
    for n in lengths() {
        let (blocks, per_block) = sum_shape(n);
        assert!((1..=SUM_MAX_BLOCKS).contains(&blocks) && blocks as u64 * per_block >= n as u64, "n = {n}");
    }
}

#[test]
fn exact_sums_are_exact_and_the_output_must_be_one_element() {
    let backend = Backend::emulator();
    // Integers whose sum f32 holds exactly: the result is exact.
    let x: Vec<f32> = (0..50_001).map(|i| (i % 7) as f32 - 3.0).collect();
    let exact: f64 = x.iter().map(|&v| v as f64).sum();
    assert_eq!(device_sum(&backend, &x) as f64, exact);
    // An f32 running sum of 1 and 2^20 terms of 2^-25 stays at 1; the device's f64 sum is exact.
    let mut x = vec![2f32.powi(-25); (1 << 20) + 1];
    x[0] = 1.0;
    assert_eq!(device_sum(&backend, &x), 1.0 + 2f32.powi(-5));
    let terms = backend.upload(&[1.0f32; 4]).unwrap();
    let mut two = backend.upload(&[0.0f32; 2]).unwrap();
    let err = backend.sum_into(&terms, &mut two).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { what: "out", expected: 1, got: 2, .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn the_sum_on_the_gpu_gives_the_emulators_bits() {
    let gpu = Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}"));
    assert_eq!(check(&gpu), check(&Backend::emulator()), "the same bits on both backends");
}
