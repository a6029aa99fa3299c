//! The observed-run page on a SYNTHETIC timeline: a 1 GiB pin seen in VmLck and RssShmem.

use super::*;
use crate::results::Unit;
use crate::results::{AllocEvent, CallKind, CuptiRecord, Unavailable};

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
    let lines = observed_answer(&sidecar(), &series, &[]);
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
    assert!(all.contains("CUPTI was not found."), "{all}");
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
    let html = observed_page(&sidecar(), &timeline(), &[], "observed");
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

/// A SYNTHETIC event stream over the fixture timeline: libtorch_cuda.so pins 1 GiB from 2.5 s to
/// 3.0 s and frees it at 4.9 s; two 8 MiB batch buffers, one freed; libc10_cuda.so allocates
/// 64 MiB of device memory and never frees it; one 64 GiB pin fails.
fn events() -> Vec<AllocEvent> {
    let ev = |t_ms: u64, call: CallKind, bytes: u64, address: u64, lib: &str| AllocEvent {
        time_ns: t_ms * 1_000_000,
        duration_ns: if bytes >= 1 << 30 {
            500_000_000
        } else {
            1_000_000
        },
        pid: 9,
        tid: 9,
        call,
        bytes,
        flags: 0,
        result: 0,
        address,
        library: Some(format!(
            "/venv/lib/python3.12/site-packages/torch/lib/{lib}"
        )),
    };
    let mut failed = ev(5_500, CallKind::HostAlloc, 64 << 30, 0, "libtorch_cuda.so");
    failed.result = 2;
    vec![
        ev(
            1_000,
            CallKind::DeviceAlloc,
            64 << 20,
            0xd0,
            "libc10_cuda.so",
        ),
        ev(
            3_000,
            CallKind::HostAlloc,
            1 << 30,
            0xa0,
            "libtorch_cuda.so",
        ),
        ev(
            3_500,
            CallKind::HostAlloc,
            8 << 20,
            0xb0,
            "libtorch_cuda.so",
        ),
        ev(
            3_600,
            CallKind::HostAlloc,
            8 << 20,
            0xc0,
            "libtorch_cuda.so",
        ),
        ev(4_000, CallKind::FreeHost, 0, 0xb0, "libtorch_cuda.so"),
        ev(4_900, CallKind::FreeHost, 0, 0xa0, "libtorch_cuda.so"),
        failed,
    ]
}

fn injected_sidecar() -> ObservedSidecar {
    let mut s = sidecar();
    s.cupti.found = Some("/usr/local/cuda/lib64/libcupti.so.13".into());
    s.cupti.missing = None;
    s.events.library = Some("/home/u/.cache/pinscope/libpinscope_inject-0.so".into());
    s.events.processes = 1;
    s.events.events = 7;
    s
}

#[test]
fn who_pinned_what_names_the_library_the_peak_the_leftovers_and_the_largest_pin() {
    let series = series_of(&timeline());
    let all = observed_answer(&injected_sidecar(), &series, &events()).join("\n");
    for want in [
        "Page-locked host memory (pinned and registered) held through CUDA peaked at 1.02 GiB at 3.6 s.",
        "Held at its peak, by calling library and kind: libtorch_cuda.so pinned 1.02 GiB (at 3.6 s); libc10_cuda.so device 64 MiB (at 1.0 s).",
        "Never freed before the command exited (the OS took it back at exit): libc10_cuda.so device 64 MiB (1 allocation) and libtorch_cuda.so pinned 8 MiB (1 allocation).",
        "The largest pin: 1 GiB by libtorch_cuda.so in process 9 at 3.0 s (the call took 500 ms, flags 0x0); from the sample before it to the one after: RssShmem +1 GiB, VmLck +1 GiB, VmPin +0 B, MemAvailable −1 GiB.",
        "1 call(s) failed; the largest, host_alloc of 64 GiB by libtorch_cuda.so at 5.5 s, returned CUresult 2.",
        "Pins and registrations by calling library, size and thread: libtorch_cuda.so 1 × 1 GiB (process 9, its main thread); libtorch_cuda.so 2 × 8 MiB (process 9, its main thread).",
    ] {
        assert!(all.contains(want), "missing {want:?} in:\n{all}");
    }
}

#[test]
fn without_events_the_page_says_why_in_one_sentence() {
    let series = series_of(&timeline());
    let mut s = injected_sidecar();
    let all = observed_answer(&s, &series, &[]).join("\n");
    assert!(
        all.contains("no process of it sent an allocation event"),
        "{all}"
    );
    s.events.library = None;
    s.events.not_injected =
        Some("pinscope's CUPTI injection library is not built for this platform yet".into());
    let all = observed_answer(&s, &series, &[]).join("\n");
    assert!(all.contains("is not built for this platform yet."), "{all}");
}

#[test]
fn the_page_plots_what_each_library_held() {
    let html = observed_page(&injected_sidecar(), &timeline(), &events(), "observed");
    assert_eq!(html.matches("data-plot=\"observed-holders\"").count(), 1);
    assert!(html.contains("libtorch_cuda.so pinned"), "legend");
    assert!(
        html.contains("7 events from 1 process(es)"),
        "what was received"
    );
}

