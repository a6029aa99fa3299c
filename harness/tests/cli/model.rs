//! `pinscope model FILE`: the tensor table of GGUF and safetensors files the tests write, the
//! malformed-model corpus in `tests/fixtures/models/malformed/`, and, where Python's `gguf` and
//! `safetensors` packages are installed, files written by them read back as their own readers
//! read them.

use crate::common::files::entry_names;
use crate::common::model_files::{gguf, llama_like, safetensors};
use crate::common::{Refused, Succeeds, fixture, pinscope};
use std::path::Path;

fn json_of(path: &Path) -> serde_json::Value {
    let out = pinscope().arg("model").arg(path).arg("--json").stdout_ok();
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn model_prints_format_size_layers_types_and_the_largest_tensors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tiny.gguf");
    std::fs::write(&path, gguf(3, None, &llama_like(2, true))).expect("write");
    let out = pinscope()
        .arg("model")
        .arg(&path)
        .args(["--top", "2"])
        .stdout_ok();
    for part in [
        "tiny.gguf: GGUF v3, llama,",
        "8 tensors",
        "2 layers",
        "bytes by layer",
        "bytes by type",
        "Q4_K",
        "largest tensors",
        "ffn_up.weight",
        "page cache: ",
    ] {
        assert!(out.contains(part), "no `{part}` in:\n{out}");
    }
    let largest = out
        .split("largest tensors\n")
        .nth(1)
        .expect("largest section");
    assert_eq!(largest.lines().count(), 2, "{out}");
}

#[test]
fn model_json_has_the_whole_table_and_sums_that_agree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tiny.safetensors");
    let tensors = llama_like(3, false);
    std::fs::write(&path, safetensors(&tensors)).expect("write");
    let j = json_of(&path);
    assert_eq!(j["table"]["format"], "safetensors");
    let table = j["table"]["tensors"].as_array().expect("tensors");
    assert_eq!(table.len(), tensors.len());
    let sum: u64 = table
        .iter()
        .map(|t| t["bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(j["summary"]["tensor_bytes"].as_u64(), Some(sum));
    assert_eq!(j["summary"]["layer_count"], 3);
    assert_eq!(table[1]["layer"], 0);
    assert_eq!(table[1]["dtype"], "F32");
}

#[cfg(target_os = "linux")]
#[test]
fn drop_cache_records_the_method_and_what_was_resident_before_and_after() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tiny.gguf");
    std::fs::write(&path, gguf(3, None, &llama_like(4, true))).expect("write");
    let out = pinscope()
        .arg("model")
        .arg(&path)
        .args(["--json", "--drop-cache"])
        .stdout_ok();
    let j: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let d = &j["drop_cache"];
    assert_eq!(
        d["method"],
        "posix_fadvise(POSIX_FADV_DONTNEED) after fdatasync"
    );
    assert_eq!(d["resident_after"], j["resident_bytes"]);
    let effect = d["effect"].as_str().expect("effect");
    match (d["resident_before"].as_u64(), d["resident_after"].as_u64()) {
        (Some(0), Some(_)) => assert_eq!(effect, "already_cold"),
        (Some(b), Some(a)) if a < b => assert_eq!(effect, "dropped"),
        (Some(_), Some(_)) => assert_eq!(effect, "kept"),
        _ => assert_eq!(effect, "unknown"),
    }
}

/// Every file of the corpus and the words its refusal must hold after the file name.
const CORPUS: &[(&str, &str)] = &[
    (
        "bad-magic.gguf",
        "at byte 0, the file does not start with the format's magic",
    ),
    (
        "version-1.gguf",
        "at byte 4, version 1 is not one pinscope reads",
    ),
    (
        "truncated-header.gguf",
        "at byte 32, the header needs 12 more bytes",
    ),
    (
        "tensor-count-huge.gguf",
        "at byte 8, 1099511627776 tensors cannot fit",
    ),
    (
        "kv-count-huge.gguf",
        "at byte 24, 18446744073709551615 key-value pairs cannot fit",
    ),
    (
        "key-length-huge.gguf",
        "at byte 32, a key of 18446744073709551615 bytes",
    ),
    (
        "n-dims-absurd.gguf",
        "at byte 84, tensor has 1000 dimensions",
    ),
    (
        "name-not-utf8.gguf",
        "at byte 69, a tensor name is not UTF-8",
    ),
    (
        "unknown-ggml-type.gguf",
        "at byte 96, ggml type 4 is unknown",
    ),
    (
        "offset-past-end.gguf",
        "at byte 108, tensor `blk.0.w` ends at byte 1048736, past the end of the file (160 bytes)",
    ),
    (
        "overlapping-tensors.gguf",
        "at byte 147, tensor `blk.0.a` overlaps tensor `blk.0.b`",
    ),
    (
        "header-length-huge.safetensors",
        "at byte 8, a header of 4611686018427387904 bytes",
    ),
    (
        "header-past-end.safetensors",
        "at byte 8, the header needs 4042 more bytes",
    ),
    (
        "bad-json.safetensors",
        "at byte 62, the JSON header is not a valid safetensors table",
    ),
    (
        "name-not-utf8.safetensors",
        "at byte 19, a header is not UTF-8",
    ),
    (
        "data-short.safetensors",
        "at byte 8, tensor `layers.0.w` ends at byte 88, past the end of the file (80 bytes)",
    ),
    (
        "size-mismatch.safetensors",
        "at byte 8, the JSON header is not a valid safetensors table (invalid shape",
    ),
];

