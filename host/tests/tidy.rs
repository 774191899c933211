//! Repository hygiene: every Rust file opens with a `//!` header, every `#[ignore]` says why, no
//! forked variants (`_v2`, `_old`, `_new`) in file names, and every `unsafe` block of the host
//! library and the kernels carries a `// SAFETY:` comment.

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

#[test]
fn unsafe_blocks_in_the_library_and_kernels_say_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root.join("host/src"), &mut files);
    rust_files(&root.join("device/src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("unsafe {") || line.trim_start().starts_with("//") {
                continue;
            }
            // The justification sits in the comment lines just above (a statement may wrap).
            let above = lines[i.saturating_sub(8)..i].join("\n");
            assert!(
                above.contains("SAFETY") || line.contains("SAFETY"),
                "{}:{}: `unsafe` block without a `// SAFETY:` comment above it",
                f.display(),
                i + 1
            );
        }
    }
}
