//! The generated blocks of the docs are what `dfgnn bench report` makes of the committed suite
//! files (`docs/bench/*.json`): README.md's headline table and docs/results.md's block. No number
//! in them was typed by hand; these tests fail when a block drifts from the JSON.

use std::path::{Path, PathBuf};

use dfgnn_cli::suite::SuiteFile;
use dfgnn_cli::suite::report::{Block, HEADLINE, headline};
use dfgnn_cli::suite::results::{RESULTS, block};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli/ is in the workspace").to_path_buf()
}

/// The committed suite files, in name order (the order `docs/bench/*.json` expands to).
fn committed() -> Vec<SuiteFile> {
    let dir = root().join("docs/bench");
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    paths.iter().map(|p| SuiteFile::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).collect()
}

/// Fails unless the `block` of the file at `doc` (from the root) is `body`; `option` is the
/// `dfgnn bench report` option that rewrites it.
fn assert_block(doc: &str, block: Block, body: &str, option: &str) {
    let text = std::fs::read_to_string(root().join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let expected =
        block.replace(&text, body).unwrap_or_else(|| panic!("{doc} has no `{}` … `{}` block", block.begin, block.end));
    assert_eq!(
        text, expected,
        "{doc}'s generated block differs from what docs/bench/*.json gives; rewrite it with \
         `dfgnn bench report {option} {doc} docs/bench/*.json`"
    );
}

#[test]
fn readme_headline_matches_the_committed_json() {
    assert_block("README.md", HEADLINE, &headline(&committed()), "--readme");
}

#[test]
fn results_block_matches_the_committed_json() {
    assert_block("docs/results.md", RESULTS, &block(&committed()), "--results");
}
