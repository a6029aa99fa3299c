//! Latency in the report and on the console: the cells a table shows for a row whose number is a
//! time, the size curve (time and bandwidth against size on log-log axes with the fit
//! `T(V) = a + V / b`), the cost of each way of waiting and of a launch (empty kernel), the
//! zero-copy read latency per footprint (pointer chase), the sentences in plain words and the
//! platform page's latency table. Everything comes from measured rows that finished: a number
//! that was not measured is not said and not drawn.

use super::CaseRow;
use super::chart::{self, Bars, Figure, keep_drawable};
use super::html::{escape, table};
use super::labels::strategy_words;
use crate::results::{Lane, ResultSet, Row, Samples};
use crate::scenario::{Engine, HostKind, Mode, Wait};
use crate::stats::{SizeFit, SizePoint, fit_size_curve};
use std::fmt::Write;

mod curve;
mod finding;
mod words;

pub use curve::size_curve;
pub use finding::{
    Chase, ChaseLoad, CopyFinding, DiffVerdict, Difference, FitFinding, LatencyFinding, Launch,
    MIN_FIT_SIZES, NOISE_FLOOR_SHARE, NOISE_FLOOR_US, NoBandwidth, Timed,
};

/// The time a row measured, as its tables show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowTime {
    /// The median, µs.
    pub p50_us: f64,
    /// The 99th percentile, µs, where samples of one operation were kept.
    pub p99_us: Option<f64>,
    /// What one value is: one operation, one launch of a back-to-back batch, one dependent load.
    pub per: Per,
}

/// What one time of a [`RowTime`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// One copy, one call, or one launch and wait, timed alone.
    Operation,
    /// One launch of a batch launched back to back (the launch rate's inverse).
    Launch,
    /// One dependent load of the pointer chase (shown in ns).
    Load,
}

/// The time of a row whose number is a time ([`Row::measures_time`]), or `None` for bandwidth
/// rows and rows without a measured time.
pub fn row_time(r: &Row) -> Option<RowTime> {
    if !r.measures_time() {
        return None;
    }
    if r.engine.is_chase() {
        return r.lat_p50_us.map(|p50_us| RowTime {
            p50_us,
            p99_us: r.lat_p99_us,
            per: Per::Load,
        });
    }
    match r.lat_p50_us {
        Some(p50_us) => Some(RowTime {
            p50_us,
            p99_us: r.lat_p99_us,
            per: Per::Operation,
        }),
        // The launch rate: `time_median_ms` is per launch of the batch.
        None => r.time_median_ms.map(|ms| RowTime {
            p50_us: ms * 1e3,
            p99_us: None,
            per: Per::Launch,
        }),
    }
}

/// `8.60 µs`, or for a chase load `1225 ns`.
pub fn fmt_time(us: f64, per: Per) -> String {
    match per {
        Per::Load => format!("{:.0} ns", us * 1e3),
        Per::Operation | Per::Launch => format!("{us:.2} µs"),
    }
}

/// The two cells a table shows in place of the median GB/s and its spread for a time row:
/// `8.60 µs` and `p99 10.10 µs` (`per launch` for the launch rate).
pub fn time_cells(r: &Row) -> Option<(String, String)> {
    let t = row_time(r)?;
    let tail = match (t.per, t.p99_us) {
        (Per::Launch, _) => "per launch".to_string(),
        (per, Some(p99)) => format!("p99 {}", fmt_time(p99, per)),
        (_, None) => String::new(),
    };
    Some((fmt_time(t.p50_us, t.per), tail))
}

/// An approximate size in binary units for a fitted (not measured) byte count: `207 KiB`.
fn approx_size(bytes: f64) -> String {
    const UNITS: [(&str, f64); 3] = [("GiB", 1073741824.0), ("MiB", 1048576.0), ("KiB", 1024.0)];
    for (name, m) in UNITS {
        if bytes >= m {
            let v = bytes / m;
            return if v < 10.0 {
                format!("{v:.1} {name}")
            } else {
                format!("{v:.0} {name}")
            };
        }
    }
    format!("{bytes:.0} B")
}

