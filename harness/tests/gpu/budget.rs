//! `pinscope budget` on a real GPU: a quick budget with a small cap gives a sane record and
//! leaves nothing pinned; a short deadline holds.

use crate::common::pinscope;
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;

/// Runs `budget --json` with `args`, returns the record, the exit status and the seconds taken.
fn budget(args: &[&str]) -> (serde_json::Value, Option<i32>, f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("budget.json");
    let started = Instant::now();
    let out = pinscope()
        .args(["budget", "--json", "-o"])
        .arg(&file)
        .args(args)
        .output()
        .expect("runs");
    let took = started.elapsed().as_secs_f64();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the record")).expect("JSON");
    (v, out.status.code(), took)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_quick_budget_with_a_small_cap_is_sane_and_leaves_nothing_pinned() {
    let (v, code, took) = budget(&["--cap", "2GiB", "--hold", "0", "--deadline", "60s"]);
    println!("budget took {took:.1} s: {}", v["safe"]);
    assert_eq!(code, Some(0), "{v}");
    assert!(took < 60.0 + 12.0, "{took:.1} s");
    assert!(
        v["gpu"]["uuid"]
            .as_str()
            .is_some_and(|u| u.starts_with("GPU-"))
    );
    assert_eq!(v["child"]["ended"], "exited", "{}", v["child"]);
    assert_eq!(v["child"]["code"], 0);
    let limit = v["bounds"]["limit_bytes"].as_u64().expect("limit");
    assert!(limit <= 2 * GIB && limit > 0);
    let probes = v["probes"].as_array().expect("probes");
    assert_eq!(probes.len(), 4, "{probes:?}");
    for p in probes {
        assert_eq!(p["hold_percent"], 0);
        let by = p["ended"]["by"].as_str().expect("ended");
        assert!(["cap", "refused"].contains(&by), "{p}");
        let amount = p["found"]["bytes"]
            .as_u64()
            .or(p["found"]["ranges"].as_u64());
        assert!(amount.is_some_and(|a| a > 0), "{p}");
        if let Some(b) = p["found"]["bytes"].as_u64() {
            assert!(b <= limit, "{p}");
        }
        if by == "refused" {
            assert!(p["after_refusal"]["recoverable"].is_string(), "{p}");
        }
    }
    for kind in [
        "host_alloc_bytes",
        "host_register_bytes",
        "total_bytes",
        "registrations",
    ] {
        assert!(
            v["safe"][kind]["value"].as_u64().is_some_and(|n| n > 0),
            "{kind}: {}",
            v["safe"]
        );
    }
    // The child is gone and held nothing: MemAvailable is back (other programs move it a little).
    let before = v["bounds"]["mem_available_bytes"].as_u64().expect("before");
    let after = v["mem_available_after_bytes"].as_u64().expect("after");
    assert!(
        after + GIB >= before,
        "MemAvailable {before} before, {after} after"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_short_deadline_holds_and_marks_what_it_cut_off() {
    let deadline = 4.0;
    let (v, code, took) = budget(&["--cap", "2GiB", "--deadline", "4s"]);
    println!(
        "budget with a 4 s deadline took {took:.1} s: {}",
        v["child"]
    );
    assert_eq!(code, Some(0), "{v}");
    let grace = pinscope::run::pinnable::deadline::KILL_GRACE;
    assert!(
        Duration::from_secs_f64(took)
            < Duration::from_secs_f64(deadline) + grace + Duration::from_secs(3),
        "{took:.1} s"
    );
    assert!(
        ["exited", "killed"].contains(&v["child"]["ended"].as_str().unwrap_or("")),
        "{}",
        v["child"]
    );
    let probes = v["probes"].as_array().expect("probes");
    assert_eq!(
        probes.len(),
        12,
        "every probe of the 3 levels, run or cut off"
    );
}
