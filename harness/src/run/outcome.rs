//! What one case produced ([`CaseOutcome`], filled by [`super::case`]) and the rows built from it:
//! [`Row::from_outcome`] gives the results row per lane and the long-form sample rows.

use crate::accounting::{self, Phase, ReadingName};
use crate::measure::{LoadStages, SampleTimes};
use crate::platform::Machine;
use crate::probe::{self, Moment, Snapshot};
use crate::results::{Device, Lane, Row, SampleIndex, SampleRow, Series, Status, Verification};
use crate::scenario::{CHASE_STEPS, Case, Engine, Mode};
use crate::stats::{Percentiles, median, percentiles, summarize};
use crate::strategy::{Footprint, SetupTimes};
use crate::units::MIB;

/// What happened to one case.
pub struct CaseOutcome {
    pub status: Status,
    pub lanes: Vec<(Lane, u64)>,
    pub measured: crate::measure::Measured,
    pub verified: Verification,
    pub setup: SetupTimes,
    pub footprint: Footprint,
    pub snapshots: Vec<Snapshot>,
    pub timeline: Vec<Snapshot>,
    pub max_alloc: MaxAlloc,
    pub pinned_ceiling: Option<Ceiling>,
}

/// The largest device allocation (bytes) the max-alloc probe obtained: with only the case's
/// host memory held (no device memory yet), and after it was freed; `None` where the probe did
/// not run or failed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MaxAlloc {
    pub host: Option<u64>,
    pub free: Option<u64>,
}

/// What the pinned-ceiling probe obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    pub bytes: u64,
    pub cap: u64,
    /// The driver error that stopped it, or `None` when it reached the cap.
    pub error: Option<String>,
    pub seconds: f64,
}

impl CaseOutcome {
    pub fn skipped(case: &Case, reason: String) -> Self {
        Self::empty(case, Status::Skipped(reason))
    }
    pub fn empty(case: &Case, status: Status) -> Self {
        let lanes = match case.direction {
            _ if case.engine == Engine::Empty => vec![(Lane::Device, 0)],
            _ if case.engine.is_chase() => vec![(Lane::H2d, CHASE_STEPS * 8)],
            _ if case.engine.is_device() => vec![(Lane::Device, case.size)],
            crate::scenario::Direction::H2d => vec![(Lane::H2d, case.size)],
            crate::scenario::Direction::D2h => vec![(Lane::D2h, case.size)],
            crate::scenario::Direction::Bidirectional => vec![
                (Lane::H2d, case.size),
                (Lane::D2h, case.size),
                (Lane::Sum, 2 * case.size),
            ],
        };
        CaseOutcome {
            status,
            lanes,
            measured: Default::default(),
            verified: Verification::Off,
            setup: Default::default(),
            footprint: Default::default(),
            snapshots: vec![],
            timeline: vec![],
            max_alloc: MaxAlloc::default(),
            pinned_ceiling: None,
        }
    }
}

/// The latency statistics of a row, µs: host-clock percentiles and the event-time median.
#[derive(Default)]
struct LatencyUs {
    host: Option<Percentiles>,
    event_p50: Option<f64>,
}

/// [`LatencyUs`] of a latency case's `lane` (one copy, launch or call per sample), or of a
/// pointer chase (per dependent load, from the event time: each sample's percentiles are
/// averages over its loads); nothing for other cases, whose per-transfer times are a batch's
/// average, not a latency.
fn latency_us(outcome: &CaseOutcome, case: &Case, lane: Lane) -> LatencyUs {
    if case.engine.is_chase() {
        let per_load: Vec<f64> = outcome
            .measured
            .event_times(lane)
            .into_iter()
            .map(|ms| ms * 1e3 / CHASE_STEPS as f64)
            .collect();
        return LatencyUs {
            host: percentiles(&per_load),
            event_p50: median(&per_load),
        };
    }
    if !case.mode.is_latency() {
        return LatencyUs::default();
    }
    let us = |ms: Vec<f64>| ms.into_iter().map(|v| v * 1e3).collect::<Vec<_>>();
    LatencyUs {
        host: percentiles(&us(outcome.measured.times(lane))),
        event_p50: median(&us(outcome.measured.event_times(lane))),
    }
}

