//! The observed-run page on a SYNTHETIC timeline: a 1 GiB pin seen in VmLck and RssShmem.

use super::*;
use crate::results::Unit;
use crate::results::{CuptiRecord, Unavailable};

fn point(t: f64, scope: Scope, source: Source, reading: &str, value: f64) -> TimelinePoint {
    TimelinePoint {
        t_s: t,
        scope,
        source,
        reading: reading.into(),
        value,
        unit: if reading == "processes" {
            Unit::Count
        } else {
            Unit::Bytes
        },
    }
}

fn timeline() -> Vec<TimelinePoint> {
    let gib = (1u64 << 30) as f64;
    let mut out = Vec::new();
    for (i, held) in [0.0, 0.0, gib, gib, 0.0].into_iter().enumerate() {
        let t = 1.6 * i as f64;
        out.push(point(t, Scope::Tree, Source::Tree, "processes", 2.0));
        out.push(point(t, Scope::Process(9), Source::Status, "vm_lck", held));
        out.push(point(t, Scope::Tree, Source::Status, "vm_lck", held));
        out.push(point(t, Scope::Tree, Source::Status, "rss_shmem", held));
        out.push(point(t, Scope::Tree, Source::Status, "vm_pin", 0.0));
        out.push(point(
            t,
            Scope::Machine,
            Source::Meminfo,
            "mem_available",
            8.0 * gib - held,
        ));
    }
    out
}

fn sidecar() -> ObservedSidecar {
    ObservedSidecar {
        schema_version: 1,
        pinscope_version: "0".into(),
        started_at: "t0".into(),
        finished_at: "t1".into(),
        command: vec!["python3".into(), "pin.py".into(), "a b".into()],
        command_line: Vec::new(),
        ending: Ending::Exit { code: 0 },
        signals_received: Vec::new(),
        machine: Default::default(),
        interval_ms: 100,
        samples: 5,
        max_processes: 2,
        unavailable: vec![Unavailable {
            observer: Source::Nvml,
            reason: "NVML not loaded: <no driver>".into(),
        }],
        cupti: CuptiRecord {
            found: None,
            found_via: None,
            missing: Some("CUPTI was not found".into()),
            searched: Vec::new(),
        },
        events: Default::default(),
        notes: Vec::new(),
        timeline_file: "x.timeline.csv".into(),
        events_file: "x.events.csv".into(),
    }
}

#[test]
fn the_answer_names_each_peak_when_and_the_change() {
    let series = series_of(&timeline());
    let lines = observed_answer(&sidecar(), &series);
    assert!(lines[0].contains("exited with status 0"), "{lines:?}");
    assert!(lines[0].contains("up to 2 processes"), "{lines:?}");
    let all = lines.join("\n");
    assert!(
        all.contains("VmLck peaked at 1 GiB at 3.2 s (+1 GiB from its first reading)."),
        "{all}"
    );
    assert!(all.contains("RssShmem peaked at 1 GiB at 3.2 s"), "{all}");
    assert!(
        all.contains("MemAvailable fell to 7 GiB at 3.2 s (−1 GiB"),
        "{all}"
    );
    assert!(all.contains("CUPTI injection library"), "{all}");
    assert!(all.contains("VmPin stayed at 0 B."), "{all}");
    assert!(
        lines[0].starts_with("`python3 pin.py 'a b'` exited"),
        "{lines:?}"
    );
    // One process's own value is not a tree series.
    assert_eq!(series.iter().filter(|s| s.reading == "vm_lck").count(), 1);
}

#[test]
fn the_page_answers_first_then_plots_then_what_was_not_observed() {
    let html = observed_page(&sidecar(), &timeline(), "observed");
    let answer = html.find("VmLck peaked at 1 GiB").expect("answer");
    let plot = html.find("<svg").expect("a plot");
    let missing = html
        .find("NVML not loaded: &lt;no driver&gt;")
        .expect("escaped reason");
    assert!(answer < plot && plot < missing, "order");
    assert_eq!(
        html.matches("data-plot=\"observed-timeline\"").count(),
        3,
        "one per observer"
    );
}
