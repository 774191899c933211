//! The emulator as a checker: kernels with a defect of each kind, each asserted to be reported
//! (with kernel, block, thread and address) rather than to hang or pass.

use dfgnn_device::kernel;
use dfgnn_device::simt::emu::{self, EmuError, EmuErrorKind, LaunchConfig};
use dfgnn_device::simt::{self, Dim3, FULL_MASK, GSlice, GSliceMut, warp};

#[derive(Clone, Copy)]
struct Io {
    input: GSlice<f32>,
    out: GSliceMut<f32>,
}

fn launch_expecting_error<P: Sync>(k: &simt::KernelRef<P>, grid: u32, block: u32, shared: u32, p: &P) -> EmuError {
    let cfg = LaunchConfig { grid: Dim3::x(grid), block: Dim3::x(block), shared_bytes: shared };
    // SAFETY: every slice in `p` views a live Vec of the calling test.
    let err = unsafe { emu::launch(k, &cfg, p) }.expect_err("the defect should be reported");
    assert_eq!(err.kernel, k.name);
    let text = err.to_string();
    assert!(text.contains(k.name) && text.contains("block (") && text.contains("thread ("), "{text}");
    err
}

fn io(input: &[f32], out: &mut [f32]) -> Io {
    Io { input: GSlice::from_host(input), out: GSliceMut::from_host(out) }
}

kernel! {
    /// Every thread writes shared word 0, then reads it back with no barrier between.
    kernel WRITE_WRITE_RACE = fn write_write_race(p: &Io) {
        let s = simt::dynamic_shared().slice::<f32>(0, 1);
        s.store(0, simt::thread_idx().x as f32);
        simt::sync_threads();
        p.out.store(simt::thread_idx().x as usize, s.load(0));
    }
}

#[test]
fn a_write_write_race_is_reported() {
    let (input, mut out) = (vec![0.0; 64], vec![0.0; 64]);
    let err = launch_expecting_error(&WRITE_WRITE_RACE, 1, 64, 4, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::SharedRace { accesses: "write/write", address: 0, other_thread: Some(0) });
    assert_eq!(err.thread, Dim3::new(1, 0, 0));
}

kernel! {
    /// Thread t reads slot t+1 that thread t+1 writes in the same barrier interval.
    kernel READ_WRITE_RACE = fn read_write_race(p: &Io) {
        let n = simt::block_dim().x as usize;
        let t = simt::thread_idx().x as usize;
        let s = simt::dynamic_shared().slice::<f32>(0, n + 1);
        s.store(t, p.input.load(t));
        if t == 0 {
            s.store(n, 0.0);
        }
        simt::sync_threads();
        let right = s.load(t + 1);
        s.store(t, right * 2.0);
        simt::sync_threads();
        p.out.store(t, s.load(t));
    }
}

#[test]
fn a_read_write_race_across_warps_is_reported() {
    let (input, mut out) = (vec![1.0; 64], vec![0.0; 64]);
    let err = launch_expecting_error(&READ_WRITE_RACE, 2, 64, 65 * 4, &io(&input, &mut out));
    match err.kind {
        EmuErrorKind::SharedRace { accesses, address, .. } => {
            assert!(accesses == "read/write" || accesses == "write/read", "{accesses}");
            assert_eq!(address % 4, 0);
        }
        other => panic!("expected a race, got {other}"),
    }
    assert_eq!(err.block, Dim3::new(0, 0, 0));
}

kernel! {
    /// Even threads reach one barrier, odd threads another (identical branches on purpose: the
    /// barriers are different call sites).
    #[allow(clippy::if_same_then_else)]
    kernel DIVERGENT_BARRIER = fn divergent_barrier(p: &Io) {
        let t = simt::thread_idx().x as usize;
        if t.is_multiple_of(2) {
            simt::sync_threads();
        } else {
            simt::sync_threads();
        }
        p.out.store(t, 1.0);
    }
}