pub struct RowContext<'a> {
    pub run_id: &'a str,
    pub started_at: &'a str,
    pub machine: &'a Machine,
}

impl Row {
    /// The rows of one case (one per lane) and its long-form sample rows (bandwidth, event and
    /// wall samples; every observer at every phase; the hold timeline).
    pub fn from_outcome(
        outcome: &CaseOutcome,
        ctx: &RowContext,
        case: &Case,
    ) -> (Vec<Row>, Vec<SampleRow>) {
        let case_row = case_row(outcome, ctx, case);
        let mut rows = Vec::new();
        let mut samples = Vec::new();
        let wall = outcome.measured.wall_times();
        for &(lane, bytes) in &outcome.lanes {
            let bw = outcome.measured.bandwidth(lane, bytes);
            rows.push(lane_row(&case_row, outcome, case, lane, &bw, &wall));
            let key = &case_row.case_key;
            let lane_series = [
                (Series::Bandwidth, bw),
                (Series::EventTime, outcome.measured.event_times(lane)),
                (Series::WallTime, wall.clone()),
            ];
            for (series, values) in lane_series {
                samples.extend(values.iter().enumerate().map(|(i, v)| SampleRow {
                    case_key: key.clone(),
                    lane: Some(lane),
                    series: series.clone(),
                    index: SampleIndex::Number(i),
                    t_ms: None,
                    value: *v,
                }));
            }
        }
        samples.extend(reading_samples(outcome, &case_row.case_key));
        (rows, samples)
    }
}

/// The accounting deltas against `before`: `host` (the host memory alone), `alloc` (host and
/// device memory: the `device` snapshot) and `free` (the end of the hold after free).
fn accounting_deltas(outcome: &CaseOutcome) -> Vec<(Phase, accounting::Metric, f64)> {
    let at = |phase: Moment| outcome.snapshots.iter().find(|s| s.phase == phase);
    let end = outcome.timeline.last().or_else(|| at(Moment::Free));
    let mut accounting = Vec::new();
    if let Some(b) = at(Moment::Before) {
        let phases = [
            (Phase::Host, at(Moment::Host)),
            (Phase::Alloc, at(Moment::Device)),
            (Phase::Free, end),
        ];
        for (phase, snap) in phases {
            if let Some(a) = snap {
                for (m, v) in probe::column_values(b, a) {
                    accounting.push((phase, m, v));
                }
            }
        }
    }
    accounting
}

