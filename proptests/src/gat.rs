//! The GAT check body: run forward and backward through the public API — features and attention
//! vectors in, then again from the node scores the library computed (the precomputed entry
//! point) — compare every result and gradient with the `f64` reference under the tolerance rule,
//! and require every element written.

use dfgnn::{Backend, DEFAULT_GAT_SLOPE, DeviceGraph, Gat, GatConfig, Plan, PlanOptions};
use dfgnn_graphs::Csr;
use dfgnn_reference::{
    Dims, Pattern, RefError, compare, gat_backward, gat_backward_precomputed, gat_forward, gat_forward_precomputed,
    upcast,
};

use crate::inputs::GatInputs;
use crate::report::{Report, describe, no_nan};

/// What one GAT check runs: the feature shape, the slope, the attention vectors' magnitude and
/// the forced plan options.
#[derive(Clone, Debug, PartialEq)]
pub struct GatCase {
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
    /// `a_dst` and `a_src` are uniform in `[-magnitude, magnitude)` (scores grow with it).
    pub magnitude: f32,
    /// Overrides of the planner's choices.
    pub options: PlanOptions,
}

impl GatCase {
    /// `heads` × `feat` with the default slope, unit inputs and `options`.
    pub fn new(heads: u32, feat: u32, options: &PlanOptions) -> Self {
        Self { heads, feat, slope: DEFAULT_GAT_SLOPE, magnitude: 1.0, options: options.clone() }
    }

    fn config(&self) -> GatConfig {
        GatConfig { heads: self.heads, feat: self.feat, slope: self.slope, plan: self.options.clone() }
    }
}

/// Everything one GAT run returns, downloaded: both entry points.
#[derive(Clone, Debug, PartialEq)]
pub struct GatResults {
    /// The plan the library chose.
    pub plan: Plan,
    /// `[N_dst, H, F]`.
    pub out: Vec<f32>,
    /// `[N_dst, H]`.
    pub lse: Vec<f32>,
    /// `[N_src, H, F]`: through the aggregation and through `er` (and `el` when `dh_dst` is `None`).
    pub dh: Vec<f32>,
    /// `[N_dst, H, F]`: through `el`; `None` when `h_dst` was passed as `h` (folded into `dh`).
    pub dh_dst: Option<Vec<f32>>,
    /// `[H, F]`.
    pub da_dst: Vec<f32>,
    /// `[H, F]`.
    pub da_src: Vec<f32>,
    /// `[N_dst, H]` and `[N_src, H]`: the node scores the forward computed.
    pub el: Vec<f32>,
    /// See `el`.
    pub er: Vec<f32>,
    /// `[N_dst, H, F]`: the forward from `el`, `er`.
    pub pre_out: Vec<f32>,
    /// `[N_src, H, F]`: the precomputed backward's `dh` (through the aggregation only).
    pub pre_dh: Vec<f32>,
    /// `[N_dst, H]`.
    pub pre_d_el: Vec<f32>,
    /// `[N_src, H]`.
    pub pre_d_er: Vec<f32>,
    /// `[N_dst, H]`: `d el` from the full forward's positive part (the backward's row pass
    /// `GAT_PART_ROWS`, which the full backward folds into `dh_dst` and `da_dst`), `None` where
    /// the plan saves no part.
    pub part_d_el: Option<Vec<f32>>,
}

