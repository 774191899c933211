//! The GT check body: run forward and backward through the public API, compare every result with
//! the `f64` reference under the tolerance rule, and require every element written.

use dfgnn::{Backend, DeviceGraph, Gt, GtConfig, Plan, PlanOptions};
use dfgnn_graphs::Csr;
use dfgnn_reference::{Dims, Pattern, compare, gt_backward, gt_forward, upcast};

use crate::inputs::GtInputs;
use crate::report::{Report, describe, no_nan};

/// What one GT check runs: the feature shape, the scale, the inputs' magnitude and the forced
/// plan options.
#[derive(Clone, Debug, PartialEq)]
pub struct GtCase {
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The score scale; `None` for the library's default `1/√F`.
    pub scale: Option<f32>,
    /// `q` and `k` are uniform in `[-magnitude, magnitude)` (scores grow with its square).
    pub magnitude: f32,
    /// Overrides of the planner's choices.
    pub options: PlanOptions,
}

impl GtCase {
    /// `heads` × `feat` with the default scale, unit inputs and `options`.
    pub fn new(heads: u32, feat: u32, options: &PlanOptions) -> Self {
        Self { heads, feat, scale: None, magnitude: 1.0, options: options.clone() }
    }

    fn config(&self) -> GtConfig {
        GtConfig { heads: self.heads, feat: self.feat, scale: self.scale, plan: self.options.clone() }
    }
}

/// Everything one GT run returns, downloaded.
#[derive(Clone, Debug, PartialEq)]
pub struct GtResults {
    /// The plan the library chose.
    pub plan: Plan,
    /// The score scale it used.
    pub scale: f32,
    /// `[N_dst, H, F]`.
    pub out: Vec<f32>,
    /// `[N_dst, H]`.
    pub lse: Vec<f32>,
    /// `[N_dst, H, F]`.
    pub dq: Vec<f32>,
    /// `[N_src, H, F]`.
    pub dk: Vec<f32>,
    /// `[N_src, H, F]`.
    pub dv: Vec<f32>,
}

impl GtResults {
    /// The results by name, in a fixed order.
    pub fn named(&self) -> Vec<(&'static str, &[f32])> {
        vec![("out", &self.out), ("lse", &self.lse), ("dq", &self.dq), ("dk", &self.dk), ("dv", &self.dv)]
    }
}

/// Prepares `graph` on `backend`, plans, uploads the inputs, runs the forward and the backward,
/// and downloads every result. Any library error (a shape, an unsupported option, a defect the
/// emulator found) comes back as it is.
pub fn run_gt(backend: &Backend, graph: &Csr, case: &GtCase, inputs: &GtInputs) -> dfgnn::Result<GtResults> {
    let dg = DeviceGraph::new(backend, graph)?;
    let gt = Gt::new(&dg, &case.config())?;
    let (q, k, v) = (backend.upload(&inputs.q)?, backend.upload(&inputs.k)?, backend.upload(&inputs.v)?);
    let d_out = backend.upload(&inputs.d_out)?;
    let fwd = gt.forward(&q, &k, &v)?;
    let grads = gt.backward(&fwd, &d_out)?;
    Ok(GtResults {
        plan: gt.plan().clone(),
        scale: gt.scale(),
        out: backend.download(&fwd.out)?,
        lse: backend.download(&fwd.lse)?,
        dq: backend.download(&grads.dq)?,
        dk: backend.download(&grads.dk)?,
        dv: backend.download(&grads.dv)?,
    })
}

/// [`check_gt_case`] with the default scale and unit inputs.
pub fn check_gt(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    seed: u64,
) -> Result<Report, String> {
    check_gt_case(backend, graph, &GtCase::new(heads, feat, options), seed)
}

