//! On the latency run recorded on the H200 (scenarios/latency.toml, 300 samples per case,
//! 2026-12-02, tests/fixtures/runs/h200-latency.csv): what the tables, the sentences, the plots
//! and the platform table say.

use super::*;
use crate::results::{ResultSet, read_rows};
use std::path::PathBuf;

fn h200_csv() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/h200-latency.csv")
}

fn h200_rows() -> Vec<Row> {
    read_rows(&h200_csv()).expect("the recorded H200 latency run reads")
}

/// Asserts `text` holds every one of `parts`, showing the text when one is missing.
fn says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no `{part}` in:\n{text}");
    }
}

fn find<'r>(rows: &'r [Row], label: &str, lane: Lane, size: u64) -> &'r Row {
    rows.iter()
        .find(|r| r.case_label == label && r.lane == lane && r.size_bytes == size)
        .unwrap_or_else(|| panic!("{label} {lane:?} {size}"))
}

#[test]
fn a_latency_row_shows_its_p50_and_p99_not_a_bandwidth() {
    let rows = h200_rows();
    let pinned = find(&rows, "pinned", Lane::H2d, 4);
    assert_eq!(
        time_cells(pinned),
        Some(("8.60 µs".to_string(), "p99 10.10 µs".to_string()))
    );
    let chase = find(&rows, "chase", Lane::H2d, 2 << 20);
    assert_eq!(
        time_cells(chase),
        Some(("1225 ns".to_string(), "p99 1226 ns".to_string()))
    );
    let rate = rows
        .iter()
        .find(|r| r.case_label == "launch-rate")
        .expect("launch-rate");
    assert_eq!(
        time_cells(rate),
        Some(("3.69 µs".to_string(), "per launch".to_string()))
    );
    let mut bulk = pinned.clone();
    bulk.mode = Mode::Direct;
    assert_eq!(time_cells(&bulk), None, "a bandwidth row keeps its GB/s");
}

#[test]
fn the_console_summary_prints_times_for_latency_rows() {
    let rows = h200_rows();
    let scenario = crate::scenario::parse(
        "latency.toml",
        "name = \"latency\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\n",
    )
    .expect("valid scenario");
    let text = super::super::summary_text(
        &scenario,
        &rows,
        &Samples::default(),
        &crate::results::Sidecar::empty_for_tests(),
    );
    let line = text
        .lines()
        .find(|l| l.contains("pinned direction=h2d size=4 "))
        .expect("the 4-byte pinned row");
    says(line, &["8.60 µs", "p99 10.10 µs"]);
    assert!(
        !text.contains("0.00 GB/s") && !text.contains(" 0.00 "),
        "{text}"
    );
    assert!(
        !text.contains("at 0 GB/s"),
        "no bandwidth sentence for the empty kernel: {text}"
    );
    says(&text, &["Latency: H2D: a 4-byte pinned copy takes 8.60 µs"]);
}

#[test]
fn sentences_say_only_what_was_measured() {
    let set = ResultSet::load(&h200_csv()).expect("loads with its samples");
    let refs: Vec<&Row> = set.rows.iter().collect();
    let s = sentences(&refs, &set.samples);
    let want = [
        "H2D: a 4-byte pinned copy takes 8.60 µs (p50; p99 10.10 µs) here, from the call until the host sees it done; pageable memory (8.03 µs): no difference within noise (difference -0.56 µs, 95% interval [-0.62, -0.54] µs, below the 1.00 µs noise floor).",
        "H2D: the fixed cost of a pinned copy is at most 8.60 µs (the p50 of its smallest size, 4 B); bandwidth not determined here: 2 sizes, none past n½ = 207 KiB (b is stated from 3 sizes or more, some past n½ = a·b, the size at which half the time is fixed cost).",
        "D2H: a 4-byte pinned copy takes 8.58 µs (p50; p99 9.52 µs) here, from the call until the host sees it done; pageable memory adds 4.71 µs (13.29 µs; 95% interval [+4.57, +4.93] µs).",
        "the copy call alone (pinned, 4 B, H2D, nothing waiting on it) costs the CPU 1.53 µs (p50).",
        "an empty kernel launch + cuStreamSynchronize takes 11.29 µs (p50; p99 21.26 µs); the launch call alone 3.75 µs.",
        "blocking sync (a CU_CTX_SCHED_BLOCKING_SYNC context) adds 14.80 µs over spin (25.78 against 10.98 µs, p50; no interval: no per-sample times were read for these rows).",
        "empty kernels launched back to back: 3.69 µs each, 271223 launches per second.",
        "one GPU read of mapped host memory takes 1225 ns (in order over 2 MiB, p50 of the per-load time); the slowest, at random over 256 MiB, 1270 ns.",
    ];
    for w in want {
        assert!(s.iter().any(|l| l == w), "missing {w}\nin {s:#?}");
    }
    // Without its samples a run states the same medians; a difference at least the noise floor
    // says it has no interval.
    let bare = sentences(&refs, &Samples::default());
    assert!(
        bare.contains(&"D2H: a 4-byte pinned copy takes 8.58 µs (p50; p99 9.52 µs) here, from the call until the host sees it done; pageable memory adds 4.71 µs (13.29 µs; no interval: no per-sample times were read for these rows).".to_string()),
        "{bare:#?}"
    );
    let rows = set.rows.clone();

    // Without the pageable, spin and enqueue rows, nothing is said about them.
    let fewer: Vec<&Row> = refs
        .iter()
        .copied()
        .filter(|r| r.host != Some(HostKind::Pageable) && r.wait != Some(Wait::Spin))
        .filter(|r| r.mode != Mode::Enqueue)
        .collect();
    let s = sentences(&fewer, &Samples::default());
    assert!(
        !s.iter()
            .any(|l| l.contains("pageable") || l.contains("over spin")),
        "{s:#?}"
    );
    assert!(!s.iter().any(|l| l.contains("call alone")), "{s:#?}");
    // A bandwidth run says nothing about latency.
    let bulk: Vec<Row> = rows
        .iter()
        .filter(|r| !r.measures_time())
        .cloned()
        .collect();
    assert!(sentences(&bulk.iter().collect::<Vec<_>>(), &Samples::default()).is_empty());
}

