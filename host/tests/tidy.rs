//! Repository hygiene: every Rust file opens with a `//!` header, every `#[ignore]` says why, no
//! forked variants (`_v2`, `_old`, `_new`) in file names, every `unsafe` block of the host
//! library and the kernels carries its own `// SAFETY:` comment, every path the documents cite
//! exists, and nothing cites notes that live outside the repository.

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

/// The repository root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file of the repository, as paths relative to the root with `/` separators: build
/// outputs and git's and tools' hidden folders left out.
fn repo_files() -> Vec<String> {
    fn walk(root: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(root.join(rel)) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            if entry.path().is_dir() {
                let skip = name == "target" || name.starts_with("target-");
                if !skip && (!name.starts_with('.') || name == ".ci") {
                    walk(root, &path, out);
                }
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo_root(), "", &mut files);
    assert!(files.iter().any(|f| f == "ARCHITECTURE.md"), "the tidy test should see the repository");
    files
}

/// `path` relative to the folder `dir` (both relative to the root), with `.` and `..` resolved;
/// `None` when it leaves the repository.
fn join_relative(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The backticked spans of a Markdown text that look like repository paths: only path
/// characters, and a `/` or a file extension the repository uses. Placeholders, globs and
/// elisions (`{`, `<`, `*`, `…`), absolute paths, home paths and URLs are not paths to check.
fn cited_paths(text: &str) -> Vec<&str> {
    let mut paths = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        let path_chars = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
        if i % 2 == 0 || span.is_empty() || !span.chars().all(path_chars) || span.starts_with('/') {
            continue;
        }
        let has_extension = [".rs", ".md", ".sh", ".toml", ".ptx"].iter().any(|e| span.ends_with(e));
        if (span.contains('/') || has_extension) && span.chars().any(|c| c.is_ascii_alphabetic()) {
            paths.push(span);
        }
    }
    paths
}

/// Whether `path`, cited in the file `citing`, names something in the repository: a file or
/// folder relative to the root or to the citing file's folder, or else, for the short paths a
/// section's context completes (`src/simt/`, `mod.rs` under a crate's heading), the tail of one.
/// A path whose first part names nothing in the repository (`planetoid/cora.npz` in a data
/// folder, `target/release/dfgnn`, a GitHub `owner/name`, `1/l`) is not a repository path: true.
fn names_something(files: &[String], citing: &str, path: &str) -> bool {
    let dir = citing.rsplit_once('/').map_or("", |(d, _)| d);
    let wanted = path.trim_end_matches('/');
    let first = wanted.split('/').find(|p| !matches!(*p, "" | "." | "..")).unwrap_or("");
    if !files.iter().any(|f| f.split('/').any(|part| part == first)) {
        return true;
    }
    let candidates = [join_relative("", wanted), join_relative(dir, wanted)];
    let exists = |c: &str| files.iter().any(|f| f == c || f.starts_with(&format!("{c}/")));
    if candidates.iter().flatten().any(|c| exists(c)) {
        return true;
    }
    !wanted.starts_with('.')
        && files.iter().any(|f| {
            f.ends_with(&format!("/{wanted}"))
                || f.contains(&format!("/{wanted}/"))
                || f.starts_with(&format!("{wanted}/"))
        })
}

/// The documents whose cited paths must exist: `ARCHITECTURE.md`, every `README.md` and
/// `docs/*.md` (not the raw run logs under `docs/runs/`).
fn checked_documents(files: &[String]) -> Vec<&String> {
    let docs: Vec<_> = files
        .iter()
        .filter(|f| {
            f.as_str() == "ARCHITECTURE.md"
                || f.as_str() == "README.md"
                || f.ends_with("/README.md")
                || (f.starts_with("docs/") && f.ends_with(".md") && f.matches('/').count() == 1)
        })
        .collect();
    assert!(docs.len() >= 6, "the documents to check: {docs:?}");
    docs
}

#[test]
fn every_path_the_documents_cite_exists() {
    let root = repo_root();
    let files = repo_files();
    let mut missing = Vec::new();
    for doc in checked_documents(&files) {
        let text = std::fs::read_to_string(root.join(doc)).unwrap_or_default();
        for (line, content) in text.lines().enumerate() {
            for path in cited_paths(content) {
                if !names_something(&files, doc, path) {
                    missing.push(format!("{doc}:{}: `{path}` does not exist", line + 1));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_path_check_reads_backticks_and_finds_stale_paths() {
    assert_eq!(cited_paths("`src/abi.rs` and `Csr`, `x.md`, `pl-<N>-d<deg>`, `a b/c`, `1/√F`"), ["src/abi.rs", "x.md"]);
    let files = ["device/src/abi/mod.rs".to_string(), "host/tests/tidy.rs".to_string()];
    assert!(names_something(&files, "device/README.md", "src/abi/"));
    assert!(names_something(&files, "ARCHITECTURE.md", "host/tests/tidy.rs"));
    assert!(names_something(&files, "docs/x.md", "../host/tests/"));
    assert!(!names_something(&files, "device/README.md", "src/abi.rs"));
    assert!(!names_something(&files, "ARCHITECTURE.md", "host/tests/gt_quick.rs"));
    assert!(names_something(&files, "README.md", "target/release/dfgnn"), "not a repository path");
}

/// What the repository must not cite: notes that live outside it. Its own `docs/design.md` is
/// fine, by any relative path that reaches it from the citing file.
fn outside_citations(file: &str, text: &str) -> Vec<String> {
    // Built from pieces, so that this file does not cite them itself.
    let shared = ["..", "shared"].join("/");
    let notes = ["shared", "notes"].join("/");
    let design = ["design", "md"].join(".");
    // CI's machines keep the data sets beside the checkout, and CI may point the tests there.
    let data = format!("{shared}/data");
    let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
    let mut found = Vec::new();
    for (line, content) in text.lines().enumerate() {
        let at = |what: &str| format!("{file}:{}: cites {what}", line + 1);
        let shared_uses = content.matches(shared.as_str()).count();
        let data_uses = if file.starts_with(".ci/") { content.matches(data.as_str()).count() } else { 0 };
        if shared_uses > data_uses {
            found.push(at(&shared));
        }
        if content.contains(notes.as_str()) {
            found.push(at(&notes));
        }
        for (start, _) in content.match_indices(design.as_str()) {
            let path_start = content[..start]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c)))
                .map_or(0, |i| i + content[i..].chars().next().map_or(1, char::len_utf8));
            let cited = &content[path_start..start + design.len()];
            let own = [join_relative("", cited), join_relative(dir, cited)]
                .iter()
                .any(|c| c.as_deref() == Some("docs/design.md"));
            if !own {
                found.push(at(cited));
            }
        }
    }
    found
}

#[test]
fn nothing_cites_notes_outside_the_repository() {
    let root = repo_root();
    let mut found = Vec::new();
    // The raw run logs under `docs/runs/` are records of what ran, kept as they were.
    for file in repo_files().into_iter().filter(|f| !f.starts_with("docs/runs/")) {
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else { continue };
        found.extend(outside_citations(&file, &text));
    }
    assert!(found.is_empty(), "the repository must stand alone:\n{}", found.join("\n"));
}

#[test]
fn the_citation_check_tells_own_docs_from_outside_notes() {
    // Built from pieces, so that this file does not cite them itself.
    let design = ["design", "md"].join(".");
    let ok = format!("see docs/{design} §3, [x](../docs/{design}), `docs/{design}`");
    assert!(outside_citations("reference/README.md", &ok).is_empty());
    assert!(outside_citations("docs/peers.md", &format!("[design]({design}) §1")).is_empty());
    assert_eq!(outside_citations("host/src/x.rs", &format!("//! as in {design} §2")).len(), 1);
    assert_eq!(outside_citations("README.md", &format!("[d]({design})")).len(), 1);
    assert_eq!(outside_citations("README.md", &format!("[d](../docs/{design})")).len(), 1);
    let shared = ["..", "shared"].join("/");
    let data_line = format!("export DFGNN_DATA_DIR=\"$PWD/{shared}/data\"");
    assert!(outside_citations(".ci/run", &data_line).is_empty());
    assert_eq!(outside_citations("graphs/src/x.rs", &data_line).len(), 1);
    let notes = format!("`{}/peers.md`", ["shared", "notes"].join("/"));
    assert_eq!(outside_citations("docs/results.md", &notes).len(), 1);
}