/// Runs GT on `graph` with inputs from `seed` and checks it: no NaN anywhere, `lse = −∞` exactly
/// on empty rows (and finite elsewhere), and out, lse, dq, dk, dv within the tolerance rule of the
/// `f64` reference. `Err` says what failed, with the case, the graph and the plan.
pub fn check_gt_case(backend: &Backend, graph: &Csr, case: &GtCase, seed: u64) -> Result<Report, String> {
    let context = format!(
        "GT H={} F={} scale={:?} magnitude={} {:?} on {} (seed {seed}, {})",
        case.heads,
        case.feat,
        case.scale,
        case.magnitude,
        case.options,
        describe(graph),
        backend.kind()
    );
    let inputs = GtInputs::random(graph.num_dst(), graph.num_src(), case.heads, case.feat, case.magnitude, seed);
    let got = run_gt(backend, graph, case, &inputs).map_err(|e| format!("{context}: {e}"))?;
    let fail = |what: String| format!("{context}\n{}{what}", got.plan);
    for (name, values) in got.named() {
        no_nan(name, values).map_err(fail)?;
    }

    let pattern = Pattern::new(graph.num_dst(), graph.num_src(), graph.offsets(), graph.columns())
        .map_err(|e| fail(format!("reference: {e}")))?;
    let dims = Dims { heads: case.heads as usize, feat: case.feat as usize };
    let GtInputs { q, k, v, d_out } = &inputs;
    let (q64, k64, v64, d64) = (upcast(q), upcast(k), upcast(v), upcast(d_out));
    let c = got.scale;
    let reference = gt_forward(&pattern, dims, &q64, &k64, &v64, f64::from(c))
        .and_then(|r| {
            let g = gt_backward(&pattern, dims, &q64, &k64, &v64, f64::from(c), &r.out, &r.lse, &d64)?;
            Ok((r, g))
        })
        .map_err(|e| fail(format!("reference f64: {e}")))?;
    let naive = gt_forward(&pattern, dims, q, k, v, c)
        .and_then(|r| {
            let g = gt_backward(&pattern, dims, q, k, v, c, &r.out, &r.lse, d_out)?;
            Ok((r, g))
        })
        .map_err(|e| fail(format!("reference f32: {e}")))?;
    let ((r, rg), (n, ng)) = (reference, naive);

    // lse: −∞ exactly where the row is empty, finite elsewhere.
    for (i, (&x, &want)) in got.lse.iter().zip(&r.lse).enumerate() {
        let row = i / case.heads as usize;
        if want == f64::NEG_INFINITY && x != f32::NEG_INFINITY {
            return Err(fail(format!("lse[{i}] = {x} on empty row {row}, should be −∞")));
        }
        if want.is_finite() && !x.is_finite() {
            return Err(fail(format!("lse[{i}] = {x} on row {row} of {} edges, should be {want}", graph.degree(row))));
        }
    }

    let checks = vec![
        compare("out", &got.out, &n.out, &r.out),
        compare("lse", &got.lse, &n.lse, &r.lse),
        compare("dq", &got.dq, &ng.dq, &rg.dq),
        compare("dk", &got.dk, &ng.dk, &rg.dk),
        compare("dv", &got.dv, &ng.dv, &rg.dv),
    ];
    let report = Report {
        model: "gt",
        context,
        plan: got.plan.clone(),
        checks,
        outputs: got.named().into_iter().map(|(name, values)| (name, values.to_vec())).collect(),
    };
    report.into_result()
}

/// Runs GT `runs` times on the same inputs, each time on a freshly prepared graph and plan, and
/// requires bit-identical results.
pub fn check_gt_repeatable(
    backend: &Backend,
    graph: &Csr,
    case: &GtCase,
    seed: u64,
    runs: usize,
) -> Result<(), String> {
    let inputs = GtInputs::random(graph.num_dst(), graph.num_src(), case.heads, case.feat, case.magnitude, seed);
    let context = || format!("GT {case:?} on {} (seed {seed})", describe(graph));
    let run = || run_gt(backend, graph, case, &inputs).map_err(|e| format!("{}: {e}", context()));
    let first = run()?;
    for attempt in 1..runs {
        let again = run()?;
        crate::report::same_bits(&first.named(), &again.named())
            .map_err(|e| format!("{}\n{}run {attempt} differs from run 0: {e}", context(), first.plan))?;
    }
    Ok(())
}
