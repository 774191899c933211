//! Embeds the commit the binary is built from (`DFGNN_COMMIT`: `git describe --always --dirty`,
//! or `unknown` outside a git checkout), so that benchmark files made on a machine without the
//! repository still say which code produced them.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["describe", "--always", "--dirty", "--abbrev=12"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=DFGNN_COMMIT={commit}");
    // Rebuild when HEAD moves or the index changes (a commit, a checkout, a staged change).
    for path in ["HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(&["rev-parse", "--git-path", &head_ref])
    {
        println!("cargo:rerun-if-changed={p}");
    }
}
