//! What limits each file load (`mode = "load-*"` rows): the stage that took the most of it,
//! found once ([`LoadLimit::of`]) and said in words by [`sentences`] — "limited by the disk read,
//! 1.6 GB/s" — with what the copies alone need, taken from the row that copied from one pinned
//! buffer.

use crate::results::{Row, Status};
use crate::scenario::{Cache, Mode};
use crate::units::format_size;

/// A stage of a file load, as the row's stage columns time it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `read`/`pread` (`read_ms`): from the disk when the cache was cold, else from memory.
    Read { cold: bool },
    /// Copies out of a file mapping (`fault_ms`): page faults, staging and DMA in one call.
    Mapping { cold: bool },
    /// Registering the mapping (`pin_ms`).
    Registration,
    /// The copies to the device after the reads (`dma_ms`).
    Copies,
    /// The rest of the load's time, outside the timed stages: for `load-register`, starting the
    /// child process and its CUDA context.
    Untimed { child: bool },
}

impl Stage {
    fn words(self) -> &'static str {
        match self {
            Stage::Read { cold: true } => "the disk read",
            Stage::Read { cold: false } => "the read from the page cache",
            Stage::Mapping { cold: true } => {
                "the copies out of the mapping, which fault the file in from the disk"
            }
            Stage::Mapping { cold: false } => {
                "the copies out of the mapping (page faults, the driver's staging and the DMA in one call)"
            }
            Stage::Registration => "registering the mapping",
            Stage::Copies => "the copies to the device",
            Stage::Untimed { child: true } => {
                "starting the child process and its CUDA context (the time outside the timed stages)"
            }
            Stage::Untimed { child: false } => "work outside the timed stages",
        }
    }
}

/// The stage that took the most of one load, and the load's whole time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadLimit {
    pub stage: Stage,
    pub stage_ms: f64,
    pub total_ms: f64,
    pub bytes: u64,
}

