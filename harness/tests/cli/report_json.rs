//! `report --format json`: what the page answers, as data, on real H200 runs: the same values
//! and the same sentences as the HTML page of the same files.

use crate::common::*;

fn findings(args: &[&str]) -> serde_json::Value {
    let out = pinscope()
        .arg("report")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON on standard output")
}

fn page(args: &[&str], dir: &std::path::Path) -> String {
    let html = dir.join("page.html");
    pinscope()
        .arg("report")
        .args(args)
        .arg("-o")
        .arg(&html)
        .assert()
        .code(0);
    std::fs::read_to_string(html).expect("page")
}

#[test]
fn json_findings_state_the_pages_answer_as_values() {
    let run = published_run("h200", "ollama-like");
    let run = run.to_str().expect("utf-8 path");
    let j = findings(&[run]);
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["near_fastest_share"], 0.95);
    let s = &j["runs"][0]["scenarios"][0];
    assert_eq!(j["runs"][0]["run"], "A");
    assert_eq!(s["scenario"], "ollama-like");
    let h2d = &s["host_to_gpu"];
    assert_eq!(h2d["fastest"]["case"], "pp-stream-20");
    assert_eq!(h2d["fastest"]["bw_median_gbs"], 55.438701);
    assert_eq!(h2d["least_memory"]["case"], "load-staged-33");
    assert_eq!(h2d["least_memory"]["pinned_bytes"], 48 << 20);
    let share = h2d["least_memory"]["share_of_fastest"]
        .as_f64()
        .expect("share");
    assert!((share - 54.046619 / 55.438701).abs() < 1e-9, "{share}");
    assert_eq!(h2d["pageable"]["case"], "load-pageable-20");
    // What the largest pinned case did to each observer: the finding compare states too.
    assert_eq!(s["memory"]["case_label"], "load-pinned-33");
    assert_eq!(s["memory"]["host_memory_alone"], "recorded");
    // Every sentence of the JSON is on the page, in the same words.
    let dir = tempfile::tempdir().expect("tempdir");
    let html = page(&[run], dir.path());
    let sentences = s["sentences"].as_array().expect("sentences");
    assert!(sentences.len() >= 4, "{sentences:?}");
    for said in sentences {
        let text = said["text"].as_str().expect("text");
        let escaped = pinscope::report::html::escape(text);
        assert!(html.contains(&*escaped), "not on the page: {text}");
    }
}

#[test]
fn json_findings_carry_the_latency_finding_and_a_label_per_run() {
    let latency = published_run("h200", "latency");
    let quick = published_run("h200", "quick");
    let j = findings(&[
        latency.to_str().expect("utf-8"),
        quick.to_str().expect("utf-8"),
    ]);
    let runs = j["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["run"], "A");
    assert_eq!(runs[1]["run"], "B");
    let lat = &runs[0]["scenarios"][0]["latency"];
    let copies = lat["copies"].as_array().expect("copies");
    assert_eq!(copies.len(), 2, "{lat}");
    // A latency run measures times, not bandwidths: no fastest way to name.
    assert!(runs[0]["scenarios"][0]["host_to_gpu"].is_null());
    assert!(!runs[1]["scenarios"][0]["host_to_gpu"].is_null());
}

#[test]
fn json_goes_to_standard_output_unless_a_file_is_given_and_never_over_an_input() {
    let run = published_run("h200", "quick");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("findings.json");
    pinscope()
        .arg("report")
        .arg(&run)
        .args(["--format", "json", "-q", "-o"])
        .arg(&out)
        .assert()
        .code(0)
        .stdout("");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    assert_eq!(written["schema_version"], 1);
    // The results file itself is an input: refused, and left as it was.
    let before = std::fs::read(&run).expect("read");
    pinscope()
        .arg("report")
        .arg(&run)
        .args(["--format", "json", "-o"])
        .arg(&run)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&run).expect("read"), before);
}