/// Two SYNTHETIC observed runs of one program: the 1 GiB pin gone in the second.
#[test]
fn compare_shows_a_pin_that_went_away_as_its_change() {
    use super::compare::{ObservedComparison, ObservedRun};
    let pin = |t_ns: u64, bytes: u64, address: u64| AllocEvent {
        time_ns: t_ns,
        duration_ns: 1000,
        pid: 7,
        tid: 7,
        call: CallKind::HostAlloc,
        bytes,
        flags: 0,
        result: 0,
        address,
        library: Some("/opt/lib/libtorch_cuda.so".into()),
    };
    let rss = |t: f64, v: f64| point(t, Scope::Tree, Source::Status, "vm_rss", v);
    let side = sidecar();
    let before = [pin(1, 1 << 30, 0x1000), pin(2, 8 << 20, 0x9000)];
    let after = [pin(2, 8 << 20, 0x9000)];
    let (pa, pb) = (
        [rss(0.0, 1e9), rss(1.0, 3e9)],
        [rss(0.0, 1e9), rss(1.0, 2e9)],
    );
    let run = |name: &str, points, events| ObservedRun {
        name: name.into(),
        sidecar: &side,
        points,
        events,
    };
    let c = ObservedComparison::of(&[run("before", &pa, &before), run("after", &pb, &after)]);
    assert_eq!(
        c.lines[0].values,
        vec![
            Some(((1u64 << 30) + (8 << 20)) as f64),
            Some((8u64 << 20) as f64)
        ]
    );
    let md = c.markdown();
    assert!(
        md.contains("| libtorch_cuda.so pinned at its peak | 1.01 GiB | 8 MiB | −1 GiB |"),
        "{md}"
    );
    assert!(
        md.contains("| VmRSS at its peak | 2.79 GiB | 1.86 GiB | −953.67 MiB |"),
        "{md}"
    );
    assert!(md.contains("| how it ended | exit 0 | exit 0 |  |"), "{md}");
    let json = serde_json::to_value(&c).expect("serializes");
    assert_eq!(json["runs"][1]["name"], "after");
    assert!(
        c.csv().starts_with("finding,unit,before,after\n"),
        "{}",
        c.csv()
    );
    assert!(c.html().contains("<th>B − A</th>"));
}

/// A SYNTHETIC Windows timeline: the 1 GiB pin of [`events`] seen as shared GPU memory of the
/// tree and of the adapters, and in the commit charge; DXGI's budget flat.
fn windows_timeline() -> Vec<TimelinePoint> {
    let gib = (1u64 << 30) as f64;
    let mut out = Vec::new();
    for (i, held) in [0.0, 0.0, gib, gib, 0.0].into_iter().enumerate() {
        let t = 1.6 * i as f64;
        out.push(point(t, Scope::Tree, Source::Tree, "processes", 1.0));
        out.push(point(
            t,
            Scope::Process(9),
            Source::Pdh,
            "process_shared",
            held,
        ));
        out.push(point(t, Scope::Tree, Source::Pdh, "process_shared", held));
        out.push(point(t, Scope::Tree, Source::Pdh, "process_dedicated", 0.0));
        let adapter = 2.0 * gib + held;
        out.push(point(
            t,
            Scope::Machine,
            Source::Pdh,
            "adapter_shared",
            adapter,
        ));
        out.push(point(
            t,
            Scope::Machine,
            Source::Dxgi,
            "nonlocal_budget",
            16.0 * gib,
        ));
        let charge = 20.0 * gib + held;
        out.push(point(
            t,
            Scope::Machine,
            Source::Commit,
            "commit_charge",
            charge,
        ));
        out.push(point(
            t,
            Scope::Machine,
            Source::Commit,
            "commit_limit",
            64.0 * gib,
        ));
    }
    out
}

#[test]
fn on_windows_the_answer_names_shared_gpu_memory_and_the_commit_charge() {
    let series = series_of(&windows_timeline());
    let mut s = injected_sidecar();
    s.unavailable = vec![Unavailable {
        observer: Source::Status,
        reason: "unavailable on this OS: Windows has no /proc/<pid>/status".into(),
    }];
    let all = observed_answer(&s, &series, &events()).join("\n");
    for want in [
        "shared GPU memory peaked at 1 GiB at 3.2 s (+1 GiB from its first reading).",
        "shared GPU memory of the adapters peaked at 3 GiB at 3.2 s (+1 GiB",
        "commit charge peaked at 21 GiB at 3.2 s (+1 GiB",
        "dedicated GPU memory stayed at 0 B.",
        "from the sample before it to the one after: shared GPU memory +1 GiB, dedicated GPU memory +0 B, shared GPU memory of the adapters +1 GiB, DXGI shared (NON_LOCAL) budget +0 B, commit charge +1 GiB, commit limit +0 B.",
    ] {
        assert!(all.contains(want), "missing {want:?} in:\n{all}");
    }
    let html = observed_page(&s, &windows_timeline(), &events(), "observed");
    assert_eq!(html.matches("data-plot=\"observed-timeline\"").count(), 4);
    for title in [
        "Task Manager",
        "DXGI shared (NON_LOCAL) segment",
        "The commit charge",
    ] {
        assert!(html.contains(title), "{title}");
    }
}