#[test]
fn a_divergent_barrier_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&DIVERGENT_BARRIER, 1, 32, 0, &io(&input, &mut out));
    assert!(matches!(err.kind, EmuErrorKind::BarrierDivergence { .. }), "{err}");
    assert_eq!(err.thread, Dim3::new(1, 0, 0));
    assert!(err.to_string().contains("emulator_checks.rs"), "{err}");
}

kernel! {
    /// Threads past the data return early; the rest then wait at a barrier.
    kernel EARLY_EXIT_BARRIER = fn early_exit_barrier(p: &Io) {
        let t = simt::thread_idx().x as usize;
        if t >= p.input.len() {
            return;
        }
        simt::sync_threads();
        p.out.store(t, p.input.load(t));
    }
}

#[test]
fn a_barrier_after_an_early_exit_is_reported() {
    let (input, mut out) = (vec![0.0; 40], vec![0.0; 40]);
    let err = launch_expecting_error(&EARLY_EXIT_BARRIER, 1, 64, 0, &io(&input, &mut out));
    assert!(matches!(err.kind, EmuErrorKind::BarrierDivergence { .. }), "{err}");
}

kernel! {
    /// Reads one element past the end of the input.
    kernel GLOBAL_OOB = fn global_oob(p: &Io) {
        let t = simt::thread_idx().x as usize;
        p.out.store(t, p.input.load(t + 1));
    }
}

#[test]
fn an_out_of_bounds_global_read_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&GLOBAL_OOB, 1, 32, 0, &io(&input, &mut out));
    let base = input.as_ptr() as u64;
    assert_eq!(err.kind, EmuErrorKind::GlobalOutOfBounds { index: 32, len: 32, base, elem_bytes: 4 });
    assert_eq!(err.thread, Dim3::new(31, 0, 0));
    assert!(err.to_string().contains(&format!("{:#x}", base + 128)), "{err}");
}

kernel! {
    /// Indexes one past its shared region.
    kernel SHARED_OOB = fn shared_oob(p: &Io) {
        let t = simt::thread_idx().x as usize;
        let s = simt::dynamic_shared().slice::<f32>(0, 32);
        s.store(t + 1, 0.0);
        p.out.store(t, 0.0);
    }
}

#[test]
fn an_out_of_bounds_shared_write_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&SHARED_OOB, 1, 32, 256, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::SharedOutOfBounds { address: 128, bytes: 4, limit: 128 });
}

kernel! {
    /// Carves a shared region larger than the launch's dynamic shared memory.
    kernel SHARED_TOO_SMALL = fn shared_too_small(p: &Io) {
        let s = simt::dynamic_shared().slice::<f32>(0, 64);
        s.store(0, 0.0);
        p.out.store(0, 0.0);
    }
}

#[test]
fn a_shared_region_past_the_launch_size_is_reported() {
    let (input, mut out) = (vec![0.0; 1], vec![0.0; 1]);
    let err = launch_expecting_error(&SHARED_TOO_SMALL, 1, 32, 128, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::SharedOutOfBounds { address: 0, bytes: 256, limit: 128 });
}

kernel! {
    /// Reads a shared word nobody wrote.
    kernel UNINITIALISED = fn uninitialised(p: &Io) {
        let s = simt::dynamic_shared().slice::<f32>(0, 32);
        let t = simt::thread_idx().x as usize;
        if t != 5 {
            s.store(t, 1.0);
        }
        simt::sync_threads();
        p.out.store(t, s.load(5));
    }
}

#[test]
fn an_uninitialised_shared_read_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&UNINITIALISED, 1, 32, 128, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::SharedUninitialized { address: 20 });
}

kernel! {
    /// Thread t copies its input into slot t asynchronously, waits, and reads slot t − 1 (thread
    /// 0 its own) with no barrier between: thread t − 1's copy is not ordered before the read.
    kernel ASYNC_READ_BEFORE_BARRIER = fn async_read_before_barrier(p: &Io) {
        let t = simt::thread_idx().x as usize;
        let s = simt::dynamic_shared().slice::<f32>(0, 32);
        s.copy_async(t, p.input, t, true);
        simt::async_wait_all();
        p.out.store(t, s.load(t.saturating_sub(1)));
    }
}

