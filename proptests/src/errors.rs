//! Bad input gets a clear error, never a panic: wrong buffer lengths, options out of range, an
//! impossible forced plan, non-finite scalars, zero sizes (the bodies of the error tests).

use dfgnn::{Agnn, AgnnConfig, Backend, DeviceGraph, Error, Gt, GtConfig, PlanOptions, Schedule};
use dfgnn_graphs::{Csr, corner};

use crate::gt::{GtCase, run_gt};
use crate::inputs::{AgnnInputs, GtInputs};
use crate::suite::{Tally, catch_panic, no_panic};
use crate::{check_agnn, check_gt, run_agnn};

/// `Ok` when `result` is an error that `expected` accepts; otherwise says what came instead.
fn expect_err<T>(what: &str, result: dfgnn::Result<T>, expected: impl Fn(&Error) -> bool) -> Result<(), String> {
    match result {
        Err(e) if expected(&e) && !e.to_string().is_empty() => Ok(()),
        Err(e) => Err(format!("{what}: wrong error: {e} ({e:?})")),
        Ok(_) => Err(format!("{what}: should be an error, got Ok")),
    }
}

fn shape_mismatch(name: &'static str, want: usize, have: usize) -> impl Fn(&Error) -> bool {
    move |e| matches!(e, Error::ShapeMismatch { what, expected, got, .. } if *what == name && *expected == want && *got == have)
}

fn unsupported(words: &'static str) -> impl Fn(&Error) -> bool {
    move |e| matches!(e, Error::Unsupported { what } if what.contains(words))
}

/// GT with buffers of the wrong length (`q` sized by the sources, `k` by the destinations, `v`
/// one short, `d_out` sized by the sources) on a bipartite graph: `ShapeMismatch` naming the
/// buffer and both lengths, on every schedule.
fn gt_shapes(backend: &Backend, tally: &mut Tally) -> dfgnn::Result<()> {
    let g = corner::bipartite();
    let dg = DeviceGraph::new(backend, &g)?;
    let hf = 2 * 8;
    let (nd, ns) = (g.num_dst() * hf, g.num_src() * hf);
    let dst = backend.upload(&vec![0.25f32; nd])?;
    let src = backend.upload(&vec![0.5f32; ns])?;
    let short = backend.upload(&vec![0.5f32; ns - 1])?;
    for schedule in Schedule::ALL {
        let config = GtConfig { heads: 2, feat: 8, scale: None, plan: PlanOptions { schedule, ..Default::default() } };
        let gt = Gt::new(&dg, &config)?;
        let ctx = |what: &str| format!("GT {schedule}: {what}");
        tally.record(expect_err(
            &ctx("q of N_src rows"),
            no_panic(|| gt.forward(&src, &src, &src).map(|_| ())),
            shape_mismatch("q", nd, ns),
        ));
        tally.record(expect_err(
            &ctx("k of N_dst rows"),
            no_panic(|| gt.forward(&dst, &dst, &src).map(|_| ())),
            shape_mismatch("k", ns, nd),
        ));
        tally.record(expect_err(
            &ctx("v one short"),
            no_panic(|| gt.forward(&dst, &src, &short).map(|_| ())),
            shape_mismatch("v", ns, ns - 1),
        ));
        let fwd = gt.forward(&dst, &src, &src)?;
        tally.record(expect_err(
            &ctx("d_out of N_src rows"),
            no_panic(|| gt.backward(&fwd, &src).map(|_| ())),
            shape_mismatch("d_out", nd, ns),
        ));
    }
    Ok(())
}

