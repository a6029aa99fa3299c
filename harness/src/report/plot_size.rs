//! Plot (a): bandwidth against transfer size, one line per case identity (strategy, direction
//! and lane, in words), median with the min–max band, on a log-x axis labelled at the sizes
//! measured. Points more than a decade apart are not joined. Drawn only when some series was
//! measured at two sizes or more; otherwise the bars answer the question.

use super::chart::{self, Figure, Line, MAX_SERIES, XAxis};
use super::labels::{direction_key, strategy_words};
use super::{CaseRow, NvbandwidthSeries};
use std::collections::{BTreeMap, HashMap};

#[expect(
    clippy::too_many_lines,
    reason = "written before the 80-line limit; to be split into named steps"
)]
pub fn bandwidth_vs_size(
    scenario: &str,
    rows: &[CaseRow<'_>],
    labels: &[String],
    refs: &[NvbandwidthSeries],
) -> Option<Figure> {
    let title = format!("{scenario}: how does bandwidth change with transfer size?");
    // series -> size -> (medians, min, max); aggregated before plotting.
    type Agg = (Vec<f64>, f64, f64);
    let mut groups: HashMap<String, (String, BTreeMap<u64, Agg>)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (set, r) in rows {
        let (Some(m), true) = (r.bw_median_gbs, r.status.is_ok() && !r.measures_time()) else {
            continue;
        };
        let name = format!("{}{}", labels[*set], strategy_words(r));
        let g = groups.entry(name.clone()).or_insert_with(|| {
            order.push(name);
            (direction_key(r), BTreeMap::new())
        });
        let e =
            g.1.entry(r.size_bytes)
                .or_insert_with(|| (Vec::new(), f64::MAX, f64::MIN));
        e.0.push(m);
        e.1 = e.1.min(r.bw_min_gbs.unwrap_or(m));
        e.2 = e.2.max(r.bw_max_gbs.unwrap_or(m));
    }
    if !groups.values().any(|g| g.1.len() >= 2) {
        return None;
    }
    // Draw the series with the most sizes first; say how many were left out.
    order.sort_by_key(|n| std::cmp::Reverse(groups[n].1.len()));
    let hidden = order.len().saturating_sub(MAX_SERIES);
    order.truncate(MAX_SERIES);
    let series: Vec<Line> = order
        .iter()
        .map(|n| Line {
            name: n.clone(),
            points: groups[n]
                .1
                .iter()
                .map(|(size, (meds, lo, hi))| {
                    let mut m = meds.clone();
                    m.sort_by(f64::total_cmp);
                    (*size as f64, m[m.len() / 2], *lo, *hi)
                })
                .collect(),
        })
        .collect();
    let mut sizes: Vec<u64> = order
        .iter()
        .flat_map(|n| groups[n].1.keys().copied())
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let refs: Vec<(String, f64)> = refs
        .iter()
        .map(|r| (format!("nvbandwidth {}", r.testname), r.bandwidth_gbs))
        .collect();
    let mut caption = String::from(
        "Median GB/s (1e9 B/s) per strategy, direction and lane; shaded band: min–max of the samples; ticks at the sizes measured; points more than a decade apart are not joined",
    );
    caption.push_str(if refs.is_empty() {
        "."
    } else {
        "; dashed: nvbandwidth reference."
    });
    if hidden > 0 {
        caption.push_str(&format!(
            " {hidden} more series are not drawn (see the parameter table)."
        ));
    }
    let data = vec![
        ("plot", "bandwidth-vs-size".to_string()),
        (
            "measured-sizes",
            sizes
                .iter()
                .map(|s| crate::units::format_size(*s))
                .collect::<Vec<_>>()
                .join("|"),
        ),
        (
            "series-directions",
            order
                .iter()
                .map(|n| groups[n].0.clone())
                .collect::<Vec<_>>()
                .join("|"),
        ),
    ];
    let svg = chart::lines(
        &title,
        "transfer size (binary units: KiB, MiB, GiB)",
        "median GB/s",
        &series,
        &refs,
        XAxis::LogBytes(&sizes),
    );
    Some(Figure::from_svg(title, caption, svg, data))
}
