//! The host work of a call once planned, counted on the emulator ([`Backend::counts`]): kernel
//! launches per pass, buffers made per call, and no uploads (the plan's work lists are uploaded
//! once, by `Gt::new`). The expected counts are derived from the passes' structure
//! (`host/src/fused.rs`), worked out in the comments:
//!
//! - forward: one launch over the ordinary units and one over the packed units (each only when
//!   it has any), then one combine launch when rows are split; buffers `out`, `lse`, `stats`, and
//!   two partial buffers (`acc`, `ml`) when rows are split;
//! - backward: the row pass (+ one combine launch when split) then the column pass (+ one combine
//!   launch for both `dk` and `dv` when split); buffers `dq`, `D`, `dk`, `dv`, and one partial
//!   buffer for the row pass and two for the column pass when split;
//! - GAT's full backward beyond its precomputed one (the node backward): one launch per feature
//!   array (one when `h_dst` is `h`) and one sum of both attention vectors' partials; buffers the
//!   two vectors' partials and gradients, and `dh_dst` when it comes on its own (`dh` is the
//!   aggregation's, updated in place).

use dfgnn::{Backend, Counts, DeviceGraph, Gat, GatConfig, Gt, GtConfig, PlanOptions, Schedule, TileChoice};
use dfgnn_graphs::Csr;

/// Rows of degrees 3, 1, 0, 20, 2, 5, 0, 1; columns of degrees 4, 5, 3, 5, 4, 4, 4, 3 (no split
/// at the smallest threshold, 32).
fn graph() -> Csr {
    let rows: Vec<Vec<u32>> = [3usize, 1, 0, 20, 2, 5, 0, 1]
        .iter()
        .enumerate()
        .map(|(r, &d)| (0..d).map(|j| ((r * 3 + j * 5) % 8) as u32).collect())
        .collect();
    Csr::from_rows(8, &rows).unwrap()
}

/// (forward, backward) counts of one call each, checking that a second call costs the same.
fn counts(heads: u32, feat: u32, plan: PlanOptions) -> (Counts, Counts) {
    let backend = Backend::emulator();
    let g = graph();
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let gt = Gt::new(&dg, &GtConfig { heads, feat, scale: None, plan }).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let x = backend.upload(&vec![0.5f32; n]).unwrap();
    let mut last = None;
    for _ in 0..2 {
        let before = backend.counts();
        let fwd = gt.forward(&x, &x, &x).unwrap();
        let mid = backend.counts();
        let grads = gt.backward(&fwd, &x).unwrap();
        let after = backend.counts();
        drop(grads);
        let now = (mid - before, after - mid);
        if let Some(first) = last {
            assert_eq!(now, first, "a second call costs what the first did\n{}", gt.plan());
        }
        last = Some(now);
    }
    last.unwrap()
}

