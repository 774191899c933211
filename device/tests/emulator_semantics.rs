//! The emulator's GPU semantics: ids, barriers, every warp operation, shared memory, atomics,
//! fast math — each against what CUDA specifies, with kernels written for the purpose.

use dfgnn_device::kernel;
use dfgnn_device::simt::emu::{self, LaunchConfig};
use dfgnn_device::simt::{self, Dim3, F4, FULL_MASK, GSlice, GSliceMut, WARP_SIZE, math, warp};

#[derive(Clone, Copy)]
struct Out {
    out: GSliceMut<u32>,
}

fn run<P: Sync>(k: &simt::KernelRef<P>, grid: Dim3, block: Dim3, shared: u32, p: &P) -> emu::LaunchStats {
    // SAFETY: every slice in `p` views a live Vec of the calling test, untouched during the launch.
    unsafe { emu::launch(k, &LaunchConfig { grid, block, shared_bytes: shared }, p) }.unwrap_or_else(|e| panic!("{e}"))
}

kernel! {
    kernel IDS = fn ids(p: &Out) {
        let t = simt::thread_idx();
        let b = simt::block_idx();
        let bd = simt::block_dim();
        let gd = simt::grid_dim();
        let block_linear = b.x + gd.x * (b.y + gd.y * b.z);
        let threads = bd.x * bd.y * bd.z;
        let global = (block_linear * threads + simt::linear_thread_idx()) as usize;
        p.out.store(4 * global, t.x | t.y << 8 | t.z << 16);
        p.out.store(4 * global + 1, b.x | b.y << 8 | b.z << 16);
        p.out.store(4 * global + 2, simt::lane_id() | simt::warp_id() << 8);
        p.out.store(4 * global + 3, bd.x | bd.y << 8 | bd.z << 16 | gd.x << 24);
    }
}

#[test]
fn ids_cover_multidimensional_grids_and_blocks() {
    let (grid, block) = (Dim3::new(3, 2, 2), Dim3::new(5, 4, 3));
    let total = (grid.volume() * block.volume()) as usize;
    let mut out = vec![u32::MAX; 4 * total];
    let stats = run(&IDS, grid, block, 0, &Out { out: GSliceMut::from_host(&mut out) });
    assert_eq!(stats.threads, total as u64);
    let mut i = 0;
    for bz in 0..2 {
        for by in 0..2 {
            for bx in 0..3 {
                for tz in 0..3 {
                    for ty in 0..4 {
                        for tx in 0..5 {
                            let linear = tx + 5 * (ty + 4 * tz);
                            assert_eq!(out[4 * i], tx | ty << 8 | tz << 16);
                            assert_eq!(out[4 * i + 1], bx | by << 8 | bz << 16);
                            assert_eq!(out[4 * i + 2], (linear % 32) | ((linear / 32) << 8));
                            assert_eq!(out[4 * i + 3], 5 | 4 << 8 | 3 << 16 | 3 << 24);
                            i += 1;
                        }
                    }
                }
            }
        }
    }
}

kernel! {
    /// Per lane: xor 5, down 3, up 7, idx (31 - lane), each of the lane's own id · 10.
    kernel SHUFFLES = fn shuffles(p: &Out) {
        let l = simt::lane_id();
        let base = (simt::linear_thread_idx() * 4) as usize;
        let v = l * 10;
        p.out.store(base, warp::shfl_xor(FULL_MASK, v, 5));
        p.out.store(base + 1, warp::shfl_down(FULL_MASK, v, 3));
        p.out.store(base + 2, warp::shfl_up(FULL_MASK, v, 7));
        p.out.store(base + 3, warp::shfl_idx(FULL_MASK, v, WARP_SIZE - 1 - l));
    }
}

