//! The Prometheus file, read back by a parser of the text format (`prometheus-parse`): every
//! line is a HELP, TYPE or sample line, every family has both, every sample carries the host and
//! the GPU, units are in the names.

use super::*;
use crate::health::{Check, Verdict, all_not_run, pin_budget};
use crate::units::GIB;
use prometheus_parse::{LineInfo, Scrape, Value};

fn parsed(text: &str) -> Scrape {
    for line in text.lines() {
        assert!(
            !matches!(LineInfo::parse(line), LineInfo::Ignored | LineInfo::Empty),
            "not a line of the format: {line:?}"
        );
    }
    assert!(text.ends_with('\n'));
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("parses")
}

fn gauge(s: &Scrape, name: &str, label: Option<(&str, &str)>) -> Option<f64> {
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .find(|x| label.is_none_or(|(k, v)| x.labels.get(k) == Some(v)))
        .map(|x| match x.value {
            Value::Gauge(v) => v,
            ref other => panic!("{name} is not a gauge: {other:?}"),
        })
}

fn checks() -> Vec<CheckResult> {
    let mut c = vec![
        CheckResult {
            check: Check::PinnedH2d,
            verdict: Verdict::Pass,
            measured: Some(Amount::GbPerS(55.25)),
            threshold: String::new(),
            advice: String::new(),
        },
        CheckResult {
            check: Check::LinkUnderLoad,
            verdict: Verdict::Fail,
            measured: Some(Amount::Link {
                generation: 5,
                width: 8,
            }),
            threshold: String::new(),
            advice: String::new(),
        },
        CheckResult {
            check: Check::CopyLatency,
            verdict: Verdict::Pass,
            measured: Some(Amount::Micros(8.5)),
            threshold: String::new(),
            advice: String::new(),
        },
        CheckResult {
            check: Check::Wsl2PinnedCeiling,
            verdict: Verdict::NotApplicable,
            measured: None,
            threshold: String::new(),
            advice: String::new(),
        },
    ];
    c.push(pin_budget(Ok(19 * GIB)));
    c
}

/// Every sample has the host and GPU labels, a HELP and a gauge TYPE; one of each per family.
fn assert_labelled_and_documented(s: &Scrape, text: &str) {
    for sample in &s.samples {
        assert_eq!(sample.labels.get("host"), Some("gpu-node-1"), "{sample:?}");
        assert_eq!(
            sample.labels.get("gpu"),
            Some("GPU-8d2e2c0e-1111-2222-3333-444455556666")
        );
        assert!(
            s.docs.contains_key(&sample.metric),
            "{} has no HELP",
            sample.metric
        );
        assert!(
            text.contains(&format!("# TYPE {} gauge\n", sample.metric)),
            "{}",
            sample.metric
        );
    }
    // One HELP and one TYPE per family.
    let helps = text.lines().filter(|l| l.starts_with("# HELP ")).count();
    assert_eq!(
        helps,
        text.lines().filter(|l| l.starts_with("# TYPE ")).count()
    );
    assert_eq!(helps, s.docs.len());
}

/// SYNTHETIC values (a made-up node), written and read back.
#[test]
fn a_measured_node_reads_back() {
    let checks = checks();
    let text = prometheus_text(&NodeMetrics {
        host: "gpu-node-1",
        gpu_uuid: Some("GPU-8d2e2c0e-1111-2222-3333-444455556666"),
        severity: Severity::Fail,
        seconds: 4.5,
        checks: &checks,
        budget: BudgetNumbers {
            host_alloc_bytes: Some(19 * GIB),
            host_register_bytes: Some(19 * GIB),
            mappings: Some(58_000),
        },
    });
    let s = parsed(&text);
    assert_labelled_and_documented(&s, &text);
    assert_eq!(gauge(&s, "pinscope_check_up", None), Some(1.0));
    assert_eq!(gauge(&s, "pinscope_check_severity", None), Some(2.0));
    assert_eq!(
        gauge(&s, "pinscope_check_duration_seconds", None),
        Some(4.5)
    );
    assert_eq!(
        gauge(
            &s,
            "pinscope_check_result",
            Some(("check", "link_under_load"))
        ),
        Some(2.0)
    );
    assert_eq!(
        gauge(
            &s,
            "pinscope_check_result",
            Some(("check", "wsl2_pinned_ceiling"))
        ),
        Some(-1.0)
    );
    assert_eq!(
        gauge(&s, "pinscope_check_pinned_h2d_gbs", None),
        Some(55.25)
    );
    assert_eq!(
        gauge(&s, "pinscope_check_copy_latency_seconds", None),
        Some(8.5e-6)
    );
    assert_eq!(
        gauge(&s, "pinscope_check_link_under_load_pcie_width", None),
        Some(8.0)
    );
    assert_eq!(gauge(&s, "pinscope_check_pin_budget_bytes", None), None);
    assert_eq!(
        gauge(
            &s,
            "pinscope_pin_budget_bytes",
            Some(("kind", "host_register"))
        ),
        Some((19 * GIB) as f64)
    );
    assert_eq!(
        gauge(&s, "pinscope_pin_budget_mappings", None),
        Some(58_000.0)
    );
    // The predictor counts mappings, not registrations: the old gauge name is gone.
    assert_eq!(gauge(&s, "pinscope_pin_budget_registrations", None), None);
    assert!(
        s.docs
            .get("pinscope_pin_budget_mappings")
            .is_some_and(|h| h.contains("vm.max_map_count")),
        "{:?}",
        s.docs
    );
}

#[test]
fn a_node_without_a_gpu_says_it_could_not_run_and_escapes_its_labels() {
    let checks = all_not_run("no GPU");
    let text = prometheus_text(&NodeMetrics {
        host: "odd\"host\\name\nx",
        gpu_uuid: None,
        severity: Severity::Error,
        seconds: 0.03,
        checks: &checks,
        budget: BudgetNumbers::default(),
    });
    let s = parsed(&text);
    assert_eq!(gauge(&s, "pinscope_check_up", None), Some(0.0));
    assert_eq!(gauge(&s, "pinscope_check_severity", None), Some(3.0));
    assert!(
        s.samples
            .iter()
            .all(|x| x.labels.get("gpu") == Some("none"))
    );
    assert!(text.contains(r#"host="odd\"host\\name\nx""#), "{text}");
    assert_eq!(gauge(&s, "pinscope_pin_budget_bytes", None), None);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("pinscope_check_result{"))
            .count(),
        8
    );
}
