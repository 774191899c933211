//! scratch probes
use dfgnn::{Agnn, AgnnConfig, Backend, DeviceGraph, Gt, GtConfig, PlanOptions, Schedule};
use dfgnn_graphs::corner;
#[test]
fn probes() {
    let b = Backend::emulator();
    let g = corner::random_97();
    let dg = DeviceGraph::new(&b, &g).unwrap();
    for s in Schedule::ALL {
        for (h, f) in [(0, 8), (2, 0)] {
            let plan = PlanOptions { schedule: s, ..Default::default() };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let gt = Gt::new(&dg, &GtConfig { heads: h, feat: f, scale: None, plan: plan.clone() })?;
                let x = b.upload(&[0.0f32; 0])?;
                let fwd = gt.forward(&x, &x, &x)?;
                let _ = gt.backward(&fwd, &x)?;
                Ok::<_, dfgnn::Error>(gt.plan().summary())
            }));
            let a = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let agnn = Agnn::new(&dg, &AgnnConfig { heads: h, feat: f, plan: plan.clone() })?;
                let x = b.upload(&[0.0f32; 0])?;
                let fwd = agnn.forward(&x, 1.0)?;
                let _ = agnn.backward(&fwd, &x)?;
                Ok::<_, dfgnn::Error>(agnn.plan().summary())
            }));
            println!("{s} H={h} F={f}: gt {:?} agnn {:?}", r.map_err(|_| "PANIC"), a.map_err(|_| "PANIC"));
        }
    }
}