/// The columns every lane of the case shares (the lane's own columns left empty).
fn case_row(outcome: &CaseOutcome, ctx: &RowContext, case: &Case) -> Row {
    let mib = |bytes: u64| bytes as f64 / MIB as f64;
    // Registration costs measured per copy (register-per-copy cases): their median.
    let per_copy = |ms: fn(&SampleTimes) -> Option<f64>| {
        median(
            &outcome
                .measured
                .samples
                .iter()
                .filter_map(ms)
                .collect::<Vec<_>>(),
        )
    };
    Row {
        run_id: ctx.run_id.into(),
        started_at: ctx.started_at.into(),
        machine: ctx.machine.key().into(),
        scenario: case.scenario.as_str().into(),
        case_label: case.label.clone(),
        case_index: case.index,
        case_key: case.key(),
        // Device engines have no host buffer.
        host: (!case.engine.is_device()).then_some(case.host),
        flags: case.flags,
        engine: case.engine,
        direction: case.direction,
        mode: case.mode,
        size_bytes: case.size,
        chunk_bytes: case.route().chunk_bytes(),
        ring: case.ring,
        streams: case.streams,
        threads: case.threads_used(),
        batch: outcome.measured.batch,
        axes: case.axes.clone(),
        status: outcome.status.clone(),
        verified: outcome.verified,
        alloc_ms: outcome.setup.alloc_ms,
        register_ms: per_copy(|s| s.register_ms).or(outcome.setup.register_ms),
        unregister_ms: per_copy(|s| s.unregister_ms).or(outcome.setup.unregister_ms),
        free_ms: outcome.setup.free_ms,
        pinned_bytes: outcome.footprint.pinned_alloc
            + outcome.footprint.registered
            + outcome.footprint.staging,
        device_bytes: outcome.footprint.device,
        accounting: accounting_deltas(outcome),
        max_alloc_held_mib: None,
        max_alloc_host_mib: outcome.max_alloc.host.map(mib),
        max_alloc_free_mib: outcome.max_alloc.free.map(mib),
        pinned_ceiling_mib: outcome.pinned_ceiling.as_ref().map(|c| mib(c.bytes)),
        pinned_ceiling_cap_mib: outcome.pinned_ceiling.as_ref().map(|c| mib(c.cap)),
        stopped_by: outcome.measured.stopped_by,
        device: ctx.machine.gpu.as_ref().map(|g| Device::Gpu(g.index)),
        gpus_at_once: 1,
        wait: (case.mode == Mode::Latency).then_some(case.wait),
        ..load_columns(outcome, case)
    }
}

/// A file-load case's columns: the cache state, the file, and each stage's median over the
/// samples; blank (the default row) for every other case.
fn load_columns(outcome: &CaseOutcome, case: &Case) -> Row {
    let Some(source) = case
        .source
        .as_ref()
        .filter(|_| case.mode.declaration().reads_file)
    else {
        return Row::default();
    };
    let stage = |f: fn(&LoadStages) -> Option<f64>| {
        let v: Vec<f64> = outcome
            .measured
            .samples
            .iter()
            .filter_map(|s| s.load.as_ref().and_then(f))
            .collect();
        median(&v)
    };
    Row {
        cache: Some(case.cache),
        file_format: Some(source.kind),
        file_tensors: source.tensors,
        resident_before_bytes: stage(|l| l.resident_before.map(|b| b as f64)),
        resident_after_bytes: stage(|l| l.resident_after.map(|b| b as f64)),
        read_ms: stage(|l| l.read_ms),
        fault_ms: stage(|l| l.fault_ms),
        pin_ms: stage(|l| l.pin_ms),
        dma_ms: stage(|l| l.dma_ms),
        cufile_mode: outcome
            .measured
            .samples
            .iter()
            .find_map(|s| s.load.as_ref().and_then(|l| l.cufile_mode)),
        ..Row::default()
    }
}

/// The case's row for `lane`: its bandwidth samples `bw` (GB/s), times and latencies.
fn lane_row(
    case_row: &Row,
    outcome: &CaseOutcome,
    case: &Case,
    lane: Lane,
    bw: &[f64],
    wall: &[f64],
) -> Row {
    let bws = summarize(bw);
    let ts = summarize(&outcome.measured.times(lane));
    let lat = latency_us(outcome, case, lane);
    Row {
        lane,
        samples: bw.len() as u32,
        outliers: bws.map_or(0, |s| s.outliers as u32),
        bw_median_gbs: bws.map(|s| s.median),
        bw_min_gbs: bws.map(|s| s.min),
        bw_max_gbs: bws.map(|s| s.max),
        bw_spread_pct: bws.map(|s| s.spread * 100.0),
        time_median_ms: ts.map(|s| s.median),
        time_min_ms: ts.map(|s| s.min),
        time_max_ms: ts.map(|s| s.max),
        wall_median_ms: median(wall),
        lat_min_us: lat.host.map(|p| p.min),
        lat_p50_us: lat.host.map(|p| p.p50),
        lat_p90_us: lat.host.map(|p| p.p90),
        lat_p99_us: lat.host.map(|p| p.p99),
        lat_event_p50_us: lat.event_p50,
        ..case_row.clone()
    }
}

