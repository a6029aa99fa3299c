//! Tests of the observer set, deltas and the CSV column mapping on hand-built snapshots, and of
//! the /proc parsers on fixture files.

use super::*;
use std::path::Path;

fn snap(phase: Moment, readings: &[(&str, &str, f64)]) -> Snapshot {
    Snapshot {
        phase,
        t_ms: 0.0,
        readings: readings
            .iter()
            .map(|(o, m, v)| {
                (
                    ObserverId::parse(o).expect("a known observer"),
                    Reading {
                        metric: m.to_string(),
                        value: *v,
                        unit: Unit::Bytes,
                    },
                )
            })
            .collect(),
        errors: vec![],
    }
}

const MIB: f64 = 1048576.0;

#[test]
fn delta_only_for_metrics_in_both() {
    let b = snap(
        Moment::Before,
        &[("cuda", "used", 100.0), ("nvml", "used", 5.0)],
    );
    let a = snap(
        Moment::Device,
        &[("cuda", "used", 150.0), ("dxgi", "nonlocal_usage", 9.0)],
    );
    assert_eq!(delta(&b, &a), vec![((ObserverId::Cuda, "used"), 50.0)]);
}

#[test]
fn columns_follow_the_windows_article() {
    // Article 000's picture: 4 GiB pinned on WDDM moves shared, not CUDA or NVML.
    // (observer, metric, before, after)
    let readings = [
        ("cuda", "used", 1.0 * 1024.0 * MIB, 1.0 * 1024.0 * MIB),
        ("nvml", "used", 1.8 * 1024.0 * MIB, 2.0 * 1024.0 * MIB),
        ("dxgi", "local_usage", 1536.0 * MIB, 1638.0 * MIB),
        ("dxgi", "nonlocal_usage", 1843.0 * MIB, 5939.0 * MIB),
        ("pdh", "process_shared", 1.0, 2.0),
        ("process", "working_set", 100.0 * MIB, 4196.0 * MIB),
        ("process", "private_usage", 200.0 * MIB, 4296.0 * MIB),
        ("ledger", "pinned", 0.0, 4096.0 * MIB),
    ];
    let at = |phase: Moment, after: bool| {
        let r: Vec<_> = readings
            .iter()
            .map(|&(o, m, before, a)| (o, m, if after { a } else { before }))
            .collect();
        snap(phase, &r)
    };
    let (b, a) = (at(Moment::Before, false), at(Moment::Device, true));
    let cols = column_values(&b, &a);
    let get = |c: &str| cols.iter().find(|(k, _)| k.name() == c).map(|(_, v)| *v);
    assert_eq!(get("cuda_used"), Some(0.0));
    assert!((get("nvml_used").unwrap_or(f64::NAN) - 204.8).abs() < 1e-9);
    assert_eq!(get("dedicated"), Some(102.0));
    assert_eq!(get("shared"), Some(4096.0), "DXGI wins over PDH");
    assert_eq!(get("proc_rss"), Some(4096.0));
    assert_eq!(get("committed"), Some(4096.0));
    assert_eq!(get("ledger_pinned"), Some(4096.0));
    assert_eq!(get("mem_available"), None, "no procfs on Windows");
    // Columns come out in the CSV's order: every metric some observer read here supplies.
    let order: Vec<Metric> = cols.iter().map(|(k, _)| *k).collect();
    let read_here = |m: &Metric| {
        m.observers()
            .iter()
            .any(|o| readings.iter().any(|(r, ..)| *r == o.name()))
    };
    let expected: Vec<Metric> = Metric::ALL.into_iter().filter(read_here).collect();
    assert_eq!(order, expected);
}

#[test]
fn columns_on_linux_and_fallbacks() {
    let b = snap(
        Moment::Before,
        &[
            ("procfs", "vm_rss", 10.0 * MIB),
            ("procfs", "mem_available", 1000.0 * MIB),
            ("procfs", "committed_as", 500.0 * MIB),
            ("pdh", "process_shared", 0.0),
            ("pdh", "process_dedicated", MIB),
        ],
    );
    let a = snap(
        Moment::Free,
        &[
            ("procfs", "vm_rss", 1034.0 * MIB),
            ("procfs", "mem_available", 0.0),
            ("procfs", "committed_as", 1524.0 * MIB),
            ("pdh", "process_shared", 512.0 * MIB),
            ("pdh", "process_dedicated", MIB),
        ],
    );
    let cols: BTreeMap<&str, f64> = column_values(&b, &a)
        .into_iter()
        .map(|(m, v)| (m.name(), v))
        .collect();
    assert_eq!(cols["proc_rss"], 1024.0);
    assert_eq!(
        cols["mem_available"], -1000.0,
        "negative = host memory taken"
    );
    assert_eq!(cols["committed"], 1024.0);
    assert_eq!(cols["shared"], 512.0, "PDH when DXGI is absent");
    assert_eq!(cols["dedicated"], 0.0);
    assert!(!cols.contains_key(&"cuda_used"));
}

