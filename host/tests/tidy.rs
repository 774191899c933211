//! Repository hygiene: every Rust file opens with a `//!` header, every `#[ignore]` says why, no
//! forked variants (`_v2`, `_old`, `_new`) in file names, and every `unsafe` block of the host
//! library and the kernels carries its own `// SAFETY:` comment.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | ".git" | ".carry" | "ptx") && !name.starts_with("target-") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn workspace_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for crate_dir in ["reference", "graphs", "device", "host", "cli", "proptests", "benches"] {
        rust_files(&root.join(crate_dir), &mut files);
    }
    assert!(files.len() > 20, "the tidy test should see the workspace's sources");
    files
}

#[test]
fn every_rust_file_has_a_module_header() {
    let missing: Vec<_> = workspace_files()
        .into_iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap_or_default().trim_start().starts_with("//!"))
        .collect();
    assert!(missing.is_empty(), "files without a `//!` header: {missing:?}");
}

#[test]
fn every_ignored_test_says_why() {
    for f in workspace_files() {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.starts_with("#[ignore") {
                assert!(line.starts_with("#[ignore = \""), "{}:{}: #[ignore] without a reason", f.display(), i + 1);
            }
        }
    }
}

#[test]
fn no_forked_variants_in_file_names() {
    for f in workspace_files() {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        assert!(
            !["_v2", "_v3", "_old", "_new", "_copy"].iter().any(|s| stem.ends_with(s)),
            "{}: variants belong in the path or a parameter, not a suffix",
            f.display()
        );
    }
}

/// Whether the statement holding line `i` is directly preceded by its own `// SAFETY:` comment.
///
/// The statement starts where the line above ends one (`;`, `{`, `}`, `,`), is blank or is a
/// comment; lines above `i` that only continue the statement (a wrapped `let x =`, a call's
/// opening line, attributes) belong to it. The comment is the run of `//` lines right above that
/// start, so a neighbour's comment (one statement up, or across a blank line) does not count.
fn has_own_safety_comment(lines: &[&str], i: usize) -> bool {
    let mut start = i;
    while start > 0 {
        let above = lines[start - 1].trim();
        let continues = !above.is_empty() && !above.starts_with("//") && !above.ends_with([';', '{', '}', ',']);
        if !continues {
            break;
        }
        start -= 1;
    }
    let mut comment = start;
    while comment > 0 && lines[comment - 1].trim().starts_with("//") {
        comment -= 1;
    }
    lines[comment..start].iter().any(|l| l.trim().starts_with("// SAFETY:"))
}

#[test]
fn unsafe_blocks_in_the_library_and_kernels_say_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root.join("host/src"), &mut files);
    rust_files(&root.join("device/src"), &mut files);
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let blocks = line.matches("unsafe {").count();
            if blocks > 1 {
                missing.push(format!(
                    "{}:{}: {blocks} `unsafe` blocks on one line (one comment each)",
                    f.display(),
                    i + 1
                ));
            } else if blocks == 1 && !has_own_safety_comment(&lines, i) {
                missing.push(format!("{}:{}: `unsafe` block without its own `// SAFETY:` comment", f.display(), i + 1));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_safety_rule_wants_each_blocks_own_comment() {
    let own = ["    // SAFETY: why.", "    let x =", "        unsafe { f() };"];
    assert!(has_own_safety_comment(&own, 2));
    let attributed = ["// SAFETY: why.", "#[allow(unused)]", "let x = unsafe { f() };"];
    assert!(has_own_safety_comment(&attributed, 2));
    let neighbours = ["// SAFETY: for a.", "let a = unsafe { f() };", "let b = unsafe { g() };"];
    assert!(has_own_safety_comment(&neighbours, 1));
    assert!(!has_own_safety_comment(&neighbours, 2));
    let across_a_gap = ["// SAFETY: for nothing below.", "", "unsafe { f() }"];
    assert!(!has_own_safety_comment(&across_a_gap, 2));
    let arms = ["// SAFETY: for the match.", "match m {", "    A => unsafe { f() },", "    B => unsafe { g() },"];
    assert!(!has_own_safety_comment(&arms, 2));
    assert!(!has_own_safety_comment(&arms, 3));
}