#[test]
fn shuffles_follow_ptx_semantics() {
    let mut out = vec![0u32; 64 * 4];
    run(&SHUFFLES, Dim3::x(1), Dim3::x(64), 0, &Out { out: GSliceMut::from_host(&mut out) });
    for t in 0..64u32 {
        let l = t % 32;
        let o = &out[4 * t as usize..4 * t as usize + 4];
        assert_eq!(o[0], (l ^ 5) * 10, "xor at {t}");
        assert_eq!(o[1], if l + 3 < 32 { (l + 3) * 10 } else { l * 10 }, "down at {t}");
        assert_eq!(o[2], if l >= 7 { (l - 7) * 10 } else { l * 10 }, "up at {t}");
        assert_eq!(o[3], (31 - l) * 10, "idx at {t}");
    }
}

kernel! {
    /// Votes and reductions over the full warp and over the even lanes only.
    kernel VOTES = fn votes(p: &Out) {
        let l = simt::lane_id();
        let base = (simt::linear_thread_idx() * 8) as usize;
        p.out.store(base, warp::ballot(FULL_MASK, l.is_multiple_of(3)));
        p.out.store(base + 1, warp::all(FULL_MASK, l < 32) as u32);
        p.out.store(base + 2, warp::all(FULL_MASK, l != 17) as u32);
        p.out.store(base + 3, warp::any(FULL_MASK, l == 17) as u32);
        p.out.store(base + 4, warp::reduce_add_u32(FULL_MASK, l + 1));
        p.out.store(base + 5, warp::reduce_max_u32(FULL_MASK, (l * 7) % 32));
        p.out.store(base + 6, warp::reduce_min_u32(FULL_MASK, 100 - l));
        if l.is_multiple_of(2) {
            let even = 0x5555_5555;
            p.out.store(base + 7, warp::reduce_add_u32(even, 1) + warp::shfl_xor(even, l, 2));
        } else {
            p.out.store(base + 7, 0);
        }
    }
}

#[test]
fn votes_and_reductions_cover_their_masks() {
    let mut out = vec![0u32; 32 * 8];
    run(&VOTES, Dim3::x(1), Dim3::x(32), 0, &Out { out: GSliceMut::from_host(&mut out) });
    let ballot = (0..32).filter(|l| l % 3 == 0).fold(0u32, |a, l| a | 1 << l);
    for l in 0..32u32 {
        let o = &out[8 * l as usize..8 * l as usize + 8];
        assert_eq!(o[0], ballot);
        assert_eq!(&o[1..7], &[1, 0, 1, (1..=32).sum(), 31, 100 - 31]);
        assert_eq!(o[7], if l % 2 == 0 { 16 + (l ^ 2) } else { 0 });
    }
}

#[derive(Clone, Copy)]
struct Reverse {
    input: GSlice<f32>,
    out: GSliceMut<f32>,
}

kernel! {
    /// Thread `t` copies input quad `t` asynchronously into shared slot `n − 1 − t` (zeros for
    /// every third thread) and input float `t` into float slot `t` of a second region; each word
    /// is read only after the copier's wait and a barrier.
    kernel ASYNC_COPIES = fn async_copies(p: &Reverse) {
        let n = simt::block_dim().x as usize;
        let t = simt::thread_idx().x as usize;
        let smem = simt::dynamic_shared();
        let (quads, floats) = (smem.slice::<F4>(0, n), smem.slice::<f32>(16 * n, n));
        let input4 = p.input.cast::<F4>();
        quads.copy_async(n - 1 - t, input4, t, !t.is_multiple_of(3));
        floats.copy_async(t, p.input, 4 * n + t, true);
        simt::async_wait_all();
        simt::sync_threads();
        let q = quads.load(t);
        p.out.store(t, q.0[0] + q.0[1] + q.0[2] + q.0[3] + floats.load(n - 1 - t));
    }
}

