//! scratch probes
use dfgnn::{Backend, PlanOptions};
use dfgnn_graphs::corner;
fn probe(h: u32, f: u32, o: PlanOptions) {
    let b = Backend::emulator();
    let g = corner::random_97();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dfgnn_proptests::check_gt(&b, &g, h, f, &o, 1).map(|_| ())));
    println!("GT H={h} F={f} {o:?}: {:?}", r.map_err(|p| p.downcast_ref::<String>().cloned().or(p.downcast_ref::<&str>().map(|s| s.to_string()))).map(|x| x.map_err(|e| e.lines().last().unwrap_or("").to_string())));
}
#[test]
fn probes() {
    probe(1, 1024, PlanOptions::default());
    probe(8, 64, PlanOptions { max_slots: Some(3), ..Default::default() });
    probe(2, 256, PlanOptions { max_slots: Some(3), ..Default::default() });
    probe(1, 2000, PlanOptions { scalar_loads: true, ..Default::default() });
    probe(1, 7, PlanOptions { max_slots: Some(0), ..Default::default() });
    probe(1, 7, PlanOptions { block_threads: Some(1024), ..Default::default() });
    probe(1, 7, PlanOptions { split_threshold: Some(0), chunk_edges: Some(1), ..Default::default() });
    probe(1, 7, PlanOptions { chunk_edges: Some(u32::MAX), split_threshold: Some(0), ..Default::default() });
}
