//! The `dfgnn` binary as a user runs it: bad sizes and inputs are clear errors with a non-zero
//! exit (never an abort or a panic), allocations past the memory budget are refused before they
//! happen, the main job prints each row as it is measured, and progress never reaches a pipe.

use std::process::{Command, Output};

/// `dfgnn` on the emulator with `args`, not yet run.
fn dfgnn_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dfgnn"));
    command.args(["--backend", "emulator"]).args(args).env_remove("DFGNN_BACKEND");
    command
}

/// Runs `dfgnn` on the emulator with `args`; stdout and stderr are pipes (not terminals).
fn dfgnn(args: &[&str]) -> Output {
    dfgnn_command(args).output().expect("the dfgnn binary runs")
}

/// Asserts that the command failed cleanly (exit code 1, one error line naming `needle`) and
/// returns its stdout.
fn fails_with(args: &[&str], needle: &str) -> String {
    let out = dfgnn(args);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: exit status {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(stderr.starts_with("dfgnn: error: "), "{args:?}: stderr:\n{stderr}");
    assert!(stderr.contains(needle), "{args:?}: expected `{needle}` in:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stdout.into_owned()
}

#[test]
fn billions_of_heads_are_a_clear_error_before_any_allocation() {
    // Once an abort asking for 882 GB (release) or an overflow panic (debug).
    fails_with(&["run", "--graph", "er-1K-d8", "--heads", "4000000000", "--feat", "32"], "out of host memory");
    fails_with(&["run", "--graph", "er-1K-d8", "--heads", "4000000000", "--feat", "4000000000"], "overflow");
    fails_with(
        &["bench", "gt", "--graph", "er-1K-d8", "--heads", "4000000000", "--feat", "32"],
        "out of device memory",
    );
}

#[test]
fn wide_features_on_the_emulator_are_out_of_memory_errors() {
    // Once an abort on a 1.6 GB allocation; the main job's host arrays and the emulator's device
    // buffers are both checked against the budget.
    let wide = ["--graph", "er-1K-d8", "--feat", "100000", "--max-memory", "1GiB"];
    fails_with(&[&["run"], &wide[..]].concat(), "out of host memory");
    fails_with(&[&["bench", "gt"], &wide[..]].concat(), "out of device memory");
}

#[test]
fn a_graph_past_the_device_budget_is_refused_while_preparing_it() {
    fails_with(&["bench", "gt", "--graph", "er-1K-d8", "--max-memory", "100KiB"], "preparing a graph");
}

#[test]
fn an_empty_graph_is_a_clear_error_for_the_main_job() {
    let dir = std::env::temp_dir().join(format!("dfgnn-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let out = dfgnn(&["run", "--graph", empty.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no edges") || stderr.contains("empty"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("checks passed"));
}

#[test]
fn bad_counts_are_usage_errors() {
    for args in
        [&["bench", "gt", "--repeats", "0"][..], &["demo", "--scale", "0"], &["demo", "--scale", "1000000000000"]]
    {
        let out = dfgnn(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: clap's usage error");
    }
}

#[test]
fn the_main_job_prints_rows_as_it_goes_and_keeps_them_when_a_later_schedule_fails() {
    // F = 2000: edge_parallel takes any F; row_tiled (fused) cannot hold it and refuses.
    let stdout = fails_with(
        &[
            "run",
            "--graph",
            "corner-random_97",
            "--heads",
            "1",
            "--feat",
            "2000",
            "--schedule",
            "edge_parallel,row_tiled",
        ],
        "row_tiled",
    );
    assert!(stdout.contains("GT    edge_parallel"), "{stdout}");
    assert!(stdout.contains("AGNN  edge_parallel"), "{stdout}");
    assert!(stdout.contains("GAT   edge_parallel"), "{stdout}");
    assert!(stdout.contains("GATv2 edge_parallel"), "{stdout}");
    assert!(!stdout.contains("checks passed"), "{stdout}");
}

#[test]
fn the_main_job_passes_and_shows_no_progress_on_a_pipe() {
    let out = dfgnn(&["run", "--graph", "er-1K-d8", "--schedule", "auto"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("all 4 checks passed on emulator"), "{stdout}");
    assert_eq!(stderr, "", "progress belongs on terminals only");
}

#[test]
fn a_missing_file_says_no_such_file_first() {
    let out = fails_with(&["graph", "stats", "/nonexistent/graph.mtx"], "no such file");
    assert!(out.is_empty());
    let out = dfgnn(&["graph", "stats", "/nonexistent/graph.mtx"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("grammar") && stderr.lines().count() <= 2, "{stderr}");
}

#[test]
fn every_command_reads_cora_and_citeseer_from_the_data_directory() {
    // Without a data directory, and with one that lacks the file: one clear error each, from the
    // main job, the benches and `graph stats` alike (the same resolver; the suite skips the graph
    // and says why, tested with the suite).
    let dir = std::env::temp_dir().join(format!("dfgnn-cli-planetoid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data_dir = dir.to_str().unwrap();
    for name in ["cora", "citeseer"] {
        for command in [&["run", "--graph", name][..], &["bench", "gat", "--graph", name], &["graph", "stats", name]] {
            let out = dfgnn_command(command).env_remove("DFGNN_DATA_DIR").output().expect("the dfgnn binary runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{command:?}: {stderr}");
            assert!(stderr.contains(&format!("{name}: no data directory (--data-dir or DFGNN_DATA_DIR)")), "{stderr}");
            let missing = format!("{name}: no {}", dir.join("planetoid").join(format!("{name}.npz")).display());
            fails_with(&[&["--data-dir", data_dir][..], command].concat(), &missing);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sparse_ids_need_relabel_and_keep_the_original_ids() {
    let dir = std::env::temp_dir().join(format!("dfgnn-cli-relabel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let edges = dir.join("sparse.txt");
    std::fs::write(&edges, "0 1\n4000000000 0\n").unwrap();
    let path = edges.to_str().unwrap();
    // Without --relabel: a clear error naming the option, before any large allocation.
    fails_with(&["graph", "stats", path], "--relabel");
    // With it: three nodes, and the original ids written beside.
    let ids = dir.join("ids.tsv");
    let out = dfgnn(&["graph", "stats", path, "--relabel", "--ids-out", ids.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("nodes: 3 dst x 3 src"), "{stdout}");
    let written = std::fs::read_to_string(&ids).expect("the id map is written");
    assert!(written.contains("4000000000"), "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `dfgnn bench MODEL` on a small graph gives a timed row for every schedule asked for.
fn bench_times_every_schedule_asked_for(model: &str) {
    let schedules = ["auto", "row_tiled", "row_split", "row_group", "edge_parallel", "unfused"];
    let list = schedules.join(",");
    let out = dfgnn(&[
        "bench",
        model,
        "--graph",
        "er-1K-d8",
        "--heads",
        "2",
        "--feat",
        "8",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--schedule",
        &list,
    ]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains(&format!("bench {model}: graph er-1K-d8, 2 heads x 8 features")), "{stdout}");
    for schedule in schedules {
        let row = stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(schedule))
            .unwrap_or_else(|| panic!("no row for {schedule}:\n{stdout}"));
        assert!(!row.contains("cannot run"), "{row}");
        let forward_ms: f64 = row.split_whitespace().nth(1).and_then(|ms| ms.parse().ok()).expect(row);
        assert!(forward_ms > 0.0, "{row}");
    }
}

#[test]
fn the_cusparse_baseline_is_reported_unavailable_on_the_emulator_not_timed() {
    let args = ["bench", "gt", "--graph", "er-1K-d8", "--heads", "2", "--feat", "8", "--repeats", "1", "--warmup", "0"];
    let out = dfgnn(&[&args[..], &["--schedule", "auto,cusparse"]].concat());
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let row = |name: &str| {
        stdout.lines().find(|line| line.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{stdout}"))
    };
    assert!(!row("auto").contains("cannot run"), "{stdout}");
    assert!(row("cusparse").contains("cannot run") && row("cusparse").contains("CUDA device"), "{stdout}");
    // GAT has no cuSPARSE path: a reason, on any backend.
    let gat =
        dfgnn(&["bench", "gat", "--graph", "er-1K-d8", "--repeats", "1", "--warmup", "0", "--schedule", "cusparse"]);
    let stdout = String::from_utf8_lossy(&gat.stdout);
    assert!(gat.status.success() && stdout.contains("GT's only"), "{stdout}");
}

#[test]
fn bench_times_attention_dropout_on_the_fused_schedules_and_refuses_it_elsewhere() {
    let args = ["--graph", "er-1K-d8", "--heads", "2", "--feat", "8", "--repeats", "1", "--warmup", "0"];
    for model in ["gt", "gat", "gatv2", "agnn"] {
        let out = dfgnn(&[&["bench", model][..], &args, &["--dropout", "0.3", "--schedule", "auto,unfused"]].concat());
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{model}: stdout:\n{stdout}\nstderr:\n{stderr}");
        assert!(stdout.contains("attention dropout 0.3"), "{model}: {stdout}");
        let row = |name: &str| {
            stdout
                .lines()
                .find(|line| line.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{stdout}"))
        };
        // AGNN has no dropout; the baselines run none.
        assert_eq!(!row("auto").contains("cannot run"), model != "agnn", "{model}: {stdout}");
        assert!(row("unfused").contains("cannot run") && row("unfused").contains("dropout"), "{model}: {stdout}");
    }
}

#[test]
fn bench_gat_times_every_schedule_asked_for() {
    bench_times_every_schedule_asked_for("gat");
}

#[test]
fn bench_gatv2_times_every_schedule_asked_for() {
    bench_times_every_schedule_asked_for("gatv2");
}

#[test]
fn the_suite_starts_no_graph_past_its_time_limit() {
    let dir = std::env::temp_dir().join(format!("dfgnn-suite-limit-test-{}", std::process::id()));
    let out = dir.to_str().expect("a UTF-8 temporary directory");
    let run =
        dfgnn(&["bench", "suite", "--out", out, "--graphs", "er-64-d2,pl-64-d2", "--time-limit-s", "0", "--no-plots"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let file = dfgnn_cli::suite::SuiteFile::read(&dir.join("suite.json")).expect("suite.json");
    assert!(file.records.is_empty(), "{:?}", file.records);
    assert_eq!(file.meta.skipped.len(), 2, "{:?}", file.meta.skipped);
    assert!(file.meta.skipped.iter().all(|s| s.contains("time limit (0 s)")), "{:?}", file.meta.skipped);
    fails_with(&["bench", "suite", "--out", out, "--time-limit-s=-1"], "--time-limit-s -1");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_suite_pipeline_writes_json_markdown_and_plots() {
    // Tiny on purpose: this checks JSON -> Markdown -> SVG, not any speed (emulator times are
    // meaningless and nothing asserts on them).
    let dir = std::env::temp_dir().join(format!("dfgnn-suite-test-{}", std::process::id()));
    let out = dir.to_str().expect("a UTF-8 temporary directory");
    let run = dfgnn(&[
        "bench",
        "suite",
        "--out",
        out,
        "--quick",
        "--warmup",
        "0",
        "--repeats",
        "1",
        "--graphs",
        "er-64-d2,gt-no-such-network",
        "--models",
        "gt,agnn",
        "--shapes",
        "1x4",
        "--schedules",
        "auto,unfused",
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let json = std::fs::read_to_string(dir.join("suite.json")).expect("suite.json");
    let file: dfgnn_cli::suite::SuiteFile = serde_json::from_str(&json).expect("the suite file parses");
    // 1 graph x 2 models x 1 shape x 2 schedules x 2 passes; the graph-tool network is skipped (not in the collection).
    assert_eq!(file.records.len(), 8, "{json}");
    assert_eq!(file.meta.skipped.len(), 1, "{:?}", file.meta.skipped);
    assert!(file.records.iter().all(|r| r.time.is_some() && r.bandwidth.is_some() && r.peak_bytes.is_some()), "{json}");
    assert!(file.records.iter().any(|r| r.variant == "auto" && !r.reasons.is_empty()), "{json}");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    for heading in ["## GT forward", "## GT forward+backward", "## AGNN forward+backward", "| er-64-d2 |"] {
        assert!(md.contains(heading), "no `{heading}` in:\n{md}");
    }
    for plot in
        ["speedup-gt-forward.svg", "bandwidth.svg", "time-forward-backward.svg", "memory.svg", "scaling-time.svg"]
    {
        let svg = std::fs::read_to_string(dir.join(plot)).expect(plot);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{plot}");
        // The plots with one category per graph name it (the others have edges on their x axis).
        let per_graph = plot.starts_with("speedup") || plot == "bandwidth.svg";
        assert!(!per_graph || svg.contains("er-64-d2"), "{plot}");
    }
    // The report is a function of the JSON alone.
    let report = dfgnn(&["bench", "report", dir.join("suite.json").to_str().expect("UTF-8")]);
    assert!(report.status.success());
    assert_eq!(String::from_utf8_lossy(&report.stdout), md);
    std::fs::remove_dir_all(&dir).ok();
}
