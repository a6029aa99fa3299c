//! `pinscope budget` without a GPU: exit 3 and one sentence, the JSON record's schema, usage
//! refusals, the probe child's protocol through the real binary, and `check --budget FILE`.

use crate::common::{Refused, no_panic, pinscope, without_driver};
use pinscope::run::pinnable::{self, ChildEnd, Plan, ProbeKind};
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;

#[test]
fn budget_without_a_gpu_says_so_in_one_sentence_and_exits_3() {
    without_driver(
        "budget_without_a_gpu_says_so_in_one_sentence_and_exits_3",
        || {
            pinscope()
                .args(["budget", "--quick"])
                .refused(3, "no NVIDIA driver found");
        },
    );
}

#[test]
fn budget_json_without_a_gpu_is_the_record_with_the_predictor() {
    without_driver(
        "budget_json_without_a_gpu_is_the_record_with_the_predictor",
        || {
            let dir = tempfile::tempdir().expect("tempdir");
            let file = dir.path().join("budget.json");
            let out = pinscope()
                .args(["budget", "--json", "--cap", "2GiB", "-o"])
                .arg(&file)
                .output()
                .expect("runs");
            assert_eq!(out.status.code(), Some(3));
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&file).expect("written")).expect("JSON");
            assert_eq!(v["schema_version"], pinnable::SCHEMA_VERSION);
            assert_eq!(v["exit_code"], 3);
            assert!(v["gpu_unavailable"].is_string());
            assert!(v["child"].is_null() && v["probes"].as_array().is_some_and(Vec::is_empty));
            assert!(
                v["bounds"]["limit_bytes"]
                    .as_u64()
                    .is_some_and(|b| b <= 2 * GIB)
            );
            assert_eq!(v["plan"]["hold_percents"], serde_json::json!([0, 50, 90]));
            assert!(v["safe"]["rule"].is_string() && v["safe"]["total_bytes"].is_null());
            assert!(v["predictor"]["rule"].is_string());
        },
    );
}

#[test]
fn budget_refuses_options_it_cannot_honour() {
    for (args, words) in [
        (&["budget", "--hold", "99"][..], "--hold 99"),
        (&["budget", "--deadline", "0s"], "--deadline 0s"),
        (&["budget", "--deadline", "2h"], "--deadline 2h"),
        (&["budget", "--cap", "0"], "--cap 0"),
        (&["budget", "--cap", "lots"], "--cap"),
        (&["budget", "--device", "0,1"], "one GPU at a time"),
        (&["budget-child", "--plan", "{}"], "not a probe plan"),
    ] {
        pinscope().args(args).refused(2, words);
    }
    pinscope()
        .args(["budget", "--quick", "--hold", "0,50"])
        .fails(2, "cannot be used with");
}

#[test]
fn budget_child_is_hidden_from_the_help() {
    let out = pinscope().arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("budget") && !help.contains("budget-child"),
        "{help}"
    );
}

/// The parent runs the real binary as its probe child and reads its lines; without a driver the
/// child says why in its `failed` line and exits 1.
#[test]
fn the_probe_child_reports_why_it_could_not_open_the_gpu() {
    without_driver(
        "the_probe_child_reports_why_it_could_not_open_the_gpu",
        || {
            let plan = Plan {
                device: 0,
                hold_percents: vec![0],
                kinds: ProbeKind::ALL.to_vec(),
                limit_bytes: GIB,
                resolution_bytes: 256 << 20,
                chunk_bytes: GIB,
                range_bytes: 64 << 10,
                max_registrations: 100,
                child_deadline_ms: 5_000,
            };
            let exe = std::path::Path::new(env!("CARGO_BIN_EXE_pinscope"));
            let started = Instant::now();
            let (gathered, end) =
                pinnable::measure(exe, &plan, Duration::from_secs(30)).expect("the child starts");
            assert!(started.elapsed() < Duration::from_secs(30));
            assert_eq!(end, ChildEnd::Exited { code: Some(1) });
            assert!(gathered.gpu.is_none() && gathered.probes.is_empty());
            let why = gathered.failed.expect("the child says why");
            assert!(why.contains("no NVIDIA driver found"), "{why}");
            assert_eq!(gathered.stray_lines, 0);
        },
    );
}

/// A record from `budget --json` with a measured total, as `check --budget` reads it.
fn measured_record(dir: &std::path::Path, total: u64) -> std::path::PathBuf {
    let file = dir.join("budget.json");
    pinscope()
        .args(["budget", "--json", "--quick", "-o"])
        .arg(&file)
        .assert()
        .stderr(no_panic());
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("written")).expect("JSON");
    v["safe"]["total_bytes"] =
        serde_json::json!({"value": total, "at_least": true, "hold_percent": 0});
    std::fs::write(&file, serde_json::to_vec(&v).expect("JSON")).expect("writes");
    file
}

