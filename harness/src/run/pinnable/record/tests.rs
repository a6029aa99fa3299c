use super::*;
use crate::units::{GIB, MIB};

fn probe(kind: ProbeKind, hold_percent: u8, found: Found, ended: Ended) -> ProbeResult {
    ProbeResult {
        kind,
        hold_percent,
        found,
        ended,
        tries: 3,
        seconds: 1.0,
        after_refusal: None,
    }
}

fn oom() -> Refusal {
    Refusal {
        call: "cuMemHostAlloc".into(),
        code: ErrorCode::parse("CUDA_ERROR_OUT_OF_MEMORY"),
    }
}

#[test]
fn the_safe_amount_is_the_smallest_over_holds_less_10_percent() {
    let probes = [
        probe(ProbeKind::Total, 0, Found::Bytes(10 * GIB), Ended::Cap),
        probe(
            ProbeKind::Total,
            90,
            Found::Bytes(5 * GIB),
            Ended::Refused {
                at: 6 * GIB,
                error: oom(),
            },
        ),
        probe(ProbeKind::HostAlloc, 0, Found::Bytes(10 * GIB), Ended::Cap),
        probe(
            ProbeKind::Registrations,
            0,
            Found::Ranges(65_000),
            Ended::Cap,
        ),
        // Cut off before it tried anything: no measurement.
        probe(ProbeKind::HostAlloc, 50, Found::Bytes(0), Ended::Deadline).with_tries(0),
    ];
    let s = Safe::of(&probes);
    assert_eq!(s.rule, SAFE_RULE);
    let total = s.total_bytes.expect("total");
    assert_eq!(total.value, 5 * GIB * 9 / 10);
    assert!(!total.at_least, "a refusal ended it");
    assert_eq!(total.hold_percent, 90);
    let alloc = s.host_alloc_bytes.expect("alloc");
    assert!(alloc.at_least && alloc.hold_percent == 0);
    assert_eq!(alloc.value, 9 * GIB);
    assert_eq!(s.registrations.map(|r| r.value), Some(58_500));
    assert_eq!(s.host_register_bytes, None, "not measured");
}

impl ProbeResult {
    fn with_tries(mut self, tries: u64) -> ProbeResult {
        self.tries = tries;
        self
    }
}

/// The JSON an application reads: the field names and their shapes are the schema
/// (docs/budget.md); a record reads back as it was written.
/// A record with one refused probe and its recovery, as a killed child leaves it.
fn sample_record() -> BudgetRecord {
    let mut refused = probe(
        ProbeKind::HostRegister,
        50,
        Found::Bytes(3 * GIB + 256 * MIB),
        Ended::Refused {
            at: 3 * GIB + 512 * MIB,
            error: oom(),
        },
    );
    refused.after_refusal = Some(Recovery {
        recoverable: Recoverable::AfterReadingTheError,
        at_once: AfterCheck {
            pin_1mib_error: Some(oom()),
            kernel_error: None,
        },
        read: Some(Some(oom())),
        after_read: Some(AfterCheck {
            pin_1mib_error: None,
            kernel_error: None,
        }),
    });
    let probes = vec![refused];
    BudgetRecord {
        pinscope_version: "0.1.0".into(),
        schema_version: SCHEMA_VERSION,
        exit_code: 0,
        gpu_unavailable: None,
        host: "node1".into(),
        time: "2026-12-05T12:00:00Z".into(),
        gpu: Some(GpuName {
            index: 0,
            name: "NVIDIA H200".into(),
            uuid: "GPU-1".into(),
        }),
        deadline_s: 240.0,
        bounds: super::super::bounds(32 * GIB, Some(120 * GIB), None),
        plan: Plan {
            device: 0,
            hold_percents: vec![0, 50, 90],
            kinds: ProbeKind::ALL.to_vec(),
            limit_bytes: 32 * GIB,
            resolution_bytes: 256 * MIB,
            chunk_bytes: GIB,
            range_bytes: 64 << 10,
            max_registrations: 70_000,
            child_deadline_ms: 210_000,
        },
        safe: Safe::of(&probes),
        holds: vec![Hold {
            percent: 50,
            device_free_bytes: 140 * GIB,
            device_total_bytes: 141 * GIB,
            held_bytes: 70 * GIB,
            error: None,
        }],
        probes,
        child: Some(ChildEnd::Killed {
            deadline_s: 240.0,
            gone_after_s: 240.5,
        }),
        child_failed: None,
        mem_available_after_bytes: Some(120 * GIB),
        seconds: 241.0,
        predictor: crate::probe::pin_limits::budget(
            crate::platform::Platform::Linux,
            crate::probe::pin_limits::tree_limits(std::path::Path::new("/no/such/root")),
        ),
    }
}

#[test]
fn the_record_json_has_the_schema_and_reads_back() {
    let record = sample_record();
    let text = serde_json::to_string_pretty(&record).expect("serializes");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = vec![
        "pinscope_version",
        "schema_version",
        "exit_code",
        "gpu_unavailable",
        "host",
        "time",
        "gpu",
        "deadline_s",
        "bounds",
        "plan",
        "safe",
        "holds",
        "probes",
        "child",
        "child_failed",
        "mem_available_after_bytes",
        "seconds",
        "predictor",
    ];
    want.sort_unstable();
    assert_eq!(keys, want);
    let p = &v["probes"][0];
    assert_eq!(p["kind"], "host_register");
    assert_eq!(p["found"]["bytes"], 3 * GIB + 256 * MIB);
    assert_eq!(p["ended"]["by"], "refused");
    assert_eq!(p["ended"]["error"]["code"], "CUDA_ERROR_OUT_OF_MEMORY");
    assert_eq!(p["after_refusal"]["recoverable"], "after_reading_the_error");
    assert_eq!(v["safe"]["host_register_bytes"]["at_least"], false);
    assert_eq!(v["child"]["ended"], "killed");
    assert_eq!(v["predictor"]["predictor"], "none");
    let back: BudgetRecord = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, record);
}