#[test]
fn async_copies_land_at_the_wait_zeros_where_invalid() {
    let n = 64;
    let input: Vec<f32> = (0..5 * n).map(|i| i as f32).collect();
    let mut out = vec![0.0; n];
    run(
        &ASYNC_COPIES,
        Dim3::x(1),
        Dim3::x(n as u32),
        20 * n as u32,
        &Reverse { input: GSlice::from_host(&input), out: GSliceMut::from_host(&mut out) },
    );
    for t in 0..n {
        let copier = n - 1 - t;
        let quad: f32 = if !copier.is_multiple_of(3) { (0..4).map(|c| input[4 * copier + c]).sum() } else { 0.0 };
        assert_eq!(out[t], quad + input[4 * n + n - 1 - t], "thread {t}");
    }
}

kernel! {
    /// Reverses each block's chunk through shared memory: writes, barrier, reads another slot.
    kernel REVERSE = fn reverse(p: &Reverse) {
        let n = simt::block_dim().x as usize;
        let t = simt::thread_idx().x as usize;
        let base = simt::block_idx().x as usize * n;
        let smem = simt::dynamic_shared();
        let s = smem.slice::<f32>(0, n);
        s.store(t, p.input.load(base + t));
        simt::sync_threads();
        p.out.store(base + t, s.load(n - 1 - t));
        simt::sync_threads();
        s.store(t, 0.0);
    }
}

#[test]
fn barriers_order_shared_memory_across_warps() {
    let n = 96;
    let input: Vec<f32> = (0..3 * n).map(|i| i as f32).collect();
    let mut out = vec![0.0; 3 * n];
    let stats = run(
        &REVERSE,
        Dim3::x(3),
        Dim3::x(n as u32),
        4 * n as u32,
        &Reverse { input: GSlice::from_host(&input), out: GSliceMut::from_host(&mut out) },
    );
    assert_eq!(stats.barriers, 6);
    for b in 0..3 {
        for t in 0..n {
            assert_eq!(out[b * n + t], input[b * n + n - 1 - t]);
        }
    }
}

kernel! {
    /// Lane 0 writes shared memory, `sync_warp`, every lane reads it: warp-synchronous and legal.
    kernel WARP_BROADCAST = fn warp_broadcast(p: &Out) {
        let smem = simt::dynamic_shared();
        let s = smem.slice::<u32>(0, 1 + simt::warp_id() as usize);
        let w = simt::warp_id() as usize;
        if simt::lane_id() == 0 {
            s.store(w, 1000 + w as u32);
        }
        simt::sync_warp(FULL_MASK);
        p.out.store(simt::linear_thread_idx() as usize, s.load(w));
    }
}

#[test]
fn sync_warp_orders_shared_memory_within_a_warp() {
    let mut out = vec![0u32; 64];
    run(&WARP_BROADCAST, Dim3::x(1), Dim3::x(64), 8, &Out { out: GSliceMut::from_host(&mut out) });
    assert!(out[..32].iter().all(|&v| v == 1000));
    assert!(out[32..].iter().all(|&v| v == 1001));
}

#[derive(Clone, Copy)]
struct Atomics {
    counters: GSliceMut<u32>,
    sums: GSliceMut<f32>,
    maxima: GSliceMut<u32>,
}

kernel! {
    /// Every thread adds into shared and global counters; thread 0 publishes the shared totals.
    kernel ATOMICS = fn atomics(p: &Atomics) {
        let smem = simt::dynamic_shared();
        let count = smem.slice::<u32>(0, 1);
        let sum = smem.slice::<f32>(4, 1);
        let t = simt::thread_idx().x;
        if t == 0 {
            count.store(0, 0);
            sum.store(0, 0.0);
        }
        simt::sync_threads();
        count.atomic_add(0, 1);
        sum.atomic_add(0, 0.5);
        p.counters.atomic_add(0, 1);
        p.sums.atomic_add(0, 0.25);
        p.maxima.atomic_max(0, t * 3 + simt::block_idx().x);
        simt::sync_threads();
        if t == 0 {
            p.counters.atomic_add(1, count.load(0));
            p.sums.atomic_add(1, sum.load(0));
        }
    }
}

