//! Speed of the SIMT emulator (the goal of docs/design.md §5: 1,000 blocks × 256 threads with 4
//! barriers each in under 1 s on a 2-core x86-64 CPU), and of the warp operations that dominate
//! real kernels.
//!
//! `cargo bench -p dfgnn-benches --bench emulator`

use dfgnn_benches::median_of;
use dfgnn_device::kernel;
use dfgnn_device::kernels::common::reduce::warp_sum;
use dfgnn_device::simt::emu;
use dfgnn_device::simt::{self, Dim3, GSliceMut, LaunchConfig};

#[derive(Clone, Copy)]
struct Params {
    out: GSliceMut<f32>,
}

kernel! {
    /// Four barriers, with shared-memory traffic between them (each access checked for races).
    kernel FOUR_BARRIERS = fn four_barriers(p: &Params) {
        let n = simt::block_dim().x as usize;
        let s = simt::dynamic_shared().slice::<f32>(0, n);
        let t = simt::thread_idx().x as usize;
        s.store(t, t as f32);
        simt::sync_threads();
        let a = s.load(n - 1 - t);
        simt::sync_threads();
        s.store(t, a * 2.0);
        simt::sync_threads();
        let b = s.load((t + 1) % n);
        simt::sync_threads();
        p.out.store(simt::block_idx().x as usize * n + t, b);
    }
}

kernel! {
    /// Four warp-wide butterfly sums (20 shuffles) per thread.
    kernel WARP_SUMS = fn warp_sums(p: &Params) {
        let t = simt::linear_thread_idx() as f32;
        let mut v = t;
        for _ in 0..4 {
            v = warp_sum(v) * 1e-3 + t;
        }
        p.out.store(simt::block_idx().x as usize * simt::block_dim().x as usize + simt::thread_idx().x as usize, v);
    }
}

fn bench(name: &str, kernel: &simt::KernelRef<Params>, shared_bytes: u32) {
    let (blocks, threads) = (1000u32, 256u32);
    let mut out = vec![0.0f32; (blocks * threads) as usize];
    let config = LaunchConfig { grid: Dim3::x(blocks), block: Dim3::x(threads), shared_bytes };
    let params = Params { out: GSliceMut::from_host(&mut out) };
    let (median, min, max) = median_of(2, 10, || {
        // SAFETY: `out` outlives the launch and nothing else touches it.
        unsafe { emu::launch(kernel, &config, &params) }.expect("the benchmark kernel is correct");
    });
    println!(
        "{name:<40} {blocks} blocks x {threads} threads: median {:>8.1} ms  (min {:.1}, max {:.1}, 10 runs)",
        median.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
}

fn main() {
    bench("4 barriers + shared memory (goal < 1 s)", &FOUR_BARRIERS, 256 * 4);
    bench("4 warp sums (20 shuffles)", &WARP_SUMS, 0);
}
