//! Embeds the shipped scenarios: every `scenarios/*.toml` of this crate becomes an entry of
//! `$OUT_DIR/shipped_scenarios.rs` (file stem, text), read by `scenario::shipped`. A new file in
//! `harness/scenarios/` is shipped without a code change; cargo re-runs this script when the
//! folder changes. (A build script rather than a directory-embedding macro: cargo tracks a folder
//! named in `rerun-if-changed`, so an added file is never missed by an incremental build.)
//!
//! Also builds the CUPTI injection library of `pinscope observe` (`inject/lib.rs`, std only)
//! with the `rustc` and linker cargo uses for this target, and embeds it:
//! `$OUT_DIR/inject_library.rs` is `Some((bytes, FNV-1a hash))`, or `None` where the library is
//! not built (targets other than 64-bit Linux and Windows). So `cargo install` and the release
//! archives carry it. For Windows it also builds the test stand-ins (`inject/standin/`) into
//! `$OUT_DIR/windows/`, where the Windows tests find them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    scenarios();
    inject_library();
}

/// The injection library for a 64-bit Linux or Windows target, as an `Option<(&[u8], u64)>`
/// expression.
fn inject_library() {
    println!("cargo::rerun-if-changed=inject");
    println!("cargo::rerun-if-changed=src/observe/wire/frame.rs");
    println!("cargo::rerun-if-changed=src/results/call_code.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let width = std::env::var("CARGO_CFG_TARGET_POINTER_WIDTH").unwrap_or_default();
    // 64-bit only: the library's hand-written system types (`timespec`) are the 64-bit ones.
    let lib = match (target_os.as_str(), width.as_str()) {
        ("linux", "64") => {
            let lib = out.join("libpinscope_inject.so");
            rustc_build(Crate::Library, &lib);
            Some(lib)
        }
        ("windows", "64") => windows_library(&out.join("windows")),
        _ => None,
    };
    let expr = match lib {
        Some(lib) => {
            let bytes = std::fs::read(&lib).expect("the injection library just built is readable");
            let path = lib.to_str().expect("a UTF-8 OUT_DIR");
            format!("Some((include_bytes!({path:?}), {:#x}))", fnv1a(&bytes))
        }
        None => "None".to_string(),
    };
    std::fs::write(out.join("inject_library.rs"), expr).expect("OUT_DIR is writable");
}

/// What is built from `inject/`: the library, and the test stand-ins of CUPTI and of a CUDA
/// program (`inject/standin/`).
#[derive(Clone, Copy)]
enum Crate {
    Library,
    StandinCupti,
    StandinProgram,
}

impl Crate {
    /// (crate type, crate name, source under `inject/`).
    fn parts(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Crate::Library => ("cdylib", "pinscope_inject", "lib.rs"),
            Crate::StandinCupti => ("cdylib", "cupti64_standin", "standin/cupti.rs"),
            Crate::StandinProgram => ("bin", "standin_program", "standin/program.rs"),
        }
    }
}

/// The DLL for a Windows target, with the stand-ins beside it in `dir` (the Windows tests run
/// under Wine, where no rustc can be started to build them): built with cargo's rustc when its
/// sysroot holds std for the target, else by cargo with `-Zbuild-std` (the cross-build of
/// `scripts/wincross-setup.sh`, for the GNU target). `None`, with a warning, where neither can.
fn windows_library(dir: &Path) -> Option<PathBuf> {
    std::fs::create_dir_all(dir).expect("OUT_DIR is writable");
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let files = [
        (Crate::Library, "pinscope_inject.dll"),
        (Crate::StandinCupti, "cupti64_standin.dll"),
        (Crate::StandinProgram, "standin-program.exe"),
    ];
    if sysroot_has_std(&target) {
        for (krate, file) in files {
            rustc_build(krate, &dir.join(file));
        }
    } else if std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu") {
        let built = cargo_build_std(dir, &target);
        for (_, file) in files {
            std::fs::copy(built.join(file), dir.join(file))
                .expect("cargo -Zbuild-std built the injection library and the stand-ins");
        }
    } else {
        println!(
            "cargo::warning=the CUPTI injection library is not built: this rustc has no std for {target}"
        );
        return None;
    }
    Some(dir.join(files[0].1))
}

/// Whether cargo's rustc has std for `target` in its sysroot.
fn sysroot_has_std(target: &str) -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
    else {
        return false;
    };
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libstd-") && name.ends_with(".rlib")
        })
    })
}

/// `rustc --crate-type <type> inject/<source>` for cargo's target, with its linker if one is set.
fn rustc_build(krate: Crate, dest: &Path) {
    let (kind, name, source) = krate.parts();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let mut cmd = Command::new(rustc);
    cmd.args(["--crate-type", kind, "--crate-name", name])
        .args(["--edition", "2024", "-O"])
        .args(["--target", &target, "--cap-lints", "warn", "-o"])
        .arg(dest)
        .arg(manifest_dir().join("inject").join(source));
    if let Crate::Library = krate {
        cmd.args(["-C", "panic=abort", "-C", "strip=debuginfo"]);
    }
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
        "building harness/inject/{source} failed: see rustc's errors above"
    );
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

/// Builds the three crates of `inject/` with `cargo build --release -Zbuild-std` in a workspace
/// of their own under `dir`; the folder the files are in.
fn cargo_build_std(dir: &Path, target: &str) -> PathBuf {
    let ws = dir.join("build");
    let inject = manifest_dir().join("inject");
    let mut members = Vec::new();
    for krate in [Crate::Library, Crate::StandinCupti, Crate::StandinProgram] {
        let (kind, name, source) = krate.parts();
        let src = inject.join(source);
        let src = src.to_str().expect("a UTF-8 source path");
        let target_table = match kind {
            "bin" => format!("[[bin]]\nname = \"standin-program\"\npath = {src:?}\n"),
            _ => format!("[lib]\npath = {src:?}\ncrate-type = [\"cdylib\"]\n"),
        };
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n{target_table}"
        );
        std::fs::create_dir_all(ws.join(name)).expect("OUT_DIR is writable");
        std::fs::write(ws.join(name).join("Cargo.toml"), manifest).expect("OUT_DIR is writable");
        members.push(format!("{name:?}"));
    }
    let root = format!(
        "[workspace]\nmembers = [{}]\nresolver = \"3\"\n\n[profile.release]\npanic = \"abort\"\nstrip = \"debuginfo\"\n",
        members.join(", ")
    );
    std::fs::write(ws.join("Cargo.toml"), root).expect("OUT_DIR is writable");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = dir.join("target");
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--release",
        // std's own dependencies are those this build of pinscope fetched for its std.
        "--offline",
        "-Zbuild-std=std,panic_abort",
        "--target",
        target,
    ])
    .arg("--manifest-path")
    .arg(ws.join("Cargo.toml"))
    .arg("--target-dir")
    .arg(&target_dir)
    // -Zbuild-std on a stable compiler, as the cross-build of this crate itself.
    .env("RUSTC_BOOTSTRAP", "1");
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        let key = format!(
            "CARGO_TARGET_{}_LINKER",
            target.to_uppercase().replace('-', "_")
        );
        cmd.env(key, linker);
    }
    let out = cmd
        .output()
        .expect("the cargo that runs this build script can be run");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        panic!("building harness/inject/ with cargo -Zbuild-std failed: see cargo's errors above");
    }
    target_dir.join(target).join("release")
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