/// Every observer's absolute reading at every phase (index: the phase), and the hold timeline
/// (index: the point, time from the `free` snapshot).
fn reading_samples(outcome: &CaseOutcome, key: &str) -> Vec<SampleRow> {
    let mut samples = Vec::new();
    for s in &outcome.snapshots {
        for (o, r) in &s.readings {
            samples.push(SampleRow {
                case_key: key.to_string(),
                lane: None,
                series: Series::Phase(ReadingName::new(*o, &r.metric)),
                index: SampleIndex::Phase(s.phase),
                t_ms: Some(s.t_ms),
                value: r.value,
            });
        }
    }
    let t0 = outcome
        .snapshots
        .iter()
        .find(|s| s.phase == Moment::Free)
        .map_or(0.0, |s| s.t_ms);
    for (i, s) in outcome.timeline.iter().enumerate() {
        for (o, r) in &s.readings {
            samples.push(SampleRow {
                case_key: key.to_string(),
                lane: None,
                series: Series::Timeline(ReadingName::new(*o, &r.metric)),
                index: SampleIndex::Number(i),
                t_ms: Some(s.t_ms - t0),
                value: r.value,
            });
        }
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Measured;
    use crate::scenario::Mode;

    /// SYNTHETIC: 1000 single-copy samples of 1..=1000 µs host time, 2 µs less by events.
    fn latency_outcome(case: &Case) -> CaseOutcome {
        let mut o = CaseOutcome::empty(case, Status::Ok);
        o.measured = Measured {
            batch: 1,
            samples: (1..=1000)
                .map(|us| {
                    let ms = f64::from(us) / 1e3;
                    SampleTimes {
                        lanes: vec![(Lane::H2d, ms)],
                        wall_ms: ms,
                        event_ms: vec![(Lane::H2d, ms - 0.002)],
                        register_ms: None,
                        unregister_ms: None,
                        load: None,
                    }
                })
                .collect(),
            stopped_by: Some(crate::results::StopReason::MaxSamples),
        };
        o
    }

    fn row_of(case: &Case) -> (Row, Vec<SampleRow>) {
        let machine = crate::platform::this_machine(true);
        let ctx = RowContext {
            run_id: "r",
            started_at: "t",
            machine: &machine,
        };
        let (mut rows, samples) = Row::from_outcome(&latency_outcome(case), &ctx, case);
        (rows.remove(0), samples)
    }

    #[test]
    fn a_latency_row_carries_host_percentiles_and_the_event_median_in_us() {
        let mut case = crate::strategy::tests::test_case();
        case.mode = Mode::Latency;
        case.size = 4;
        let (row, samples) = row_of(&case);
        let close = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-6);
        assert!(close(row.lat_min_us, 1.0), "{:?}", row.lat_min_us);
        assert!(close(row.lat_p50_us, 500.5), "{:?}", row.lat_p50_us);
        assert!(close(row.lat_p90_us, 900.1), "{:?}", row.lat_p90_us);
        assert!(close(row.lat_p99_us, 990.01), "{:?}", row.lat_p99_us);
        assert!(
            close(row.lat_event_p50_us, 498.5),
            "{:?}",
            row.lat_event_p50_us
        );
        assert_eq!(row.samples, 1000);
        // Every raw sample is kept: host (wall) and event series, 1000 each.
        for series in [Series::WallTime, Series::EventTime] {
            let n = samples.iter().filter(|s| s.series == series).count();
            assert_eq!(n, 1000, "{series}");
        }
    }

    #[test]
    fn a_bandwidth_row_has_no_latency_columns() {
        let case = crate::strategy::tests::test_case();
        let (row, _) = row_of(&case);
        assert_eq!(
            (row.lat_p50_us, row.lat_p99_us, row.lat_event_p50_us),
            (None, None, None)
        );
        assert!(row.bw_median_gbs.is_some());
    }
}
