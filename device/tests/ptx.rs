//! The committed PTX (`device/ptx/dfgnn_device.ptx`): it is what the current source compiles to,
//! and it assembles for the H200 without spills.
//!
//! Each test needs a tool a machine may lack (the pinned nightly toolchain of
//! `device/ptx-toolchain` with `rust-src`; `ptxas`), so each is ignored unless asked for:
//! `cargo test -p dfgnn-device --test ptx -- --ignored` where the tools are installed (CI does).
//! Asked for, a missing tool is a failure, never a silent pass.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn committed_ptx() -> PathBuf {
    root().join("device/ptx/dfgnn_device.ptx")
}

/// A command with the outer cargo's toolchain choices removed, so `+nightly` is honoured.
fn clean(mut cmd: Command) -> Command {
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The pinned nightly the PTX is built with (`device/ptx-toolchain`).
fn pinned_toolchain() -> String {
    std::fs::read_to_string(root().join("device/ptx-toolchain"))
        .expect("device/ptx-toolchain should exist")
        .trim()
        .to_string()
}

fn nightly_with_rust_src() -> bool {
    let mut cmd = clean(Command::new("rustc"));
    cmd.arg(format!("+{}", pinned_toolchain())).args(["--print", "sysroot"]);
    match cmd.output() {
        Ok(out) if out.status.success() => {
            let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
            Path::new(&sysroot).join("lib/rustlib/src/rust/library/core/Cargo.toml").exists()
        }
        _ => false,
    }
}

#[test]
#[ignore = "needs the pinned nightly toolchain with rust-src: cargo test -- --ignored where it is installed"]
fn committed_ptx_matches_the_source() {
    assert!(
        nightly_with_rust_src(),
        "this test needs the pinned toolchain {0} with rust-src (rustup toolchain install {0} --profile minimal --component rust-src)",
        pinned_toolchain()
    );
    let fresh = std::env::temp_dir().join(format!("dfgnn-fresh-{}.ptx", std::process::id()));
    let mut cmd = clean(Command::new("bash"));
    cmd.arg(root().join("device/build-ptx.sh"))
        .arg(&fresh)
        .env("DFGNN_PTX_TARGET_DIR", root().join("target/ptx-check"));
    let out = cmd.output().expect("bash should run");
    assert!(out.status.success(), "device/build-ptx.sh failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let fresh_text = std::fs::read_to_string(&fresh).expect("the fresh PTX should exist");
    let _ = std::fs::remove_file(&fresh);
    let committed = std::fs::read_to_string(committed_ptx()).expect("device/ptx/dfgnn_device.ptx should exist");
    if fresh_text != committed {
        let line = fresh_text.lines().zip(committed.lines()).position(|(a, b)| a != b).map_or(0, |l| l + 1);
        panic!(
            "device/ptx/dfgnn_device.ptx is stale (first difference near line {line}): run device/build-ptx.sh and commit the result"
        );
    }
}

fn find_ptxas() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DFGNN_PTXAS") {
        return Some(PathBuf::from(p));
    }
    if Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some(PathBuf::from("ptxas"));
    }
    let out = Command::new("python3")
        .args(["-c", "import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'bin', 'ptxas'))"])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.exists().then_some(p)
}

#[test]
#[ignore = "needs ptxas: cargo test -- --ignored where it is installed"]
fn committed_ptx_assembles_for_sm_90_without_spills() {
    let ptxas = find_ptxas()
        .unwrap_or_else(|| panic!("this test needs ptxas (pip install nvidia-cuda-nvcc==13.0.88, or set DFGNN_PTXAS)"));
    let cubin = std::env::temp_dir().join(format!("dfgnn-{}.cubin", std::process::id()));
    let out = Command::new(&ptxas)
        .args(["-arch=sm_90", "-v", "-o"])
        .arg(&cubin)
        .arg(committed_ptx())
        .output()
        .expect("ptxas should run");
    let _ = std::fs::remove_file(&cubin);
    let log = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ptxas failed:\n{log}");
    let entries = std::fs::read_to_string(committed_ptx()).unwrap().matches(".visible .entry").count();
    let compiled = log.matches("Compiling entry function").count();
    assert_eq!(compiled, entries, "every kernel should assemble:\n{log}");
    for line in log.lines().filter(|l| l.contains("spill")) {
        assert!(line.contains(" 0 bytes spill stores, 0 bytes spill loads"), "a kernel spills registers:\n{log}");
    }
    assert!(!log.contains("unresolved"), "{log}");
    eprintln!("{log}");
}
