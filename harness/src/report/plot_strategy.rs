//! Plot (b): one bar per strategy and lane at its largest transfer size, with the 95% bootstrap
//! CI of the median as whiskers (from the raw samples of that one case).

use super::chart::{self, Bars, Figure, MAX_CATEGORIES};
use super::{CaseRow, NvbandwidthSeries, SampleIndex, strategy_label};
use crate::stats::{Sample, bootstrap_median_ci};
use std::collections::HashMap;

/// Resamples for the report's median CIs (fewer than `compare`'s 10 000: whiskers only).
pub const REPORT_RESAMPLES: usize = 2_000;

pub fn strategy_bars(
    scenario: &str,
    rows: &[CaseRow<'_>],
    labels: &[String],
    samples: &SampleIndex<'_>,
    refs: &[NvbandwidthSeries],
) -> Figure {
    let title = format!("{scenario}: strategies at their largest size");
    let mut best: HashMap<String, CaseRow<'_>> = HashMap::new();
    let mut order = Vec::new();
    for (set, r) in rows {
        if !r.status.is_ok() || r.bw_median_gbs.is_none() {
            continue;
        }
        let name = format!("{}{} {}", labels[*set], strategy_label(r), r.lane.name());
        match best.get(&name) {
            Some((_, b)) if b.size_bytes >= r.size_bytes => {}
            Some(_) => {
                best.insert(name, (*set, r));
            }
            None => {
                order.push(name.clone());
                best.insert(name, (*set, r));
            }
        }
    }
    if order.is_empty() {
        return Figure::omitted(
            &title,
            "No plot: no case in this scenario finished with a bandwidth.",
        );
    }
    let hidden = order.len().saturating_sub(MAX_CATEGORIES);
    order.truncate(MAX_CATEGORIES);
    let mut categories = Vec::new();
    let mut values = Vec::new();
    let mut whiskers = Vec::new();
    for name in &order {
        let (set, r) = best[name];
        let raw = samples.get(set, &r.case_key, r.lane);
        let (median, ci) = match Sample::new(raw) {
            Ok(s) if s.len() >= 2 => (
                s.median(),
                Some(bootstrap_median_ci(&s, REPORT_RESAMPLES, 0.95)),
            ),
            Ok(s) => (s.median(), None),
            Err(_) => (r.bw_median_gbs.unwrap_or(0.0), None),
        };
        categories.push(format!(
            "{name} @ {}",
            crate::units::format_size(r.size_bytes)
        ));
        values.push(vec![Some(median)]);
        whiskers.push(vec![ci]);
    }
    let refs = refs
        .iter()
        .map(|r| (format!("nvbandwidth {}", r.testname), r.bandwidth_gbs))
        .collect();
    let bars = Bars {
        title: title.clone(),
        x_desc: "median GB/s (whiskers: 95% bootstrap CI of the median)".into(),
        series: vec!["median".into()],
        categories,
        values,
        whiskers,
        refs,
    };
    let mut caption = String::from(
        "Each bar is one case: the strategy's largest transfer size. Whiskers need at least two raw samples.",
    );
    if hidden > 0 {
        caption.push_str(&format!(
            " {hidden} more strategies are in the summary table."
        ));
    }
    match chart::hbars(&bars) {
        Ok(svg) => Figure::Svg {
            title,
            caption,
            svg,
        },
        Err(e) => Figure::omitted(&title, format!("The plot could not be drawn ({e}).")),
    }
}
