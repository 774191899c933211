//! The attention ops on memory someone else owns: PyTorch tensors, given by address and length.
//!
//! The Python package (`python/`) hands dfgnn the addresses of its tensors (`data_ptr()`, after
//! checking dtype, device, contiguity and 16-byte alignment) and gets the results written into
//! tensors it allocated. Each op runs as one [`Call`] ([`Backend::within`]): on the caller's
//! stream (PyTorch's current stream; none under the emulator) and with every buffer it makes
//! carved from a workspace the caller allocated, so dfgnn allocates nothing per call. The
//! workspace's size comes from the same call run with [`Workspace::Measure`] (nothing runs; the
//! bytes are counted). Inputs are read in place, and so are results written: each output is
//! given to the op as the room for its result of that name, so the kernels write into it and
//! nothing is copied. A call that fails leaves its outputs unspecified.
//!
//! The op objects ([`Gt`], [`Gat`], [`GatV2`], [`Agnn`]: the plan and its work lists) are made
//! once per graph and shape by the caller and passed in. GT's, GAT's and GATv2's backwards take
//! the forward's saved `out`, `lse` and `stats` ([`Gt::saved_forward`], [`Gat::saved_forward`],
//! [`GatV2::saved_forward`]); AGNN's runs its forward again. AGNN's β is the caller's
//! one-element tensor, read by the kernels (never by the host), and its gradient is written into
//! another: no call waits on the stream, so every op can be captured in a CUDA graph whose
//! replays read the inputs of the moment, β included. GAT's and GATv2's calls take their attention [`Dropout`]
//! (a backward its forward's: the mask is regenerated, never stored), and so do GT's.

use dfgnn_device::abi::DropoutParams;
use dfgnn_device::kernels::common::dropout as mask;

use crate::agnn::Agnn;
use crate::backend::{Backend, Buffer, Workspace};
use crate::error::{Error, Result};
use crate::fused::dropout_params;
use crate::gat::{Gat, GatForward};
use crate::gatv2::GatV2;
use crate::gt::Gt;

/// `len` `f32`s at `addr`, owned by the caller (device memory on the GPU, host memory under the
/// emulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct External {
    /// The address of the first element.
    pub addr: u64,
    /// Elements.
    pub len: usize,
}

/// How one op call runs: see [`Backend::within`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The `CUstream` to queue on (PyTorch's `cuda_stream`); `None` under the emulator.
    pub stream: Option<u64>,
    /// Where the call's buffers come from.
    pub workspace: Workspace,
}

/// Attention dropout of one call: probability `p` in `[0, 1)` and the mask's `seed` (the
/// models' `set_dropout`); a backward takes its forward's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    /// The probability of dropping an edge's weight (per head).
    pub p: f32,
    /// The seed of the mask (Philox-4x32-10 of seed, CSR edge id and head).
    pub seed: u64,
}

impl Dropout {
    /// No dropout.
    pub const OFF: Self = Self { p: 0.0, seed: 0 };

    fn params(self) -> Result<DropoutParams> {
        dropout_params(self.p, self.seed)
    }
}

/// Whether CSR edge `edge` keeps head `head` under `dropout`: the kernels' own mask
/// (`dfgnn_device::kernels::common::dropout`), for callers that check them (the Python tests).
pub fn dropout_keep(dropout: Dropout, edge: u64, head: u32) -> Result<bool> {
    Ok(mask::keep(&dropout.params()?, edge, head))
}

/// Borrows `input` on `backend`.
///
/// # Safety
/// As [`Backend::borrow_external`].
unsafe fn borrow(backend: &Backend, input: External) -> Result<Buffer<f32>> {
    // SAFETY: forwarded contract.
    unsafe { backend.borrow_external(input.addr, input.len) }
}