#[test]
fn every_malformed_model_file_is_refused_in_one_sentence_with_its_offset_and_nothing_written() {
    let corpus = fixture("models/malformed");
    let names: Vec<String> = entry_names(&corpus)
        .into_iter()
        .filter(|n| n != "README.md")
        .collect();
    let listed: Vec<&str> = CORPUS.iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        {
            let mut l = listed.clone();
            l.sort();
            l
        },
        "corpus and test disagree"
    );
    let readme = std::fs::read_to_string(corpus.join("README.md")).expect("README");
    let cwd = tempfile::tempdir().expect("temp dir");
    for (name, words) in CORPUS {
        assert!(
            readme.contains(&format!("`{name}`")),
            "{name} is not in the README"
        );
        let path = corpus.join(name);
        let format = if name.ends_with(".gguf") {
            "GGUF"
        } else {
            "safetensors"
        };
        pinscope()
            .current_dir(cwd.path())
            .arg("model")
            .arg(&path)
            .refused(
                2,
                format!("{name} is not a readable {format} file: {words}"),
            );
        pinscope()
            .current_dir(cwd.path())
            .args(["model", "--json"])
            .arg(&path)
            .refused(2, *words);
    }
    assert!(entry_names(cwd.path()).is_empty(), "model wrote files");
}

#[test]
fn model_refuses_a_file_of_neither_format_and_a_missing_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("weights.bin");
    std::fs::write(&path, b"not a model").expect("write");
    pinscope()
        .arg("model")
        .arg(&path)
        .refused(2, "neither a GGUF file");
    pinscope()
        .args(["model", "no-such.gguf"])
        .refused(2, "no-such.gguf does not exist");
}

/// Runs `script` with Python when it can import `gguf`, `safetensors` and `numpy`; `None` (the
/// test says so on stderr) when it cannot.
fn python(script: &str) -> Option<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("ModuleNotFoundError") {
        eprintln!("Python's gguf, safetensors or numpy is not installed: cross-check not run");
        return None;
    }
    assert!(out.status.success(), "python failed: {err}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn files_written_by_python_read_back_as_pythons_own_readers_read_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let g = dir.path().join("py.gguf");
    let s = dir.path().join("py.safetensors");
    let script = format!(
        r#"
import json, numpy as np, gguf
from safetensors.numpy import save_file
from safetensors import safe_open
w = gguf.GGUFWriter({g:?}, "llama")
for l in range(3):
    w.add_tensor(f"blk.{{l}}.attn_q.weight", np.zeros((4, 256), dtype=np.float32))
    w.add_tensor(f"blk.{{l}}.ffn_up.weight", np.zeros((8, 64), dtype=np.float16))
w.add_tensor("token_embd.weight", np.ones((16, 32), dtype=np.float32))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
save_file({{"model.layers.1.mlp.up_proj.weight": np.zeros((4, 8), dtype=np.float32),
            "model.embed_tokens.weight": np.zeros((3, 5), dtype=np.float16)}}, {s:?})
r = gguf.GGUFReader({g:?})
out = {{"gguf": sorted([t.name, t.tensor_type.name, [int(d) for d in t.shape], int(t.n_bytes), int(t.data_offset)] for t in r.tensors)}}
with safe_open({s:?}, "np") as f:
    out["st"] = sorted([k, f.get_slice(k).get_dtype(), list(f.get_slice(k).get_shape())] for k in f.keys())
print(json.dumps(out))
"#,
        g = g.display().to_string(),
        s = s.display().to_string()
    );
    let Some(expected) = python(&script) else {
        return;
    };
    let expected: serde_json::Value = serde_json::from_str(&expected).expect("python's JSON");
    let mut ours: Vec<serde_json::Value> = json_of(&g)["table"]["tensors"]
        .as_array()
        .expect("tensors")
        .iter()
        .map(|t| serde_json::json!([t["name"], t["dtype"], t["shape"], t["bytes"], t["offset"]]))
        .collect();
    ours.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_string());
    assert_eq!(serde_json::Value::Array(ours), expected["gguf"]);
    let mut st: Vec<serde_json::Value> = json_of(&s)["table"]["tensors"]
        .as_array()
        .expect("tensors")
        .iter()
        .map(|t| serde_json::json!([t["name"], t["dtype"], t["shape"]]))
        .collect();
    st.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_string());
    assert_eq!(serde_json::Value::Array(st), expected["st"]);
}

