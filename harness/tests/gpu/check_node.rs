//! `check --quick --json --prom` on a real GPU: a verdict the exit code agrees with, the GPU named
//! by its UUID in the JSON and in the Prometheus file, inside Slurm's 60 s health-check limit.

use crate::common::pinscope;
use std::time::Instant;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn check_quick_gives_the_node_verdict_inside_the_health_check_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prom = dir.path().join("pinscope.prom");
    let started = Instant::now();
    let out = pinscope()
        .args(["check", "--quick", "--json", "--prom"])
        .arg(&prom)
        .output()
        .expect("runs");
    let took = started.elapsed().as_secs_f64();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("only JSON");
    println!("check --quick took {took:.1} s: {}", v["reason"]);
    assert!(
        took < 60.0,
        "Slurm kills a health check after 60 s: {took:.1} s"
    );
    let expected = match v["severity"].as_str() {
        Some("pass" | "warn") => 0,
        Some("fail") => 1,
        other => panic!(
            "a GPU is here, so the check runs: {other:?} {}",
            v["reason"]
        ),
    };
    assert_eq!(out.status.code(), Some(expected));
    let uuid = v["gpus"][0]["uuid"].as_str().expect("the GPU's UUID");
    assert!(uuid.starts_with("GPU-"), "{uuid}");
    let text = std::fs::read_to_string(&prom).expect("the .prom file");
    assert!(text.contains(&format!("gpu=\"{uuid}\"")), "{text}");
    assert!(text.contains("pinscope_check_up{"), "{text}");
    assert!(text.contains("pinscope_check_pinned_h2d_gbs{"), "{text}");
}
