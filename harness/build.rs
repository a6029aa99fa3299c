//! Embeds the shipped scenarios: every `scenarios/*.toml` of this crate becomes an entry of
//! `$OUT_DIR/shipped_scenarios.rs` (file stem, text), read by `scenario::shipped`. A new file in
//! `harness/scenarios/` is shipped without a code change; cargo re-runs this script when the
//! folder changes. (A build script rather than a directory-embedding macro: cargo tracks a folder
//! named in `rerun-if-changed`, so an added file is never missed by an incremental build.)

use std::path::PathBuf;

fn main() {
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