/// AGNN with `h` or `d_out` of the wrong length, and non-finite β: clear errors on every schedule.
fn agnn_shapes(backend: &Backend, tally: &mut Tally) -> dfgnn::Result<()> {
    let g = corner::random_97();
    let dg = DeviceGraph::new(backend, &g)?;
    let n = g.num_dst() * 3 * 4;
    let h = backend.upload(&vec![0.5f32; n])?;
    let long = backend.upload(&vec![0.5f32; n + 4])?;
    for schedule in Schedule::ALL {
        let agnn =
            Agnn::new(&dg, &AgnnConfig { heads: 3, feat: 4, plan: PlanOptions { schedule, ..Default::default() } })?;
        let ctx = |what: &str| format!("AGNN {schedule}: {what}");
        tally.record(expect_err(
            &ctx("h too long"),
            no_panic(|| agnn.forward(&long, 1.0).map(|_| ())),
            shape_mismatch("h", n, n + 4),
        ));
        for beta in [f32::NAN, f32::INFINITY] {
            tally.record(expect_err(
                &ctx("β not finite"),
                no_panic(|| agnn.forward(&h, beta).map(|_| ())),
                unsupported("β"),
            ));
        }
        let fwd = agnn.forward(&h, 1.0)?;
        tally.record(expect_err(
            &ctx("d_out too long"),
            no_panic(|| agnn.backward(&fwd, &long).map(|_| ())),
            shape_mismatch("d_out", n, n + 4),
        ));
    }
    Ok(())
}