#[test]
fn check_judges_the_measured_total_of_a_budget_record() {
    without_driver("check_judges_the_measured_total_of_a_budget_record", || {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = measured_record(dir.path(), 8 * GIB);
        let out = pinscope()
            .args(["check", "--json", "--quick", "--budget"])
            .arg(&file)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(3), "no GPU here");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("only JSON");
        let check = v["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "pin_budget"))
            .expect("the pin_budget check");
        assert_eq!(check["value"].as_f64(), Some((8 * GIB) as f64), "{check}");
        assert_eq!(check["severity"], "pass");
        assert!(
            check["threshold"]
                .as_str()
                .is_some_and(|t| t.contains("pinscope budget"))
        );
        assert_eq!(
            v["measured_pin_budget"]["safe"]["total_bytes"]["value"],
            8 * GIB
        );
    });
}

#[test]
fn check_refuses_a_budget_file_that_is_not_a_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 1}").expect("writes");
    pinscope()
        .args(["check", "--budget"])
        .arg(&bad)
        .refused(2, "is not a budget record");
    pinscope()
        .args(["check", "--budget", "/no/such/budget.json"])
        .refused(2, "could not be read");
}

/// A real record (`pinscope budget --cap 16GiB --deadline 110s --json` on an NVIDIA H100 80GB
/// HBM3, 2026-12-05): `info --budget` shows its safe amounts beside the live predictor.
#[test]
fn info_shows_a_measured_budget_beside_the_predictor() {
    let record = crate::common::fixture("budget/h100-budget.json");
    let out = pinscope()
        .args(["info", "--json", "--budget"])
        .arg(&record)
        .output()
        .expect("runs");
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let m = &v["measured_pin_budget"];
    assert_eq!(m["safe"]["total_bytes"]["value"], 15_461_882_265u64);
    assert_eq!(m["safe"]["registrations"]["at_least"], true);
    assert!(
        v["pin_budget"]["rule"].is_string(),
        "the predictor stays: {v}"
    );
    let text = pinscope()
        .args(["info", "--budget"])
        .arg(&record)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("measured pin budget (") && text.contains("total ≥ 14.40 GiB"),
        "{text}"
    );
    pinscope()
        .args(["info", "--budget", "Cargo.toml"])
        .refused(2, "is not a budget record");
}

/// `compare` on two budget records: each kind's safe amount and every probe, side by side.
#[test]
fn compare_puts_budget_records_side_by_side() {
    let record = crate::common::fixture("budget/h100-budget.json");
    let out = pinscope()
        .args(["compare", "--format", "json"])
        .args([&record, &record])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["records"].as_array().map(Vec::len), Some(2));
    let lines = v["lines"].as_array().expect("lines");
    assert_eq!(lines[2]["what"], "safe: total pinned");
    assert_eq!(lines[2]["cells"][1], "≥ 14.40 GiB (at 0% held)");
    assert!(
        lines
            .iter()
            .any(|l| l["cells"][0] == "34050 ranges (deadline)"),
        "the 90% registrations probe ended by its deadline: {v}"
    );
    pinscope()
        .args(["compare", "--fail-on", "slower"])
        .args([&record, &record])
        .refused(2, "pin-budget records have no verdicts");
}

/// `report` on a budget record: a page that answers what is safe to pin and that no refusal was
/// met (the H100 record reached its cap everywhere), the table, the record; a JSON file that is
/// no budget record is refused in one sentence.
#[test]
fn report_turns_a_budget_record_into_a_page_that_answers_first() {
    let record = crate::common::fixture("budget/h100-budget.json");
    let dir = tempfile::tempdir().expect("a temp dir");
    let page = dir.path().join("budget.html");
    let out = pinscope()
        .arg("report")
        .arg(&record)
        .arg("-o")
        .arg(&page)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(
        html.contains("safe to pin ≥ 14.40 GiB in total"),
        "the answer comes first: {html}"
    );
    assert!(html.contains("No pin was refused within the cap of 16 GiB"));
    assert!(html.contains("34050 ranges (deadline)"), "the table");
    assert!(html.contains("hold 90%"), "the record whole");
    let not_a_record = dir.path().join("other.json");
    std::fs::write(&not_a_record, "{\"a\": 1}").expect("written");
    pinscope()
        .arg("report")
        .arg(&not_a_record)
        .arg("-o")
        .arg(dir.path().join("x.html"))
        .refused(2, "is not a pin-budget record");
    assert!(!dir.path().join("x.html").exists(), "nothing written");
}
