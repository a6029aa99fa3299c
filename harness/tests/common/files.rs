//! File helpers shared by the library's unit tests and the integration tests. The file uses only
//! std and tempfile, so both compile this one file: the integration tests as `common::files`, the
//! library (under `cfg(test)`) as `test_files`.

use std::path::{Path, PathBuf};

/// A fresh temporary folder and the path of `name` inside it; nothing is created at that path.
/// The folder and what is in it are removed when the returned `TempDir` drops.
pub fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join(name);
    (d, p)
}

/// The names of the entries of `dir`, sorted; empty when the folder cannot be read.
pub fn entry_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
