//! Claims and derived values on recorded data: real runs of an NVIDIA H200 (Linux, PCIe Gen5 x16)
//! under tests/fixtures/runs, checked against claims parsed from small inline scenarios, so the
//! whole path (TOML → `scenario::parse` → `claims::evaluate` / `claims::derive`) is exercised.
//!
//! The fixture sidecars say `platform = "other"` (they predate platform detection), so the
//! `Machine` a claim is judged on is built here: Linux with the recorded GPU.

use pinscope::claims;
use pinscope::platform::{DriverModel, GpuDriverModel, GpuInfo, Machine, Platform, Recorded};
use pinscope::results::{self, ClaimStatus, ClaimVerdict, Failure, ResultSet, Row, Status};
use pinscope::scenario::{self, PlatformTag, Scenario};
use std::path::{Path, PathBuf};

fn run(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name)
}

fn headline() -> ResultSet {
    ResultSet::load(&run("h200-headline.csv")).expect("h200-headline fixture loads")
}

fn staging_tune() -> Vec<Row> {
    results::read_rows(&run("h200-staging-tune.csv")).expect("h200-staging-tune fixture loads")
}

fn parse(text: &str) -> Scenario {
    match scenario::parse("inline.toml", text) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The recorded machine, as the platform detection of today would describe it.
fn machine(set: &ResultSet, platform: Platform, driver_model: GpuDriverModel) -> Machine {
    let recorded = set.sidecar.as_ref().map(|s| s.machine.clone());
    let gpu = recorded.and_then(|m| m.gpu).unwrap_or_default();
    assert_eq!(gpu.name, "NVIDIA H200");
    Machine {
        platform: platform.into(),
        gpu: Some(GpuInfo {
            driver_model: driver_model.into(),
            ..gpu
        }),
        ..Default::default()
    }
}

fn verdicts(v: &[ClaimVerdict]) -> Vec<(&str, &str, &str)> {
    v.iter()
        .map(|c| (c.text.as_str(), c.verdict.name(), c.detail.as_str()))
        .collect()
}

/// Cases named like the recorded ones; the claims are the point.
const HEADLINE_CASES: &str = r#"
name = "h200-headline"
description = "claims on the recorded headline run"

[[case]]
label = "pinned copy-engine"
host = "alloc"

[[case]]
label = "pageable copy-engine"
host = "pageable"

[[case]]
label = "pinned 4GiB"
host = "alloc"
size = "4GiB"
"#;

const HEADLINE_CLAIMS: &str = r#"
[[claim]]
text = "pinned copy-engine bandwidth is at least 50 GB/s on a Gen5 link"
case = "pinned copy-engine"
metric = "bw_median_gbs"
op = ">="
value = 50
platforms = ["linux"]

[[claim]]
text = "pageable memory copies at 90% of pinned"
case = "pageable copy-engine"
metric = "bw_median_gbs"
op = ">="
value = 0.9
of = "pinned copy-engine.bw_median_gbs"

[[claim]]
text = "article 000: WDDM books pinned memory as shared GPU memory"
case = "pinned 4GiB"
metric = "d_alloc_shared_mib"
op = ">="
value = 0.9
of = "pinned_bytes"
platforms = ["windows-wddm"]

[[claim]]
text = "shared GPU memory does not grow (no DXGI observer on Linux)"
case = "pinned 4GiB"
metric = "d_alloc_shared_mib"
op = "<"
value = 64

[[claim]]
text = "the ledger counts every pinned byte"
case = "pinned 4GiB"
metric = "d_alloc_ledger_pinned_mib"
op = ">="
value = 1.0
of = "pinned_bytes"
"#;

#[test]
fn claims_on_the_recorded_headline_run_give_all_three_verdicts() {
    let set = headline();
    assert_eq!(set.rows.len(), 19);
    let s = parse(&format!("{HEADLINE_CASES}{HEADLINE_CLAIMS}"));
    let got = claims::evaluate(
        &s,
        &set.rows,
        &machine(&set, Platform::Linux, GpuDriverModel::Linux),
    );
    assert_eq!(
        verdicts(&got),
        vec![
            (
                "pinned copy-engine bandwidth is at least 50 GB/s on a Gen5 link",
                "held",
                // Every case of the label is checked (h2d, d2h, bidirectional's h2d lane); the
                // last one is shown.
                "bw_median_gbs = 50.092 >= 50.000"
            ),
            (
                "pageable memory copies at 90% of pinned",
                "not held",
                "bw_median_gbs = 7.102, needs >= 49.791"
            ),
            (
                "article 000: WDDM books pinned memory as shared GPU memory",
                "not applicable here",
                "applies to windows-wddm; this machine is linux"
            ),
            (
                "shared GPU memory does not grow (no DXGI observer on Linux)",
                "not applicable here",
                "d_alloc_shared_mib was not observable here for `pinned 4GiB`"
            ),
            (
                "the ledger counts every pinned byte",
                "held",
                // d2h is the second case of the label: 4096 MiB pinned, 4096 MiB in the ledger.
                "d_alloc_ledger_pinned_mib = 4096.000 >= 4096.000"
            ),
        ]
    );
    assert!(got.iter().all(|v| v.scenario == "h200-headline"));
}

#[test]
fn platform_tags_decide_applicability() {
    let set = headline();
    let s = parse(&format!("{HEADLINE_CASES}{HEADLINE_CLAIMS}"));
    // The same rows judged as if from a WDDM machine: the WDDM claim applies, but the observer it
    // needs is missing from the rows, so it is still not applicable, for that reason; the
    // Linux-only claim is now the one that does not apply.
    let wddm = machine(
        &set,
        Platform::Windows,
        GpuDriverModel::Windows(DriverModel::Wddm),
    );
    assert_eq!(
        claims::platform_tags(&wddm),
        vec![PlatformTag::Windows, PlatformTag::WindowsWddm]
    );
    let tcc = GpuDriverModel::Windows(DriverModel::Tcc);
    assert_eq!(
        claims::platform_tags(&machine(&set, Platform::Windows, tcc)),
        vec![PlatformTag::Windows, PlatformTag::WindowsTcc]
    );
    // WSL2 sees the Windows driver model, but is not native Windows.
    let wsl2 = machine(
        &set,
        Platform::Wsl2,
        GpuDriverModel::Windows(DriverModel::Wddm),
    );
    assert_eq!(claims::platform_tags(&wsl2), vec![PlatformTag::Wsl2]);
    let got = claims::evaluate(&s, &set.rows, &wddm);
    let got = verdicts(&got);
    assert_eq!(
        got[0],
        (
            "pinned copy-engine bandwidth is at least 50 GB/s on a Gen5 link",
            "not applicable here",
            "applies to linux; this machine is windows/windows-wddm"
        )
    );
    assert_eq!(
        got[2],
        (
            "article 000: WDDM books pinned memory as shared GPU memory",
            "not applicable here",
            "d_alloc_shared_mib was not observable here for `pinned 4GiB`"
        )
    );
    // The recorded sidecar itself says "other": a platform-limited claim never applies to it.
    let recorded = set.sidecar.as_ref().map(|s| s.machine.clone());
    let recorded = recorded.unwrap_or_default();
    assert_eq!(recorded.platform, Recorded::Known(Platform::Other));
    assert!(claims::platform_tags(&recorded).is_empty());
    let got = claims::evaluate(&s, &set.rows, &recorded);
    assert_eq!(got[0].verdict, ClaimStatus::NotApplicable);
    assert_eq!(got[1].verdict, ClaimStatus::NotHeld);
}

#[test]
fn failed_and_missing_cases_make_claims_not_applicable() {
    let set = headline();
    let s = parse(&format!(
        "{HEADLINE_CASES}[[case]]\nlabel = \"never ran\"\n[[claim]]\ntext = \"a\"\ncase = \"never ran\"\nmetric = \"bw_median_gbs\"\nop = \">\"\nvalue = 1\n[[claim]]\ntext = \"b\"\ncase = \"pinned 4GiB\"\nmetric = \"bw_median_gbs\"\nop = \">\"\nvalue = 1\n[[claim]]\ntext = \"c\"\ncase = \"pinned 4GiB\"\nmetric = \"bw_median_gbs\"\nop = \">\"\nvalue = 0.5\nof = \"never ran.bw_median_gbs\"\n"
    ));
    // The recorded run, with the 4 GiB case turned into the failure a smaller machine would see.
    let mut rows = set.rows.clone();
    for r in rows.iter_mut().filter(|r| r.case_label == "pinned 4GiB") {
        r.status = Status::Failed(Failure::parse("CUDA_ERROR_OUT_OF_MEMORY (allocation)"));
    }
    let got = claims::evaluate(
        &s,
        &rows,
        &machine(&set, Platform::Linux, GpuDriverModel::Linux),
    );
    assert_eq!(
        verdicts(&got),
        vec![
            ("a", "not applicable here", "case `never ran` did not run"),
            (
                "b",
                "not applicable here",
                "case `pinned 4GiB` failed: CUDA_ERROR_OUT_OF_MEMORY (allocation)"
            ),
            (
                "c",
                "not applicable here",
                "case `pinned 4GiB` failed: CUDA_ERROR_OUT_OF_MEMORY (allocation)"
            ),
        ]
    );
    let got = claims::evaluate(
        &s,
        &set.rows,
        &machine(&set, Platform::Linux, GpuDriverModel::Linux),
    );
    assert_eq!(
        got[2].detail,
        "reference `never ran.bw_median_gbs` was not measured"
    );
}

/// chunked-vs-monolithic's claims on the recorded staging-tune and headline runs: the 16 MiB × 3
/// ring at 12 threads against the fully pinned 4 GiB source. The ring rows are picked out of the
/// tuning sweep and given the labels chunked-vs-monolithic uses.
#[test]
fn a_small_ring_comes_within_five_percent_of_fully_pinned_h2d() {
    let set = headline();
    let mut rows: Vec<Row> = staging_tune()
        .into_iter()
        .filter(|r| r.chunk_bytes == 16 << 20 && r.ring == 3)
        .filter(|r| match r.direction {
            pinscope::scenario::Direction::H2d => r.threads == 12,
            _ => r.threads == 12 || r.threads == 16,
        })
        .map(|mut r| {
            r.case_label = format!("ring 16MiB×3 {} t{}", r.direction, r.threads);
            r
        })
        .collect();
    rows.extend(
        set.rows
            .iter()
            .filter(|r| r.case_label == "pinned 4GiB")
            .map(|r| Row {
                case_label: format!("pinned 4GiB {}", r.direction),
                ..r.clone()
            }),
    );
    let claim = |label: &str, reference: &str| {
        format!(
            "[[claim]]\ntext = \"{label}\"\ncase = \"{label}\"\nmetric = \"bw_median_gbs\"\nop = \">=\"\nvalue = 0.95\nof = \"{reference}.bw_median_gbs\"\n"
        )
    };
    let case = |label: &str| format!("[[case]]\nlabel = \"{label}\"\n");
    let mut text = "name = \"chunked-vs-monolithic\"\ndescription = \"q\"\n".to_string();
    for l in [
        "ring 16MiB×3 h2d t12",
        "ring 16MiB×3 d2h t12",
        "ring 16MiB×3 d2h t16",
        "pinned 4GiB h2d",
        "pinned 4GiB d2h",
    ] {
        text.push_str(&case(l));
    }
    text.push_str(&claim("ring 16MiB×3 h2d t12", "pinned 4GiB h2d"));
    text.push_str(&claim("ring 16MiB×3 d2h t12", "pinned 4GiB d2h"));
    text.push_str(&claim("ring 16MiB×3 d2h t16", "pinned 4GiB d2h"));
    let got = claims::evaluate(
        &parse(&text),
        &rows,
        &machine(&set, Platform::Linux, GpuDriverModel::Linux),
    );
    assert_eq!(
        verdicts(&got),
        vec![
            (
                "ring 16MiB×3 h2d t12",
                "held",
                "bw_median_gbs = 53.680 >= 52.108"
            ),
            // 12 copy threads are not enough for D2H on this machine; 16 are.
            (
                "ring 16MiB×3 d2h t12",
                "not held",
                "bw_median_gbs = 52.066, needs >= 52.516"
            ),
            (
                "ring 16MiB×3 d2h t16",
                "held",
                "bw_median_gbs = 54.066 >= 52.516"
            ),
        ]
    );
}

#[test]
fn derived_values_on_the_recorded_run() {
    let set = headline();
    let s = parse(&format!(
        "{HEADLINE_CASES}[[case]]\nlabel = \"never ran\"\n{}",
        r#"
[[derived]]
text = "load time of 4 GiB from pinned memory"
cases = ["pinned 4GiB"]
metric = "time_median_ms"
scale = 1e-3
unit = "s"

[[derived]]
text = "512 MiB pinned then 512 MiB pageable"
cases = ["pinned copy-engine", "pageable copy-engine"]
metric = "time_median_ms"
unit = "ms"

[[derived]]
text = "512 MiB transfers per second, pinned"
cases = ["pinned copy-engine"]
metric = "time_median_ms"
scale = 1000
invert = true
unit = "/s"

[[derived]]
text = "no unit"
cases = ["pageable copy-engine"]
metric = "bw_median_gbs"

[[derived]]
text = "shared memory booked"
cases = ["pinned 4GiB"]
metric = "d_alloc_shared_mib"
unit = "MiB"

[[derived]]
text = "with a case that never ran"
cases = ["pinned 4GiB", "never ran"]
metric = "time_median_ms"
"#
    ));
    let got = claims::derive(&s, &set.rows);
    let want: Vec<(String, String)> = [
        // First lane of the first case of each label: h2d.
        ("load time of 4 GiB from pinned memory", "0.0783 s"),
        ("512 MiB pinned then 512 MiB pageable", "85.3 ms"),
        ("512 MiB transfers per second, pinned", "103 /s"),
        ("no unit", "7.10"),
        (
            "shared memory booked",
            "not available: d_alloc_shared_mib of case `pinned 4GiB` was not measured",
        ),
        (
            "with a case that never ran",
            "not available: case `never ran` was not measured",
        ),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);

    let mut rows = set.rows.clone();
    for r in rows.iter_mut().filter(|r| r.case_label == "pinned 4GiB") {
        r.status = Status::Failed(Failure::parse("CUDA_ERROR_OUT_OF_MEMORY (allocation)"));
    }
    for r in rows
        .iter_mut()
        .filter(|r| r.case_label == "pageable copy-engine")
    {
        r.status = Status::Skipped("interrupted".into());
    }
    let got = claims::derive(&s, &rows);
    assert_eq!(
        got[0].1,
        "not available: case `pinned 4GiB` failed: CUDA_ERROR_OUT_OF_MEMORY (allocation)"
    );
    assert_eq!(
        got[1].1,
        "not available: case `pageable copy-engine` was skipped: interrupted"
    );
}

/// Claims over the latency metrics on the latency run recorded on the H200
/// (tests/fixtures/runs/h200-latency.csv, 2026-12-02): lower is better, so a claim reads `op = "<="`.
#[test]
fn claims_over_latency_metrics_read_lower_as_better() {
    let set = ResultSet::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/h200-latency.csv"),
    )
    .expect("the recorded latency run loads");
    let s = parse(
        r#"
name = "latency"
description = "claims on the recorded latency run"

[[case]]
label = "pinned"
mode = "latency"
host = "alloc"

[[case]]
label = "pageable"
mode = "latency"
host = "pageable"

[[case]]
label = "launch-call"
engine = "empty"
mode = "enqueue"

[[claim]]
text = "every pinned copy of 4 B and 64 KiB takes at most 12 µs (p50)"
case = "pinned"
metric = "lat_p50_us"
op = "<="
value = 12

[[claim]]
text = "pageable copies keep their p99 under 20 µs"
case = "pageable"
metric = "lat_p99_us"
op = "<="
value = 20

[[claim]]
text = "a launch call costs under 5 µs"
case = "launch-call"
metric = "lat_p50_us"
op = "<"
value = 5
"#,
    );
    let got = claims::evaluate(
        &s,
        &set.rows,
        &machine(&set, Platform::Linux, GpuDriverModel::Linux),
    );
    let v = verdicts(&got);
    for (text, verdict, detail) in &v {
        println!("{text}: {verdict} — {detail}");
    }
    assert_eq!(v[0].1, "held", "{v:?}");
    assert!(
        v[0].2.starts_with("lat_p50_us = ") && v[0].2.ends_with("<= 12.000"),
        "{v:?}"
    );
    // 64 KiB pageable H2D: p99 35.05 µs.
    assert_eq!(v[1].1, "not held", "{v:?}");
    assert!(v[1].2.contains("needs <= 20.000"), "{v:?}");
    assert_eq!(
        v[2],
        (
            "a launch call costs under 5 µs",
            "held",
            "lat_p50_us = 3.751 < 5.000"
        )
    );
}
