//! Plot (d): hold-after-free timelines — samples with series `timeline:<observer>.<metric>`,
//! x = milliseconds since the free. One chart per case (named by the case), drawing only the
//! memory series that change (by at least [`MIN_CHANGE_MIB`]), in MiB, at most
//! [`MAX_LINES`] of them; further changing series are listed in a table, constants counted.

use super::CaseRow;
use super::chart::{self, Figure, Line, XAxis, downsample};
use super::labels::case_memory_words;
use crate::results::{ResultSet, Timelines};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// Points kept per line; longer timelines are reduced to per-bucket min and max.
pub const MAX_POINTS: usize = 2_000;
/// Lines one timeline chart draws.
pub const MAX_LINES: usize = 5;
/// Timeline charts per scenario; further cases go to the table.
pub const MAX_CHARTS: usize = 6;
/// A series that moves less than this over the hold is treated as constant.
pub const MIN_CHANGE_MIB: f64 = 1.0;

const MIB: f64 = 1024.0 * 1024.0;

/// Timeline points of every set: (set, case key) -> metric -> (ms after free, value).
pub struct TimelineIndex<'a> {
    map: HashMap<(usize, &'a str), &'a Timelines>,
}

impl<'a> TimelineIndex<'a> {
    pub fn new(sets: &'a [ResultSet]) -> Self {
        let mut map = HashMap::new();
        for (i, s) in sets.iter().enumerate() {
            for (key, metrics) in s.samples.timelines() {
                map.insert((i, key), metrics);
            }
        }
        TimelineIndex { map }
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Memory metrics are in bytes; PCIe link fields and totals are not memory that moves.
fn is_memory(metric: &str) -> bool {
    !metric.contains("pcie") && !metric.ends_with(".total") && !metric.ends_with("mem_total")
}

struct Moving<'a> {
    metric: &'a str,
    points: Vec<(f64, f64)>,
    range: f64,
}

/// The timeline section of one scenario, as HTML.
pub fn scenario_timelines(
    idx: &TimelineIndex<'_>,
    rows: &[CaseRow<'_>],
    labels: &[String],
) -> String {
    let mut out = String::new();
    let mut seen = HashSet::new();
    let mut charts = 0usize;
    let mut constant = 0usize;
    let mut cases_with = 0usize;
    let mut table: Vec<Vec<String>> = Vec::new();
    for (set, r) in rows {
        if !seen.insert((*set, r.case_key.as_str())) {
            continue;
        }
        let Some(metrics) = idx.map.get(&(*set, r.case_key.as_str())) else {
            continue;
        };
        cases_with += 1;
        let mut moving: Vec<Moving<'_>> = Vec::new();
        for (metric, pts) in metrics.iter() {
            if !is_memory(metric) {
                constant += 1;
                continue;
            }
            let (lo, hi) = pts
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.1), h.max(p.1)));
            let range = (hi - lo) / MIB;
            if range < MIN_CHANGE_MIB {
                constant += 1;
                continue;
            }
            let mut p = pts.clone();
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            moving.push(Moving {
                metric: metric.as_ref(),
                points: p,
                range,
            });
        }
        if moving.is_empty() {
            continue;
        }
        moving.sort_by(|a, b| b.range.total_cmp(&a.range));
        let case = format!("{}{}", labels[*set], case_memory_words(r));
        let drawn = if charts < MAX_CHARTS {
            charts += 1;
            MAX_LINES.min(moving.len())
        } else {
            0
        };
        if drawn > 0 {
            let series: Vec<Line> = moving[..drawn]
                .iter()
                .map(|m| Line {
                    name: m.metric.to_string(),
                    points: downsample(&m.points, MAX_POINTS)
                        .into_iter()
                        .map(|(x, y)| (x, y / MIB, y / MIB, y / MIB))
                        .collect(),
                })
                .collect();
            let title = format!("After free: {case}");
            let caption = "Each line is one observer's reading (MiB) while holding after the free; a slow return is a lazy release. Series that did not change are not drawn.".to_string();
            let svg = chart::lines(&title, "ms after free", "MiB", &series, &[], XAxis::Linear);
            out.push_str(
                &Figure::from_svg(title, caption, svg, chart::plot_kind("timeline")).to_html(),
            );
        }
        for m in &moving[drawn..] {
            let first = m.points.first().map_or(0.0, |p| p.1) / MIB;
            let last = m.points.last().map_or(0.0, |p| p.1) / MIB;
            table.push(vec![
                case.clone(),
                m.metric.to_string(),
                format!("{first:.1}"),
                format!("{last:.1}"),
                format!("{:+.1}", last - first),
                format!("{:.1}", m.range),
            ]);
        }
    }
    if cases_with == 0 {
        return out;
    }
    if charts == 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">After free: no memory observer moved by {MIN_CHANGE_MIB} MiB or more while holding ({constant} constant series not drawn).</p>"
        );
    } else if constant > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">{constant} timeline series did not change (by {MIN_CHANGE_MIB} MiB or more) and are not drawn.</p>"
        );
    }
    if !table.is_empty() {
        out.push_str("<details><summary>Further timeline series that changed</summary>\n");
        out.push_str(&super::html::table(
            &[
                "case",
                "series",
                "first MiB",
                "last MiB",
                "change MiB",
                "range MiB",
            ],
            &table,
            &|_| "",
        ));
        out.push_str("</details>\n");
    }
    out
}
