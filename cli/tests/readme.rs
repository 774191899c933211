//! README.md's headline table is what `dfgnn bench report --headline docs/bench/*.json` prints
//! from the committed suite files: no number in it was typed by hand.

use std::path::{Path, PathBuf};

use dfgnn_cli::suite::SuiteFile;
use dfgnn_cli::suite::report::{headline, with_headline};

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

#[test]
fn readme_headline_matches_the_committed_json() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let expected = with_headline(&readme, &headline(&committed())).expect("README.md has a headline block");
    assert_eq!(
        readme, expected,
        "README.md's headline differs from `dfgnn bench report --headline docs/bench/*.json`; rewrite it with \
         `dfgnn bench report --readme README.md docs/bench/*.json`"
    );
}