#[test]
fn atomics_accumulate_in_shared_and_global_memory() {
    let (mut counters, mut sums, mut maxima) = (vec![0u32; 2], vec![0.0f32; 2], vec![0u32; 1]);
    run(
        &ATOMICS,
        Dim3::x(4),
        Dim3::x(128),
        8,
        &Atomics {
            counters: GSliceMut::from_host(&mut counters),
            sums: GSliceMut::from_host(&mut sums),
            maxima: GSliceMut::from_host(&mut maxima),
        },
    );
    assert_eq!(counters, [512, 512]);
    assert_eq!(sums, [128.0, 256.0]);
    assert_eq!(maxima, [127 * 3 + 3]);
}

#[derive(Clone, Copy)]
struct MathIo {
    input: GSlice<f32>,
    out: GSliceMut<f32>,
}

kernel! {
    kernel MATH = fn fast_math(p: &MathIo) {
        let t = simt::thread_idx().x as usize;
        let x = p.input.load(t);
        p.out.store(6 * t, math::exp2(x));
        p.out.store(6 * t + 1, math::log2(x));
        p.out.store(6 * t + 2, math::rcp(x));
        p.out.store(6 * t + 3, math::sqrt(x));
        p.out.store(6 * t + 4, math::rsqrt(x));
        p.out.store(6 * t + 5, math::fma(x, x, 1.0));
    }
}

#[test]
fn fast_math_is_exact_in_the_emulator() {
    let input: Vec<f32> = (1..=32).map(|i| i as f32 * 0.37).collect();
    let mut out = vec![0.0; 6 * 32];
    run(
        &MATH,
        Dim3::x(1),
        Dim3::x(32),
        0,
        &MathIo { input: GSlice::from_host(&input), out: GSliceMut::from_host(&mut out) },
    );
    for (t, &x) in input.iter().enumerate() {
        assert_eq!(&out[6 * t..6 * t + 6], &[x.exp2(), x.log2(), 1.0 / x, x.sqrt(), 1.0 / x.sqrt(), x.mul_add(x, 1.0)]);
    }
}

kernel! {
    /// Partial last warp: 40 threads, the second warp has 8 lanes and reduces over them.
    kernel PARTIAL_WARP = fn partial_warp(p: &Out) {
        let t = simt::linear_thread_idx();
        let lanes = simt::block_dim().x - simt::warp_id() * WARP_SIZE;
        let mask = if lanes >= WARP_SIZE { FULL_MASK } else { (1u32 << lanes) - 1 };
        p.out.store(t as usize, warp::reduce_add_u32(mask, t));
    }
}

#[test]
fn a_partial_last_warp_reduces_over_its_existing_lanes() {
    let mut out = vec![0u32; 40];
    run(&PARTIAL_WARP, Dim3::x(1), Dim3::x(40), 0, &Out { out: GSliceMut::from_host(&mut out) });
    assert!(out[..32].iter().all(|&v| v == (0..32).sum()));
    assert!(out[32..].iter().all(|&v| v == (32..40).sum()));
}

#[test]
fn launches_the_gpu_would_refuse_are_refused() {
    let mut out = vec![0u32; 1];
    let p = Out { out: GSliceMut::from_host(&mut out) };
    for (block, shared) in [(Dim3::x(1025), 0), (Dim3::x(0), 0), (Dim3::x(32), 227 * 1024 + 1)] {
        let cfg = LaunchConfig { grid: Dim3::x(1), block, shared_bytes: shared };
        // SAFETY: the launch is refused before any thread runs.
        let err = unsafe { emu::launch(&IDS, &cfg, &p) }.unwrap_err();
        assert!(matches!(err.kind, emu::EmuErrorKind::InvalidLaunch { .. }), "{err}");
    }
}