#[test]
fn a_read_of_another_threads_async_copy_before_a_barrier_is_reported() {
    let (input, mut out) = (vec![1.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&ASYNC_READ_BEFORE_BARRIER, 1, 32, 128, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::SharedRace { accesses: "write/read", address: 0, other_thread: Some(0) });
    assert_eq!(err.thread, Dim3::new(1, 0, 0));
}

kernel! {
    /// Thread 0 reads word 0, then thread 1 starts a copy into it in the same interval: the copy
    /// may land before the read.
    kernel ASYNC_OVER_A_READ = fn async_over_a_read(p: &Io) {
        let t = simt::thread_idx().x as usize;
        let s = simt::dynamic_shared().slice::<f32>(0, 1);
        if t == 0 {
            s.store(0, 1.0);
        }
        simt::sync_threads();
        if t == 0 {
            p.out.store(t, s.load(0));
        }
        if t == 1 {
            s.copy_async(0, p.input, 0, true);
        }
        simt::async_wait_all();
    }
}

#[test]
fn an_async_copy_over_a_word_others_read_is_reported() {
    let (input, mut out) = (vec![1.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&ASYNC_OVER_A_READ, 1, 32, 4, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::SharedRace { accesses: "read/write", address: 0, other_thread: Some(0) });
    assert_eq!(err.thread, Dim3::new(1, 0, 0));
}

kernel! {
    /// Thread 5 starts a copy and exits without waiting for it.
    kernel ASYNC_NOT_WAITED = fn async_not_waited(p: &Io) {
        let t = simt::thread_idx().x as usize;
        let s = simt::dynamic_shared().slice::<f32>(0, 32);
        s.copy_async(t, p.input, t, t != 3);
        if t != 5 {
            simt::async_wait_all();
        }
    }
}

#[test]
fn an_async_copy_never_waited_for_is_reported() {
    let (input, mut out) = (vec![1.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&ASYNC_NOT_WAITED, 1, 32, 128, &io(&input, &mut out));
    assert_eq!(err.kind, EmuErrorKind::AsyncCopyNotWaited { copies: 1 });
    assert_eq!(err.thread, Dim3::new(5, 0, 0));
}

kernel! {
    /// Lane 0 waits in a full-warp shuffle while lanes 1.. wait at a block barrier: neither can
    /// complete.
    kernel DEADLOCK = fn deadlock(p: &Io) {
        let t = simt::thread_idx().x as usize;
        if t == 0 {
            let v = warp::shfl_xor(FULL_MASK, 1.0f32, 1);
            p.out.store(t, v);
        } else {
            simt::sync_threads();
        }
    }
}

#[test]
fn a_deadlock_is_reported_instead_of_hanging() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&DEADLOCK, 1, 32, 0, &io(&input, &mut out));
    match &err.kind {
        EmuErrorKind::Deadlock { waiting } => {
            let text = waiting.join("\n");
            assert!(text.contains("threads 0..1 in Shuffle(Xor)"), "{text}");
            assert!(text.contains("threads 1..32 at the barrier"), "{text}");
        }
        other => panic!("expected a deadlock, got {other}"),
    }
}

kernel! {
    /// Lanes past 16 exit; the rest shuffle over the full warp.
    kernel EXITED_LANE = fn exited_lane(p: &Io) {
        let t = simt::thread_idx().x as usize;
        if t >= 16 {
            return;
        }
        p.out.store(t, warp::shfl_down(FULL_MASK, 1.0f32, 1));
    }
}

#[test]
fn a_warp_operation_waiting_for_an_exited_lane_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&EXITED_LANE, 1, 32, 0, &io(&input, &mut out));
    assert!(matches!(err.kind, EmuErrorKind::WarpMisuse { .. }), "{err}");
}

kernel! {
    /// Lanes past 16 exit while lanes 0..16 meet twice among themselves; then all 32 shuffle.
    kernel LATE_EXITED_LANE = fn late_exited_lane(p: &Io) {
        let t = simt::thread_idx().x as usize;
        if t >= 16 {
            return;
        }
        simt::sync_warp(0xffff);
        simt::sync_warp(0xffff);
        p.out.store(t, warp::shfl_down(FULL_MASK, 1.0f32, 1));
    }
}

