//! The AGNN check body: forward and backward through the public API, against the `f64`
//! reference, with the same rule and the same every-element-written requirement as GT.

use dfgnn::agnn::AGNN_NORM_EPS;
use dfgnn::{Agnn, AgnnConfig, Backend, DeviceGraph, Plan, PlanOptions};
use dfgnn_graphs::Csr;
use dfgnn_reference::{
    Dims, Pattern, agnn_backward, agnn_forward, compare, compare_at_scale, compare_scalar, l2_normalize, upcast,
};

use crate::inputs::AgnnInputs;
use crate::report::{Report, describe, no_nan, same_bits};

/// Everything one AGNN run returns, downloaded.
#[derive(Clone, Debug, PartialEq)]
pub struct AgnnResults {
    /// The plan the library chose.
    pub plan: Plan,
    /// `[N, H, F]`.
    pub out: Vec<f32>,
    /// `[N, H]`.
    pub lse: Vec<f32>,
    /// `[N, H]` the norms of the features, clamped at the normalisation's eps as the reference's.
    pub norm: Vec<f32>,
    /// `[N, H, F]`.
    pub dh: Vec<f32>,
    /// dL/dβ.
    pub d_beta: f32,
}

impl AgnnResults {
    /// The array results by name, in a fixed order (dβ as a one-element array last).
    pub fn named(&self) -> Vec<(&'static str, &[f32])> {
        vec![
            ("out", &self.out),
            ("lse", &self.lse),
            ("norm", &self.norm),
            ("dh", &self.dh),
            ("d_beta", std::slice::from_ref(&self.d_beta)),
        ]
    }
}

/// Prepares `graph`, plans AGNN for `heads` × `feat` under `options`, runs the forward and the
/// backward and downloads every result; library errors come back as they are. β goes in as a
/// device buffer, as the Python package passes it (`host/tests/attention.rs` runs the `f32` one).
pub fn run_agnn(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    inputs: &AgnnInputs,
) -> dfgnn::Result<AgnnResults> {
    let dg = DeviceGraph::new(backend, graph)?;
    let agnn = Agnn::new(&dg, &AgnnConfig { heads, feat, plan: options.clone() })?;
    let h = backend.upload(&inputs.h)?;
    let d_out = backend.upload(&inputs.d_out)?;
    let beta = backend.upload(&[inputs.beta])?;
    let fwd = agnn.forward_device_beta(&h, &beta)?;
    let grads = agnn.backward(&fwd, &d_out)?;
    Ok(AgnnResults {
        plan: agnn.plan().clone(),
        out: backend.download(fwd.out())?,
        lse: backend.download(fwd.lse())?,
        norm: backend.download(fwd.norms())?.into_iter().map(|n| n.max(AGNN_NORM_EPS)).collect(),
        dh: backend.download(&grads.dh)?,
        d_beta: backend.download(&grads.d_beta)?[0],
    })
}

/// Runs AGNN on the square `graph` with inputs from `seed` and checks out, lse, the norms, dh
/// and dβ against the `f64` reference under the tolerance rule, plus no NaN and `lse = −∞`
/// exactly on empty rows. `Err` says what failed, with the case and the plan.
pub fn check_agnn(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    seed: u64,
) -> Result<Report, String> {
    let inputs = AgnnInputs::random(graph.num_dst(), heads, feat, seed);
    check_agnn_inputs(backend, graph, heads, feat, options, &inputs, &format!("seed {seed}"))
}

/// [`check_agnn`] on given inputs; `origin` says where they came from, for messages.
pub fn check_agnn_inputs(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    inputs: &AgnnInputs,
    origin: &str,
) -> Result<Report, String> {
    let context = format!(
        "AGNN H={heads} F={feat} β={} {options:?} on {} ({origin}, {})",
        inputs.beta,
        describe(graph),
        backend.kind()
    );
    let got = run_agnn(backend, graph, heads, feat, options, inputs).map_err(|e| format!("{context}: {e}"))?;
    let fail = |what: String| format!("{context}\n{}{what}", got.plan);
    for (name, values) in got.named() {
        no_nan(name, values).map_err(fail)?;
    }

    let n = graph.num_dst();
    let pattern = Pattern::new(n, graph.num_src(), graph.offsets(), graph.columns())
        .map_err(|e| fail(format!("reference: {e}")))?;
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let AgnnInputs { h, d_out, beta } = inputs;
    let (h64, d64, b64) = (upcast(h), upcast(d_out), f64::from(*beta));
    let reference = (|| {
        let r = agnn_forward(&pattern, dims, &h64, b64)?;
        let g = agnn_backward(&pattern, dims, &h64, b64, &r.out, &r.lse, &d64)?;
        let norm = l2_normalize(n, dims, &h64)?.norm;
        Ok::<_, dfgnn_reference::RefError>((r, g, norm))
    })()
    .map_err(|e| fail(format!("reference f64: {e}")))?;
    let naive = (|| {
        let r = agnn_forward(&pattern, dims, h, *beta)?;
        let g = agnn_backward(&pattern, dims, h, *beta, &r.out, &r.lse, d_out)?;
        let norm = l2_normalize(n, dims, h)?.norm;
        Ok::<_, dfgnn_reference::RefError>((r, g, norm))
    })()
    .map_err(|e| fail(format!("reference f32: {e}")))?;
    let ((r, rg, rnorm), (nv, ng, nnorm)) = (reference, naive);

    for (i, (&x, &want)) in got.lse.iter().zip(&r.lse).enumerate() {
        if (want == f64::NEG_INFINITY) != (x == f32::NEG_INFINITY) || (want.is_finite() && !x.is_finite()) {
            return Err(fail(format!(
                "lse[{i}] = {x} on row {} of {} edges, should be {want}",
                i / heads as usize,
                graph.degree(i / heads as usize)
            )));
        }
    }

    let checks = vec![
        compare("out", &got.out, &nv.out, &r.out),
        compare("lse", &got.lse, &nv.lse, &r.lse),
        compare("norm", &got.norm, &nnorm, &rnorm),
        compare_at_scale("dh", &got.dh, &ng.dh, &rg.dh, &rnorm),
        compare_scalar("dβ", got.d_beta, ng.d_beta, rg.d_beta, rg.d_beta_magnitude),
    ];
    Report {
        model: "agnn",
        context,
        plan: got.plan.clone(),
        checks,
        outputs: got.named().into_iter().map(|(name, values)| (name, values.to_vec())).collect(),
    }
    .into_result()
}

/// Runs AGNN `runs` times on the same inputs (fresh graph and plan each time) and requires
/// bit-identical results, dβ included.
pub fn check_agnn_repeatable(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    seed: u64,
    runs: usize,
) -> Result<(), String> {
    let inputs = AgnnInputs::random(graph.num_dst(), heads, feat, seed);
    let context = || format!("AGNN H={heads} F={feat} {options:?} on {} (seed {seed})", describe(graph));
    let run = || run_agnn(backend, graph, heads, feat, options, &inputs).map_err(|e| format!("{}: {e}", context()));
    let first = run()?;
    for attempt in 1..runs {
        let again = run()?;
        same_bits(&first.named(), &again.named())
            .map_err(|e| format!("{}\n{}run {attempt} differs from run 0: {e}", context(), first.plan))?;
    }
    Ok(())
}