#[test]
fn rows_written_before_the_wait_column_take_it_from_the_case_key() {
    let rows = h200_rows();
    let waits: Vec<Option<Wait>> = rows
        .iter()
        .filter(|r| r.case_label == "sync")
        .map(|r| r.wait)
        .collect();
    let all: Vec<Option<Wait>> = Wait::ALL.iter().copied().map(Some).collect();
    assert_eq!(waits, all);
    assert_eq!(find(&rows, "pinned", Lane::H2d, 4).wait, Some(Wait::Stream));
    assert_eq!(find(&rows, "enqueue-pinned", Lane::H2d, 4).wait, None);
    assert_eq!(find(&rows, "pinned-sync-call", Lane::H2d, 4).wait, None);
}

#[test]
fn the_report_draws_the_size_curve_the_waits_and_the_chase() {
    let rows = h200_rows();
    let case_rows: Vec<CaseRow<'_>> = rows.iter().map(|r| (0, r)).collect();
    let figs = figures("latency", &case_rows, &[String::new()]);
    let html: Vec<String> = figs.iter().map(Figure::to_html).collect();
    assert_eq!(html.len(), 3, "{html:#?}");
    says(
        &html[0],
        &[
            "data-plot=\"latency-size-curve\"",
            "data-measured-sizes=\"4 B|64 KiB\"",
            "pinned, copy engine, H2D — fixed cost ≤ 8.60 µs (p50 of 4 B); no b: 2 sizes, none past n½ = 207 KiB",
        ],
    );
    says(
        &html[1],
        &[
            "data-plot=\"latency-waits\"",
            "launch + cuStreamSynchronize, SCHED_BLOCKING_SYNC context",
            "25.78",
        ],
    );
    says(
        &html[2],
        &[
            "data-plot=\"latency-chase\"",
            "256 MiB, random cycle",
            "1270",
        ],
    );
    // A run without latency rows draws none of them.
    let bulk: Vec<CaseRow<'_>> = case_rows
        .iter()
        .copied()
        .filter(|(_, r)| !r.measures_time())
        .collect();
    assert!(figures("latency", &bulk, &[String::new()]).is_empty());
}

#[test]
fn the_platform_table_puts_each_runs_latency_side_by_side() {
    let set = ResultSet::load(&h200_csv()).expect("loads");
    let mut other = set.clone();
    for r in &mut other.rows {
        if r.case_label == "pinned" && r.size_bytes == 4 && r.lane == Lane::H2d {
            r.lat_p50_us = Some(31.0);
        }
    }
    other.rows.retain(|r| r.case_label != "chase");
    let names = ["A linux".to_string(), "B other".to_string()];
    let (set_a, set_b) = (set.clone(), other.clone());
    let html = platform_section(&[set, other], &names);
    says(
        &html,
        &[
            "A linux p50 (p99)",
            "B other p50 (p99)",
            "<td>8.60 µs (p99 10.10 µs)</td><td>31.00 µs (p99 10.10 µs)</td>",
            "<td>1225 ns (p99 1226 ns)</td><td>not measured</td>",
            "<td>fixed cost ≤ 8.60 µs (p50 of 4 B); no b: 2 sizes, none past n½ = 207 KiB</td>",
            "<td>pinned · pinned, copy engine, H2D, 4 B, latency</td>",
            "<td>launch-call · device memory, empty kernel, enqueue</td>",
        ],
    );
    let said = platform_sentences(&[set_a.clone(), set_b.clone()], &names);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("Latency on B other against A linux (median time, lower is better; above 1× is slower on B other): pinned, copy engine, H2D · 4 B · pinned 3.61× (31.00 µs against 8.60 µs);"), "{said:?}");
    assert!(
        said[0].ends_with("; 30 more in the latency table below."),
        "{said:?}"
    );
    let bulk = ResultSet {
        rows: vec![],
        ..ResultSet::load(&h200_csv()).expect("loads")
    };
    assert_eq!(platform_section(&[bulk], &names[..1]), "");
}

#[test]
fn a_fitted_half_bandwidth_size_reads_in_binary_units() {
    assert_eq!(approx_size(212_000.0), "207 KiB");
    assert_eq!(approx_size(1.5 * 1048576.0), "1.5 MiB");
    assert_eq!(approx_size(100.0), "100 B");
}

#[test]
fn the_report_of_a_latency_run_draws_no_bandwidth_of_tiny_copies() {
    let set = ResultSet::load(&h200_csv()).expect("loads");
    let page = super::super::render_report(&[set], &[], "latency").expect("renders");
    for kind in ["latency-size-curve", "latency-waits", "latency-chase"] {
        assert!(page.contains(&format!("data-plot=\"{kind}\"")), "{kind}");
    }
    assert!(!page.contains("data-plot=\"bandwidth-vs-size\""));
    assert!(
        !page.contains("fastest is"),
        "no bandwidth answer for 4-byte copies"
    );
    says(
        &page,
        &[
            "<strong>Latency:</strong> H2D: a 4-byte pinned copy takes 8.60 µs",
            "<td>8.60 µs</td><td>—</td><td>—</td><td>p99 10.10 µs</td>",
        ],
    );
}
