//! The latency finding on the two published H200 runs of one VM, minutes apart
//! (reports/h200): `latency` (4 B and 64 KiB, 1000 samples per case) and `size-curve` (15 sizes
//! from 4 B to 1 GiB, 200 samples per case). What a fit over two sizes may say, what fifteen
//! sizes determine, and that sub-µs differences between cases measured one after another read as
//! no difference within noise, on the console and on the page alike.

use super::*;
use crate::results::ResultSet;
use std::path::PathBuf;

fn published(name: &str) -> ResultSet {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../reports/h200")
        .join(name);
    ResultSet::load(&p).expect("the published H200 run loads with its samples")
}

const LATENCY: &str = "20261203-095759-latency-vm.csv";
const SIZE_CURVE: &str = "20261203-095803-size-curve-vm.csv";

fn finding(set: &ResultSet) -> LatencyFinding {
    let rows: Vec<&Row> = set.rows.iter().collect();
    LatencyFinding::of(&rows, &set.samples)
}

fn lane(f: &LatencyFinding, lane: Lane) -> &CopyFinding {
    f.copies
        .iter()
        .find(|c| c.lane == lane)
        .expect("a copy finding per direction")
}

#[test]
fn two_sizes_below_their_half_bandwidth_size_state_no_bandwidth() {
    let set = published(LATENCY);
    let f = finding(&set);
    for (l, p50, half_kib) in [(Lane::H2d, 5.625, 95.0), (Lane::D2h, 7.2095, 422.0)] {
        let Some(FitFinding::FixedOnly { smallest, why }) = lane(&f, l).fit else {
            panic!("{l:?}: a 2-size fit must not state a bandwidth: {f:#?}");
        };
        assert_eq!((smallest.bytes, smallest.p50_us), (4, p50));
        assert_eq!((why.sizes, why.largest_bytes), (2, 65536));
        let half = why.half_bytes.expect("a positive fixed cost") / 1024.0;
        assert!((half - half_kib).abs() < 1.0, "{l:?}: n½ {half} KiB");
    }
    let lines = f.lines();
    assert!(
        lines.contains(&"H2D: the fixed cost of a pinned copy is at most 5.62 µs (the p50 of its smallest size, 4 B); bandwidth not determined here: 2 sizes, none past n½ = 95 KiB (b is stated from 3 sizes or more, some past n½ = a·b, the size at which half the time is fixed cost).".to_string()),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("GB/s")),
        "no bandwidth from 4 B and 64 KiB: {lines:#?}"
    );
}

#[test]
fn fifteen_sizes_determine_the_bandwidth() {
    let set = published(SIZE_CURVE);
    let f = finding(&set);
    for (l, gbs) in [(Lane::H2d, 54.1), (Lane::D2h, 55.1)] {
        let Some(FitFinding::Bandwidth { fit, past_half }) = lane(&f, l).fit else {
            panic!("{l:?}: 15 sizes up to 1 GiB determine b: {f:#?}");
        };
        assert_eq!((fit.points, past_half), (15, 6), "{l:?}");
        assert!((fit.bandwidth_gbs - gbs).abs() < 0.1, "{l:?}: {fit:?}");
    }
    assert!(
        f.lines().contains(&"H2D: pinned copies cost a fixed 7.32 µs each (a) and stream at 54.1 GB/s (b): half of that bandwidth is reached at 387 KiB (n½ = a·b), fit T(V) = a + V/b over 15 sizes, 6 of them past n½.".to_string()),
        "{:#?}",
        f.lines()
    );
}

#[test]
fn sub_microsecond_differences_read_no_difference_within_noise() {
    // Pageable − pinned at 4 B: the same VM gives +0.64 µs in one run and −0.73 µs in the other.
    let cases = [
        (
            LATENCY,
            Lane::H2d,
            "(6.27 µs): no difference within noise (difference +0.64 µs, 95% interval [+0.63, +0.66] µs, below the 1.00 µs noise floor)",
        ),
        (
            LATENCY,
            Lane::D2h,
            "(8.19 µs): no difference within noise (difference +0.98 µs, 95% interval [+0.96, +1.01] µs, below the 1.00 µs noise floor)",
        ),
        (
            SIZE_CURVE,
            Lane::H2d,
            "(5.60 µs): no difference within noise (difference -0.73 µs, 95% interval [-0.75, -0.69] µs, below the 1.00 µs noise floor)",
        ),
        (
            SIZE_CURVE,
            Lane::D2h,
            "(8.15 µs): no difference within noise (difference +0.97 µs, 95% interval [+0.94, +1.00] µs, below the 1.00 µs noise floor)",
        ),
    ];
    for (run, l, words) in cases {
        let f = finding(&published(run));
        let d = lane(&f, l).pageable.expect("pageable at 4 B");
        assert_eq!(d.verdict, DiffVerdict::BelowFloor, "{run} {l:?}: {d:?}");
        assert!(
            d.interval_us.is_some(),
            "{run} {l:?}: drawn from the samples"
        );
        let lines = f.lines();
        assert!(
            lines
                .iter()
                .any(|s| s.ends_with(&format!("; pageable memory {words}."))),
            "{run} {l:?}: {lines:#?}"
        );
        assert!(
            !lines
                .iter()
                .any(|s| s.contains("adds 0.") || s.contains("saves 0.")),
            "{run}: a sub-µs difference stated as a fact: {lines:#?}"
        );
    }
}