/// The fit of the host-clock medians of `rows` (one size each), when two sizes or more fit.
/// Whether it determines a bandwidth is [`FitFinding`]'s to say.
fn fit_rows<'r>(rows: impl IntoIterator<Item = &'r Row>) -> Option<SizeFit> {
    let points: Vec<SizePoint> = rows
        .into_iter()
        .filter_map(|r| {
            r.lat_p50_us.map(|median_us| SizePoint {
                bytes: r.size_bytes,
                median_us,
            })
        })
        .collect();
    fit_size_curve(&points).ok()
}

/// Rows of finished copies timed one at a time with `mode`, `host` memory without flags (or
/// any flags when `host` is pageable) and `lane`, smallest size first.
fn copies<'r>(rows: &[&'r Row], mode: Mode, host: HostKind, lane: Lane) -> Vec<&'r Row> {
    let mut out: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.status.is_ok() && r.engine == Engine::Copy && r.mode == mode)
        .filter(|r| r.host == Some(host) && r.flags.is_empty() && r.lane == lane)
        .filter(|r| r.wait.is_none_or(|w| w == Wait::Stream) && r.lat_p50_us.is_some())
        .filter(|r| r.placement().is_none())
        .collect();
    out.sort_by_key(|r| r.size_bytes);
    out
}

/// The latency answer in plain words, one sentence per measured quantity ([`LatencyFinding`]);
/// empty when the rows hold no latency measurement. One GPU's rows are meant (see
/// [`Row::one_gpu_view`]); differences are judged on the per-sample times in `samples`.
pub fn sentences(rows: &[&Row], samples: &Samples) -> Vec<String> {
    LatencyFinding::of(rows, samples).lines()
}

/// How a host waited, in words for a bar label.
fn wait_words(w: Option<Wait>) -> &'static str {
    match w {
        None | Some(Wait::Stream) => "cuStreamSynchronize (the run's context)",
        Some(Wait::Spin) => "cuStreamSynchronize, SCHED_SPIN context",
        Some(Wait::Yield) => "cuStreamSynchronize, SCHED_YIELD context",
        Some(Wait::Blocking) => "cuStreamSynchronize, SCHED_BLOCKING_SYNC context",
        Some(Wait::EventBlocking) => "cuEventSynchronize, BLOCKING_SYNC event",
        Some(Wait::Query) => "cuStreamQuery polling",
    }
}

/// One bar of a latency bar chart: its label, the median and the (min, p99) whisker.
struct Bar {
    label: String,
    p50: f64,
    whisker: Option<(f64, f64)>,
}

/// A one-series bar chart of `bars` (the first [`chart::MAX_CATEGORIES`]), with its caption;
/// `None` without bars.
fn bar_figure(
    title: String,
    x_desc: &str,
    mut bars: Vec<Bar>,
    digits: usize,
    caption: &str,
    kind: &str,
) -> Option<Figure> {
    if bars.is_empty() {
        return None;
    }
    let left_out = keep_drawable(&mut bars, "rows are in the parameter table.");
    let b = Bars {
        title,
        x_desc: x_desc.into(),
        series: vec!["p50".into()],
        categories: bars.iter().map(|b| b.label.clone()).collect(),
        values: bars.iter().map(|b| vec![Some(b.p50)]).collect(),
        whiskers: bars.iter().map(|b| vec![b.whisker]).collect(),
        digits,
        ..Bars::default()
    };
    Some(Figure::bars(&b, caption, left_out, chart::plot_kind(kind)))
}

/// One bar of the waiting plot: its label, median µs and (min, p99) whisker.
fn wait_bar(label: &str, r: &Row) -> Option<Bar> {
    let t = row_time(r)?;
    let what = match r.mode {
        Mode::Latency => format!("launch + {}", wait_words(r.wait)),
        Mode::Enqueue => "cuLaunchKernel call alone".to_string(),
        _ => format!("one of {} launches back to back", r.batch),
    };
    Some(Bar {
        label: format!("{label}{what}"),
        p50: t.p50_us,
        whisker: r.lat_min_us.zip(r.lat_p99_us),
    })
}