/// Makes sure `result` is in the caller's `out`, which must have exactly its length: nothing to
/// do when the op wrote it there (its room was placed, see [`run()`]), else a copy.
///
/// # Safety
/// As [`Backend::borrow_external`], for `out` (written).
unsafe fn write(
    backend: &Backend,
    op: &'static str,
    what: &'static str,
    result: &Buffer<f32>,
    out: External,
) -> Result<()> {
    if out.len != result.len() {
        return Err(Error::ShapeMismatch { op, what, expected: result.len(), got: out.len });
    }
    if result.device_addr() == out.addr {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    let mut dst = unsafe { borrow(backend, out)? };
    backend.copy(result, &mut dst)
}

/// Runs `work` as `call` of `op` on `backend`, with each of `results` (a result's name and the
/// caller's room for it) placed ([`Backend::place`]), so the op writes those results into the
/// caller's tensors directly; returns the workspace bytes it took. A result an op did not take
/// from its room would be copied there by [`write()`]; every op on every schedule takes them all
/// (the tests count the copies).
///
/// # Safety
/// As [`Backend::within`] for `call`, and as [`Backend::place`] for each of `results`.
unsafe fn run(
    backend: &Backend,
    call: Call,
    op: &'static str,
    results: &[(&'static str, External)],
    work: impl FnOnce() -> Result<()>,
) -> Result<usize> {
    let placed_then_work = || {
        for &(what, room) in results {
            // SAFETY: forwarded contract.
            unsafe { backend.place(op, what, room.addr, room.len)? };
        }
        work()
    };
    // SAFETY: forwarded contract.
    unsafe { backend.within(call.stream, call.workspace, placed_then_work) }.map(|((), used)| used)
}

/// What a forward saves for its backward, written into the caller's tensors: `out`
/// (`[N_dst, H, F]`), `lse` (`[N_dst, H]`) and `stats` (`[N_dst, H, 2]`; zeros when the plan's
/// forward is not fused, whose backward does not read it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The attention output.
    pub out: External,
    /// Per-(row, head) log-sum-exp.
    pub lse: External,
    /// Per-(row, head) softmax state of the fused forward.
    pub stats: External,
}

/// Writes a forward's `(out, lse, stats)` into `saved`.
///
/// # Safety
/// As [`Backend::borrow_external`], for the three (written).
unsafe fn save(
    backend: &Backend,
    op: &'static str,
    (out, lse, stats): (&Buffer<f32>, &Buffer<f32>, &Buffer<f32>),
    saved: Saved,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        write(backend, op, "out", out, saved.out)?;
        write(backend, op, "lse", lse, saved.lse)?;
        if stats.is_empty() {
            // A baseline forward keeps no stats (its backward recomputes α): zeros, so that every
            // output of the call is a function of its inputs.
            backend.fill(&mut borrow(backend, saved.stats)?, 0.0)?;
        } else {
            write(backend, op, "stats", stats, saved.stats)?;
        }
    }
    Ok(())
}

/// The saved state borrowed back (lengths checked by the op's `saved_forward`).
///
/// # Safety
/// As [`Backend::borrow_external`], for the three.
unsafe fn restore(backend: &Backend, saved: Saved) -> Result<(Buffer<f32>, Buffer<f32>, Buffer<f32>)> {
    // SAFETY: forwarded contract.
    unsafe { Ok((borrow(backend, saved.out)?, borrow(backend, saved.lse)?, borrow(backend, saved.stats)?)) }
}

/// The rooms of a forward's saved state, placed for [`run()`].
fn saved_rooms(saved: Saved) -> [(&'static str, External); 3] {
    [("out", saved.out), ("lse", saved.lse), ("stats", saved.stats)]
}

/// The rooms of GAT's positive part, if asked for, placed for [`run()`].
fn part_rooms(part: Option<(External, External)>) -> Vec<(&'static str, External)> {
    part.map_or_else(Vec::new, |(out, weight)| vec![("part out", out), ("part weight", weight)])
}

/// GT's forward: `out = softmax(c·q·kᵀ over the edges)·v` with attention `dropout` and its
/// saved state, written into `saved`. `q` is `[N_dst, H, F]`, `k` and `v` are `[N_src, H, F]` (lengths checked). Returns
/// the workspace bytes the call took.
///
/// # Safety
/// Every [`External`] and the call's stream and workspace must satisfy
/// [`Backend::within`]'s and [`Backend::borrow_external`]'s contracts on `gt`'s backend for the
/// length of the call (and of the work it queues); the outputs overlap neither each other nor the
/// inputs nor the workspace.
pub unsafe fn gt_forward(
    gt: &Gt<'_, '_>,
    call: Call,
    q: External,
    k: External,
    v: External,
    dropout: Dropout,
    saved: Saved,
) -> Result<usize> {
    let backend = gt.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "gt forward", &saved_rooms(saved), || {
            let (q, k, v) = (borrow(backend, q)?, borrow(backend, k)?, borrow(backend, v)?);
            let fwd = gt.forward_with(&q, &k, &v, dropout.params()?)?;
            save(backend, "gt forward", (&fwd.out, &fwd.lse, fwd.stats()), saved)
        })
    }
}

/// GT's backward from the forward's saved state and `dropout`: the gradients of `Σ d_out ⊙ out` with respect to
/// `q`, `k` and `v`, written into `dq` (`[N_dst, H, F]`), `dk` and `dv` (`[N_src, H, F]`).
///
/// # Safety
/// As [`gt_forward`]; the three outputs overlap neither each other nor the inputs.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gt_backward(
    gt: &Gt<'_, '_>,
    call: Call,
    (q, k, v): (External, External, External),
    dropout: Dropout,
    saved: Saved,
    d_out: External,
    (dq, dk, dv): (External, External, External),
) -> Result<usize> {
    let backend = gt.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "gt backward", &[("dq", dq), ("dk", dk), ("dv", dv)], || {
            let (q, k, v, d_out) =
                (borrow(backend, q)?, borrow(backend, k)?, borrow(backend, v)?, borrow(backend, d_out)?);
            let (out, lse, stats) = restore(backend, saved)?;
            let fwd = gt.saved_forward_with(&q, &k, &v, (out, lse, stats), dropout.params()?)?;
            let grads = gt.backward(&fwd, &d_out)?;
            write(backend, "gt backward", "dq", &grads.dq, dq)?;
            write(backend, "gt backward", "dk", &grads.dk, dk)?;
            write(backend, "gt backward", "dv", &grads.dv, dv)
        })
    }
}

/// GAT's forward from node scores: `out = softmax(LeakyReLU(el_i + er_j) over the edges)·h` and
/// its saved state, with attention `dropout`. `h` is `[N_src, H, F]`, `el` `[N_dst, H]`, `er`
/// `[N_src, H]`. With `part` (`o⁺` `[N_dst, H, F]`, `α⁺` `[N_dst, H]`: a forward for training)
/// the forward also saves the positive part there, for a backward whose row pass needs no gather;
/// zeros where the plan saves none ([`Gat::plans_part`]; the backward then ignores them).
///
/// # Safety
/// As [`gt_forward`], and for `part`'s two.
pub unsafe fn gat_forward(
    gat: &Gat<'_, '_>,
    call: Call,
    (h, el, er): (External, External, External),
    dropout: Dropout,
    saved: Saved,
    part: Option<(External, External)>,
) -> Result<usize> {
    let backend = gat.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "gat forward", &[&saved_rooms(saved)[..], &part_rooms(part)].concat(), || {
            let (h, el, er) = (borrow(backend, h)?, borrow(backend, el)?, borrow(backend, er)?);
            let fwd = gat.forward_precomputed_with(&h, &el, &er, dropout.params()?, part.is_some())?;
            save_gat(backend, &fwd, saved, part)?;
            Ok(())
        })
    }
}

