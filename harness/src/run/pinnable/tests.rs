use super::*;
use crate::units::MIB;

#[test]
fn the_cap_in_force_leaves_a_quarter_of_available_memory_and_at_least_2_gib() {
    let b = bounds(64 * GIB, Some(120 * GIB), None);
    assert_eq!(b.limit_bytes, 64 * GIB, "the cap, with room to spare");
    assert_eq!(bounds(64 * GIB, Some(40 * GIB), None).limit_bytes, 30 * GIB);
    assert_eq!(bounds(64 * GIB, Some(4 * GIB), None).limit_bytes, 2 * GIB);
    assert_eq!(
        bounds(64 * GIB, Some(GIB), None).limit_bytes,
        0,
        "nothing to spare"
    );
    assert_eq!(bounds(8 * GIB, None, None).limit_bytes, 8 * GIB);
    assert_eq!(b.rule, LIMIT_RULE);
}

#[test]
fn a_cgroup_limit_below_available_memory_bounds_the_probe() {
    // A job with memory.max 4 GiB on a host with 120 GiB available: the cgroup's headroom rules,
    // as the kernel kills a process pinning past it.
    let b = bounds(8 * GIB, Some(120 * GIB), Some(4 * GIB));
    assert_eq!(b.limit_bytes, 2 * GIB);
    assert_eq!(b.cgroup_headroom_bytes, Some(4 * GIB));
    assert_eq!(bounds(8 * GIB, None, Some(12 * GIB)).limit_bytes, 8 * GIB);
    assert_eq!(
        bounds(8 * GIB, Some(120 * GIB), Some(200 * GIB)).limit_bytes,
        8 * GIB
    );
}

#[test]
fn the_child_stops_pinning_before_the_parent_kills_it() {
    assert_eq!(
        child_deadline(Duration::from_secs(240)),
        Duration::from_secs(210)
    );
    assert_eq!(
        child_deadline(Duration::from_secs(60)),
        Duration::from_secs(45)
    );
    assert_eq!(
        child_deadline(Duration::from_secs(1)),
        Duration::from_millis(750)
    );
}

fn plan() -> Plan {
    Plan {
        device: 0,
        hold_percents: vec![0, 50],
        kinds: ProbeKind::ALL.to_vec(),
        limit_bytes: 2 * GIB,
        resolution_bytes: 256 * MIB,
        chunk_bytes: GIB,
        range_bytes: 64 << 10,
        max_registrations: 1000,
        child_deadline_ms: 45_000,
    }
}

fn line(l: &ChildLine) -> String {
    serde_json::to_string(l).expect("serializes")
}

#[test]
fn the_parent_reads_the_child_lines_and_marks_what_the_deadline_cut_off() {
    let mut g = Gathered::default();
    let gpu = GpuName {
        index: 0,
        name: "NVIDIA H200".into(),
        uuid: "GPU-1".into(),
    };
    g.take(&line(&ChildLine::Opened { gpu: gpu.clone() }));
    g.take(&line(&ChildLine::Probe(Box::new(ProbeResult {
        kind: ProbeKind::HostAlloc,
        hold_percent: 0,
        found: Found::Bytes(2 * GIB),
        ended: search::Ended::Cap,
        tries: 1,
        seconds: 0.9,
        after_refusal: None,
    }))));
    g.take("not a line of the child");
    assert_eq!(g.gpu, Some(gpu));
    assert_eq!(g.stray_lines, 1);
    g.complete(&plan());
    assert_eq!(g.probes.len(), 8, "every probe of every level is there");
    let cut: Vec<&ProbeResult> = g
        .probes
        .iter()
        .filter(|p| p.ended == search::Ended::Deadline)
        .collect();
    assert_eq!(cut.len(), 7);
    assert!(cut.iter().all(|p| p.tries == 0 && p.found.amount() == 0));
    let ranges = cut.iter().find(|p| p.kind == ProbeKind::Registrations);
    assert!(ranges.is_some_and(|p| p.found == Found::Ranges(0)));
}

#[test]
fn a_failed_line_is_kept() {
    let mut g = Gathered::default();
    g.take(&line(&ChildLine::Failed {
        sentence: "no NVIDIA driver found".into(),
    }));
    assert_eq!(g.failed.as_deref(), Some("no NVIDIA driver found"));
}
