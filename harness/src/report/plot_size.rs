//! Plot (a): bandwidth against transfer size, one line per strategy and lane (median), with the
//! min–max band, on a log-x axis in bytes. nvbandwidth numbers are dashed reference lines.

use super::chart::{self, Figure, Line, MAX_SERIES};
use super::{CaseRow, NvbandwidthSeries, strategy_label};
use std::collections::{BTreeMap, HashMap};

pub fn bandwidth_vs_size(
    scenario: &str,
    rows: &[CaseRow<'_>],
    labels: &[String],
    refs: &[NvbandwidthSeries],
) -> Figure {
    let title = format!("{scenario}: bandwidth vs size");
    // (series) -> size -> (medians, min, max); aggregated before plotting.
    type Agg = (Vec<f64>, f64, f64);
    let mut groups: HashMap<String, BTreeMap<u64, Agg>> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (set, r) in rows {
        let (Some(m), true) = (r.bw_median_gbs, r.status.is_ok()) else {
            continue;
        };
        let name = format!("{}{} {}", labels[*set], strategy_label(r), r.lane.name());
        let g = groups.entry(name.clone()).or_insert_with(|| {
            order.push(name);
            BTreeMap::new()
        });
        let e = g
            .entry(r.size_bytes)
            .or_insert_with(|| (Vec::new(), f64::MAX, f64::MIN));
        e.0.push(m);
        e.1 = e.1.min(r.bw_min_gbs.unwrap_or(m));
        e.2 = e.2.max(r.bw_max_gbs.unwrap_or(m));
    }
    if groups.is_empty() {
        return Figure::omitted(
            &title,
            "No plot: no case in this scenario finished with a bandwidth.",
        );
    }
    // Draw the series with the most sizes first; say how many were left out.
    order.sort_by_key(|n| std::cmp::Reverse(groups[n].len()));
    let hidden = order.len().saturating_sub(MAX_SERIES);
    let series: Vec<Line> = order
        .iter()
        .take(MAX_SERIES)
        .map(|n| Line {
            name: n.clone(),
            points: groups[n]
                .iter()
                .map(|(size, (meds, lo, hi))| {
                    let mut m = meds.clone();
                    m.sort_by(f64::total_cmp);
                    (*size as f64, m[m.len() / 2], *lo, *hi)
                })
                .collect(),
        })
        .collect();
    let refs: Vec<(String, f64)> = refs
        .iter()
        .map(|r| (format!("nvbandwidth {}", r.testname), r.bandwidth_gbs))
        .collect();
    let mut caption = String::from(
        "Median GB/s (1e9 B/s) per strategy; shaded band: min–max of the samples; dashed: nvbandwidth reference.",
    );
    if hidden > 0 {
        caption.push_str(&format!(
            " {hidden} more series are not drawn (see the summary table)."
        ));
    }
    match chart::lines(&title, "transfer size", "GB/s", &series, &refs, true) {
        Ok(svg) => Figure::Svg {
            title,
            caption,
            svg,
        },
        Err(e) => Figure::omitted(&title, format!("The plot could not be drawn ({e}).")),
    }
}