/// Writes a GAT forward's saved state into `saved` and, where the caller asked for it, its
/// positive part into `part`: the forward's, or zeros where the plan saves none (graphs of few
/// edges per row, `row_group`, the baselines: [`Gat::plans_part`]), so that every output of the
/// call is a function of its inputs (the backward then ignores them).
///
/// # Safety
/// As [`Backend::borrow_external`], for the outputs (written).
unsafe fn save_gat(
    backend: &Backend,
    fwd: &GatForward<'_>,
    saved: Saved,
    part: Option<(External, External)>,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        save(backend, "gat forward", (&fwd.out, &fwd.lse, fwd.stats()), saved)?;
        match (part, fwd.part()) {
            (Some((part_out, part_weight)), Some((o, w))) => {
                write(backend, "gat forward", "part out", o, part_out)?;
                write(backend, "gat forward", "part weight", w, part_weight)?;
            }
            (Some((part_out, part_weight)), None) => {
                for room in [part_out, part_weight] {
                    backend.fill(&mut borrow(backend, room)?, 0.0)?;
                }
            }
            (None, _) => {}
        }
    }
    Ok(())
}

/// GAT's backward from the forward's saved state and its `dropout` (the mask is regenerated):
/// the gradients with respect to `h` (through the aggregation), `el` and `er`, written into
/// `dh`, `d_el` and `d_er`; `part` is what [`gat_forward`] was given for the positive part.
///
/// # Safety
/// As [`gt_backward`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gat_backward(
    gat: &Gat<'_, '_>,
    call: Call,
    (h, el, er): (External, External, External),
    dropout: Dropout,
    (saved, part): (Saved, Option<(External, External)>),
    d_out: External,
    (dh, d_el, d_er): (External, External, External),
) -> Result<usize> {
    let backend = gat.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "gat backward", &[("dh", dh), ("d_el", d_el), ("d_er", d_er)], || {
            let (h, el, er, d_out) =
                (borrow(backend, h)?, borrow(backend, el)?, borrow(backend, er)?, borrow(backend, d_out)?);
            let (out, lse, stats) = restore(backend, saved)?;
            // The part is ignored where the plan saves none (`saved_forward_with`).
            let part = part.map(|(o, w)| Ok::<_, Error>((borrow(backend, o)?, borrow(backend, w)?))).transpose()?;
            let fwd = gat.saved_forward_with(&h, &el, &er, (out, lse, stats), part, dropout.params()?)?;
            let grads = gat.backward_precomputed(&fwd, &d_out)?;
            write(backend, "gat backward", "dh", &grads.dh, dh)?;
            write(backend, "gat backward", "d_el", &grads.d_el, d_el)?;
            write(backend, "gat backward", "d_er", &grads.d_er, d_er)
        })
    }
}

/// The feature inputs of GAT's full ops: `h` `[N_src, H, F]`, `h_dst` `[N_dst, H, F]` (`None`:
/// `h` itself, a square graph's one array), `a_dst` and `a_src` `[H, F]`.
pub type GatNodeInputs = (External, Option<External>, External, External);

/// GAT's forward from the features: the node scores `el = ⟨h_dst, a_dst⟩`, `er = ⟨h, a_src⟩`
/// computed by dfgnn's kernels (both from one read of `h` when `h_dst` is `None`), then the
/// attention as [`gat_forward`]. Writes the saved state into `saved`, the positive part into
/// `part` (a forward for training) and the node scores into `scores` (`[N_dst, H]`,
/// `[N_src, H]`: the backward's, and PyG's attention weights').
///
/// # Safety
/// As [`gt_forward`].
pub unsafe fn gat_nodes_forward(
    gat: &Gat<'_, '_>,
    call: Call,
    (h, h_dst, a_dst, a_src): GatNodeInputs,
    dropout: Dropout,
    saved: Saved,
    part: Option<(External, External)>,
    (el, er): (External, External),
) -> Result<usize> {
    let backend = gat.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        let rooms = [&saved_rooms(saved)[..], &part_rooms(part), &[("el", el), ("er", er)]].concat();
        run(backend, call, "gat forward", &rooms, || {
            let (h, a_dst, a_src) = (borrow(backend, h)?, borrow(backend, a_dst)?, borrow(backend, a_src)?);
            let h_dst = h_dst.map(|x| borrow(backend, x)).transpose()?;
            // The same buffer for both is the square graph's one read of h.
            let fwd =
                gat.forward_with(&h, h_dst.as_ref().unwrap_or(&h), &a_dst, &a_src, dropout.params()?, part.is_some())?;
            save_gat(backend, &fwd, saved, part)?;
            let (el_v, er_v) = fwd.node_scores().expect("the forward from features computes the node scores");
            write(backend, "gat forward", "el", el_v, el)?;
            write(backend, "gat forward", "er", er_v, er)
        })
    }
}

/// GAT's backward after [`gat_nodes_forward`], from its saved state, positive part and node
/// scores (as it was given them) and its `dropout`: the gradients with respect to `h` (the whole
/// gradient when `h_dst` is `None`), `h_dst` (only when given), `a_dst` and `a_src`, written into
/// `grads`.
///
/// # Safety
/// As [`gt_backward`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gat_nodes_backward(
    gat: &Gat<'_, '_>,
    call: Call,
    (h, h_dst, a_dst, a_src): GatNodeInputs,
    dropout: Dropout,
    (saved, part, (el, er)): (Saved, Option<(External, External)>, (External, External)),
    d_out: External,
    (dh, dh_dst, da_dst, da_src): (External, Option<External>, External, External),
) -> Result<usize> {
    if h_dst.is_some() != dh_dst.is_some() {
        return Err(Error::Unsupported {
            what: "a GAT backward given h_dst without its gradient's output, or the other way round".to_string(),
        });
    }
    let backend = gat.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        let rooms = [("dh", Some(dh)), ("dh_dst", dh_dst), ("da_dst", Some(da_dst)), ("da_src", Some(da_src))]
            .into_iter()
            .filter_map(|(what, room)| room.map(|room| (what, room)))
            .collect::<Vec<_>>();
        run(backend, call, "gat backward", &rooms, || {
            let (h, a_dst, a_src) = (borrow(backend, h)?, borrow(backend, a_dst)?, borrow(backend, a_src)?);
            let h_dst = h_dst.map(|x| borrow(backend, x)).transpose()?;
            let (el, er, d_out) = (borrow(backend, el)?, borrow(backend, er)?, borrow(backend, d_out)?);
            let part = part.map(|(o, w)| Ok::<_, Error>((borrow(backend, o)?, borrow(backend, w)?))).transpose()?;
            let inputs = (&h, h_dst.as_ref(), &a_dst, &a_src);
            let fwd = gat.saved_full_forward(inputs, (&el, &er), restore(backend, saved)?, part, dropout.params()?)?;
            let grads = gat.backward(&fwd, &d_out)?;
            write(backend, "gat backward", "dh", &grads.dh, dh)?;
            if let (Some(result), Some(out)) = (&grads.dh_dst, dh_dst) {
                write(backend, "gat backward", "dh_dst", result, out)?;
            }
            write(backend, "gat backward", "da_dst", &grads.da_dst, da_dst)?;
            write(backend, "gat backward", "da_src", &grads.da_src, da_src)
        })
    }
}