#[test]
fn a_warp_operation_naming_a_lane_that_already_exited_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&LATE_EXITED_LANE, 1, 32, 0, &io(&input, &mut out));
    match err.kind {
        EmuErrorKind::WarpMisuse { detail } => {
            assert!(detail.contains("lane 16 of mask 0xffffffff has exited"), "{detail}")
        }
        other => panic!("expected warp misuse, got {other:?}"),
    }
}

kernel! {
    /// The even lanes shuffle among themselves but read an odd lane.
    kernel SHUFFLE_OUTSIDE_MASK = fn shuffle_outside_mask(p: &Io) {
        let t = simt::thread_idx().x as usize;
        let v = if t.is_multiple_of(2) { warp::shfl_xor(0x5555_5555, 2.0f32, 1) } else { 0.0 };
        p.out.store(t, v);
    }
}

#[test]
fn a_shuffle_from_a_lane_outside_the_mask_is_reported() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    let err = launch_expecting_error(&SHUFFLE_OUTSIDE_MASK, 1, 32, 0, &io(&input, &mut out));
    assert!(matches!(&err.kind, EmuErrorKind::WarpMisuse { detail } if detail.contains("not in mask")), "{err}");
}

kernel! {
    /// Views its input as 16-byte vectors; the host passed a base 4 bytes past an alignment.
    kernel MISALIGNED = fn misaligned(p: &Io) {
        let v = p.input.cast::<simt::F4>();
        p.out.store(0, v.load(0).0[0]);
    }
}

#[test]
fn a_misaligned_vector_view_is_reported() {
    let input = [simt::F4::default(); 4];
    let mut out = vec![0.0; 1];
    // SAFETY: 8 floats starting 4 bytes into a 16-float allocation stay inside it.
    let shifted = unsafe { GSlice::<f32>::from_raw_parts(input.as_ptr() as u64 + 4, 8) };
    let p = Io { input: shifted, out: GSliceMut::from_host(&mut out) };
    let err = launch_expecting_error(&MISALIGNED, 1, 1, 0, &p);
    assert_eq!(err.kind, EmuErrorKind::Misaligned { address: input.as_ptr() as u64 + 4, align: 16 });
}

kernel! {
    /// Indexes a local array out of range: a Rust panic inside the kernel.
    kernel LOCAL_PANIC = fn local_panic(p: &Io) {
        let table = [1.0f32, 2.0, 3.0];
        let t = simt::thread_idx().x as usize;
        p.out.store(t, table[t]);
    }
}

#[test]
fn a_panic_inside_a_kernel_is_reported() {
    let (input, mut out) = (vec![0.0; 8], vec![0.0; 8]);
    let err = launch_expecting_error(&LOCAL_PANIC, 1, 8, 0, &io(&input, &mut out));
    assert!(matches!(&err.kind, EmuErrorKind::Panic { message } if message.contains("index out of bounds")), "{err}");
    assert_eq!(err.thread, Dim3::new(3, 0, 0));
}

#[test]
fn the_emulator_recovers_after_a_defect() {
    let (input, mut out) = (vec![0.0; 32], vec![0.0; 32]);
    launch_expecting_error(&DEADLOCK, 1, 32, 0, &io(&input, &mut out));
    let input: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let cfg = LaunchConfig { grid: Dim3::x(1), block: Dim3::x(32), shared_bytes: 132 };
    // SAFETY: slices view live Vecs.
    unsafe { emu::launch(&READ_WRITE_RACE, &cfg, &io(&input, &mut out)) }.expect_err("still a race");
    let mut out2 = vec![0.0; 32];
    // SAFETY: as above.
    let r = unsafe {
        emu::launch(
            &GLOBAL_OOB,
            &LaunchConfig { grid: Dim3::x(1), block: Dim3::x(31), shared_bytes: 0 },
            &io(&input, &mut out2),
        )
    };
    r.expect("31 threads stay in bounds");
    assert_eq!(&out2[..31], &input[1..]);
}
