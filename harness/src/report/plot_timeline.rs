//! Plot (d): hold-after-free timelines — samples with series `timeline:<observer>.<metric>`,
//! x = milliseconds since the free, y = the change in MiB against the same reading before the
//! case allocated anything (`phase:<metric>` at `before`; a file without it falls back to the
//! first reading after the free, and the axis says so).
//!
//! A series is drawn only when it moved by more than the noise of its reading (declared with
//! its observer in [`crate::accounting`]):
//! over the readings before allocation and during the hold, its highest minus its lowest value
//! must exceed that observer's noise. A case with no such series gets no chart; a scenario where
//! nothing moved gets one sentence saying so. At most [`MAX_LINES`] lines per chart (the largest
//! moves) and [`MAX_CHARTS`] charts per scenario; the other moving series go to a table. Every
//! chart names each line's observer in a legend at its top.

use super::CaseRow;
use super::chart::{self, Figure, Line, XAxis, downsample};
use super::labels::case_memory_words;
use crate::accounting::{ReadingFacts, ReadingKind};
use crate::results::{Baseline, ResultSet, Timelines};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// Points kept per line; longer timelines are reduced to per-bucket min and max.
pub const MAX_POINTS: usize = 2_000;
/// Lines one timeline chart draws.
pub const MAX_LINES: usize = 5;
/// Timeline charts per scenario; further cases go to the table.
pub const MAX_CHARTS: usize = 6;

/// The sentence stating the noise rule, as the page prints it.
pub const NOISE_RULE: &str = "A series is drawn only when it moved by more than its observer's noise (highest minus lowest reading, before allocation and during the hold): pinscope's ledger any change; this process's counters (VmRSS, working set, NVML per-process) 2–4 MiB; device-wide counters (CUDA, NVML, DXGI, PDH) 4 MiB; system-wide host counters and the cgroup's (MemAvailable, Committed_AS, AnonPages, memory.current) 64 MiB.";

const MIB: f64 = 1024.0 * 1024.0;

/// The legend text of a series: the reader's words for reading `metric`, its name and its noise.
pub fn series_name(metric: &str, facts: &ReadingFacts) -> String {
    let noise = if facts.noise.mib == 0.0 {
        "exact".to_string()
    } else {
        format!("noise {} MiB", facts.noise.mib)
    };
    match facts.words {
        Some(n) => format!("{n} [{metric}; {noise}]"),
        None => format!("{metric} [{noise}]"),
    }
}

/// Timeline points and baselines of every set, by (set, case key).
pub struct TimelineIndex<'a> {
    map: HashMap<(usize, &'a str), (&'a Timelines, Option<&'a Baseline>)>,
}

impl<'a> TimelineIndex<'a> {
    pub fn new(sets: &'a [ResultSet]) -> Self {
        let mut map = HashMap::new();
        for (i, s) in sets.iter().enumerate() {
            for (key, metrics) in s.samples.timelines() {
                map.insert((i, key), (metrics, s.samples.before(key)));
            }
        }
        TimelineIndex { map }
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A series that moved: its points as MiB of change against its baseline.
pub struct Moving<'a> {
    pub metric: &'a str,
    pub facts: ReadingFacts,
    /// (ms after free, MiB of change).
    pub points: Vec<(f64, f64)>,
    /// Highest minus lowest reading, before allocation included (MiB).
    pub range: f64,
    /// Whether the baseline is the reading before allocation (else the first after the free).
    pub from_before: bool,
}

/// The series of one case that moved by more than their observer's noise, largest move first;
/// and how many memory series stayed within it.
pub fn moving_series<'a>(
    metrics: &'a Timelines,
    before: Option<&Baseline>,
) -> (Vec<Moving<'a>>, usize) {
    let mut moving = Vec::new();
    let mut still = 0usize;
    // Only memory that is held and released: links, totals, budgets, peaks and `free` (the
    // mirror of `used`) are not drawn.
    let held = metrics
        .iter()
        .filter(|(_, t)| t.facts.kind == ReadingKind::Held);
    for (metric, line) in held {
        let mut p = line.points.clone();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let base = before.and_then(|b| b.get(&**metric)).copied();
        let Some(zero) = base.or_else(|| p.first().map(|q| q.1)) else {
            continue;
        };
        let (lo, hi) = p
            .iter()
            .map(|q| q.1)
            .chain(base)
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
        let range = (hi - lo) / MIB;
        if range <= line.facts.noise.mib || range == 0.0 {
            still += 1;
            continue;
        }
        moving.push(Moving {
            metric: metric.as_ref(),
            facts: line.facts,
            points: p.iter().map(|q| (q.0, (q.1 - zero) / MIB)).collect(),
            range,
            from_before: base.is_some(),
        });
    }
    moving.sort_by(|a, b| b.range.total_cmp(&a.range));
    (moving, still)
}