#[test]
fn the_page_and_the_console_say_the_same_finding() {
    for run in [LATENCY, SIZE_CURVE] {
        let set = published(run);
        let said: Vec<String> = finding(&set).lines();
        let console = crate::report::console_lines(&set.rows, &set.samples);
        let page = crate::report::render_report(std::slice::from_ref(&set), &[], "latency")
            .expect("renders");
        for l in &said {
            assert!(
                console.contains(&format!("Latency: {l}")),
                "{run}: {console:#?}"
            );
            let html = format!(
                "<strong>Latency:</strong> {}</li>",
                crate::report::html::escape(l)
            );
            assert!(page.contains(&html), "{run}: no {html}");
        }
        assert!(!page.contains("stream at 20."), "{run}");
        let json = serde_json::to_value(finding(&set)).expect("serializes");
        assert_eq!(json["copies"][0]["pageable"]["verdict"], "BelowFloor");
    }
}

#[test]
fn a_difference_is_a_fact_only_with_an_interval_clear_of_0_and_past_the_floor() {
    let d = Difference::judged(8.0, 12.0, Some((3.5, 4.5)));
    assert_eq!((d.verdict, d.is_stated()), (DiffVerdict::Differs, true));
    let d = Difference::judged(8.0, 12.0, Some((-0.5, 8.0)));
    assert_eq!(
        (d.verdict, d.is_stated()),
        (DiffVerdict::IntervalHoldsZero, false)
    );
    let d = Difference::judged(8.0, 12.0, None);
    assert_eq!((d.verdict, d.is_stated()), (DiffVerdict::NoInterval, true));
    let d = Difference::judged(8.0, 8.9, Some((0.8, 1.0)));
    assert_eq!((d.verdict, d.floor_us), (DiffVerdict::BelowFloor, 1.0));
    // Past 50 µs the floor is 2% of the base: 2.9 µs on 150 µs is within noise, 4 µs is not.
    let d = Difference::judged(150.0, 152.9, Some((2.5, 3.5)));
    assert_eq!((d.verdict, d.floor_us), (DiffVerdict::BelowFloor, 3.0));
    let d = Difference::judged(150.0, 154.0, Some((3.5, 4.5)));
    assert_eq!(d.verdict, DiffVerdict::Differs);
}

#[test]
fn three_sizes_none_past_the_half_bandwidth_size_state_no_bandwidth() {
    let set = published(SIZE_CURVE);
    let pinned_h2d = |max: u64| -> Vec<&Row> {
        set.rows
            .iter()
            .filter(|r| r.case_label == "pinned" && r.lane == Lane::H2d && r.size_bytes <= max)
            .collect()
    };
    // 4 B to 1 KiB: five sizes, all of them fixed cost.
    let Some(FitFinding::FixedOnly { why, .. }) = FitFinding::of(&pinned_h2d(1024)) else {
        panic!("five sizes up to 1 KiB determine no bandwidth");
    };
    assert_eq!(why.sizes, 5);
    assert!(why.half_bytes.is_none_or(|h| h >= 1024.0), "{why:?}");
    // One size is no curve.
    assert_eq!(FitFinding::of(&pinned_h2d(4)), None);
    // Up to 1 MiB some sizes pass n½: b is stated.
    let f = FitFinding::of(&pinned_h2d(1 << 20)).expect("a curve");
    assert!(f.bandwidth_fit().is_some(), "{f:?}");
}

#[test]
fn two_sizes_are_too_few_even_past_their_half_bandwidth_size() {
    // ollama-like: D2H latency at 125 KiB and 501 KiB; the line through them puts n½ at 376 KiB.
    let f = finding(&published("20261203-095902-ollama-like-vm.csv"));
    let Some(FitFinding::FixedOnly { smallest, why }) = lane(&f, Lane::D2h).fit else {
        panic!("two sizes state no bandwidth: {f:#?}");
    };
    assert_eq!(
        (smallest.bytes, why.sizes, why.largest_bytes),
        (128_000, 2, 513_024)
    );
    assert!(why.half_bytes.is_some_and(|h| h < 513_024.0), "{why:?}");
    assert!(
        f.lines().contains(&"D2H: the fixed cost of a pinned copy is at most 9.36 µs (the p50 of its smallest size, 125 KiB); bandwidth not determined here: only 2 sizes (b is stated from 3 sizes or more, some past n½ = a·b, the size at which half the time is fixed cost).".to_string()),
        "{:#?}",
        f.lines()
    );
}
