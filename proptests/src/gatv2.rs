//! The GATv2 check body: run forward and backward through the public API, compare every result
//! and gradient with the `f64` reference under the tolerance rule, and require every element
//! written.

use dfgnn::{Backend, DEFAULT_GATV2_SLOPE, DeviceGraph, GatV2, GatV2Config, Plan, PlanOptions};
use dfgnn_graphs::Csr;
use dfgnn_reference::{Dims, Pattern, RefError, compare, gatv2_backward, gatv2_forward, upcast};

use crate::inputs::GatV2Inputs;
use crate::report::{Report, describe, no_nan};

/// What one GATv2 check runs: the feature shape, the slope, the attention vector's magnitude and
/// the forced plan options.
#[derive(Clone, Debug, PartialEq)]
pub struct GatV2Case {
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
    /// `a` is uniform in `[-magnitude, magnitude)` (scores grow with it).
    pub magnitude: f32,
    /// Overrides of the planner's choices.
    pub options: PlanOptions,
}

impl GatV2Case {
    /// `heads` × `feat` with the default slope, unit inputs and `options`.
    pub fn new(heads: u32, feat: u32, options: &PlanOptions) -> Self {
        Self { heads, feat, slope: DEFAULT_GATV2_SLOPE, magnitude: 1.0, options: options.clone() }
    }

    fn config(&self) -> GatV2Config {
        GatV2Config { heads: self.heads, feat: self.feat, slope: self.slope, plan: self.options.clone() }
    }
}

/// Everything one GATv2 run returns, downloaded.
#[derive(Clone, Debug, PartialEq)]
pub struct GatV2Results {
    /// The plan the library chose.
    pub plan: Plan,
    /// `[N_dst, H, F]`.
    pub out: Vec<f32>,
    /// `[N_dst, H]`.
    pub lse: Vec<f32>,
    /// `[N_src, H, F]`.
    pub dxl: Vec<f32>,
    /// `[N_dst, H, F]`.
    pub dxr: Vec<f32>,
    /// `[H, F]`.
    pub da: Vec<f32>,
}

impl GatV2Results {
    /// The results by name, in a fixed order.
    pub fn named(&self) -> Vec<(&'static str, &[f32])> {
        vec![("out", &self.out), ("lse", &self.lse), ("dxl", &self.dxl), ("dxr", &self.dxr), ("da", &self.da)]
    }
}

/// Prepares `graph` on `backend`, plans, uploads the inputs, runs the forward and backward, and
/// downloads every result. Any library error comes back as it is.
pub fn run_gatv2(
    backend: &Backend,
    graph: &Csr,
    case: &GatV2Case,
    inputs: &GatV2Inputs,
) -> dfgnn::Result<GatV2Results> {
    let dg = DeviceGraph::new(backend, graph)?;
    let model = GatV2::new(&dg, &case.config())?;
    let (xl, xr, a) = (backend.upload(&inputs.xl)?, backend.upload(&inputs.xr)?, backend.upload(&inputs.a)?);
    let d_out = backend.upload(&inputs.d_out)?;
    let fwd = model.forward(&xl, &xr, &a)?;
    let grads = model.backward(&fwd, &d_out)?;
    Ok(GatV2Results {
        plan: model.plan().clone(),
        out: backend.download(&fwd.out)?,
        lse: backend.download(&fwd.lse)?,
        dxl: backend.download(&grads.dxl)?,
        dxr: backend.download(&grads.dxr)?,
        da: backend.download(&grads.da)?,
    })
}

/// [`check_gatv2_case`] with the default slope and unit inputs.
pub fn check_gatv2(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    seed: u64,
) -> Result<Report, String> {
    check_gatv2_case(backend, graph, &GatV2Case::new(heads, feat, options), seed)
}

/// Runs GATv2 on `graph` with inputs from `seed` and checks it: no NaN anywhere, `lse = −∞`
/// exactly on empty rows (and finite elsewhere); out, lse, dxl, dxr, da within the tolerance rule
/// of the `f64` reference. `Err` says what failed, with the case, the graph and the plan.
pub fn check_gatv2_case(backend: &Backend, graph: &Csr, case: &GatV2Case, seed: u64) -> Result<Report, String> {
    let context = format!(
        "GATv2 H={} F={} slope={} magnitude={} {:?} on {} (seed {seed}, {})",
        case.heads,
        case.feat,
        case.slope,
        case.magnitude,
        case.options,
        describe(graph),
        backend.kind()
    );
    let inputs = GatV2Inputs::random(graph.num_dst(), graph.num_src(), case.heads, case.feat, case.magnitude, seed);
    let got = run_gatv2(backend, graph, case, &inputs).map_err(|e| format!("{context}: {e}"))?;
    let fail = |what: String| format!("{context}\n{}{what}", got.plan);
    for (name, values) in got.named() {
        no_nan(name, values).map_err(fail)?;
    }

    let pattern = Pattern::new(graph.num_dst(), graph.num_src(), graph.offsets(), graph.columns())
        .map_err(|e| fail(format!("reference: {e}")))?;
    let dims = Dims { heads: case.heads as usize, feat: case.feat as usize };
    let GatV2Inputs { xl, xr, a, d_out } = &inputs;
    let up = upcast;
    let full_f64 = (|| {
        let (xl, xr, a, d_out) = (up(xl), up(xr), up(a), up(d_out));
        let slope = f64::from(case.slope);
        let r = gatv2_forward(&pattern, dims, &xl, &xr, &a, slope)?;
        let g = gatv2_backward(&pattern, dims, &xl, &xr, &a, slope, &r.out, &r.lse, &d_out)?;
        Ok::<_, RefError>((r, g))
    })()
    .map_err(|e| fail(format!("reference f64: {e}")))?;
    let naive = (|| {
        let r = gatv2_forward(&pattern, dims, xl, xr, a, case.slope)?;
        let g = gatv2_backward(&pattern, dims, xl, xr, a, case.slope, &r.out, &r.lse, d_out)?;
        Ok::<_, RefError>((r, g))
    })()
    .map_err(|e| fail(format!("reference f32: {e}")))?;
    let ((r, rg), (n, ng)) = (full_f64, naive);

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
        compare("dxl", &got.dxl, &ng.dxl, &rg.dxl),
        compare("dxr", &got.dxr, &ng.dxr, &rg.dxr),
        compare("da", &got.da, &ng.da, &rg.da),
    ];
    Report {
        model: "gatv2",
        context,
        plan: got.plan.clone(),
        checks,
        outputs: got.named().into_iter().map(|(name, values)| (name, values.to_vec())).collect(),
    }
    .into_result()
}

/// Runs GATv2 `runs` times on the same inputs, each time on a freshly prepared graph and plan,
/// and requires bit-identical results (every gradient).
pub fn check_gatv2_repeatable(
    backend: &Backend,
    graph: &Csr,
    case: &GatV2Case,
    seed: u64,
    runs: usize,
) -> Result<(), String> {
    let inputs = GatV2Inputs::random(graph.num_dst(), graph.num_src(), case.heads, case.feat, case.magnitude, seed);
    let context = || format!("GATv2 {case:?} on {} (seed {seed})", describe(graph));
    let run = || run_gatv2(backend, graph, case, &inputs).map_err(|e| format!("{}: {e}", context()));
    let first = run()?;
    for attempt in 1..runs {
        let again = run()?;
        crate::report::same_bits(&first.named(), &again.named())
            .map_err(|e| format!("{}\n{}run {attempt} differs from run 0: {e}", context(), first.plan))?;
    }
    Ok(())
}