/// GATv2's forward: `out = softmax(⟨a, LeakyReLU(xl_j + xr_i)⟩ over the edges)·xl` and its
/// saved state, with attention `dropout`. `xl` is `[N_src, H, F]`, `xr` `[N_dst, H, F]`, `a`
/// `[H, F]`.
///
/// # Safety
/// As [`gt_forward`].
pub unsafe fn gatv2_forward(
    gatv2: &GatV2<'_, '_>,
    call: Call,
    (xl, xr, a): (External, External, External),
    dropout: Dropout,
    saved: Saved,
) -> Result<usize> {
    let backend = gatv2.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "gatv2 forward", &saved_rooms(saved), || {
            let (xl, xr, a) = (borrow(backend, xl)?, borrow(backend, xr)?, borrow(backend, a)?);
            let fwd = gatv2.forward_with(&xl, &xr, &a, dropout.params()?)?;
            save(backend, "gatv2 forward", (&fwd.out, &fwd.lse, fwd.stats()), saved)
        })
    }
}

/// GATv2's backward from the forward's saved state and its `dropout`: the gradients with
/// respect to `xl`, `xr` and `a`, written into `dxl`, `dxr` and `da`.
///
/// # Safety
/// As [`gt_backward`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gatv2_backward(
    gatv2: &GatV2<'_, '_>,
    call: Call,
    (xl, xr, a): (External, External, External),
    dropout: Dropout,
    saved: Saved,
    d_out: External,
    (dxl, dxr, da): (External, External, External),
) -> Result<usize> {
    let backend = gatv2.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "gatv2 backward", &[("dxl", dxl), ("dxr", dxr), ("da", da)], || {
            let (xl, xr, a, d_out) =
                (borrow(backend, xl)?, borrow(backend, xr)?, borrow(backend, a)?, borrow(backend, d_out)?);
            let (out, lse, stats) = restore(backend, saved)?;
            let fwd = gatv2.saved_forward_with(&xl, &xr, &a, (out, lse, stats), dropout.params()?)?;
            let grads = gatv2.backward(&fwd, &d_out)?;
            write(backend, "gatv2 backward", "dxl", &grads.dxl, dxl)?;
            write(backend, "gatv2 backward", "dxr", &grads.dxr, dxr)?;
            write(backend, "gatv2 backward", "da", &grads.da, da)
        })
    }
}

/// AGNN's forward: `out = softmax(β·cos(h_i, h_j) over the edges)·h`, written into `out`. `h` and
/// `out` are `[N, H, F]` (the graph must be square), `beta` one float the kernels read (a
/// non-finite one gives NaN outputs; nothing checks it on the host).
///
/// # Safety
/// As [`gt_forward`].
pub unsafe fn agnn_forward(
    agnn: &Agnn<'_, '_>,
    call: Call,
    h: External,
    beta: External,
    out: External,
) -> Result<usize> {
    let backend = agnn.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "agnn forward", &[("out", out)], || {
            let (h, beta) = (borrow(backend, h)?, borrow(backend, beta)?);
            let fwd = agnn.forward_device_beta(&h, &beta)?;
            write(backend, "agnn forward", "out", fwd.out(), out)
        })
    }
}

