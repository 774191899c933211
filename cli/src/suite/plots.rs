//! SVG plots of suite files (plotters): the plan's speed-up over each baseline and peer per graph
//! (one plot per model and pass), the fraction of the copy bandwidth the plan reaches, time and
//! peak memory against edge count, and the scaling case (GT 4×64 forward+backward) of every
//! system against edge count. Text is left to the SVG viewer's fonts (plotters' naive
//! font layout), so the plots need no font files and are the same bits on every machine.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::report::{PLAN, column};
use super::{Pass, Record, SuiteFile};
use crate::bench::Model;
use crate::error::{CliError, Result};

/// Plot size in pixels.
const SIZE: (u32, u32) = (960, 540);

/// Colours of the series, in order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// A plotting error as the tool's error.
fn plot_error(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::Usage { what: format!("plot {}: {e}", path.display()) }
}

/// A named series of points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// Draws `series` as points joined by lines on log-log (`log_x`) or category axes.
fn draw(path: &Path, title: &str, x_desc: &str, y_desc: &str, series: &[Series], categories: &[String]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| plot_error(path, e);
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().copied()).collect();
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let ys: Vec<f64> = all.iter().map(|p| p.1).filter(|&v| positive(v)).collect();
    let (y_lo, y_hi) = ys.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let (y_lo, y_hi) = if ys.is_empty() { (0.1, 10.0) } else { (y_lo / 1.5, y_hi * 1.5) };
    // Ratios are read against 1: keep it in view.
    let (y_lo, y_hi) = if categories.is_empty() { (y_lo, y_hi) } else { (y_lo.min(0.8), y_hi.max(1.25)) };
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(if categories.is_empty() { 40 } else { 120 })
        .y_label_area_size(70);
    let style = |i: usize| PALETTE[i % PALETTE.len()];
    if categories.is_empty() {
        let xs: Vec<f64> = all.iter().map(|p| p.0).filter(|&v| positive(v)).collect();
        let (x_lo, x_hi) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let (x_lo, x_hi) = if xs.is_empty() { (1.0, 10.0) } else { (x_lo / 1.5, x_hi * 1.5) };
        let mut chart =
            builder.build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale()).map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|v| format!("{v:.0e}"))
            .y_label_formatter(&|v| number(*v))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, s) in series.iter().enumerate() {
            let mut pts: Vec<(f64, f64)> =
                s.points.iter().copied().filter(|p| positive(p.0) && positive(p.1)).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let c = style(i);
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled()))).map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    } else {
        let n = categories.len();
        let labels = categories.to_vec();
        let mut chart =
            builder.build_cartesian_2d(-0.5f64..n as f64 - 0.5, (y_lo..y_hi).log_scale()).map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_labels(n.max(1))
            .x_label_formatter(&move |x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_label_style(("sans-serif", 11).into_font().transform(FontTransform::Rotate90))
            .y_label_formatter(&|v| number(*v))
            .y_desc(y_desc)
            .draw()
            .map_err(|e| err(&e))?;
        // The line where a ratio is 1.
        chart
            .draw_series(LineSeries::new(vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)], BLACK.stroke_width(1)))
            .map_err(|e| err(&e))?;
        for (i, s) in series.iter().enumerate() {
            let c = style(i);
            let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|p| positive(p.1)).collect();
            chart
                .draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled())))
                .map_err(|e| err(&e))?
                .label(s.name.clone())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

/// An axis label: three significant digits, no float noise.
fn number(v: f64) -> String {
    let trim = |t: String| if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_string() } else { t };
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 0.001 => trim(format!("{v:.4}")),
        v => format!("{v:.1e}"),
    }
}

/// `bandwidth.svg`: the forward's gather-worst bandwidth over the copy rate.
const BANDWIDTH_FILE: &str = "bandwidth.svg";
/// `memory.svg`: the plan's peak memory against edges.
const MEMORY_FILE: &str = "memory.svg";
/// The scaling case's time and memory against edges.
const SCALING_FILES: [&str; 2] = ["scaling-time.svg", "scaling-memory.svg"];

