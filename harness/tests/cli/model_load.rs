//! The file-load modes without a GPU: what `plan` shows of the file each `load-*` case loads,
//! and the refusals, each one sentence with exit 2 — no file named, a directory, a malformed
//! model file, a load in the wrong direction.

use crate::common::model_files::{gguf, llama_like, safetensors};
use crate::common::{Refused, Succeeds, fixture, pinscope};

#[test]
fn plan_model_load_with_a_model_loads_the_whole_file_cold_and_warm() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tiny.gguf");
    std::fs::write(&path, gguf(3, None, &llama_like(2, true))).expect("write");
    let len = std::fs::metadata(&path).expect("stat").len();
    let out = pinscope()
        .args(["plan", "model-load", "--model"])
        .arg(&path)
        .stdout_ok();
    for part in [
        "load-mmap",
        "load-read",
        "load-pread",
        "load-direct",
        "load-register",
        "load-pinned",
        "load-cufile",
        "cache",
        "cold",
        "warm",
        "20 cases",
        "8 tensors",
    ] {
        assert!(out.contains(part), "no `{part}` in:\n{out}");
    }
    let sizes = out
        .lines()
        .filter(|l| l.contains("load-"))
        .filter(|l| !l.contains(&format!("{len} B")) && !l.contains("KiB"))
        .count();
    assert_eq!(sizes, 0, "every case loads the file's {len} bytes:\n{out}");
}

#[test]
fn a_scenario_file_key_names_a_data_file_to_load() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("data.bin"), vec![3u8; 1 << 20]).expect("write");
    let scenario = dir.path().join("load.toml");
    std::fs::write(
        &scenario,
        "name = \"load\"\ndescription = \"d\"\nfile = \"data.bin\"\n[[case]]\nlabel = \"m\"\nmode = \"load-mmap\"\ncache = \"cold\"\n",
    )
    .expect("write");
    let out = pinscope().arg("plan").arg(&scenario).stdout_ok();
    assert!(out.contains("1 MiB"), "{out}");
    assert!(out.contains("file: "), "{out}");
}

#[test]
fn plan_without_a_file_says_the_loads_need_one() {
    let out = pinscope().args(["plan", "model-load"]).stdout_ok();
    assert!(
        out.contains("file: none — the load-* cases load a file"),
        "{out}"
    );
}

#[test]
fn a_load_without_a_file_is_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    pinscope()
        .args(["run", "model-load", "--out-dir"])
        .arg(dir.path())
        .refused(2, "give --model FILE");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
}

#[test]
fn a_directory_or_a_malformed_model_is_refused_in_one_sentence() {
    let dir = tempfile::tempdir().expect("temp dir");
    pinscope()
        .args(["plan", "model-load", "--model"])
        .arg(dir.path())
        .refused(2, "");
    pinscope()
        .args(["plan", "model-load", "--model"])
        .arg(fixture("models/malformed/tensor-count-huge.gguf"))
        .refused(2, "tensor-count-huge.gguf");
    let scenario = dir.path().join("load.toml");
    std::fs::write(
        dir.path().join("bad.safetensors"),
        &safetensors(&llama_like(1, false))[..20],
    )
    .expect("write");
    std::fs::write(
        &scenario,
        "name = \"load\"\ndescription = \"d\"\nfile = \"bad.safetensors\"\n[[case]]\nlabel = \"m\"\nmode = \"load-read\"\n",
    )
    .expect("write");
    pinscope()
        .arg("plan")
        .arg(&scenario)
        .refused(2, "bad.safetensors");
}

#[test]
fn a_load_must_go_host_to_device_and_a_ring_needs_its_chunk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("load.toml");
    std::fs::write(
        &scenario,
        "name = \"load\"\ndescription = \"d\"\n[[case]]\nlabel = \"m\"\nmode = \"load-pread\"\ndirection = \"d2h\"\n",
    )
    .expect("write");
    let out = pinscope().arg("plan").arg(&scenario).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("loads a file into device memory: it needs direction = \"h2d\""),
        "{err}"
    );
    assert!(err.contains("needs `chunk`"), "{err}");
}

/// `scripts/make-model-files.py` (small, `--scale`) writes files pinscope's own readers take: the
/// 291 tensors of a 7B Q4_K_M table in both formats, the same bytes in tensors.
#[test]
fn the_model_file_script_writes_files_pinscope_reads_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = crate::common::repo().join("scripts/make-model-files.py");
    let ran = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir.path())
        .args(["--scale", "0.002"])
        .output();
    let Ok(ran) = ran else {
        eprintln!("python3 is not installed: the script's files are not checked here");
        return;
    };
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let mut bytes = Vec::new();
    for (name, format) in [
        ("llama-7b-q4_k_m.gguf", "gguf"),
        ("llama-7b.safetensors", "safetensors"),
    ] {
        let out = pinscope()
            .arg("model")
            .arg(dir.path().join(name))
            .arg("--json")
            .stdout_ok();
        let j: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(j["table"]["format"], format);
        assert_eq!(j["summary"]["tensor_count"], 291, "{name}");
        assert_eq!(j["summary"]["layer_count"], 32, "{name}");
        bytes.push(j["summary"]["tensor_bytes"].as_u64().expect("bytes"));
    }
    assert_eq!(bytes[0], bytes[1], "the same tensors in both files");
    // The GGUF's types are a Q4_K_M's: Q4_K, Q6_K and F32.
    let out = pinscope()
        .arg("model")
        .arg(dir.path().join("llama-7b-q4_k_m.gguf"))
        .stdout_ok();
    for t in ["Q4_K", "Q6_K", "F32"] {
        assert!(out.contains(t), "no {t} in:\n{out}");
    }
    // An existing file is refused without --force.
    let again = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir.path())
        .args(["--scale", "0.002"])
        .output()
        .expect("python3 runs");
    assert_eq!(again.status.code(), Some(1));
}

/// `--repeat N` loads every way N times: the plan's estimate grows with it, and no count below 1
/// is taken.
#[test]
fn repeat_loads_each_way_several_times_and_refuses_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 1 GiB, sparse: the plan reads only its size.
    let data = std::fs::File::create(dir.path().join("data.bin")).expect("create");
    data.set_len(1 << 30).expect("set_len");
    let scenario = dir.path().join("load.toml");
    std::fs::write(
        &scenario,
        "name = \"load\"\ndescription = \"d\"\nfile = \"data.bin\"\n[[case]]\nlabel = \"r\"\nmode = \"load-read\"\ncache = \"warm\"\nmeasure = { min_samples = 1, max_samples = 1 }\n",
    )
    .expect("write");
    let estimate = |extra: &[&str]| -> f64 {
        let out = pinscope()
            .arg("plan")
            .arg(&scenario)
            .args(extra)
            .stdout_ok();
        let line = out
            .lines()
            .find(|l| l.starts_with("1 case, estimated "))
            .unwrap_or_else(|| panic!("no estimate in:\n{out}"));
        line.trim_start_matches("1 case, estimated ")
            .trim_end_matches(" s in total")
            .parse()
            .expect("seconds")
    };
    let (once, thrice) = (estimate(&[]), estimate(&["--repeat", "3"]));
    assert!(thrice > once, "--repeat 3: {thrice} s, once: {once} s");
    pinscope()
        .args(["plan", "--repeat", "0"])
        .arg(&scenario)
        .fails(2, "0 is not in 1..=1000");
}