/// AGNN's backward: the gradients of `Σ d_out ⊙ out` with respect to `h` and β, written into `dh`
/// (`[N, H, F]`) and `d_beta` (one float). Runs the forward first; waits for nothing.
///
/// # Safety
/// As [`gt_forward`]; the two outputs overlap neither each other nor the inputs.
pub unsafe fn agnn_backward(
    agnn: &Agnn<'_, '_>,
    call: Call,
    (h, beta): (External, External),
    d_out: External,
    (dh, d_beta): (External, External),
) -> Result<usize> {
    let backend = agnn.graph().backend();
    // SAFETY: forwarded contract (for the length of this call).
    unsafe {
        run(backend, call, "agnn backward", &[("dh", dh), ("d_beta", d_beta)], || {
            let (h, beta, d_out) = (borrow(backend, h)?, borrow(backend, beta)?, borrow(backend, d_out)?);
            let fwd = agnn.forward_device_beta(&h, &beta)?;
            let grads = agnn.backward(&fwd, &d_out)?;
            write(backend, "agnn backward", "dh", &grads.dh, dh)?;
            write(backend, "agnn backward", "d_beta", &grads.d_beta, d_beta)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeviceGraph, GatConfig, GatV2Config, GtConfig, PlanOptions, Schedule};

    /// Every schedule, forced.
    fn schedules() -> impl Iterator<Item = PlanOptions> {
        Schedule::ALL.into_iter().map(|schedule| PlanOptions { schedule, ..Default::default() })
    }

    /// Whether `plan` runs attention dropout (the baselines have none).
    fn has_dropout(plan: &PlanOptions) -> bool {
        !matches!(plan.schedule, Schedule::EdgeParallel | Schedule::Unfused)
    }

    /// GAT's cases under `plan`: (dropout, whether the forward saves its part), with and without
    /// either, dropout only where the plan runs it.
    fn gat_cases(plan: &PlanOptions) -> impl Iterator<Item = (Dropout, bool)> {
        let with_dropout = has_dropout(plan);
        [(Dropout::OFF, true), (Dropout { p: 0.4, seed: 7 }, true), (Dropout::OFF, false)]
            .into_iter()
            .filter(move |(d, _)| d.p == 0.0 || with_dropout)
    }

    /// 16 bytes, aligned as the kernels' vector loads need.
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Quad([f32; 4]);

    /// 16-byte aligned host memory of `len` floats filled by `f`.
    struct Aligned(Vec<Quad>, usize);

    impl Aligned {
        fn new(len: usize, f: impl Fn(usize) -> f32) -> Self {
            let mut quads = vec![Quad([0.0; 4]); len.div_ceil(4)];
            for i in 0..len {
                quads[i / 4].0[i % 4] = f(i);
            }
            Self(quads, len)
        }

        fn nan(len: usize) -> Self {
            Self::new(len, |_| f32::NAN)
        }

        fn slice(&self) -> &[f32] {
            // SAFETY: `Quad` is four `f32`s with no padding; the vector holds at least `len` of them.
            unsafe { std::slice::from_raw_parts(self.0.as_ptr() as *const f32, self.1) }
        }

        fn external(&self) -> External {
            External { addr: self.slice().as_ptr() as u64, len: self.1 }
        }
    }

    fn saved(out: &Aligned, lse: &Aligned, stats: &Aligned) -> Saved {
        Saved { out: out.external(), lse: lse.external(), stats: stats.external() }
    }

    /// Runs `op` with a measured workspace of its own and checks the backend allocated nothing,
    /// read nothing back to the host (no download: a wait, and no CUDA-graph capture) and copied
    /// nothing (every result was written in its room).
    fn in_workspace(backend: &Backend, op: impl Fn(Call) -> Result<usize>) -> Result<()> {
        let bytes = op(Call { stream: None, workspace: Workspace::Measure })?;
        let workspace = Aligned::nan(bytes / 4);
        // First a workspace one byte short: refused, after writing some results perhaps (a
        // failed call leaves its outputs unspecified), so before the call that writes them all.
        if bytes > 0 {
            let short = Workspace::Borrowed { addr: workspace.external().addr, len: bytes - 1 };
            let err = op(Call { stream: None, workspace: short }).unwrap_err();
            assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        }
        let counts = backend.counts();
        let before = backend.memory_in_use();
        backend.reset_peak_memory();
        let used =
            op(Call { stream: None, workspace: Workspace::Borrowed { addr: workspace.external().addr, len: bytes } })?;
        assert_eq!(used, bytes, "the measure is what the call takes");
        assert_eq!(backend.peak_memory(), before, "the call allocated nothing");
        let counts = backend.counts() - counts;
        assert_eq!(counts.downloads, 0, "the call read device memory on the host");
        assert_eq!(counts.copies, 0, "a result was copied into its room, not written there");
        Ok(())
    }

    /// The saved stats a forward wrote into `room`: its own, or zeros where it keeps none (the
    /// baselines).
    fn assert_saved_stats(backend: &Backend, room: &Aligned, stats: &Buffer<f32>) {
        if stats.is_empty() {
            assert!(room.slice().iter().all(|&x| x == 0.0), "a baseline's saved stats are not zeros");
        } else {
            assert_eq!(room.slice(), backend.download(stats).unwrap());
        }
    }

    fn graph(backend: &Backend) -> DeviceGraph<'_> {
        let csr = dfgnn_graphs::Csr::from_rows(5, &[vec![0u32, 1], vec![], vec![2, 2, 4], vec![3]]).unwrap();
        DeviceGraph::new(backend, &csr).unwrap()
    }

    #[test]
    fn gt_on_external_memory_matches_gt_on_buffers_and_allocates_nothing() {
        let backend = Backend::emulator();
        let graph = graph(&backend);
        let q = Aligned::new(4 * 8, |i| (i as f32 * 0.37).sin());
        let k = Aligned::new(5 * 8, |i| (i as f32 * 0.11).cos());
        let v = Aligned::new(5 * 8, |i| i as f32 * 0.05);
        let d = Aligned::new(4 * 8, |i| 1.0 - i as f32 * 0.01);
        let upload = |a: &Aligned| backend.upload(a.slice()).unwrap();
        let (bq, bk, bv, bd) = (upload(&q), upload(&k), upload(&v), upload(&d));
        for plan in schedules() {
            let gt = Gt::new(&graph, &GtConfig { plan, ..GtConfig::new(2, 4) }).unwrap();
            let fwd = gt.forward(&bq, &bk, &bv).unwrap();
            let grads = gt.backward(&fwd, &bd).unwrap();

            let (out, lse, stats) = (Aligned::nan(4 * 8), Aligned::nan(4 * 2), Aligned::nan(4 * 4));
            let (q_, k_, v_) = (q.external(), k.external(), v.external());
            // SAFETY: all memory is live, aligned, distinct and of the stated lengths.
            in_workspace(&backend, |call| unsafe {
                gt_forward(&gt, call, q_, k_, v_, Dropout::OFF, saved(&out, &lse, &stats))
            })
            .unwrap();
            assert_eq!(out.slice(), backend.download(&fwd.out).unwrap());
            assert_eq!(lse.slice(), backend.download(&fwd.lse).unwrap());
            assert_saved_stats(&backend, &stats, fwd.stats());
            let (dq, dk, dv) = (Aligned::nan(4 * 8), Aligned::nan(5 * 8), Aligned::nan(5 * 8));
            let grads_out = (dq.external(), dk.external(), dv.external());
            // SAFETY: as above.
            in_workspace(&backend, |call| unsafe {
                gt_backward(&gt, call, (q_, k_, v_), Dropout::OFF, saved(&out, &lse, &stats), d.external(), grads_out)
            })
            .unwrap();
            assert_eq!(dq.slice(), backend.download(&grads.dq).unwrap());
            assert_eq!(dk.slice(), backend.download(&grads.dk).unwrap());
            assert_eq!(dv.slice(), backend.download(&grads.dv).unwrap());
        }
    }

    #[test]
    fn gat_on_external_memory_matches_gat_on_buffers() {
        let backend = Backend::emulator();
        let graph = graph(&backend);
        let h = Aligned::new(5 * 21, |i| (i as f32 * 0.29).sin());
        let el = Aligned::new(4 * 3, |i| (i as f32 * 0.7).cos());
        let er = Aligned::new(5 * 3, |i| i as f32 * 0.1 - 0.5);
        let d = Aligned::new(4 * 21, |i| (i as f32 * 0.13).cos());
        let upload = |a: &Aligned| backend.upload(a.slice()).unwrap();
        let (bh, bel, ber, bd) = (upload(&h), upload(&el), upload(&er), upload(&d));
        for plan in schedules() {
            let mut gat = Gat::new(&graph, &GatConfig { plan: plan.clone(), ..GatConfig::new(3, 7) }).unwrap();
            for (dropout, with_part) in gat_cases(&plan) {
                gat.set_dropout(dropout.p, dropout.seed).unwrap();
                gat.set_saves_part(with_part);
                let fwd = gat.forward_precomputed(&bh, &bel, &ber).unwrap();
                assert_eq!(fwd.part().is_some(), with_part && gat.plans_part());
                let grads = gat.backward_precomputed(&fwd, &bd).unwrap();
                // The external calls pass their dropout and part; the ones set on the op are not theirs.
                gat.set_dropout(0.9, 1).unwrap();
                gat.set_saves_part(!with_part);

                let (out, lse, stats) = (Aligned::nan(4 * 21), Aligned::nan(4 * 3), Aligned::nan(4 * 6));
                let (part_out, part_weight) = (Aligned::nan(4 * 21), Aligned::nan(4 * 3));
                let part = with_part.then(|| (part_out.external(), part_weight.external()));
                let inputs = (h.external(), el.external(), er.external());
                // SAFETY: all memory is live, aligned, distinct and of the stated lengths.
                in_workspace(&backend, |call| unsafe {
                    gat_forward(&gat, call, inputs, dropout, saved(&out, &lse, &stats), part)
                })
                .unwrap();
                let context = format!("{dropout:?} part {with_part}");
                assert_eq!(out.slice(), backend.download(&fwd.out).unwrap(), "{context}");
                assert_saved_stats(&backend, &stats, fwd.stats());
                match fwd.part() {
                    Some((o, w)) => {
                        assert_eq!(part_out.slice(), backend.download(o).unwrap(), "{context}");
                        assert_eq!(part_weight.slice(), backend.download(w).unwrap(), "{context}");
                    }
                    // Asked for and not planned: zeros.
                    None if with_part => {
                        let zeros = part_out.slice().iter().chain(part_weight.slice()).all(|&x| x == 0.0);
                        assert!(zeros, "{context}: the unplanned part is not zeros");
                    }
                    None => {}
                }
                let (dh, d_el, d_er) = (Aligned::nan(5 * 21), Aligned::nan(4 * 3), Aligned::nan(5 * 3));
                let grads_out = (dh.external(), d_el.external(), d_er.external());
                // SAFETY: as above.
                in_workspace(&backend, |call| unsafe {
                    gat_backward(
                        &gat,
                        call,
                        inputs,
                        dropout,
                        (saved(&out, &lse, &stats), part),
                        d.external(),
                        grads_out,
                    )
                })
                .unwrap();
                assert_eq!(dh.slice(), backend.download(&grads.dh).unwrap(), "{context}");
                assert_eq!(d_el.slice(), backend.download(&grads.d_el).unwrap(), "{context}");
                assert_eq!(d_er.slice(), backend.download(&grads.d_er).unwrap(), "{context}");
            }
        }
        assert!(dropout_keep(Dropout::OFF, 3, 1).unwrap());
        assert!(dropout_keep(Dropout { p: 1.0, seed: 0 }, 0, 0).is_err());
    }

    #[test]
    fn gat_from_features_on_external_memory_matches_gat_on_buffers() {
        let backend = Backend::emulator();
        let bipartite = graph(&backend);
        let csr = dfgnn_graphs::Csr::from_rows(4, &[vec![0u32, 1, 3], vec![], vec![2, 2, 0], vec![3, 1]]).unwrap();
        let square = DeviceGraph::new(&backend, &csr).unwrap();
        let (heads, feat) = (3usize, 7usize);
        for (graph, dst_features) in [(&bipartite, true), (&square, false)] {
            let (n_dst, n_src) = (graph.num_dst(), graph.num_src());
            let h = Aligned::new(n_src * heads * feat, |i| (i as f32 * 0.29).sin());
            let h_dst = Aligned::new(n_dst * heads * feat, |i| (i as f32 * 0.41).cos());
            let a_dst = Aligned::new(heads * feat, |i| (i as f32 * 0.7).cos());
            let a_src = Aligned::new(heads * feat, |i| i as f32 * 0.05 - 0.4);
            let d = Aligned::new(n_dst * heads * feat, |i| (i as f32 * 0.13).cos());
            let upload = |a: &Aligned| backend.upload(a.slice()).unwrap();
            let (bh, bh_dst, ba_dst, ba_src, bd) =
                (upload(&h), upload(&h_dst), upload(&a_dst), upload(&a_src), upload(&d));
            for plan in schedules() {
                let mut gat =
                    Gat::new(graph, &GatConfig { plan: plan.clone(), ..GatConfig::new(heads as u32, feat as u32) })
                        .unwrap();
                for (dropout, with_part) in gat_cases(&plan) {
                    gat.set_dropout(dropout.p, dropout.seed).unwrap();
                    gat.set_saves_part(with_part);
                    let fwd = gat.forward(&bh, if dst_features { &bh_dst } else { &bh }, &ba_dst, &ba_src).unwrap();
                    let grads = gat.backward(&fwd, &bd).unwrap();
                    // The external calls pass their dropout and part; the ones set on the op are not theirs.
                    gat.set_dropout(0.9, 1).unwrap();
                    gat.set_saves_part(!with_part);

                    let nh = |n: usize| n * heads;
                    let (out, lse, stats) =
                        (Aligned::nan(nh(n_dst) * feat), Aligned::nan(nh(n_dst)), Aligned::nan(2 * nh(n_dst)));
                    let (part_out, part_weight) = (Aligned::nan(nh(n_dst) * feat), Aligned::nan(nh(n_dst)));
                    let (el, er) = (Aligned::nan(nh(n_dst)), Aligned::nan(nh(n_src)));
                    let part = with_part.then(|| (part_out.external(), part_weight.external()));
                    let inputs =
                        (h.external(), dst_features.then(|| h_dst.external()), a_dst.external(), a_src.external());
                    let scores = (el.external(), er.external());
                    // SAFETY: all memory is live, aligned, distinct and of the stated lengths.
                    in_workspace(&backend, |call| unsafe {
                        gat_nodes_forward(&gat, call, inputs, dropout, saved(&out, &lse, &stats), part, scores)
                    })
                    .unwrap();
                    let context = format!("{dropout:?} part {with_part} h_dst {dst_features}");
                    assert_eq!(out.slice(), backend.download(&fwd.out).unwrap(), "{context}");
                    let (fwd_el, fwd_er) = fwd.node_scores().unwrap();
                    assert_eq!(el.slice(), backend.download(fwd_el).unwrap(), "{context}");
                    assert_eq!(er.slice(), backend.download(fwd_er).unwrap(), "{context}");
                    assert_saved_stats(&backend, &stats, fwd.stats());
                    if let Some((o, w)) = fwd.part() {
                        assert_eq!(part_out.slice(), backend.download(o).unwrap(), "{context}");
                        assert_eq!(part_weight.slice(), backend.download(w).unwrap(), "{context}");
                    }
                    let (dh, dh_dst) = (Aligned::nan(nh(n_src) * feat), Aligned::nan(nh(n_dst) * feat));
                    let (da_dst, da_src) = (Aligned::nan(heads * feat), Aligned::nan(heads * feat));
                    let grads_out =
                        (dh.external(), dst_features.then(|| dh_dst.external()), da_dst.external(), da_src.external());
                    let state = (saved(&out, &lse, &stats), part, scores);
                    // SAFETY: as above.
                    in_workspace(&backend, |call| unsafe {
                        gat_nodes_backward(&gat, call, inputs, dropout, state, d.external(), grads_out)
                    })
                    .unwrap();
                    assert_eq!(dh.slice(), backend.download(&grads.dh).unwrap(), "{context}");
                    assert_eq!(grads.dh_dst.is_some(), dst_features, "{context}");
                    if let Some(expected) = &grads.dh_dst {
                        assert_eq!(dh_dst.slice(), backend.download(expected).unwrap(), "{context}");
                    }
                    assert_eq!(da_dst.slice(), backend.download(&grads.da_dst).unwrap(), "{context}");
                    assert_eq!(da_src.slice(), backend.download(&grads.da_src).unwrap(), "{context}");
                    // A gradient output without its input (or the other way round) is refused.
                    let mismatched = (
                        dh.external(),
                        (!dst_features).then(|| dh_dst.external()),
                        da_dst.external(),
                        da_src.external(),
                    );
                    // SAFETY: as above.
                    let err = in_workspace(&backend, |call| unsafe {
                        gat_nodes_backward(&gat, call, inputs, dropout, state, d.external(), mismatched)
                    });
                    assert!(err.is_err(), "{context}");
                }
            }
        }
    }

    #[test]
    fn gatv2_on_external_memory_matches_gatv2_on_buffers() {
        let backend = Backend::emulator();
        let graph = graph(&backend);
        let xl = Aligned::new(5 * 15, |i| (i as f32 * 0.29).sin());
        let xr = Aligned::new(4 * 15, |i| (i as f32 * 0.17).cos());
        let a = Aligned::new(15, |i| i as f32 * 0.1 - 0.7);
        let d = Aligned::new(4 * 15, |i| (i as f32 * 0.13).cos());
        let upload = |x: &Aligned| backend.upload(x.slice()).unwrap();
        let (bxl, bxr, ba, bd) = (upload(&xl), upload(&xr), upload(&a), upload(&d));
        for plan in schedules() {
            let mut gatv2 = GatV2::new(&graph, &GatV2Config { plan: plan.clone(), ..GatV2Config::new(3, 5) }).unwrap();
            for dropout in
                [Dropout::OFF, Dropout { p: 0.4, seed: 7 }].into_iter().filter(|d| d.p == 0.0 || has_dropout(&plan))
            {
                gatv2.set_dropout(dropout.p, dropout.seed).unwrap();
                let fwd = gatv2.forward(&bxl, &bxr, &ba).unwrap();
                let grads = gatv2.backward(&fwd, &bd).unwrap();
                gatv2.set_dropout(0.9, 1).unwrap();

                let (out, lse, stats) = (Aligned::nan(4 * 15), Aligned::nan(4 * 3), Aligned::nan(4 * 6));
                let inputs = (xl.external(), xr.external(), a.external());
                // SAFETY: all memory is live, aligned, distinct and of the stated lengths.
                in_workspace(&backend, |call| unsafe {
                    gatv2_forward(&gatv2, call, inputs, dropout, saved(&out, &lse, &stats))
                })
                .unwrap();
                assert_eq!(out.slice(), backend.download(&fwd.out).unwrap(), "{dropout:?}");
                assert_saved_stats(&backend, &stats, fwd.stats());
                let (dxl, dxr, da) = (Aligned::nan(5 * 15), Aligned::nan(4 * 15), Aligned::nan(15));
                let grads_out = (dxl.external(), dxr.external(), da.external());
                // SAFETY: as above.
                in_workspace(&backend, |call| unsafe {
                    gatv2_backward(&gatv2, call, inputs, dropout, saved(&out, &lse, &stats), d.external(), grads_out)
                })
                .unwrap();
                assert_eq!(dxl.slice(), backend.download(&grads.dxl).unwrap(), "{dropout:?}");
                assert_eq!(dxr.slice(), backend.download(&grads.dxr).unwrap(), "{dropout:?}");
                assert_eq!(da.slice(), backend.download(&grads.da).unwrap(), "{dropout:?}");
            }
        }
    }

    #[test]
    fn agnn_on_external_memory_reads_beta_there_and_moves_nothing_through_the_host() {
        let backend = Backend::emulator();
        let csr =
            dfgnn_graphs::Csr::from_rows(5, &[vec![0u32, 1], vec![], vec![2, 2, 4], vec![3], vec![0, 4]]).unwrap();
        let graph = DeviceGraph::new(&backend, &csr).unwrap();
        let h = Aligned::new(5 * 12, |i| (i as f32 * 0.31).sin());
        let d = Aligned::new(5 * 12, |i| (i as f32 * 0.17).cos());
        let (bh, bd) = (backend.upload(h.slice()).unwrap(), backend.upload(d.slice()).unwrap());
        let (out, dh, d_beta) = (Aligned::nan(5 * 12), Aligned::nan(5 * 12), Aligned::nan(1));
        for plan in schedules() {
            let agnn = Agnn::new(&graph, &crate::AgnnConfig { plan, ..crate::AgnnConfig::new(2, 6) }).unwrap();
            for value in [0.8f32, -1.9] {
                let fwd = agnn.forward(&bh, value).unwrap();
                let grads = agnn.backward(&fwd, &bd).unwrap();
                // β is read where the caller keeps it, every call.
                let beta = Aligned::new(1, |_| value);
                let (h_, beta_, d_) = (h.external(), beta.external(), d.external());
                let before = backend.counts();
                // SAFETY: all memory is live, aligned, distinct and of the stated lengths.
                in_workspace(&backend, |call| unsafe { agnn_forward(&agnn, call, h_, beta_, out.external()) }).unwrap();
                let grads_out = (dh.external(), d_beta.external());
                // SAFETY: as above.
                in_workspace(&backend, |call| unsafe { agnn_backward(&agnn, call, (h_, beta_), d_, grads_out) })
                    .unwrap();
                let made = backend.counts() - before;
                assert_eq!((made.uploads, made.downloads), (0, 0), "no host copies: {made:?}");
                assert_eq!(out.slice(), backend.download(fwd.out()).unwrap(), "β = {value}");
                assert_eq!(dh.slice(), backend.download(&grads.dh).unwrap(), "β = {value}");
                assert_eq!(d_beta.slice(), backend.download(&grads.d_beta).unwrap(), "β = {value}");
            }
        }
        let agnn = Agnn::new(&graph, &crate::AgnnConfig::new(2, 6)).unwrap();
        let long = Aligned::new(2, |_| 1.0);
        // SAFETY: as above.
        let err = unsafe {
            agnn_forward(
                &agnn,
                Call { stream: None, workspace: Workspace::Own },
                h.external(),
                long.external(),
                out.external(),
            )
        }
        .unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { what: "beta", .. }), "{err}");
    }

    #[test]
    fn wrong_lengths_misaligned_addresses_and_nested_scopes_are_errors() {
        let backend = Backend::emulator();
        let csr = dfgnn_graphs::Csr::from_rows(3, &[vec![0u32, 1], vec![2]]).unwrap();
        let graph = DeviceGraph::new(&backend, &csr).unwrap();
        let gt = Gt::new(&graph, &GtConfig::new(1, 4)).unwrap();
        let x = Aligned::new(3 * 4 + 4, |i| i as f32);
        let rows2 = External { addr: x.external().addr, len: 2 * 4 };
        let rows3 = External { addr: x.external().addr, len: 3 * 4 };
        let (lse, stats) = (Aligned::nan(2), Aligned::nan(4));
        let (out2, out3) = (Aligned::new(2 * 4, |_| 0.0), Aligned::new(3 * 4, |_| 0.0));
        let own = Call { stream: None, workspace: Workspace::Own };
        // SAFETY: every view lies within a live buffer; the outputs are distinct from the inputs.
        let err =
            unsafe { gt_forward(&gt, own, rows2, rows3, rows3, Dropout::OFF, saved(&out3, &lse, &stats)) }.unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { what: "out", expected: 8, got: 12, .. }), "{err}");
        // SAFETY: as above.
        let err =
            unsafe { gt_forward(&gt, own, rows3, rows3, rows3, Dropout::OFF, saved(&out2, &lse, &stats)) }.unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { what: "q", .. }), "{err}");
        let misaligned = External { addr: x.external().addr + 4, len: 3 * 4 };
        // SAFETY: as above (the misaligned view is refused before any use).
        let err = unsafe { gt_forward(&gt, own, rows2, misaligned, rows3, Dropout::OFF, saved(&out2, &lse, &stats)) }
            .unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("aligned")), "{err}");
        let bad_workspace =
            Call { stream: None, workspace: Workspace::Borrowed { addr: x.external().addr + 4, len: 64 } };
        // SAFETY: as above.
        let err =
            unsafe { gt_forward(&gt, bad_workspace, rows2, rows3, rows3, Dropout::OFF, saved(&out2, &lse, &stats)) }
                .unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("workspace")), "{err}");
        let cuda_stream = Call { stream: Some(1), workspace: Workspace::Own };
        // SAFETY: as above (the stream is refused before any use).
        let err =
            unsafe { gt_forward(&gt, cuda_stream, rows2, rows3, rows3, Dropout::OFF, saved(&out2, &lse, &stats)) }
                .unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("stream")), "{err}");
        // SAFETY: no stream, no workspace; the inner call as above.
        let nested = unsafe {
            backend.within(None, Workspace::Own, || {
                gt_forward(&gt, own, rows2, rows3, rows3, Dropout::OFF, saved(&out2, &lse, &stats))
            })
        };
        assert!(matches!(nested, Err(Error::Unsupported { ref what }) if what.contains("inside")), "{nested:?}");
        // SAFETY: as above.
        unsafe { gt_forward(&gt, own, rows2, rows3, rows3, Dropout::OFF, saved(&out2, &lse, &stats)) }.unwrap();
        assert!(out2.slice().iter().all(|x| x.is_finite()));
    }
}