/// The speed-up plot of one model and pass.
fn speedup_file(model: Model, pass: Pass) -> String {
    format!("speedup-{}-{}.svg", model.name(), pass_file(pass))
}

/// The plan's time against edges for one pass.
fn time_file(pass: Pass) -> String {
    format!("time-{}.svg", pass_file(pass))
}

/// The plan's records that ran.
fn plans(files: &[SuiteFile]) -> Vec<&Record> {
    files
        .iter()
        .flat_map(|f| &f.records)
        .filter(|r| r.system == "dfgnn" && r.variant == PLAN && r.time.is_some())
        .collect()
}

/// The models and passes with a speed-up plot: those the plan ran.
fn speedup_cases(plans: &[&Record]) -> Vec<(Model, Pass)> {
    Model::ALL
        .into_iter()
        .flat_map(|m| [(m, Pass::Forward), (m, Pass::ForwardBackward)])
        .filter(|&(m, p)| plans.iter().any(|r| r.model == m && r.pass == p))
        .collect()
}

/// The file names [`write_all`] writes for `files`, in its order (docs/results.md links to them).
pub fn file_names(files: &[SuiteFile]) -> Vec<String> {
    let mut names: Vec<String> = speedup_cases(&plans(files)).into_iter().map(|(m, p)| speedup_file(m, p)).collect();
    names.push(BANDWIDTH_FILE.to_string());
    names.extend([Pass::Forward, Pass::ForwardBackward].map(time_file));
    names.push(MEMORY_FILE.to_string());
    names.extend(SCALING_FILES.map(String::from));
    names
}

/// Writes every plot of `files` into `dir`; returns the paths written.
pub fn write_all(files: &[SuiteFile], dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| plot_error(dir, e))?;
    let records: Vec<&Record> = files.iter().flat_map(|f| &f.records).collect();
    let plans = plans(files);
    let mut written = Vec::new();
    for (model, pass) in speedup_cases(&plans) {
        let mine: Vec<&Record> = plans.iter().copied().filter(|r| r.model == model && r.pass == pass).collect();
        let categories: Vec<String> = mine.iter().map(|r| format!("{} {}x{}", r.graph.name, r.heads, r.feat)).collect();
        let mut series: Vec<Series> = Vec::new();
        for (i, p) in mine.iter().enumerate() {
            let base = p.time.map_or(f64::NAN, |t| t.median_ms);
            for r in records.iter().filter(|r| r.case() == p.case() && column(r) != PLAN) {
                let Some(t) = r.time else { continue };
                let name = column(r);
                let point = (i as f64, t.median_ms / base);
                match series.iter_mut().find(|s| s.name == name) {
                    Some(s) => s.points.push(point),
                    None => series.push(Series { name, points: vec![point] }),
                }
            }
        }
        let path = dir.join(speedup_file(model, pass));
        let title = format!(
            "{} {}: the plan's speed-up over each variant (its time / the plan's)",
            model.name().to_uppercase(),
            pass.name()
        );
        draw(&path, &title, "", "speed-up", &series, &categories)?;
        written.push(path);
    }
    let by_model_shape = |pass: Pass, y: &dyn Fn(&Record) -> Option<f64>, x: &dyn Fn(&Record) -> f64| -> Vec<Series> {
        let mut series: Vec<Series> = Vec::new();
        for r in plans.iter().filter(|r| r.pass == pass) {
            let Some(v) = y(r) else { continue };
            let name = format!("{} {}x{}", r.model, r.heads, r.feat);
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x(r), v)),
                None => series.push(Series { name, points: vec![(x(r), v)] }),
            }
        }
        series
    };
    let edges = |r: &Record| r.graph.nnz as f64;
    let index: Vec<String> = {
        let mut names: Vec<String> = Vec::new();
        for r in &plans {
            if !names.contains(&r.graph.name) {
                names.push(r.graph.name.clone());
            }
        }
        names
    };
    let graph_index = |r: &Record| index.iter().position(|g| *g == r.graph.name).unwrap_or(0) as f64;
    let fraction = by_model_shape(Pass::Forward, &|r| r.fraction_of_copy(), &graph_index);
    let path = dir.join(BANDWIDTH_FILE);
    draw(
        &path,
        "The plan's forward: gather-worst bandwidth / copy bandwidth of the same run",
        "",
        "fraction",
        &fraction,
        &index,
    )?;
    written.push(path);
    for pass in [Pass::Forward, Pass::ForwardBackward] {
        let time = by_model_shape(pass, &|r| r.time.map(|t| t.median_ms), &edges);
        let path = dir.join(time_file(pass));
        draw(&path, &format!("The plan's {} time against edges", pass.name()), "edges", "ms", &time, &[])?;
        written.push(path);
    }
    let memory = by_model_shape(Pass::ForwardBackward, &|r| r.peak_bytes.map(|b| b as f64 / 1e9), &edges);
    let path = dir.join(MEMORY_FILE);
    draw(&path, "The plan's peak device memory (forward+backward) against edges", "edges", "GB", &memory, &[])?;
    written.push(path);
    written.extend(write_scaling(&records, dir)?);
    Ok(written)
}

