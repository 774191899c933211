//! What a check returns: the plan the library chose and every comparison with the reference.

use std::fmt;

use dfgnn::Plan;
use dfgnn_graphs::{Csr, GraphStats};

use dfgnn_reference::Check;

/// The outcome of one passing check.
#[derive(Clone, Debug)]
pub struct Report {
    /// `gt`, `agnn` or `gat`.
    pub model: &'static str,
    /// The case, the graph and the backend, in words.
    pub context: String,
    /// The plan the library chose.
    pub plan: Plan,
    /// Every result compared with the reference.
    pub checks: Vec<Check>,
    /// Every result, by name (for bitwise comparisons between runs).
    pub outputs: Vec<(&'static str, Vec<f32>)>,
}

impl Report {
    /// `Ok(self)` when every check passed, else `Err` with the whole report.
    pub fn into_result(self) -> Result<Self, String> {
        if self.checks.iter().all(Check::passed) { Ok(self) } else { Err(format!("tolerance exceeded:\n{self}")) }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.context)?;
        write!(f, "{}", self.plan)?;
        for c in &self.checks {
            writeln!(f, "  {c}")?;
        }
        Ok(())
    }
}

/// A graph in one line: sizes, degrees, empty rows, self loops, duplicates.
pub fn describe(graph: &Csr) -> String {
    let s = GraphStats::of(graph);
    format!(
        "graph {}x{} ({} edges, in-degree max {}, out-degree max {}, {} empty rows, {} self loops, {} duplicates)",
        graph.num_dst(),
        graph.num_src(),
        graph.nnz(),
        s.in_degree.max,
        s.out_degree.max,
        s.empty_rows(),
        s.self_loops,
        s.duplicate_edges
    )
}

/// `Err` naming the first NaN of `a`, if any: every output element must be written (the emulator
/// fills unwritten device memory with NaN).
pub fn no_nan(name: &str, a: &[f32]) -> Result<(), String> {
    match a.iter().position(|x| x.is_nan()) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{name}[{i}] is NaN ({} NaN of {} elements): an element left unwritten or a NaN computed",
            a.iter().filter(|x| x.is_nan()).count(),
            a.len()
        )),
    }
}

/// `Err` naming the first element whose bits differ between two sets of named results.
pub fn same_bits(a: &[(&str, &[f32])], b: &[(&str, &[f32])]) -> Result<(), String> {
    for ((name, x), (_, y)) in a.iter().zip(b) {
        if x.len() != y.len() {
            return Err(format!("{name}: {} elements, then {}", x.len(), y.len()));
        }
        if let Some(i) = (0..x.len()).find(|&i| x[i].to_bits() != y[i].to_bits()) {
            return Err(format!(
                "{name}[{i}]: {:e} ({:#010x}), then {:e} ({:#010x})",
                x[i],
                x[i].to_bits(),
                y[i],
                y[i].to_bits()
            ));
        }
    }
    Ok(())
}