impl GatResults {
    /// The results by name, in a fixed order (`dh_dst` only when it came on its own).
    pub fn named(&self) -> Vec<(&'static str, &[f32])> {
        let mut named: Vec<(&'static str, &[f32])> = vec![("out", &self.out), ("lse", &self.lse), ("dh", &self.dh)];
        named.extend(self.dh_dst.as_deref().map(|dh_dst| ("dh_dst", dh_dst)));
        named.extend([
            ("da_dst", &self.da_dst[..]),
            ("da_src", &self.da_src),
            ("el", &self.el),
            ("er", &self.er),
            ("precomputed out", &self.pre_out),
            ("precomputed dh", &self.pre_dh),
            ("d_el", &self.pre_d_el),
            ("d_er", &self.pre_d_er),
        ]);
        named.extend(self.part_d_el.as_deref().map(|d_el| ("part d_el", d_el)));
        named
    }
}

/// Prepares `graph` on `backend`, plans, uploads the inputs, runs the full forward and backward,
/// then the precomputed ones from the forward's own node scores, and downloads every result. Any
/// library error comes back as it is.
pub fn run_gat(backend: &Backend, graph: &Csr, case: &GatCase, inputs: &GatInputs) -> dfgnn::Result<GatResults> {
    let dg = DeviceGraph::new(backend, graph)?;
    let mut gat = Gat::new(&dg, &case.config())?;
    let h = backend.upload(&inputs.h)?;
    // Equal features are passed as one buffer: the path that scores both from one read.
    let h_dst = if inputs.h_dst == inputs.h { None } else { Some(backend.upload(&inputs.h_dst)?) };
    let (a_dst, a_src) = (backend.upload(&inputs.a_dst)?, backend.upload(&inputs.a_src)?);
    let d_out = backend.upload(&inputs.d_out)?;
    let fwd = gat.forward(&h, h_dst.as_ref().unwrap_or(&h), &a_dst, &a_src)?;
    let grads = gat.backward(&fwd, &d_out)?;
    let Some((el, er)) = fwd.node_scores() else { unreachable!("Gat::forward returns the node scores it computed") };
    // The full backward folds its d el into dh_dst and da_dst; the part's row pass's own is
    // checked too, against the same reference as the gathering pass's below.
    let part_d_el = match fwd.part() {
        Some(_) => Some(backend.download(&gat.backward_precomputed(&fwd, &d_out)?.d_el)?),
        None => None,
    };
    // The full run's forward saved the positive part (the default) where the plan lets it; the
    // precomputed one does not, so its backward's row pass gathers: both row passes are checked
    // on every case that plans the part.
    gat.set_saves_part(false);
    let pre = gat.forward_precomputed(&h, el, er)?;
    let pre_grads = gat.backward_precomputed(&pre, &d_out)?;
    Ok(GatResults {
        plan: gat.plan().clone(),
        out: backend.download(&fwd.out)?,
        lse: backend.download(&fwd.lse)?,
        dh: backend.download(&grads.dh)?,
        dh_dst: grads.dh_dst.as_ref().map(|dh_dst| backend.download(dh_dst)).transpose()?,
        da_dst: backend.download(&grads.da_dst)?,
        da_src: backend.download(&grads.da_src)?,
        el: backend.download(el)?,
        er: backend.download(er)?,
        pre_out: backend.download(&pre.out)?,
        pre_dh: backend.download(&pre_grads.dh)?,
        pre_d_el: backend.download(&pre_grads.d_el)?,
        pre_d_er: backend.download(&pre_grads.d_er)?,
        part_d_el,
    })
}

/// [`check_gat_case`] with the default slope and unit inputs.
pub fn check_gat(
    backend: &Backend,
    graph: &Csr,
    heads: u32,
    feat: u32,
    options: &PlanOptions,
    seed: u64,
) -> Result<Report, String> {
    check_gat_case(backend, graph, &GatCase::new(heads, feat, options), seed)
}

/// Runs GAT on `graph` with inputs from `seed` and checks it: no NaN anywhere, `lse = −∞` exactly
/// on empty rows (and finite elsewhere); out, lse, dh, dh_dst, da_dst, da_src within the tolerance
/// rule of the `f64` reference (with equal `h` and `h_dst`, passed as one buffer, `dh` against the
/// reference's `dh + dh_dst` and no `dh_dst`: the library folds it); and the precomputed entry
/// point, fed the node scores the forward computed, within the rule of the reference fed the same
/// scores (out, dh, d el, d er; its d el is the gathering row pass's, and where the plan saves the
/// positive part, `part d_el` is the part's row pass's, from the full forward). `Err` says what
/// failed, with the case, the graph and the plan.
pub fn check_gat_case(backend: &Backend, graph: &Csr, case: &GatCase, seed: u64) -> Result<Report, String> {
    let context = format!(
        "GAT H={} F={} slope={} magnitude={} {:?} on {} (seed {seed}, {})",
        case.heads,
        case.feat,
        case.slope,
        case.magnitude,
        case.options,
        describe(graph),
        backend.kind()
    );
    let inputs = GatInputs::random(graph.num_dst(), graph.num_src(), case.heads, case.feat, case.magnitude, seed);
    let got = run_gat(backend, graph, case, &inputs).map_err(|e| format!("{context}: {e}"))?;
    let fail = |what: String| format!("{context}\n{}{what}", got.plan);
    for (name, values) in got.named() {
        no_nan(name, values).map_err(fail)?;
    }

    let pattern = Pattern::new(graph.num_dst(), graph.num_src(), graph.offsets(), graph.columns())
        .map_err(|e| fail(format!("reference: {e}")))?;
    let dims = Dims { heads: case.heads as usize, feat: case.feat as usize };
    let GatInputs { h, h_dst, a_dst, a_src, d_out } = &inputs;
    let (el, er) = (&got.el, &got.er);
    let up = upcast;
    let full_f64 = (|| {
        let (h, h_dst, a_dst, a_src, d_out) = (up(h), up(h_dst), up(a_dst), up(a_src), up(d_out));
        let slope = f64::from(case.slope);
        let r = gat_forward(&pattern, dims, &h, &h_dst, &a_dst, &a_src, slope)?;
        let g = gat_backward(&pattern, dims, &h, &h_dst, &a_dst, &a_src, slope, &r.out, &r.lse, &d_out)?;
        let (el, er) = (up(el), up(er));
        let p = gat_forward_precomputed(&pattern, dims, &h, &el, &er, slope)?;
        let pg = gat_backward_precomputed(&pattern, dims, &h, &el, &er, slope, &p.out, &p.lse, &d_out)?;
        Ok::<_, RefError>((r, g, p, pg))
    })()
    .map_err(|e| fail(format!("reference f64: {e}")))?;
    let naive = (|| {
        let r = gat_forward(&pattern, dims, h, h_dst, a_dst, a_src, case.slope)?;
        let g = gat_backward(&pattern, dims, h, h_dst, a_dst, a_src, case.slope, &r.out, &r.lse, d_out)?;
        let p = gat_forward_precomputed(&pattern, dims, h, el, er, case.slope)?;
        let pg = gat_backward_precomputed(&pattern, dims, h, el, er, case.slope, &p.out, &p.lse, d_out)?;
        Ok::<_, RefError>((r, g, p, pg))
    })()
    .map_err(|e| fail(format!("reference f32: {e}")))?;
    let ((r, rg, rp, rpg), (n, ng, np, npg)) = (full_f64, naive);

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

    let folded = inputs.h_dst == inputs.h;
    if got.dh_dst.is_some() == folded {
        return Err(fail(format!(
            "dh_dst is {:?} with h_dst {} h",
            got.dh_dst.as_ref().map(Vec::len),
            if folded { "=" } else { "≠" }
        )));
    }
    let dh = match &got.dh_dst {
        Some(dh_dst) => vec![compare("dh", &got.dh, &ng.dh, &rg.dh), compare("dh_dst", dh_dst, &ng.dh_dst, &rg.dh_dst)],
        None => {
            let (n_dh, r_dh) = (add(&ng.dh, &ng.dh_dst), add(&rg.dh, &rg.dh_dst));
            vec![compare("dh (with dh_dst folded in)", &got.dh, &n_dh, &r_dh)]
        }
    };
    let mut checks = vec![compare("out", &got.out, &n.out, &r.out), compare("lse", &got.lse, &n.lse, &r.lse)];
    checks.extend(dh);
    checks.extend([
        compare("da_dst", &got.da_dst, &ng.da_dst, &rg.da_dst),
        compare("da_src", &got.da_src, &ng.da_src, &rg.da_src),
        compare("precomputed out", &got.pre_out, &np.out, &rp.out),
        compare("precomputed dh", &got.pre_dh, &npg.dh, &rpg.dh),
        compare("d_el", &got.pre_d_el, &npg.d_el, &rpg.d_el),
        compare("d_er", &got.pre_d_er, &npg.d_er, &rpg.d_er),
    ]);
    checks.extend(got.part_d_el.as_ref().map(|d_el| compare("part d_el", d_el, &npg.d_el, &rpg.d_el)));
    Report {
        model: "gat",
        context,
        plan: got.plan.clone(),
        checks,
        outputs: got.named().into_iter().map(|(name, values)| (name, values.to_vec())).collect(),
    }
    .into_result()
}

/// The element-wise sum of two gradients of one array (the reference's `dh + dh_dst`).
fn add<T: Copy + std::ops::Add<Output = T>>(a: &[T], b: &[T]) -> Vec<T> {
    a.iter().zip(b).map(|(&x, &y)| x + y).collect()
}

/// Runs GAT `runs` times on the same inputs, each time on a freshly prepared graph and plan, and
/// requires bit-identical results (both entry points, every gradient).
pub fn check_gat_repeatable(
    backend: &Backend,
    graph: &Csr,
    case: &GatCase,
    seed: u64,
    runs: usize,
) -> Result<(), String> {
    let inputs = GatInputs::random(graph.num_dst(), graph.num_src(), case.heads, case.feat, case.magnitude, seed);
    let context = || format!("GAT {case:?} on {} (seed {seed})", describe(graph));
    let run = || run_gat(backend, graph, case, &inputs).map_err(|e| format!("{}: {e}", context()));
    let first = run()?;
    for attempt in 1..runs {
        let again = run()?;
        crate::report::same_bits(&first.named(), &again.named())
            .map_err(|e| format!("{}\n{}run {attempt} differs from run 0: {e}", context(), first.plan))?;
    }
    Ok(())
}