/// A case: its name, H, F, the options, and the expected (forward, backward) counts.
type Case = (&'static str, u32, u32, PlanOptions, (Counts, Counts));

fn c(launches: u64, buffers: u64) -> Counts {
    Counts { launches, buffers, uploads: 0, downloads: 0, copies: 0 }
}

#[test]
fn launches_and_buffers_per_call() {
    // The graph is small enough to tile: the row passes' cases forbid tiles.
    let rows = PlanOptions { tiles: Some(TileChoice::Off), ..PlanOptions::default() };
    let packing_off = PlanOptions { team_rows_below: Some(0), ..rows.clone() };
    #[rustfmt::skip]
    let table: [Case; 9] = [
        // 4 x 64: one team, nothing packed or split: one launch per pass; 3 + 4 buffers.
        ("4x64 row_tiled", 4, 64, rows.clone(), (c(1, 3), c(2, 4))),
        // 1 x 7: 4 teams of 8 lanes, but far fewer short rows than one wave of warps: by default
        // nothing is packed, one launch per pass.
        ("1x7 default", 1, 7, rows.clone(), (c(1, 3), c(2, 4))),
        // Packed below the default's step bound (forward step 4 x 4 teams = 16 edges, forced):
        // every row but the one of 20 is packed: two forward launches; the backward packs the
        // same rows (two launches) and every column (one launch).
        ("1x7 packed", 1, 7, PlanOptions { team_rows_below: Some(17), ..rows.clone() },
            (c(2, 3), c(3, 4))),
        // ... packing off: one launch per pass.
        ("1x7 unpacked", 1, 7, packing_off, (c(1, 3), c(2, 4))),
        // ... every row packed: only the packed launch of each pass.
        ("1x7 all packed", 1, 7, PlanOptions { team_rows_below: Some(u64::MAX), ..rows.clone() },
            (c(1, 3), c(2, 4))),
        // 4 x 64 split past 4 edges (rows of 20 and 5, columns of 5): the forward pass alone
        // (its last chunks merge the split rows), 3 + 2 partial buffers + the arrival counts
        // (zeroed: a fill, not a launch); backward rows pass + combine, columns pass + one
        // combine of dk and dv, 4 + 1 + 2 buffers.
        ("4x64 row_split", 4, 64, PlanOptions {
            schedule: Schedule::RowSplit, split_threshold: Some(4), chunk_edges: Some(2), ..PlanOptions::default()
        }, (c(1, 6), c(4, 7))),
        // Tiles (the default here: one tile of the 8 rows, per edge; and forced dense): the
        // forward is one launch whatever the packing, the backward the fused passes'; after the
        // dense tiles, the backward over the graph's one closed block: one launch, dq, dk, dv.
        ("1x7 per-edge tiles", 1, 7, PlanOptions::default(), (c(1, 3), c(2, 4))),
        ("4x64 dense tiles", 4, 64, PlanOptions { tiles: Some(TileChoice::Dense), ..PlanOptions::default() },
            (c(1, 3), c(1, 3))),
        ("4x64 dense tiles, no closed blocks", 4, 64, PlanOptions {
            tiles: Some(TileChoice::Dense), block_backward: Some(false), ..PlanOptions::default()
        }, (c(1, 3), c(2, 4))),
    ];
    for (name, heads, feat, plan, want) in table {
        assert_eq!(counts(heads, feat, plan), want, "{name}");
    }
}

#[test]
fn preparing_uploads_once() {
    let backend = Backend::emulator();
    let g = graph();
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let before = backend.counts();
    let _gt = Gt::new(&dg, &GtConfig { heads: 1, feat: 7, scale: None, plan: PlanOptions::default() }).unwrap();
    // The forward's and the backward's work lists (rows longest first, the degrees' CV being
    // above 1): uploads, and no launch.
    let made = backend.counts() - before;
    assert_eq!(made.launches, 0);
    assert!(made.uploads >= 1, "{made:?}");
}

/// GAT's full forward and backward (node scores, attention, node-score and vector gradients)
/// upload and download nothing per call on any schedule: their constants are made on the device.
#[test]
fn gat_calls_move_no_host_data() {
    use dfgnn::{Gat, GatConfig};
    let (heads, feat) = (2, 8);
    let backend = Backend::emulator();
    let g = graph();
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let x = backend.upload(&vec![0.5f32; n]).unwrap();
    let a = backend.upload(&vec![0.25f32; (heads * feat) as usize]).unwrap();
    for schedule in Schedule::ALL {
        let plan = PlanOptions { schedule, ..PlanOptions::default() };
        let gat = Gat::new(&dg, &GatConfig { plan, ..GatConfig::new(heads, feat) }).unwrap();
        let before = backend.counts();
        let grads = gat.backward(&gat.forward(&x, &x, &a, &a).unwrap(), &x).unwrap();
        let spent = backend.counts() - before;
        drop(grads);
        assert_eq!((spent.uploads, spent.downloads), (0, 0), "{schedule}: {spent:?}");
    }
}

#[test]
fn gat_node_backward_launches_and_buffers() {
    let backend = Backend::emulator();
    let g = graph();
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let (heads, feat) = (4, 64);
    let n = g.num_dst() * (heads * feat) as usize;
    let (x, y) = (backend.upload(&vec![0.5f32; n]).unwrap(), backend.upload(&vec![0.25f32; n]).unwrap());
    let a = backend.upload(&vec![0.125f32; (heads * feat) as usize]).unwrap();
    for schedule in [Schedule::RowTiled, Schedule::Unfused] {
        let gat = Gat::new(
            &dg,
            &GatConfig { plan: PlanOptions { schedule, ..PlanOptions::default() }, ..GatConfig::new(heads, feat) },
        )
        .unwrap();
        // h_dst is h: one node launch and the sum; h_dst its own array: two node launches.
        for (h_dst, want) in [(&x, c(2, 4)), (&y, c(3, 5))] {
            let fwd = gat.forward(&x, h_dst, &a, &a).unwrap();
            let before = backend.counts();
            drop(gat.backward_precomputed(&fwd, &x).unwrap());
            let mid = backend.counts();
            drop(gat.backward(&fwd, &x).unwrap());
            let after = backend.counts();
            assert_eq!((after - mid) - (mid - before), want, "{schedule}, h_dst is h: {}", std::ptr::eq(h_dst, &x));
        }
    }
}

/// GAT's forward for training (which also keeps the positive part) launches what the inference
/// forward does: on split rows the part's partials merge in the same combine launch.
#[test]
fn gat_part_adds_no_launch() {
    let backend = Backend::emulator();
    let g = graph();
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let (heads, feat) = (4, 64);
    let n = g.num_dst() * (heads * feat) as usize;
    let x = backend.upload(&vec![0.5f32; n]).unwrap();
    let a = backend.upload(&vec![0.125f32; (heads * feat) as usize]).unwrap();
    let split = PlanOptions {
        schedule: Schedule::RowSplit,
        split_threshold: Some(4),
        chunk_edges: Some(2),
        positive_part: Some(true),
        ..PlanOptions::default()
    };
    let mut gat = Gat::new(&dg, &GatConfig { plan: split, ..GatConfig::new(heads, feat) }).unwrap();
    let mut launches = |saves_part: bool| {
        gat.set_saves_part(saves_part);
        let before = backend.counts();
        let fwd = gat.forward(&x, &x, &a, &a).unwrap();
        assert_eq!(fwd.part().is_some(), saves_part);
        (backend.counts() - before).launches
    };
    let (inference, training) = (launches(false), launches(true));
    // Node scores and the pass (its last chunks merge the split rows, the part's sums too).
    assert_eq!(inference, 2);
    assert_eq!(training, inference);
}

/// A forced unfused backward after a fused forward launches what the `unfused` schedule's
/// backward does (not the fused passes), for GT and GAT; with dropout it keeps the fused passes
/// (the unfused kernels have no dropout), launching what the plan without the option does.
#[test]
fn a_forced_unfused_backward_runs_the_unfused_kernels_but_with_dropout() {
    let backend = Backend::emulator();
    let g = graph();
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let (heads, feat) = (2, 8);
    let n = g.num_dst() * (heads * feat) as usize;
    let x = backend.upload(&vec![0.5f32; n]).unwrap();
    let a = backend.upload(&vec![0.25f32; (heads * feat) as usize]).unwrap();
    let fused = PlanOptions { schedule: Schedule::RowTiled, ..PlanOptions::default() };
    let forced = PlanOptions { unfused_backward: Some(true), ..fused.clone() };
    let unfused = PlanOptions { schedule: Schedule::Unfused, ..PlanOptions::default() };
    let gt_backward = |plan: &PlanOptions, dropout: f32| {
        let mut gt = Gt::new(&dg, &GtConfig { heads, feat, scale: None, plan: plan.clone() }).unwrap();
        gt.set_dropout(dropout, 7).unwrap();
        let fwd = gt.forward(&x, &x, &x).unwrap();
        let before = backend.counts();
        drop(gt.backward(&fwd, &x).unwrap());
        (backend.counts() - before).launches
    };
    let gat_backward = |plan: &PlanOptions, dropout: f32| {
        let mut gat = Gat::new(&dg, &GatConfig { plan: plan.clone(), ..GatConfig::new(heads, feat) }).unwrap();
        gat.set_dropout(dropout, 7).unwrap();
        let fwd = gat.forward(&x, &x, &a, &a).unwrap();
        let before = backend.counts();
        drop(gat.backward(&fwd, &x).unwrap());
        (backend.counts() - before).launches
    };
    for (model, backward) in [("gt", &gt_backward as &dyn Fn(&PlanOptions, f32) -> u64), ("gat", &gat_backward)] {
        let (f, u) = (backward(&fused, 0.0), backward(&unfused, 0.0));
        assert_ne!(f, u, "{model}: the fused and unfused backwards launch alike, so this test tells nothing");
        assert_eq!(backward(&forced, 0.0), u, "{model}: the forced unfused backward");
        assert_eq!(backward(&forced, 0.25), backward(&fused, 0.25), "{model}: with dropout, the fused passes");
    }
}