/// The scaling case (`scripts/bench-suite.sh scale`): GT forward+backward at 4×64.
pub const SCALING: (Model, u32, u32, Pass) = (Model::Gt, 4, 64, Pass::ForwardBackward);

/// The family of a generated graph by its name: uniform (`er-`) or power law (`pl-`); `None` for
/// the rest.
fn family(graph: &str) -> Option<&'static str> {
    match graph.split('-').next() {
        Some("er") => Some("uniform"),
        Some("pl") => Some("power law"),
        _ => None,
    }
}

/// `scaling-time.svg` and `scaling-memory.svg`: every system's time and peak memory in the
/// [`SCALING`] case against edges on the uniform and power-law graphs, one series per system
/// (dfgnn's plan, each peer) and family. Cases a system could not run (PyG out of memory) have no
/// point.
fn write_scaling(records: &[&Record], dir: &Path) -> Result<Vec<PathBuf>> {
    let (model, heads, feat, pass) = SCALING;
    let case: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| (r.model, r.heads, r.feat, r.pass) == (model, heads, feat, pass))
        .filter(|r| r.system != "dfgnn" || r.variant == PLAN)
        .collect();
    let series = |y: &dyn Fn(&Record) -> Option<f64>| {
        let mut series: Vec<Series> = Vec::new();
        for r in &case {
            let (Some(v), Some(family)) = (y(r), family(&r.graph.name)) else { continue };
            let system = if r.system == "dfgnn" { "dfgnn".to_string() } else { column(r) };
            let name = format!("{system} ({family})");
            let point = (r.graph.nnz as f64, v);
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push(point),
                None => series.push(Series { name, points: vec![point] }),
            }
        }
        // dfgnn's series first, so that they take the first colours.
        series.sort_by_key(|s| !s.name.starts_with("dfgnn "));
        series
    };
    let what = format!("{} {}x{feat} {}", model.name().to_uppercase(), heads, pass.name());
    let time = series(&|r| r.time.map(|t| t.median_ms));
    let memory = series(&|r| r.peak_bytes.map(|b| b as f64 / 1e9));
    let time_path = dir.join(SCALING_FILES[0]);
    draw(&time_path, &format!("{what}: time against edges"), "edges", "ms", &time, &[])?;
    let memory_path = dir.join(SCALING_FILES[1]);
    draw(&memory_path, &format!("{what}: peak device memory against edges"), "edges", "GB", &memory, &[])?;
    Ok(vec![time_path, memory_path])
}

