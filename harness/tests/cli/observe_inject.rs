//! `observe` with its CUPTI injection library, on a machine without CUDA: a stand-in CUPTI and a
//! stand-in program (`harness/inject/standin/`) play the calls the CUDA driver would report, so
//! the library's loading, callbacks, attribution, per-process streams and the events CSV and
//! page are checked end to end. On Linux the stand-ins are built here with rustc, over a Unix
//! socket; on Windows (run under Wine) pinscope's build script built them beside the DLL, and
//! the events come through a named pipe.
#![cfg(any(target_os = "linux", windows))]

use crate::common::*;
use std::path::{Path, PathBuf};

/// Builds the stand-ins into `dir`: (CUPTI, program).
#[cfg(target_os = "linux")]
fn standins(dir: &Path) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("inject/standin");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let cupti = dir.join("libcupti.so.standin");
    let program = dir.join("standin-program");
    for (kind, out, file) in [
        ("cdylib", &cupti, "cupti.rs"),
        ("bin", &program, "program.rs"),
    ] {
        let ok = std::process::Command::new(&rustc)
            .args(["--edition", "2024", "--crate-type", kind, "-o"])
            .arg(out)
            .arg(src.join(file))
            .status()
            .expect("rustc runs");
        assert!(ok.success(), "building the stand-in {file}");
    }
    (cupti, program)
}

/// Copies the stand-ins the build script built into `dir`: (CUPTI, program).
#[cfg(windows)]
fn standins(dir: &Path) -> (PathBuf, PathBuf) {
    let built = Path::new(env!("OUT_DIR")).join("windows");
    let cupti = dir.join("cupti64_standin.dll");
    let program = dir.join("standin-program.exe");
    for (out, file) in [
        (&cupti, "cupti64_standin.dll"),
        (&program, "standin-program.exe"),
    ] {
        std::fs::copy(built.join(file), out).expect("the build script built the stand-ins");
    }
    (cupti, program)
}

/// The variable naming the folder the library's cache file goes in.
const CACHE_ENV: &str = if cfg!(windows) {
    "LOCALAPPDATA"
} else {
    "XDG_CACHE_HOME"
};

fn file_ending(dir: &Path, suffix: &str) -> PathBuf {
    let names = files::entry_names(dir);
    let name = names
        .iter()
        .find(|n| n.ends_with(suffix))
        .unwrap_or_else(|| panic!("no *{suffix} in {names:?}"));
    dir.join(name)
}

#[test]
fn the_library_reports_each_call_with_its_caller_and_process() {
    let d = tempfile::tempdir().expect("dir");
    let (cupti, program) = standins(d.path());
    let out = d.path().join("obs");
    let cache = d.path().join("cache");
    pinscope()
        .env(CACHE_ENV, &cache)
        .env_remove("CUDA_INJECTION64_PATH")
        .args(["observe", "-q", "--interval", "20ms", "--cupti"])
        .arg(&cupti)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&program)
        .assert()
        .success()
        .stdout(predicates::str::contains("a child pinned 2 MiB"));
    let csv = std::fs::read_to_string(file_ending(&out, ".events.csv")).expect("events");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let calls: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[4], r[5], r[8])).collect();
    assert_eq!(
        calls,
        [
            ("host_alloc", "1073741824", "0x7f0000000000"),
            ("free_host", "0", "0x7f0000000000"),
            ("device_alloc", "8388608", "0x7e0000000000"),
            ("host_alloc", "2097152", "0x7f1000000000"),
        ],
        "{csv}"
    );
    let program_path = program.to_str().expect("UTF-8");
    assert!(
        rows.iter().all(|r| r[9] == program_path),
        "the caller: {csv}"
    );
    assert_ne!(
        rows[0][2], rows[3][2],
        "the forked child is its own process"
    );
    let sidecar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(file_ending(&out, ".observed.json")).expect("sidecar"),
    )
    .expect("JSON");
    let events = &sidecar["events"];
    assert_eq!(
        (events["processes"].as_u64(), events["events"].as_u64()),
        (Some(2), Some(4))
    );
    let library = events["library"].as_str().expect("library named");
    assert!(
        library.starts_with(cache.to_str().expect("UTF-8")),
        "{library}"
    );
}

#[test]
fn a_cuda_injection_path_of_another_tool_is_left_alone_and_said() {
    let d = tempfile::tempdir().expect("dir");
    let (cupti, program) = standins(d.path());
    let out = d.path().join("obs");
    pinscope()
        .env("CUDA_INJECTION64_PATH", "/nonexistent/other-tool.so")
        .args(["observe", "--cupti"])
        .arg(&cupti)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&program)
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "CUDA_INJECTION64_PATH is already set (to /nonexistent/other-tool.so)",
        ));
}