impl LoadLimit {
    /// The limit of a finished file-load row; `None` for other rows and rows without stages.
    pub fn of(r: &Row) -> Option<LoadLimit> {
        let cold = r.cache? == Cache::Cold;
        if r.status != Status::Ok {
            return None;
        }
        // O_DIRECT reads skip the page cache: warm or cold, they read the disk.
        let disk = cold || r.mode == Mode::LoadDirect;
        let stages = [
            (Stage::Read { cold: disk }, r.read_ms),
            (Stage::Mapping { cold }, r.fault_ms),
            (Stage::Registration, r.pin_ms),
            (Stage::Copies, r.dma_ms),
        ];
        let total_ms = r.wall_median_ms?;
        let timed: Vec<(Stage, f64)> = stages
            .into_iter()
            .filter_map(|(s, ms)| ms.map(|m| (s, m)))
            .collect();
        if timed.is_empty() {
            return None;
        }
        let untimed = total_ms - timed.iter().map(|(_, ms)| ms).sum::<f64>();
        let child = r.mode == Mode::LoadRegister;
        let (stage, stage_ms) = timed
            .into_iter()
            .chain((untimed > 0.0).then_some((Stage::Untimed { child }, untimed)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(LoadLimit {
            stage,
            stage_ms,
            total_ms,
            bytes: r.size_bytes,
        })
    }

    fn gbs(&self, ms: f64) -> f64 {
        self.bytes as f64 / (ms * 1e-3) / 1e9
    }
}

/// Per cache state (cold first), the load that finished soonest: "cold cache, fastest here:
/// pread-16m, 4.03 GiB in 0.76 s (5.69 GB/s), limited by the disk read; holds 48 MiB page-locked."
/// Then the other ways the measurements do not rank against it, with what each holds (a way that
/// pins less may be the one to take): those within `near` of its bandwidth and, where both were
/// loaded more than once, those whose fastest load came in before its slowest (where every way
/// was loaded once, [`sentences`] ends with [`one_load_each`]).
fn fastest(rows: &[&Row], near: f64) -> Vec<String> {
    [Cache::Cold, Cache::Warm]
        .into_iter()
        .filter_map(|cache| {
            let mut done: Vec<(&Row, LoadLimit)> = rows
                .iter()
                .filter(|r| r.cache == Some(cache))
                .filter_map(|r| LoadLimit::of(r).map(|l| (*r, l)))
                .collect();
            done.sort_by(|a, b| a.1.total_ms.total_cmp(&b.1.total_ms));
            let (r, l) = done.first()?;
            let close: Vec<String> = done[1..]
                .iter()
                .filter(|(o, ol)| ol.gbs(ol.total_ms) >= near * l.gbs(l.total_ms) || overlap(r, o))
                .map(|(o, ol)| format!("{} {:.2} s{} ({})", o.case_label, ol.total_ms / 1e3, range(o), held(o)))
                .collect();
            let close = match (close.is_empty(), r.samples > 1) {
                (true, _) => String::new(),
                (false, false) => format!(" Within {:.0}% of it: {}.", 100.0 * (1.0 - near), close.join("; ")),
                (false, true) => format!(
                    " Not told apart from it (within {:.0}%, or loads overlapping its range): {}.",
                    100.0 * (1.0 - near),
                    close.join("; ")
                ),
            };
            Some(format!(
                "{cache} cache, fastest here: {}, {} in {:.2} s{} ({:.2} GB/s), limited by {}; {}.{close}",
                r.case_label,
                format_size(l.bytes),
                l.total_ms / 1e3,
                range(r),
                l.gbs(l.total_ms),
                l.stage.words(),
                held(r)
            ))
        })
        .collect()
}

/// Where every way was loaded once: a sentence saying so, since single loads of one way can
/// differ by more than 5% from one run to the next (by up to a third on a VM's virtual disk,
/// docs/models.md), so one run does not rank ways that close.
fn one_load_each(rows: &[&Row]) -> Option<String> {
    let mut loads = rows
        .iter()
        .filter(|r| LoadLimit::of(r).is_some())
        .map(|r| r.samples);
    let first = loads.next()?;
    (first <= 1 && loads.all(|n| n <= 1)).then(|| {
        "each way was loaded once: single loads of one way can differ by more than 5% from one run to the next, so one run does not rank ways that close: run it with --repeat 3 to load each way three times and give each a median and a range."
            .to_string()
    })
}

/// Whether two ways' loads overlap: both loaded more than once and the second's fastest load came
/// in before the first's slowest.
fn overlap(fastest: &Row, other: &Row) -> bool {
    match (
        fastest.samples > 1 && other.samples > 1,
        fastest.time_max_ms,
        other.time_min_ms,
    ) {
        (true, Some(max), Some(min)) => min <= max,
        _ => false,
    }
}

/// " (median of 3 loads, 2.10–2.45 s)" for a way loaded more than once; nothing for one load.
fn range(r: &Row) -> String {
    match (r.samples > 1, r.time_min_ms, r.time_max_ms) {
        (true, Some(min), Some(max)) => format!(
            " (median of {} loads, {:.2}–{:.2} s)",
            r.samples,
            min / 1e3,
            max / 1e3
        ),
        _ => String::new(),
    }
}

/// What the way holds page-locked: a registering load pins the whole file, in its child.
fn held(r: &Row) -> String {
    if r.mode == Mode::LoadRegister {
        format!(
            "page-locks {} (the file's mapping) in its child process while it loads",
            format_size(r.size_bytes)
        )
    } else {
        format!("holds {} page-locked", format_size(r.pinned_bytes))
    }
}

/// The answer first — per cache state, the fastest way for this file here, what limits it and what
/// it pins — then one sentence per file-load row (`mmap, cold cache: 4.08 GB in 2.61 s (1.56
/// GB/s), limited by the disk read (1.60 GB/s, 98% of the load)`), then what the copies alone need.
/// `near`: the share of the fastest's bandwidth that counts as "as fast" (`NEAR_FASTEST`).
pub fn sentences(rows: &[&Row], near: f64) -> Vec<String> {
    let mut out = fastest(rows, near);
    for r in rows {
        let Some(l) = LoadLimit::of(r) else { continue };
        let cache = r.cache.map(|c| c.to_string()).unwrap_or_default();
        let resident = match (r.resident_before_bytes, r.resident_after_bytes) {
            (Some(b), Some(a)) => format!(
                "; {} of it was cached before, {} after",
                format_size(b as u64),
                format_size(a as u64)
            ),
            (Some(b), None) => format!("; {} of it was cached before", format_size(b as u64)),
            _ => "; how much of it was cached was not counted".to_string(),
        };
        out.push(format!(
            "{}, {cache} cache: {} in {:.2} s ({:.2} GB/s), limited by {} ({:.2} GB/s, {:.0}% of the load){resident}; {}.",
            r.case_label,
            format_size(l.bytes),
            l.total_ms / 1e3,
            l.gbs(l.total_ms),
            l.stage.words(),
            l.gbs(l.stage_ms),
            100.0 * l.stage_ms / l.total_ms.max(f64::MIN_POSITIVE),
            held(r)
        ));
    }
    let link = rows
        .iter()
        .filter(|r| r.mode == Mode::LoadPinned && r.status == Status::Ok)
        .filter_map(|r| r.dma_ms.map(|ms| (ms, r.size_bytes)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((ms, bytes)) = link {
        out.push(format!(
            "the copies alone, from one pinned buffer, need {:.2} s for {} ({:.1} GB/s): what the link allows.",
            ms / 1e3,
            format_size(bytes),
            bytes as f64 / (ms * 1e-3) / 1e9
        ));
    }
    out.extend(one_load_each(rows));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::answer::NEAR_FASTEST;

    fn row(label: &str, mode: Mode, cache: Cache, stages: [Option<f64>; 4], wall: f64) -> Row {
        Row {
            case_label: label.into(),
            mode,
            cache: Some(cache),
            size_bytes: 4_000_000_000,
            read_ms: stages[0],
            fault_ms: stages[1],
            pin_ms: stages[2],
            dma_ms: stages[3],
            wall_median_ms: Some(wall),
            resident_before_bytes: Some(0.0),
            ..Row::default()
        }
    }

    #[test]
    fn the_longest_stage_limits_and_a_cold_read_is_the_disk() {
        let r = row(
            "pread-16m",
            Mode::LoadPread,
            Cache::Cold,
            [Some(2400.0), None, None, Some(100.0)],
            2500.0,
        );
        let l = LoadLimit::of(&r).expect("a limit");
        assert_eq!(l.stage, Stage::Read { cold: true });
        let s = sentences(&[&r], NEAR_FASTEST);
        assert_eq!(
            s[0],
            "cold cache, fastest here: pread-16m, 3.73 GiB in 2.50 s (1.60 GB/s), limited by the disk read; holds 0 B page-locked."
        );
        assert!(
            s[1].contains("limited by the disk read (1.67 GB/s, 96% of the load)"),
            "{s:?}"
        );
        assert!(s[1].starts_with("pread-16m, cold cache: "), "{s:?}");
    }

    #[test]
    fn the_ways_within_five_percent_of_the_fastest_are_named_with_what_they_hold() {
        let mut ring = row(
            "pread-64m",
            Mode::LoadPread,
            Cache::Cold,
            [Some(1800.0), None, None, Some(2.0)],
            1860.0,
        );
        ring.pinned_bytes = 192 << 20;
        let mut whole = row(
            "pinned",
            Mode::LoadPinned,
            Cache::Cold,
            [Some(1860.0), None, None, Some(78.0)],
            1940.0,
        );
        whole.pinned_bytes = 4_000_000_000;
        let far = row(
            "read",
            Mode::LoadRead,
            Cache::Cold,
            [Some(1900.0), None, None, Some(500.0)],
            2440.0,
        );
        let s = sentences(&[&far, &whole, &ring], NEAR_FASTEST);
        assert!(
            s[0].starts_with("cold cache, fastest here: pread-64m, 3.73 GiB in 1.86 s"),
            "{s:?}"
        );
        assert!(
            s[0].ends_with(
                "holds 192 MiB page-locked. Within 5% of it: pinned 1.94 s (holds 3.73 GiB page-locked)."
            ),
            "pinned is 4.1% slower, read 24%: {s:?}"
        );
    }

    #[test]
    fn an_o_direct_read_is_the_disk_read_warm_or_cold() {
        let warm = row(
            "direct-16m",
            Mode::LoadDirect,
            Cache::Warm,
            [Some(2200.0), None, None, Some(2.0)],
            2230.0,
        );
        let l = LoadLimit::of(&warm).expect("a limit");
        assert_eq!(l.stage, Stage::Read { cold: true });
        let s = sentences(&[&warm], NEAR_FASTEST);
        assert!(s[1].contains("limited by the disk read ("), "{s:?}");
        let pread = row(
            "pread-16m",
            Mode::LoadPread,
            Cache::Warm,
            [Some(540.0), None, None, Some(2.0)],
            545.0,
        );
        let l = LoadLimit::of(&pread).expect("a limit");
        assert_eq!(l.stage, Stage::Read { cold: false });
    }

    #[test]
    fn a_warm_mapping_and_the_link_from_the_pinned_row() {
        let m = row(
            "mmap",
            Mode::LoadMmap,
            Cache::Warm,
            [None, Some(600.0), None, None],
            610.0,
        );
        let p = row(
            "pinned",
            Mode::LoadPinned,
            Cache::Warm,
            [Some(900.0), None, None, Some(80.0)],
            990.0,
        );
        let s = sentences(&[&m, &p], NEAR_FASTEST);
        assert!(
            s[0].starts_with("warm cache, fastest here: mmap, 3.73 GiB in 0.61 s"),
            "only the warm state was measured: {s:?}"
        );
        assert!(
            s[1].contains("limited by the copies out of the mapping"),
            "{s:?}"
        );
        assert!(
            s[2].contains("limited by the read from the page cache"),
            "{s:?}"
        );
        assert!(s[3].contains("need 0.08 s"), "{s:?}");
    }

    #[test]
    fn a_registering_load_dominated_by_its_child_says_so() {
        let r = row(
            "register",
            Mode::LoadRegister,
            Cache::Cold,
            [None, Some(50.0), Some(380.0), Some(80.0)],
            2660.0,
        );
        let l = LoadLimit::of(&r).expect("a limit");
        assert_eq!(l.stage, Stage::Untimed { child: true });
        let s = sentences(&[&r], NEAR_FASTEST);
        assert!(
            s[1].contains("limited by starting the child process and its CUDA context"),
            "{s:?}"
        );
        assert!(s[1].contains("81% of the load"), "{s:?}");
        assert!(
            s[1].contains("page-locks 3.73 GiB (the file's mapping) in its child process"),
            "{s:?}"
        );
    }

    #[test]
    fn other_rows_and_failed_loads_say_nothing() {
        let mut r = row("register", Mode::LoadRegister, Cache::Cold, [None; 4], 1.0);
        assert!(LoadLimit::of(&r).is_none(), "no stage timed");
        r.pin_ms = Some(1.0);
        r.status = Status::Skipped("x".into());
        assert!(LoadLimit::of(&r).is_none());
        assert!(LoadLimit::of(&Row::default()).is_none());
    }

    fn loaded(label: &str, cache: Cache, loads: [f64; 3]) -> Row {
        let mut r = row(
            label,
            Mode::LoadPread,
            cache,
            [Some(loads[1] - 10.0), None, None, Some(5.0)],
            loads[1],
        );
        (r.samples, r.time_min_ms, r.time_max_ms) = (3, Some(loads[0]), Some(loads[2]));
        r
    }

    #[test]
    fn ways_loaded_several_times_are_told_apart_by_their_ranges() {
        let fastest = loaded("pread-64m", Cache::Cold, [2000.0, 2100.0, 2600.0]);
        // 12% slower by its median, but its fastest load came in before the fastest way's slowest.
        let overlapping = loaded("pread-16m", Cache::Cold, [2300.0, 2350.0, 2400.0]);
        let apart = loaded("read", Cache::Cold, [2700.0, 2800.0, 2900.0]);
        let s = sentences(&[&apart, &overlapping, &fastest], NEAR_FASTEST);
        assert!(
            s[0].starts_with("cold cache, fastest here: pread-64m, 3.73 GiB in 2.10 s (median of 3 loads, 2.00–2.60 s)"),
            "{s:?}"
        );
        assert!(
            s[0].contains("Not told apart from it (within 5%, or loads overlapping its range): pread-16m 2.35 s (median of 3 loads, 2.30–2.40 s) (holds"),
            "{s:?}"
        );
        assert!(!s[0].contains("read 2.80"), "{s:?}");
        assert!(!s.iter().any(|x| x.contains("loaded once")), "{s:?}");
    }

    #[test]
    fn ways_loaded_once_say_that_one_run_does_not_rank_them() {
        let mut a = row(
            "pread-64m",
            Mode::LoadPread,
            Cache::Cold,
            [Some(2000.0), None, None, Some(5.0)],
            2010.0,
        );
        let mut b = row(
            "pread-16m",
            Mode::LoadPread,
            Cache::Cold,
            [Some(2300.0), None, None, Some(5.0)],
            2310.0,
        );
        (a.samples, b.samples) = (1, 1);
        let s = sentences(&[&a, &b], NEAR_FASTEST);
        assert!(!s[0].contains("Within"), "15% apart: {s:?}");
        assert!(
            s.last().is_some_and(
                |x| x.starts_with("each way was loaded once") && x.contains("--repeat 3")
            ),
            "{s:?}"
        );
        // One way loaded three times: the runs are not all single loads.
        b.samples = 3;
        let s = sentences(&[&a, &b], NEAR_FASTEST);
        assert!(!s.iter().any(|x| x.contains("loaded once")), "{s:?}");
    }
}