#[test]
fn every_metric_has_a_source_of_an_observer() {
    for d in crate::accounting::METRICS {
        assert!(!d.sources.is_empty(), "no source for {}", d.name);
        assert!(!d.metric.observers().is_empty(), "{}", d.name);
    }
}

/// An NVML observer whose device was lost.
struct Failing;
impl Observer for Failing {
    fn id(&self) -> ObserverId {
        ObserverId::Nvml
    }
    fn read(&mut self) -> Result<Vec<Reading>, String> {
        Err("device lost".into())
    }
}

#[test]
fn snapshot_records_errors_and_skips_unavailable() {
    let ledger = Ledger::new();
    ledger.add(LedgerCategory::Registered, 4096);
    let mut counter = 0u64;
    let cuda: CudaMemFn = Box::new(move || {
        counter += 1;
        if counter == 2 {
            Err("CUDA_ERROR_ILLEGAL_ADDRESS".into())
        } else {
            Ok((1000, 4000))
        }
    });
    let mut obs = Observers::new(vec![
        Box::new(CudaObserver::new(Some(cuda))),
        Box::new(Failing),
        Box::new(Unsupported::new(ObserverId::Dxgi, "Windows only")),
        Box::new(ledger.clone()),
    ]);
    let s = obs.snapshot(Moment::Before);
    assert_eq!(s.phase, Moment::Before);
    assert_eq!(s.value(ObserverId::Cuda, "used"), Some(3000.0));
    assert_eq!(s.value(ObserverId::Ledger, "pinned"), Some(4096.0));
    assert_eq!(s.value(ObserverId::Dxgi, "local_usage"), None);
    assert_eq!(s.errors, vec![(ObserverId::Nvml, "device lost".into())]);
    let s2 = obs.snapshot(Moment::Device);
    assert!(s2.t_ms >= s.t_ms);
    assert_eq!(s2.value(ObserverId::Cuda, "used"), None);
    assert!(
        s2.errors
            .iter()
            .any(|(o, e)| *o == ObserverId::Cuda && e.contains("ILLEGAL"))
    );

    let st = obs.statuses();
    assert_eq!(st.len(), 4);
    assert!(st[0].available && st[0].reason.is_none());
    assert!(!st[2].available);
    assert_eq!(st[2].reason.as_deref(), Some("Windows only"));
    let text = describe(&obs);
    assert!(text.contains("cuda: available\n"), "{text}");
    assert!(text.contains("dxgi: unavailable: Windows only\n"), "{text}");
}

#[test]
fn for_this_machine_never_panics() {
    let ledger = Ledger::new();
    let mut obs = Observers::for_this_machine(GpuContext {
        ledger: ledger.clone(),
        ..Default::default()
    });
    // Every declared observer is set up, in the declared order.
    let ids: Vec<ObserverId> = obs.statuses().into_iter().map(|s| s.observer).collect();
    let declared = crate::accounting::OBSERVERS.map(|o| o.id);
    assert_eq!(ids, declared);
    for s in obs.statuses() {
        if let Some(r) = &s.reason {
            assert!(!r.is_empty(), "{} gave an empty reason", s.observer);
        }
    }
    assert!(obs.statuses()[0].reason.is_some(), "no closure, no cuda");
    let s = obs.snapshot(Moment::Before);
    assert_eq!(s.value(ObserverId::Ledger, "pinned"), Some(0.0));
    if cfg!(target_os = "linux") {
        assert!(s.value(ObserverId::Procfs, "vm_rss").unwrap_or(0.0) > 0.0);
        assert!(s.value(ObserverId::Procfs, "mem_total").unwrap_or(0.0) > 0.0);
    }
    if cfg!(windows) {
        assert!(s.value(ObserverId::Process, "working_set").unwrap_or(0.0) > 0.0);
    }
    ledger.add(LedgerCategory::PinnedAlloc, 3 * 1048576);
    let a = obs.snapshot(Moment::Device);
    let cols: BTreeMap<Metric, f64> = column_values(&s, &a).into_iter().collect();
    assert_eq!(cols[&Metric::LedgerPinned], 3.0);
    println!("{}", describe(&obs));
}

