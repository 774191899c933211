//! scratch
use dfgnn::{Backend, PlanOptions, Schedule};
use dfgnn_graphs::strategy::PowerLawCase;
use dfgnn_proptests::{GtCase, check_gt_case};
#[test]
fn repro() {
    let b = Backend::emulator();
    let g = PowerLawCase {
        n: 54,
        mean_degree: 0.0,
        seed: 2950272529942342413,
        hubs: (1, 17),
        empty_every: 0,
        self_loops: vec![],
        duplicate_rows: vec![],
    }
    .build();
    println!("{}", dfgnn_proptests::report::describe(&g));
    for s in [Schedule::RowTiled, Schedule::Unfused, Schedule::EdgeParallel] {
        for scale in [0.125f32, 0.25, 0.5, 1.0, 2.0] {
            let case = GtCase {
                heads: 3,
                feat: 128,
                scale: Some(scale),
                magnitude: 4.0,
                options: PlanOptions { schedule: s, ..Default::default() },
            };
            match check_gt_case(&b, &g, &case, 8704362589034288363) {
                Ok(r) => println!(
                    "{s} scale {scale}: ok lse≤{:.0} dv err {:.2e} naive {:.2e}",
                    r.checks[1].magnitude, r.checks[4].error, r.checks[4].naive
                ),
                Err(e) => println!(
                    "{s} scale {scale}: FAIL {}",
                    e.lines().filter(|l| l.contains("lse:") || l.contains("dv:")).collect::<Vec<_>>().join(" | ")
                ),
            }
        }
    }
}