/// Bars: an empty kernel launched and waited for in each way, the launch call alone and the
/// launch rate; bar = p50 µs, whisker = min to p99. `None` without empty-kernel rows.
pub fn waits(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Option<Figure> {
    let bars: Vec<Bar> = rows
        .iter()
        .filter(|(_, r)| r.engine == Engine::Empty && r.status.is_ok())
        .filter_map(|(set, r)| wait_bar(&labels[*set], r))
        .collect();
    bar_figure(
        format!("{scenario}: what does waiting for the GPU cost?"),
        "µs per empty kernel (host clock, p50)",
        bars,
        2,
        "One empty kernel per sample, launched and waited for as each bar says (SCHED_* contexts are created with that flag for the case); bar: median of the host clock, whisker: min to p99. The call-alone bar holds the stream with the spin gate, so the call never waits. Back-to-back launches: the batch's time divided by its launches.",
        "latency-waits",
    )
}

/// Bars: ns per dependent load of the pointer chase through mapped host memory, per footprint
/// and order. `None` without chase rows.
pub fn chases(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Option<Figure> {
    let bars: Vec<Bar> = rows
        .iter()
        .filter(|(_, r)| r.engine.is_chase() && r.status.is_ok())
        .filter_map(|(set, r)| {
            let order = if r.engine == Engine::Chase {
                "in order, 128-byte stride"
            } else {
                "random cycle"
            };
            let size = crate::units::format_size(r.size_bytes);
            Some(Bar {
                label: format!("{}{size}, {order}", labels[*set]),
                p50: r.lat_p50_us? * 1e3,
                whisker: r
                    .lat_min_us
                    .zip(r.lat_p99_us)
                    .map(|(a, b)| (a * 1e3, b * 1e3)),
            })
        })
        .collect();
    bar_figure(
        format!("{scenario}: how long does one GPU read of mapped host memory take?"),
        "ns per dependent load (event time / loads, p50)",
        bars,
        0,
        "One GPU thread follows dependent 8-byte pointers through mapped host memory of each footprint (one node per 128-byte line, in order as nvbandwidth's host_device_latency_sm, or one random cycle); bar: median per-load time over the samples, whisker: min to p99.",
        "latency-chase",
    )
}

/// The latency figures of one scenario, those its rows can draw: the size curve, the waits and
/// the pointer chase.
pub fn figures(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Vec<Figure> {
    let mut out = Vec::new();
    out.extend(size_curve(scenario, rows, labels));
    out.extend(waits(scenario, rows, labels));
    out.extend(chases(scenario, rows, labels));
    out
}

/// The comparison page's latency table (the rows whose number is a time), or nothing.
pub fn compare_table(cmp: &crate::compare::Comparison) -> String {
    let (h, rows) = crate::compare::latency_grid(cmp);
    if rows.is_empty() {
        return String::new();
    }
    let head: Vec<&str> = h.iter().map(String::as_str).collect();
    format!(
        "<h2>{}</h2>\n{}",
        escape(crate::compare::LATENCY_TITLE),
        table(&head, &rows, &|_| "")
    )
}

/// A time row's identity across runs and what it is called on the platform page.
fn platform_rows(sets: &[ResultSet]) -> Vec<(&str, Lane, String)> {
    let mut seen = std::collections::HashSet::new();
    sets.iter()
        .flat_map(|s| &s.rows)
        .filter(|r| row_time(r).is_some() && r.placement().is_none())
        .filter(|r| seen.insert((r.case_key.as_str(), r.lane)))
        .map(|r| {
            let size = crate::units::format_size(r.size_bytes);
            let what = match r.engine {
                Engine::Empty => format!(
                    "{}, {}",
                    strategy_words(r).replace(", inside device memory", ""),
                    r.mode
                ),
                e if e.is_chase() => format!("{}, {size}", strategy_words(r)),
                _ => format!("{}, {size}, {}", strategy_words(r), r.mode),
            };
            (
                r.case_key.as_str(),
                r.lane,
                format!("{} · {what}", r.case_label),
            )
        })
        .collect()
}

/// The platform page's latency section: every time a run measured, platform by platform (p50,
/// and p99 where kept), and the fitted fixed cost of pinned copies per direction. Empty when no
/// run measured a latency.
pub fn platform_section(sets: &[ResultSet], names: &[String]) -> String {
    let ids = platform_rows(sets);
    if ids.is_empty() {
        return String::new();
    }
    let mut head = vec!["latency (mode, wait)".to_string()];
    head.extend(names.iter().map(|n| format!("{n} p50 (p99)")));
    let mut rows: Vec<Vec<String>> = ids
        .iter()
        .map(|(key, lane, what)| {
            let mut row = vec![what.clone()];
            row.extend(sets.iter().map(|s| {
                s.rows
                    .iter()
                    .find(|r| r.case_key == *key && r.lane == *lane)
                    .map_or_else(|| "not measured".into(), platform_cell)
            }));
            row
        })
        .collect();
    for lane in [Lane::H2d, Lane::D2h] {
        let mut row = vec![format!(
            "pinned copy, {}: fixed cost a, bandwidth b, half-bandwidth size a·b",
            direction_lane(lane)
        )];
        let fits: Vec<Option<FitFinding>> = sets
            .iter()
            .map(|s| {
                let all: Vec<&Row> = s.rows.iter().collect();
                FitFinding::of(&copies(&all, Mode::Latency, HostKind::Alloc, lane))
            })
            .collect();
        if fits.iter().any(Option::is_some) {
            row.extend(fits.iter().map(|f| {
                f.as_ref()
                    .map_or_else(|| "not measured".into(), FitFinding::short)
            }));
            rows.push(row);
        }
    }
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut out = String::from("<h3>Latency, platform by platform</h3>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">{}</p>",
        escape(
            "Host clock per operation in µs (the chase: ns per load from CUDA events); lower is better. WDDM batches commands, so its host clock includes the submission the event time leaves out (docs/latency.md)."
        )
    );
    out.push_str(&table(&h, &rows, &|_| ""));
    out
}

fn direction_lane(lane: Lane) -> &'static str {
    match lane {
        Lane::H2d => "H2D",
        _ => "D2H",
    }
}

/// One sentence per platform after the first: each time the first platform measured, as a ratio
/// of that platform's median (above 1: slower there), the first [`MAX_LATENCY_RATIOS`] of them.
/// Empty when the first run measured no latency.
pub fn platform_sentences(sets: &[ResultSet], names: &[String]) -> Vec<String> {
    let Some(base) = sets.first() else {
        return Vec::new();
    };
    let timed: Vec<(&Row, f64)> = base
        .rows
        .iter()
        .filter(|r| r.status.is_ok() && r.placement().is_none())
        .filter_map(|r| row_time(r).map(|t| (r, t.p50_us)))
        .collect();
    let mut out = Vec::new();
    for (s, n) in sets.iter().zip(names).skip(1) {
        let parts: Vec<String> = timed
            .iter()
            .filter_map(|(b, bt)| {
                let o = s
                    .rows
                    .iter()
                    .find(|r| r.case_key == b.case_key && r.lane == b.lane && r.status.is_ok())?;
                let ot = row_time(o)?;
                Some(format!(
                    "{} {:.2}× ({} against {})",
                    super::labels::case_words(b),
                    ot.p50_us / bt,
                    fmt_time(ot.p50_us, ot.per),
                    fmt_time(*bt, ot.per)
                ))
            })
            .collect();
        if parts.is_empty() {
            continue;
        }
        let more = parts.len().saturating_sub(MAX_LATENCY_RATIOS);
        let mut t = format!(
            "Latency on {n} against {} (median time, lower is better; above 1× is slower on {n}): {}",
            names[0],
            parts[..parts.len() - more].join("; ")
        );
        if more > 0 {
            let _ = write!(t, "; {more} more in the latency table below");
        }
        t.push('.');
        out.push(t);
    }
    out
}

/// Most latency ratios one platform sentence names.
pub const MAX_LATENCY_RATIOS: usize = 12;

/// One run's cell of the platform latency table.
fn platform_cell(r: &Row) -> String {
    if !r.status.is_ok() {
        return r.status.to_field();
    }
    match time_cells(r) {
        Some((p50, tail)) if tail.is_empty() => p50,
        Some((p50, tail)) => format!("{p50} ({tail})"),
        None => "not measured".into(),
    }
}

#[cfg(test)]
mod tests;