/// The y axis's description for these series.
fn y_desc(lines: &[Moving<'_>]) -> &'static str {
    if lines.iter().all(|m| m.from_before) {
        "change against before allocation (MiB)"
    } else {
        "change against the first reading after the free (MiB)"
    }
}

/// One case's chart: the lines of `moving` (already limited), titled with the case.
pub fn case_chart(case: &str, moving: &[Moving<'_>]) -> Figure {
    let series: Vec<Line> = moving
        .iter()
        .map(|m| Line {
            name: series_name(m.metric, &m.facts),
            points: downsample(&m.points, MAX_POINTS)
                .into_iter()
                .map(|(x, y)| (x, y, y, y))
                .collect(),
        })
        .collect();
    let title = format!("After free: {case}");
    let caption = "Each line is one observer's reading while holding after the free, as the change against its reading before the case allocated anything: 0 is back where it started; a line that stays away from 0 is memory still held, a slow return a lazy release.".to_string();
    let svg = chart::lines(
        &title,
        "ms after free",
        y_desc(moving),
        &series,
        &[],
        XAxis::Linear,
    );
    Figure::from_svg(title, caption, svg, chart::plot_kind("timeline"))
}

/// What a scenario's timelines came to: charts drawn, series left for the table.
#[derive(Default)]
struct Tally {
    out: String,
    charts: usize,
    still: usize,
    cases_with: usize,
    table: Vec<Vec<String>>,
}

impl Tally {
    fn add_case(&mut self, case: String, moving: &[Moving<'_>]) {
        let drawn = if self.charts < MAX_CHARTS {
            self.charts += 1;
            MAX_LINES.min(moving.len())
        } else {
            0
        };
        if drawn > 0 {
            self.out
                .push_str(&case_chart(&case, &moving[..drawn]).to_html());
        }
        for m in &moving[drawn..] {
            let first = m.points.first().map_or(0.0, |p| p.1);
            let last = m.points.last().map_or(0.0, |p| p.1);
            self.table.push(vec![
                case.clone(),
                series_name(m.metric, &m.facts),
                format!("{first:+.1}"),
                format!("{last:+.1}"),
                format!("{:.1}", m.range),
            ]);
        }
    }
}

/// The timeline section of one scenario, as HTML.
pub fn scenario_timelines(
    idx: &TimelineIndex<'_>,
    rows: &[CaseRow<'_>],
    labels: &[String],
) -> String {
    let mut t = Tally::default();
    let mut seen = HashSet::new();
    for (set, r) in rows {
        if !seen.insert((*set, r.case_key.as_str())) {
            continue;
        }
        let Some((metrics, before)) = idx.map.get(&(*set, r.case_key.as_str())) else {
            continue;
        };
        t.cases_with += 1;
        let (moving, still) = moving_series(metrics, *before);
        t.still += still;
        if !moving.is_empty() {
            t.add_case(format!("{}{}", labels[*set], case_memory_words(r)), &moving);
        }
    }
    if t.cases_with == 0 {
        return t.out;
    }
    let mut out = t.out;
    if t.charts == 0 && t.table.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">After free: no memory observer moved by more than its noise over the hold, in {} case(s) ({} series checked), so no timeline is drawn. {NOISE_RULE}</p>",
            t.cases_with, t.still
        );
    } else {
        let _ = writeln!(
            out,
            "<p class=\"note\">{NOISE_RULE} {} series stayed within their noise and are not drawn.</p>",
            t.still
        );
    }
    if !t.table.is_empty() {
        out.push_str("<details><summary>Further timeline series that moved</summary>\n");
        out.push_str(&super::html::table(
            &[
                "case",
                "series",
                "first MiB (change)",
                "last MiB (change)",
                "range MiB",
            ],
            &t.table,
            &|_| "",
        ));
        out.push_str("</details>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Timeline;

    /// The timeline of reading `metric` with `points` given in MiB.
    fn series(metric: &str, points: &[(f64, f64)]) -> Timeline {
        Timeline {
            points: points.iter().map(|(t, v)| (*t, v * MIB)).collect(),
            ..Timeline::of(metric)
        }
    }

    #[test]
    fn only_series_past_their_observers_noise_move() {
        let mut t = Timelines::new();
        // System-wide: 40 MiB of wobble is inside its 64 MiB noise.
        t.insert(
            "procfs.mem_available".into(),
            series("procfs.mem_available", &[(0.0, 1000.0), (5.0, 1040.0)]),
        );
        // Own process: 300 MiB still held after the free is past 2 MiB.
        t.insert(
            "procfs.vm_rss".into(),
            series("procfs.vm_rss", &[(0.0, 400.0), (5.0, 400.0)]),
        );
        // The ledger moves by one byte: exact, so it moved.
        t.insert(
            "ledger.pinned".into(),
            series("ledger.pinned", &[(0.0, 1.0 / MIB), (5.0, 1.0 / MIB)]),
        );
        // A peak and a mirror of `used` are never drawn.
        t.insert(
            "procfs.vm_hwm".into(),
            series("procfs.vm_hwm", &[(0.0, 9000.0)]),
        );
        t.insert(
            "cuda.free".into(),
            series("cuda.free", &[(0.0, 1.0), (5.0, 9000.0)]),
        );
        let mut before = Baseline::new();
        before.insert("procfs.vm_rss".into(), 100.0 * MIB);
        before.insert("ledger.pinned".into(), 0.0);
        before.insert("procfs.mem_available".into(), 1010.0 * MIB);
        let (moving, still) = moving_series(&t, Some(&before));
        let names: Vec<&str> = moving.iter().map(|m| m.metric).collect();
        assert_eq!(names, ["procfs.vm_rss", "ledger.pinned"]);
        assert_eq!(still, 1);
        // The y values are the change against before allocation.
        assert_eq!(moving[0].points, vec![(0.0, 300.0), (5.0, 300.0)]);
        assert!(moving[0].from_before);
        // Without a baseline the first reading after the free is 0.
        let (moving, _) = moving_series(&t, None);
        assert!(moving.iter().all(|m| !m.from_before));
        assert!(moving.iter().all(|m| m.metric != "procfs.vm_rss"));
    }

    #[test]
    fn legend_names_the_observer_and_its_noise() {
        let name = |r: &str| series_name(r, &ReadingFacts::of(r));
        assert_eq!(
            name("procfs.mem_available"),
            "MemAvailable [procfs.mem_available; noise 64 MiB]"
        );
        assert_eq!(
            name("ledger.pinned"),
            "pinscope ledger: page-locked [ledger.pinned; exact]"
        );
        assert_eq!(name("pdh.x"), "pdh.x [noise 4 MiB]");
    }
}
