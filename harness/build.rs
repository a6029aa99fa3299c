//! Embeds the shipped scenarios: every `scenarios/*.toml` of this crate becomes an entry of
//! `$OUT_DIR/shipped_scenarios.rs` (file stem, text), read by `scenario::shipped`. A new file in
//! `harness/scenarios/` is shipped without a code change; cargo re-runs this script when the
//! folder changes. (A build script rather than a directory-embedding macro: cargo tracks a folder
//! named in `rerun-if-changed`, so an added file is never missed by an incremental build.)
//!
//! Also builds the CUPTI injection library of `pinscope observe` (`inject/lib.rs`, std only)
//! with the `rustc` and linker cargo uses for this target, and embeds it:
//! `$OUT_DIR/inject_library.rs` is `Some((bytes, FNV-1a hash))`, or `None` where the library is
//! not built (every target but 64-bit Linux, for now). So `cargo install` and the release archives carry it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    scenarios();
    inject_library();
}

/// The injection library for a Linux target, as an `Option<(&[u8], u64)>` expression.
fn inject_library() {
    println!("cargo::rerun-if-changed=inject");
    println!("cargo::rerun-if-changed=src/observe/wire/frame.rs");
    println!("cargo::rerun-if-changed=src/results/call_code.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let width = std::env::var("CARGO_CFG_TARGET_POINTER_WIDTH").unwrap_or_default();
    // 64-bit Linux: the library's hand-written libc types (`timespec`) are the 64-bit ones.
    let expr = if target_os == "linux" && width == "64" {
        let lib = out.join("libpinscope_inject.so");
        build_library(&lib);
        let bytes = std::fs::read(&lib).expect("the injection library just built is readable");
        let path = lib.to_str().expect("a UTF-8 OUT_DIR");
        format!("Some((include_bytes!({path:?}), {:#x}))", fnv1a(&bytes))
    } else {
        "None".to_string()
    };
    std::fs::write(out.join("inject_library.rs"), expr).expect("OUT_DIR is writable");
}

/// `rustc --crate-type cdylib inject/lib.rs` for cargo's target, with its linker if one is set.
fn build_library(dest: &Path) {
    let root = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let mut cmd = Command::new(rustc);
    cmd.args(["--crate-type", "cdylib", "--crate-name", "pinscope_inject"])
        .args([
            "--edition",
            "2024",
            "-O",
            "-C",
            "panic=abort",
            "-C",
            "strip=debuginfo",
        ])
        .args(["--target", &target, "--cap-lints", "warn", "-o"])
        .arg(dest)
        .arg(root.join("inject/lib.rs"));
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        let mut arg = std::ffi::OsString::from("linker=");
        arg.push(linker);
        cmd.arg("-C").arg(arg);
    }
    let status = cmd
        .status()
        .expect("the rustc that cargo names in RUSTC can be run");
    assert!(
        status.success(),
        "building the CUPTI injection library (harness/inject/lib.rs) failed: see rustc's errors above"
    );
}

/// 64-bit FNV-1a: names the library's cache file, so a changed library gets a new file.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every `scenarios/*.toml` as an entry of `shipped_scenarios.rs`.
fn scenarios() {
    let root = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let dir = root.join("scenarios");
    println!("cargo::rerun-if-changed=scenarios");
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("harness/scenarios is readable")
        .map(|e| e.expect("a readable entry in harness/scenarios").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let stem = p
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a UTF-8 scenario file name");
            (stem.to_string(), p.clone())
        })
        .collect();
    files.sort();
    let mut out = String::from("&[\n");
    for (name, path) in &files {
        let path = path.to_str().expect("a UTF-8 path to the scenario file");
        out.push_str(&format!("    ({name:?}, include_str!({path:?})),\n"));
    }
    out.push_str("]\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dest.join("shipped_scenarios.rs"), out).expect("OUT_DIR is writable");
}