/// Options out of range and impossible forced plans: `Unsupported` saying why, for GT and AGNN
/// on every schedule.
fn options(backend: &Backend, tally: &mut Tally) -> dfgnn::Result<()> {
    let g = corner::random_97();
    let dg = DeviceGraph::new(backend, &g)?;
    for schedule in Schedule::ALL {
        let base = PlanOptions { schedule, ..Default::default() };
        let bad: [(&str, PlanOptions, &'static str); 4] = [
            ("0 threads per block", PlanOptions { block_threads: Some(0), ..base.clone() }, "threads per block"),
            ("48 threads per block", PlanOptions { block_threads: Some(48), ..base.clone() }, "threads per block"),
            ("2048 threads per block", PlanOptions { block_threads: Some(2048), ..base.clone() }, "threads per block"),
            ("chunks of 0 edges", PlanOptions { chunk_edges: Some(0), ..base.clone() }, "0 edges"),
        ];
        for (what, plan, words) in bad {
            let config = GtConfig { heads: 2, feat: 8, scale: None, plan: plan.clone() };
            tally.record(expect_err(
                &format!("GT {schedule}: {what}"),
                no_panic(|| Gt::new(&dg, &config).map(|_| ())),
                unsupported(words),
            ));
            let config = AgnnConfig { heads: 2, feat: 8, plan };
            tally.record(expect_err(
                &format!("AGNN {schedule}: {what}"),
                no_panic(|| Agnn::new(&dg, &config).map(|_| ())),
                unsupported(words),
            ));
        }
        for scale in [f32::NAN, f32::INFINITY] {
            let config = GtConfig { heads: 2, feat: 8, scale: Some(scale), plan: base.clone() };
            tally.record(expect_err(
                &format!("GT {schedule}: scale {scale}"),
                no_panic(|| Gt::new(&dg, &config).map(|_| ())),
                unsupported("scale"),
            ));
        }
    }
    // A forced staging whose sources cannot fit the forced shared-memory budget.
    let plan = PlanOptions {
        schedule: Schedule::RowGroup,
        group_staging: Some(true),
        group_shared_bytes: Some(64),
        ..Default::default()
    };
    let config = GtConfig { heads: 2, feat: 8, scale: None, plan };
    tally.record(expect_err(
        "GT row_group: forced staging in 64 bytes",
        no_panic(|| Gt::new(&dg, &config).map(|_| ())),
        unsupported("staging"),
    ));
    Ok(())
}

/// Every bad-input case that the library handles today: shapes, options, scalars, impossible
/// plans (zero sizes and `max_slots` outside the kernel table are separate tests).
pub fn bad_inputs_give_clear_errors(backend: &Backend) {
    let mut tally = Tally::new("bad_inputs_give_clear_errors");
    let setup = gt_shapes(backend, &mut tally)
        .and_then(|()| agnn_shapes(backend, &mut tally))
        .and_then(|()| options(backend, &mut tally));
    tally.record(setup.map_err(|e| format!("valid calls of the error tests failed: {e}")));
    tally.finish();
}

/// Zero heads or zero features: `Unsupported` for GT (default and explicit scale) and AGNN on
/// every schedule, without a panic.
pub fn zero_heads_or_features_are_errors(backend: &Backend) {
    let mut tally = Tally::new("zero_heads_or_features_are_errors");
    let g = corner::random_97();
    let dg = match DeviceGraph::new(backend, &g) {
        Ok(dg) => dg,
        Err(e) => panic!("preparing the graph: {e}"),
    };
    for schedule in Schedule::ALL {
        let plan = PlanOptions { schedule, ..Default::default() };
        for (heads, feat) in [(0, 8), (2, 0)] {
            let sizes = |e: &Error| matches!(e, Error::Unsupported { .. });
            for scale in [None, Some(1.0)] {
                let config = GtConfig { heads, feat, scale, plan: plan.clone() };
                tally.record(expect_err(
                    &format!("GT {schedule} H={heads} F={feat} scale {scale:?}"),
                    no_panic(|| Gt::new(&dg, &config).map(|_| ())),
                    sizes,
                ));
            }
            let config = AgnnConfig { heads, feat, plan: plan.clone() };
            tally.record(expect_err(
                &format!("AGNN {schedule} H={heads} F={feat}"),
                no_panic(|| Agnn::new(&dg, &config).map(|_| ())),
                sizes,
            ));
        }
    }
    tally.finish();
}

/// The widest head the fused schedules hold, in loads per lane group: 8 register slots of 32 lanes
/// (16-byte loads when `F % 4 == 0` and scalar loads are not forced, so F ≤ 1024; else F ≤ 256).
/// Wider heads run on `edge_parallel` and `unfused`, which take any F, and that is what `Auto`
/// picks for them.
pub const FUSED_MAX_LOADS_PER_HEAD: u32 = 256;

/// Whether the library may refuse `feat` features per head under `options`, and if so the words
/// its `Unsupported` error must contain; `None` when it must run. Only what the plan documents:
/// a forced fused schedule for heads wider than [`FUSED_MAX_LOADS_PER_HEAD`] loads, and a
/// `max_slots` outside its documented values (1, 2, 4, 8), which it may refuse or round. `Auto`
/// must run every `H ≥ 1`, `F ≥ 1` with options in range.
pub fn documented_refusal(feat: u32, options: &PlanOptions) -> Option<&'static str> {
    let width = if feat.is_multiple_of(4) && !options.scalar_loads { 4 } else { 1 };
    if options.schedule.is_fused() && feat / width > FUSED_MAX_LOADS_PER_HEAD {
        return Some(options.schedule.name());
    }
    options.max_slots.filter(|s| ![1, 2, 4, 8].contains(s)).map(|_| "slots")
}

/// `Ok` when `result` ran, or was refused as [`documented_refusal`] allows; a refusal of a shape
/// the library must run, or any other error, is `Err`.
fn ran_or_refused_as_documented<T>(
    what: &str,
    feat: u32,
    options: &PlanOptions,
    result: &dfgnn::Result<T>,
) -> Result<bool, String> {
    match (result, documented_refusal(feat, options)) {
        (Ok(_), _) => Ok(true),
        (Err(Error::Unsupported { what: why }), Some(words)) if why.contains(words) => Ok(false),
        (Err(e), Some(words)) => Err(format!("{what}: expected Unsupported naming `{words}` or a run, got: {e}")),
        (Err(e), None) => Err(format!("{what}: refused a shape and options it must run: {e}")),
    }
}

