//! The file-load modes on a real GPU: a small GGUF and a small safetensors file (patterned
//! bytes, so nothing passes by what the device held before) loaded by every `load-*` mode, cold
//! and warm, through the binary (`load-register` starts pinscope again as its child). Every row
//! must be verified, except a `load-register` row that says it did not return in time, or a
//! `load-direct` row whose file system refused `O_DIRECT`, or a `load-cufile` row where
//! `libcufile` does not load or cuFile refuses the file (it needs the disk's udev properties,
//! which VMs often lack): those are results, and say so.

use crate::common::binary;
use crate::common::model_files::{gguf, llama_like, safetensors};
use pinscope::results::{Row, Status, Verification, read_rows};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `bytes` with every byte after the header replaced by a pattern.
fn patterned(mut bytes: Vec<u8>, from: usize) -> Vec<u8> {
    for (i, b) in bytes.iter_mut().enumerate().skip(from) {
        *b = (i.wrapping_mul(131) ^ (i >> 9)) as u8;
    }
    bytes
}

/// Writes the model file `name` with `layers` llama-like layers, its data patterned.
fn model_file(dir: &Path, name: &str, layers: u32) -> PathBuf {
    let path = dir.join(name);
    let raw = if name.ends_with(".gguf") {
        gguf(3, None, &llama_like(layers, true))
    } else {
        safetensors(&llama_like(layers, false))
    };
    std::fs::write(&path, &raw).expect("write");
    let table = pinscope::modelfile::read(&path).expect("a model file");
    let data = usize::try_from(table.data_offset).expect("offset");
    std::fs::write(&path, patterned(raw, data)).expect("write");
    path
}

fn run(dir: &Path, model: &Path) -> Vec<Row> {
    let out_dir = dir.join("out");
    let out = Command::new(binary())
        .args(["run", "-q", "model-load", "--model"])
        .arg(model)
        .arg("--out-dir")
        .arg(&out_dir)
        .output()
        .expect("pinscope runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_dir(&out_dir)
        .expect("the results folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.extension().is_some_and(|e| e == "csv")
                && !p.to_string_lossy().ends_with(".samples.csv")
        })
        .expect("a results CSV");
    let rows = read_rows(&csv).expect("rows");
    std::fs::remove_dir_all(&out_dir).expect("clean");
    rows
}

/// Why a row that is not verified is still a result: the deadline of `load-register`, or a file
/// system that refuses `O_DIRECT`.
fn accepted_failure(r: &Row) -> bool {
    let text = r.status.to_field();
    (r.case_label == "register" && text.contains("did not return in"))
        || (r.case_label.starts_with("direct") && text.contains("O_DIRECT"))
        || (r.case_label == "cufile"
            && (text.contains("libcufile") || text.contains("cuFile refused the file")))
}

fn check(rows: &[Row], format: &str) {
    assert_eq!(rows.len(), 20, "every path, cold and warm");
    for r in rows {
        println!(
            "{format} {:<11} {:<5} {:>8.2} ms  resident {:?}  read {:?} fault {:?} pin {:?} dma {:?}  {}",
            r.case_label,
            r.cache.map(|c| c.to_string()).unwrap_or_default(),
            r.wall_median_ms.unwrap_or(f64::NAN),
            r.resident_before_bytes,
            r.read_ms,
            r.fault_ms,
            r.pin_ms,
            r.dma_ms,
            r.status.to_field()
        );
        assert_eq!(
            r.file_format.map(|f| f.to_string()).as_deref(),
            Some(format)
        );
        assert!(r.file_tensors > 0, "{}", r.case_key);
        if accepted_failure(r) {
            continue;
        }
        assert_eq!(r.status, Status::Ok, "{}", r.case_key);
        assert_eq!(r.verified, Verification::Yes, "{}", r.case_key);
        assert!(r.wall_median_ms.is_some_and(|t| t > 0.0), "{}", r.case_key);
        // Counted with mincore on every Linux machine, fincore or not; warm is the whole file.
        let file = r.size_bytes as f64;
        assert!(
            r.resident_before_bytes.is_some_and(|b| b <= file),
            "{}: {:?}",
            r.case_key,
            r.resident_before_bytes
        );
        if r.cache == Some(pinscope::scenario::Cache::Warm) {
            assert_eq!(r.resident_before_bytes, Some(file), "{}", r.case_key);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_load_path_moves_a_gguf_file_cold_and_warm_and_the_device_holds_its_bytes() {
    // On /tmp (usually a disk, not tmpfs) so that O_DIRECT and the cold cache mean something.
    let dir = tempfile::tempdir_in(std::env::temp_dir()).expect("tempdir");
    let model = model_file(dir.path(), "tiny.gguf", 24);
    check(&run(dir.path(), &model), "gguf");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_load_path_moves_a_safetensors_file_cold_and_warm_and_the_device_holds_its_bytes() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).expect("tempdir");
    let model = model_file(dir.path(), "tiny.safetensors", 24);
    check(&run(dir.path(), &model), "safetensors");
}
