//! Severities, the node's severity, the entries `check --json` writes and the one-line reason.

use super::*;
use crate::health::{CheckResult, all_not_run, pin_budget};
use crate::units::GIB;

fn result(check: Check, verdict: Verdict, measured: Option<Amount>) -> CheckResult {
    CheckResult {
        check,
        verdict,
        measured,
        threshold: "≥ 37.8 GB/s".into(),
        advice: "do something\nabout it".into(),
    }
}

#[test]
fn severities_are_ordered_and_map_to_exit_codes() {
    use Severity::*;
    let ordered = [Skip, Pass, Warn, Fail, Error];
    assert!(ordered.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(ordered.map(Severity::exit_code), [0, 0, 0, 1, 3]);
    assert_eq!(ordered.map(Severity::gauge), [-1, 0, 1, 2, 3]);
    let names = ordered.map(|s| serde_json::to_value(s).expect("json"));
    assert_eq!(
        names.map(|v| v.as_str().map(str::to_string)),
        ordered.map(|s| Some(s.name().to_string()))
    );
}

#[test]
fn the_node_takes_the_worst_verdict_and_error_only_when_nothing_ran() {
    let pass = result(Check::PinnedH2d, Verdict::Pass, Some(Amount::GbPerS(55.0)));
    let warn = result(
        Check::PinnedNuma,
        Verdict::Warn,
        Some(Amount::Nodes(vec![1])),
    );
    let fail = result(Check::PinnedD2h, Verdict::Fail, Some(Amount::GbPerS(20.0)));
    let not_run = result(Check::LinkUnderLoad, Verdict::NotRun, None);
    let na = result(Check::Wsl2PinnedCeiling, Verdict::NotApplicable, None);
    let node = |c: &[&CheckResult], ran| {
        let c: Vec<CheckResult> = c.iter().map(|c| (*c).clone()).collect();
        node_severity(&c, ran)
    };
    assert_eq!(node(&[&pass, &na, &not_run], true), Severity::Pass);
    assert_eq!(node(&[&pass, &warn], true), Severity::Warn);
    assert_eq!(node(&[&warn, &fail, &pass], true), Severity::Fail);
    assert_eq!(node(&[&na, &not_run], true), Severity::Error);
    // Without a GPU the node is `error` even where the pin budget passed.
    let mut no_gpu = all_not_run("no GPU");
    no_gpu.push(pin_budget(Ok(8 * GIB)));
    assert_eq!(node_severity(&no_gpu, false), Severity::Error);
    assert_eq!(Severity::of(no_gpu[8].verdict), Severity::Pass);
}

/// Every key present, with its type: a number, an object or a list for `value`, text for the
/// rest; `null` value and unit where nothing was measured.
#[test]
fn entries_have_every_field_typed() {
    let cases = [
        (
            result(Check::PinnedH2d, Verdict::Pass, Some(Amount::GbPerS(55.5))),
            "gbs",
        ),
        (
            result(
                Check::LinkUnderLoad,
                Verdict::Fail,
                Some(Amount::Link {
                    generation: 5,
                    width: 8,
                }),
            ),
            "pcie_link",
        ),
        (
            result(Check::PinBudget, Verdict::Warn, Some(Amount::Bytes(GIB))),
            "bytes",
        ),
        (
            result(Check::CopyLatency, Verdict::Pass, Some(Amount::Micros(9.5))),
            "us",
        ),
        (
            result(
                Check::PinnedNuma,
                Verdict::Warn,
                Some(Amount::Nodes(vec![0, 1])),
            ),
            "numa_nodes",
        ),
    ];
    for (c, unit) in &cases {
        let v = serde_json::to_value(CheckEntry::of(c)).expect("json");
        let keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 6, "{v}");
        assert_eq!(v["name"], c.check.name());
        assert_eq!(v["unit"], *unit);
        assert!(v["severity"].is_string() && v["threshold"].is_string() && v["advice"].is_string());
        assert!(!v["value"].is_null() && !v["value"].is_string(), "{v}");
    }
    let link = serde_json::to_value(CheckEntry::of(&cases[1].0)).expect("json");
    assert_eq!(
        link["value"],
        serde_json::json!({"generation": 5, "width": 8})
    );
    let none = serde_json::to_value(CheckEntry::of(&result(
        Check::DataVerification,
        Verdict::NotRun,
        None,
    )))
    .expect("json");
    assert!(none["value"].is_null() && none["unit"].is_null());
    assert_eq!(none["severity"], "error");
}

#[test]
fn the_reason_is_one_short_printable_line() {
    let checks = vec![
        result(
            Check::PinnedNuma,
            Verdict::Warn,
            Some(Amount::Nodes(vec![1])),
        ),
        result(Check::PinnedH2d, Verdict::Fail, Some(Amount::GbPerS(20.04))),
        result(
            Check::CopyLatency,
            Verdict::Warn,
            Some(Amount::Micros(150.0)),
        ),
        result(Check::PinnedD2h, Verdict::Pass, Some(Amount::GbPerS(55.0))),
    ];
    let r = reason(Severity::Fail, &checks, None);
    assert_eq!(
        r,
        "fail: pinned_h2d 20.0 GB/s; pinned_numa node 1; copy_latency 150.0 us"
    );
    assert_eq!(reason(Severity::Pass, &checks, None), "pass");
    let why = format!("no GPU: {}\nsecond line \u{7} ≥ µ 日本", "x".repeat(300));
    let r = reason(Severity::Error, &[], Some(&why));
    assert!(r.len() <= REASON_MAX && r.ends_with("..."), "{r}");
    assert!(r.chars().all(|c| (' '..='~').contains(&c)), "{r}");
    let short = one_line("a\nb\t≥ 2 µs — 日", 80);
    assert_eq!(short, "a b >= 2 us - ?");
    // Nothing is cut inside a character: the output is ASCII before it is cut.
    assert_eq!(one_line(&"é".repeat(10), 5), "??...");
}