/// Runs GT and AGNN for a shape and options that the library must run correctly, unless
/// [`documented_refusal`] allows a refusal; a panic, a wrong result or any other refusal fails.
fn runs_unless_documented(
    backend: &Backend,
    g: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
) -> Result<(), String> {
    let case = GtCase::new(heads, feat, options);
    let inputs = GtInputs::random(g.num_dst(), g.num_src(), heads, feat, 1.0, 11);
    let what = format!("H={heads} F={feat} {options:?}");
    let ran = no_panic(|| run_gt(backend, g, &case, &inputs));
    if ran_or_refused_as_documented(&format!("GT {what}"), feat, options, &ran)? {
        catch_panic(|| check_gt(backend, g, heads, feat, options, 11))
            .map_err(|p| format!("GT {what}: panicked: {p}"))??;
    }
    let inputs = AgnnInputs::random(g.num_dst(), heads, feat, 11);
    let ran = no_panic(|| run_agnn(backend, g, heads, feat, options, &inputs));
    if ran_or_refused_as_documented(&format!("AGNN {what}"), feat, options, &ran)? {
        catch_panic(|| check_agnn(backend, g, heads, feat, options, 11))
            .map_err(|p| format!("AGNN {what}: panicked: {p}"))??;
    }
    Ok(())
}

/// Heads of 129..=256 `F4` vectors (F = 516..=1024 with `F % 4 == 0`) need 8 slots, for which
/// there is no fused backward kernel: the library must run them on every schedule (fused forward,
/// unfused backward; this once panicked on a missing kernel variant).
pub fn wide_heads_run_on_every_schedule(backend: &Backend) {
    let mut tally = Tally::new("wide_heads_run_on_every_schedule");
    let g = corner::only_self_loops();
    let g2 = corner::single_self_loop();
    for feat in [516, 1024] {
        for schedule in Schedule::ALL {
            let options = PlanOptions { schedule, ..Default::default() };
            tally.record(documented_refusal(feat, &options).map_or(Ok(()), |w| {
                Err(format!("F = {feat} on {schedule}: the fused kernels hold it, yet `{w}` is a documented refusal"))
            }));
            tally.record(runs_unless_documented(backend, &g, 1, feat, &options));
            tally.record(runs_unless_documented(backend, &g2, 2, feat, &options));
        }
    }
    tally.finish();
}

/// `max_slots` is documented as 1, 2, 4 or 8; any other value must be refused (naming the slots)
/// or rounded, not reach a kernel table without an entry.
pub fn max_slots_outside_the_kernel_table_run_or_are_refused(backend: &Backend) {
    let mut tally = Tally::new("max_slots_outside_the_kernel_table_run_or_are_refused");
    let g = corner::duplicates();
    for max_slots in [0, 3, 7, 16] {
        for schedule in Schedule::ALL {
            let options = PlanOptions { schedule, max_slots: Some(max_slots), ..Default::default() };
            for (h, f) in [(8, 64), (3, 256)] {
                tally.record(runs_unless_documented(backend, &g, h, f, &options));
            }
        }
    }
    tally.finish();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_documented_only_for_wide_heads_on_fused_schedules_and_odd_slots() {
        let forced = |schedule| PlanOptions { schedule, ..Default::default() };
        for schedule in Schedule::ALL {
            for feat in [1, 7, 256, 516, 1024] {
                assert_eq!(documented_refusal(feat, &forced(schedule)), None, "{schedule} F={feat}");
            }
            for feat in [257, 1028, 2000] {
                let wide = documented_refusal(feat, &forced(schedule));
                assert_eq!(wide, schedule.is_fused().then_some(schedule.name()), "{schedule} F={feat}");
            }
            let scalar = PlanOptions { scalar_loads: true, ..forced(schedule) };
            assert_eq!(documented_refusal(256, &scalar), None);
            assert_eq!(documented_refusal(260, &scalar).is_some(), schedule.is_fused());
            for (slots, refusable) in [(0, true), (1, false), (3, true), (8, false), (16, true)] {
                let options = PlanOptions { max_slots: Some(slots), ..forced(schedule) };
                assert_eq!(documented_refusal(7, &options).is_some(), refusable, "{schedule} max_slots {slots}");
            }
        }
    }
}