#[test]
fn timeline_samples_until_hold_and_stops_early() {
    let mut obs = Observers::new(vec![Box::new(Ledger::new())]);
    let stop = AtomicBool::new(false);
    let t = timeline(
        &mut obs,
        Duration::from_millis(120),
        Duration::from_millis(40),
        &stop,
    );
    assert!(
        (3..=5).contains(&t.len()),
        "0, 40, 80, 120 ms expected, got {}",
        t.len()
    );
    assert!(t.iter().all(|s| s.phase == Moment::Timeline));
    assert!(t.windows(2).all(|w| w[1].t_ms >= w[0].t_ms));
    let span = t.last().map_or(0.0, |s| s.t_ms) - t[0].t_ms;
    assert!(span >= 115.0, "last sample at the hold, span {span}");

    stop.store(true, Ordering::Relaxed);
    let started = Instant::now();
    let t = timeline(
        &mut obs,
        Duration::from_secs(60),
        Duration::from_secs(1),
        &stop,
    );
    assert_eq!(t.len(), 1, "a stop request ends it after the first sample");
    assert!(started.elapsed() < Duration::from_secs(5));
}

fn fixture(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/proc")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn values(r: &[Reading]) -> BTreeMap<&str, f64> {
    r.iter().map(|r| (r.metric.as_str(), r.value)).collect()
}

/// Asserts each (metric, KiB) of `want` is in `r`, in bytes, naming the fixture and metric.
fn assert_kib(fixture: &str, r: &[Reading], want: &[(&str, f64)]) {
    let v = values(r);
    for &(metric, kib) in want {
        assert_eq!(v.get(metric), Some(&(kib * 1024.0)), "{fixture}: {metric}");
    }
}

#[test]
fn linux_status_fixture() {
    let r = parse_status(&fixture("linux/status"));
    let want = [
        ("vm_rss", 1736.0),
        ("vm_hwm", 1736.0),
        ("vm_lck", 0.0),
        ("vm_pin", 0.0),
    ];
    assert_kib("linux/status", &r, &want);
    assert!(r.iter().all(|r| r.unit == Unit::Bytes));
}

#[test]
fn linux_meminfo_fixture() {
    let want = [
        ("mem_total", 24684092.0),
        ("mem_available", 23709444.0),
        ("committed_as", 357076.0),
        ("mlocked", 11172.0),
        ("unevictable", 12948.0),
        ("anon_pages", 388908.0),
    ];
    assert_kib(
        "linux/meminfo",
        &parse_meminfo(&fixture("linux/meminfo")),
        &want,
    );
}

#[test]
fn wsl2_fixtures() {
    // vm_lck is 0: CUDA pinning does not show in VmLck.
    let status = [
        ("vm_rss", 1270544.0),
        ("vm_hwm", 1283612.0),
        ("vm_lck", 0.0),
    ];
    assert_kib(
        "wsl2/status",
        &parse_status(&fixture("wsl2/status")),
        &status,
    );
    let meminfo = [
        ("mem_total", 16318424.0),
        ("mem_available", 13902716.0),
        ("committed_as", 6215988.0),
        ("mlocked", 0.0),
        ("anon_pages", 1661880.0),
    ];
    assert_kib(
        "wsl2/meminfo",
        &parse_meminfo(&fixture("wsl2/meminfo")),
        &meminfo,
    );
}

#[test]
fn procfs_observer_on_real_proc() {
    let mut o = ProcfsObserver::new();
    match o.unavailable() {
        Some(why) => {
            if cfg!(target_os = "linux") {
                panic!("Linux has /proc: {why}");
            }
            assert!(!why.is_empty());
        }
        None => {
            let r = o.read().expect("reading /proc");
            let v = values(&r);
            assert!(v["vm_rss"] > 0.0);
            assert!(v["mem_available"] <= v["mem_total"]);
        }
    }
}
