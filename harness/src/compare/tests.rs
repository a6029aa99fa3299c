use super::*;
use crate::results::Lane;
use crate::stats::Verdict;

#[test]
fn labels_run_in_order() {
    assert_eq!(run_label(0), "A");
    assert_eq!(run_label(25), "Z");
    assert_eq!(run_label(26), "R27");
}

/// SYNTHETIC: a run of one 4-byte latency case whose copies take about `us` µs each.
fn latency_run(us: f64) -> crate::results::ResultSet {
    use crate::results::{ResultSet, Row, Samples};
    let row = Row {
        case_key: "latency/pinned/size=4".into(),
        case_label: "pinned".into(),
        lane: Lane::H2d,
        mode: crate::scenario::Mode::Latency,
        size_bytes: 4,
        lat_p50_us: Some(us),
        ..Row::default()
    };
    let mut samples = Samples::default();
    for i in 0..200 {
        // 4 bytes in (us ± 2%) µs, as GB/s.
        let value = 4.0 / ((us * (1.0 + 0.02 * f64::from(i % 5) / 4.0)) * 1e-6) / 1e9;
        samples.push_bandwidth(&row.case_key, Lane::H2d, value);
    }
    ResultSet {
        path: "r.csv".into(),
        rows: vec![row],
        samples,
        sidecar: None,
    }
}

#[test]
fn columns_align_by_what_they_hold_not_by_how_their_text_reads() {
    // A case labelled with digits is still text: left-aligned under its head.
    let mut run = latency_run(10.0);
    run.rows[0].case_label = "123456".into();
    let c = build(&[run.clone(), run], 0.02);
    let text = TableExporter { color: false }.render(&c);
    let head = text
        .lines()
        .find(|l| l.contains("A µs (p50)"))
        .expect("the latency table's head");
    assert!(head.starts_with("case    "), "{head}");
    // A verdict column of words, and a column of numbers, each as declared.
    let g = grid(&c, &LATENCY);
    let at = |h: &str| g.head.iter().position(|x| x == h).expect(h);
    assert_eq!(g.align[at("case")], Align::Left);
    assert_eq!(g.align[at("A n")], Align::Right);
    assert_eq!(g.align[at("B verdict")], Align::Left);
}

#[test]
fn lower_latency_reads_as_faster_and_higher_as_slower() {
    let verdict = |base: f64, other: f64| {
        let c = build(&[latency_run(base), latency_run(other)], 0.02);
        c.entries[0].cells[1]
            .as_ref()
            .and_then(|cell| cell.change)
            .map(|ch| ch.verdict)
    };
    assert_eq!(
        verdict(10.0, 12.0),
        Some(Verdict::Slower),
        "latency went up"
    );
    assert_eq!(
        verdict(12.0, 10.0),
        Some(Verdict::Faster),
        "latency went down"
    );
    assert_eq!(verdict(10.0, 10.0), Some(Verdict::WithinNoise));
}

#[test]
fn the_latency_table_shows_times_and_reads_less_time_as_faster() {
    let c = build(&[latency_run(10.0), latency_run(12.0)], 0.02);
    assert!(bandwidth_grid(&c).1.is_empty(), "no 0.00 GB/s row");
    let (head, rows) = latency_grid(&c);
    assert_eq!(
        head[2..8],
        [
            "A µs (p50)",
            "A n",
            "B µs (p50)",
            "B n",
            "B time/A",
            "B 95% CI"
        ]
    );
    assert_eq!(rows[0][2..6], ["10.00", "200", "12.00", "200"]);
    assert_eq!(rows[0][6], "1.200", "the time ratio, not the rate's");
    assert_eq!(rows[0][8], "slower");
    let text = TableExporter { color: false }.render(&c);
    assert!(!text.contains("Bandwidth (median GB/s"), "{text}");
    assert!(text.contains(LATENCY_TITLE), "{text}");
}

#[test]
fn an_empty_kernel_compares_by_its_time_not_by_zero_bandwidth() {
    let run = |us: f64| {
        let mut set = latency_run(us);
        set.rows[0].engine = crate::scenario::Engine::Empty;
        set.rows[0].lane = Lane::Device;
        set.samples = Default::default();
        set
    };
    let c = build(&[run(10.0), run(25.0)], 0.02);
    let (_, rows) = latency_grid(&c);
    assert_eq!(
        [&rows[0][2], &rows[0][4], &rows[0][6]],
        ["10.00", "25.00", "2.500"]
    );
    let cell = c.entries[0].cells[1].as_ref().expect("cell");
    assert_eq!(cell.median_gbs, None, "nothing moves, no bandwidth");
    assert_ne!(
        cell.change.map(|ch| ch.verdict),
        Some(Verdict::WithinNoise),
        "one median each: no interval, so no verdict either way"
    );
}