#[test]
fn the_ggml_type_table_agrees_with_pythons_gguf_package() {
    let Some(out) = python(
        "import gguf, json; print(json.dumps({t.name: [t.value, b, s] for t, (b, s) in gguf.GGML_QUANT_SIZES.items()}))",
    ) else {
        return;
    };
    let python: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    for t in pinscope::modelfile::GGML_TYPES {
        // ggml's block_q8_1 is 36 bytes (two halves); Python's table says 40.
        if t.name == "Q8_1" {
            continue;
        }
        assert_eq!(
            python[t.name],
            serde_json::json!([t.code, t.block, t.block_bytes]),
            "{}",
            t.name
        );
    }
}

/// A 40-layer GGUF the tests write, in `dir`: each layer 2752 bytes (576 + 1152 + 1024).
fn forty_layers(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("tiny.gguf");
    std::fs::write(&path, gguf(3, None, &llama_like(40, true))).expect("write");
    path
}

#[test]
fn plan_ollama_like_with_a_model_moves_the_files_layers_and_without_one_its_own_sizes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = forty_layers(dir.path());
    let out = pinscope()
        .args(["plan", "ollama-like", "--model"])
        .arg(&model)
        .stdout_ok();
    for part in [
        "model: ",
        "GGUF v3, 122 tensors",
        "40 layers",
        "load-pinned-25: the last 25 of the file's 40 layers, 67.19 KiB (68800 bytes)",
        "pp-stream-25: the last 8 of the file's 40 layers, 21.50 KiB (22016 bytes)",
    ] {
        assert!(out.contains(part), "no `{part}` in:\n{out}");
    }
    let without = pinscope().args(["plan", "ollama-like"]).stdout_ok();
    assert!(!without.contains("model: "), "{without}");
    assert!(
        without.contains("4455 MiB") || without.contains("4.35 GiB"),
        "{without}"
    );
}

#[test]
fn a_scenario_names_its_model_relative_to_its_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    forty_layers(dir.path());
    let scenario = dir.path().join("mine.toml");
    std::fs::write(
        &scenario,
        "name = \"mine\"\ndescription = \"load two layers\"\nmodel = \"tiny.gguf\"\n\n[[case]]\nlabel = \"load-2\"\nhost = \"alloc\"\nlayers = 2\n",
    )
    .expect("write");
    let out = pinscope().arg("plan").arg(&scenario).stdout_ok();
    assert!(
        out.contains("load-2: the last 2 of the file's 40 layers, 5.38 KiB (5504 bytes)"),
        "{out}"
    );
    std::fs::write(
        &scenario,
        "name = \"mine\"\ndescription = \"d\"\nmodel = 5\nfile = \"\"\n\n[[case]]\nlabel = \"a\"\n",
    )
    .expect("write");
    pinscope()
        .arg("plan")
        .arg(&scenario)
        .fails(2, "3:9: `model` must be the path of a file as a string");
    let text =
        "name = \"mine\"\ndescription = \"d\"\nfile = \"weights.bin\"\n\n[[case]]\nlabel = \"a\"\n";
    std::fs::write(&scenario, text).expect("write");
    pinscope()
        .arg("plan")
        .arg(&scenario)
        .refused(2, "weights.bin does not exist");
    std::fs::write(dir.path().join("weights.bin"), vec![0u8; 4096]).expect("write");
    let out = pinscope().arg("plan").arg(&scenario).stdout_ok();
    assert!(
        out.contains("weights.bin — 4 KiB, in the page cache: "),
        "{out}"
    );
}

#[test]
fn run_refuses_a_bad_model_or_one_no_case_uses_before_touching_the_gpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = forty_layers(dir.path());
    let bad = fixture("models/malformed/bad-magic.gguf");
    pinscope()
        .current_dir(dir.path())
        .args(["run", "ollama-like", "--model"])
        .arg(&bad)
        .refused(2, "bad-magic.gguf is not a readable GGUF file: at byte 0");
    pinscope()
        .current_dir(dir.path())
        .args(["run", "quick", "--model"])
        .arg(&model)
        .refused(2, "has no case with `layers = N`");
    assert_eq!(entry_names(dir.path()), ["tiny.gguf"], "run wrote files");
}