/// The pass in a file name.
fn pass_file(pass: Pass) -> &'static str {
    match pass {
        Pass::Forward => "forward",
        Pass::ForwardBackward => "forward-backward",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GT 4×64 forward+backward record of `system`/`variant` on `graph` with `edges` edges
    /// (made-up times and memory: this checks which points are drawn, not any measurement).
    fn record(system: &str, variant: &str, graph: &str, edges: usize) -> Record {
        serde_json::from_value(serde_json::json!({
            "system": system, "model": "gt", "variant": variant, "heads": 4, "feat": 64,
            "pass": "forward_backward", "time": {"median_ms": 1.0, "min_ms": 1.0, "max_ms": 1.0},
            "repeats": 3, "bytes": null, "copy_bytes_per_s": null, "peak_bytes": 1000, "base_bytes": null,
            "plan": "", "reasons": [], "error": null,
            "graph": {"name": graph, "num_dst": 10, "num_src": 10, "nnz": edges, "in_degree_mean": 1.0,
                      "in_degree_max": 1, "in_degree_cv": 0.0, "out_degree_max": 1, "empty_rows": 0,
                      "self_loops": 0, "duplicate_edges": 0}
        }))
        .expect("a record")
    }

    #[test]
    fn the_scaling_plots_show_every_system_per_family_of_generated_graphs() {
        let dir = std::env::temp_dir().join(format!("dfgnn-scaling-plot-{}", std::process::id()));
        let records = [
            record("dfgnn", "auto", "er-64K-d16", 1 << 20),
            record("dfgnn", "auto", "er-256K-d16", 1 << 22),
            record("dfgnn", "unfused", "er-64K-d16", 1 << 20),
            record("dfgnn", "auto", "pl-64K-d16", 1 << 20),
            record("pyg", "TransformerConv", "er-64K-d16", 1 << 20),
            record("dfgnn", "auto", "cora", 10_000),
        ];
        let refs: Vec<&Record> = records.iter().collect();
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let paths = write_scaling(&refs, &dir).expect("the plots are written");
        let svg = std::fs::read_to_string(&paths[0]).expect("scaling-time.svg");
        for legend in ["dfgnn (uniform)", "dfgnn (power law)", "pyg TransformerConv (uniform)"] {
            assert!(svg.contains(legend), "no `{legend}` in {}", paths[0].display());
        }
        // Only the plan of dfgnn, and only the generated families.
        assert!(!svg.contains("unfused") && !svg.contains("other"), "{svg}");
        assert!(std::fs::read_to_string(&paths[1]).expect("scaling-memory.svg").contains("dfgnn (uniform)"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn file_names_are_the_files_written() {
        let dir = std::env::temp_dir().join(format!("dfgnn-plot-names-{}", std::process::id()));
        let file = |records| SuiteFile {
            meta: serde_json::from_value(serde_json::json!({
                "schema": crate::suite::SCHEMA, "tool": "t", "date": "d", "commit": "c", "device": "D",
                "command": "x", "warmup": 1, "repeats": 3, "case_budget_ms": 1.0, "input_sets": 1, "skipped": []
            }))
            .expect("a meta"),
            records,
            part: "p".to_string(),
        };
        let files =
            [file(vec![record("dfgnn", "auto", "er-64K-d16", 1 << 20), record("pyg", "TransformerConv", "cora", 10)])];
        let written = write_all(&files, &dir).expect("the plots are written");
        let names: Vec<String> =
            written.iter().map(|p| p.file_name().expect("a file").to_string_lossy().into_owned()).collect();
        assert_eq!(names, file_names(&files));
        assert!(names.contains(&"speedup-gt-forward-backward.svg".to_string()), "{names:?}");
        assert!(!names.contains(&"speedup-gt-forward.svg".to_string()), "{names:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
