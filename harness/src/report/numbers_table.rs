//! The report's "Parameters and numbers" section: one row per case with its strategy, lane, size
//! and bandwidth figures, or, for a scenario with more rows than a page lists, one line per
//! strategy, lane and size.

use super::html::{self, escape};
use super::{
    CaseRow, NvbandwidthMeasure, NvbandwidthSeries, ScenarioRows, labels, latency, opt, para,
    section, strategy_label,
};
use crate::results::Lane;
use std::fmt::Write;
use std::path::Path;

fn summary_rows(rows: &[CaseRow<'_>], labels: &[String]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|(set, r)| {
            // A latency row shows its time in the bandwidth's place: median, and p99 as spread.
            let (median, min, max, spread) = match latency::time_cells(r) {
                Some((p50, tail)) => (p50, "—".into(), "—".into(), tail),
                None => (
                    opt(r.bw_median_gbs, 2),
                    opt(r.bw_min_gbs, 2),
                    opt(r.bw_max_gbs, 2),
                    opt(r.bw_spread_pct, 1),
                ),
            };
            vec![
                format!("{}{}", labels[*set], r.case_label),
                labels::strategy_words(r),
                r.lane.name().to_string(),
                crate::units::format_size(r.size_bytes),
                crate::units::format_size(r.pinned_bytes),
                median,
                min,
                max,
                spread,
                r.samples.to_string(),
                r.outliers.to_string(),
                r.verified.to_string(),
                r.status.to_field(),
                strategy_label(r),
                r.axes.joined(", "),
            ]
        })
        .collect()
}

/// Tables longer than this are folded into a `<details>` element.
const FOLD_ROWS: usize = 200;
/// A scenario with more rows than this is summarised by strategy, lane and size instead of
/// listed row by row (every row stays in the results CSV, named under the table).
pub const LIST_ROWS: usize = 2_000;
/// Lines of an aggregated summary; further groups are counted.
const MAX_AGGREGATE_ROWS: usize = 500;

/// The summary of a scenario with many rows: one line per strategy, lane and size with the
/// distribution of the rows' medians.
fn aggregated_summary(out: &mut String, rows: &[CaseRow<'_>], labels: &[String], paths: &[&Path]) {
    let mut groups: std::collections::BTreeMap<(String, Lane, u64), (usize, Vec<f64>)> =
        Default::default();
    let mut files = std::collections::BTreeSet::new();
    for (set, r) in rows {
        files.insert(*set);
        let g = groups
            .entry((
                format!("{}{}", labels[*set], strategy_label(r)),
                r.lane,
                r.size_bytes,
            ))
            .or_default();
        g.0 += 1;
        if let Some(v) = r.bw_median_gbs.filter(|_| r.status.is_ok()) {
            g.1.push(v);
        }
    }
    let total = groups.len();
    let cells: Vec<Vec<String>> = groups
        .into_iter()
        .take(MAX_AGGREGATE_ROWS)
        .map(|((strategy, lane, size), (n, v))| {
            let s = crate::stats::Sample::new(v).ok();
            let q = |q: f64| opt(s.as_ref().map(|s| s.quantile(q)), 2);
            vec![
                strategy,
                lane.name().to_string(),
                crate::units::format_size(size),
                n.to_string(),
                s.as_ref().map_or(0, crate::stats::Sample::len).to_string(),
                q(0.0),
                q(0.5),
                q(1.0),
            ]
        })
        .collect();
    para(
        out,
        &format!(
            "{} rows, more than the {LIST_ROWS} a page lists: one line per strategy, lane and size, with the spread of the rows' median GB/s ({total} lines{}).",
            rows.len(),
            if total > MAX_AGGREGATE_ROWS {
                format!(", the first {MAX_AGGREGATE_ROWS} shown")
            } else {
                String::new()
            }
        ),
    );
    let head = [
        "strategy",
        "lane",
        "size",
        "rows",
        "ok",
        "min median GB/s",
        "median",
        "max median GB/s",
    ];
    out.push_str(&html::table(&head, &cells, &|_| ""));
    out.push_str("<p class=\"note\">Every row is in the results CSV: ");
    for (i, set) in files.into_iter().enumerate() {
        let path = paths
            .get(set)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let _ = write!(
            out,
            "{}<a href=\"{}\">{}{}</a>",
            if i > 0 { ", " } else { "" },
            escape(&path),
            escape(&labels[set]),
            escape(&path)
        );
    }
    out.push_str("</p>\n");
}

pub(super) fn summary(
    out: &mut String,
    scenarios: &ScenarioRows<'_, '_>,
    nvb: &[NvbandwidthSeries],
    paths: &[&Path],
) {
    let labels = scenarios.labels;
    section(out, "summary", "Parameters and numbers");
    let head = [
        "case",
        "strategy, in words",
        "lane",
        "size",
        "page-locked",
        "median GB/s (latency: µs)",
        "min",
        "max",
        "spread % (latency: p99)",
        "samples",
        "outliers",
        "verified",
        "status",
        "host/flags/engine/mode",
        "sweep axes",
    ];
    for name in scenarios.names {
        let rows = scenarios.of(name);
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        if rows.is_empty() {
            para(out, "No cases of this scenario were recorded.");
            continue;
        }
        if rows.len() > LIST_ROWS {
            aggregated_summary(out, rows, labels, paths);
            continue;
        }
        let mut cells = summary_rows(rows, labels);
        for r in nvb
            .iter()
            .filter(|r| r.measure != NvbandwidthMeasure::LatencyNs)
        {
            cells.push(vec![
                format!("nvbandwidth {} (reference)", r.testname),
                "NVIDIA's nvbandwidth, copy engine".into(),
                r.lane_words().into(),
                r.buffer_size
                    .map(crate::units::format_size)
                    .unwrap_or_default(),
                String::new(),
                format!("{:.2}", r.bandwidth_gbs),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                r.status.clone(),
                String::new(),
                String::new(),
            ]);
        }
        let table = html::table(&head, &cells, &|i| match rows.get(i).map(|r| &r.1.status) {
            Some(crate::results::Status::Failed(_)) => "failed",
            Some(crate::results::Status::Skipped(_)) => "skipped",
            _ => "",
        });
        if rows.len() > FOLD_ROWS {
            let _ = writeln!(
                out,
                "<details><summary>{} rows</summary>\n{table}</details>",
                rows.len()
            );
        } else {
            out.push_str(&table);
        }
    }
    out.push_str("</section>\n");
}
