//! Plot (a): bandwidth against transfer size, one line per case identity (strategy, direction
//! and lane, in words), median with the min–max band, on a log-x axis labelled at the sizes
//! measured. Points more than a decade apart are not joined. Drawn only when some series was
//! measured at [`MIN_SIZES`] sizes or more; otherwise the bars answer the question.

use super::chart::{self, Figure, Line, MAX_SERIES, XAxis};
use super::labels::{direction_key, strategy_words};
use super::{CaseRow, NvbandwidthSeries};
use std::collections::{BTreeMap, HashMap};

/// One series: its direction key and, per size, the medians of its rows and the lowest and
/// highest sample.
struct SizeSeries {
    direction: String,
    by_size: BTreeMap<u64, (Vec<f64>, f64, f64)>,
}

impl SizeSeries {
    /// The line: per size, the median of the medians with the min–max band.
    fn line(&self, name: &str) -> Line {
        let points = self
            .by_size
            .iter()
            .map(|(size, (meds, lo, hi))| {
                let mut m = meds.clone();
                m.sort_by(f64::total_cmp);
                (*size as f64, m[m.len() / 2], *lo, *hi)
            })
            .collect();
        Line {
            name: name.to_string(),
            points,
        }
    }
}

/// The finished bandwidth rows grouped into series by run and strategy in words, in first-seen
/// order.
fn size_series(rows: &[CaseRow<'_>], labels: &[String]) -> Vec<(String, SizeSeries)> {
    let mut groups: HashMap<String, SizeSeries> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (set, r) in rows {
        let (Some(m), true) = (r.bw_median_gbs, r.status.is_ok() && !r.measures_time()) else {
            continue;
        };
        let name = format!("{}{}", labels[*set], strategy_words(r));
        let g = groups.entry(name.clone()).or_insert_with(|| {
            order.push(name);
            SizeSeries {
                direction: direction_key(r),
                by_size: BTreeMap::new(),
            }
        });
        let e = g
            .by_size
            .entry(r.size_bytes)
            .or_insert_with(|| (Vec::new(), f64::MAX, f64::MIN));
        e.0.push(m);
        e.1 = e.1.min(r.bw_min_gbs.unwrap_or(m));
        e.2 = e.2.max(r.bw_max_gbs.unwrap_or(m));
    }
    order
        .into_iter()
        .filter_map(|n| groups.remove(&n).map(|g| (n, g)))
        .collect()
}

/// Sizes a series needs before a line through them says more than the bars: two points make a
/// line whatever the curve between them.
pub const MIN_SIZES: usize = 3;

/// Plot (a) of a scenario, when some series was measured at [`MIN_SIZES`] sizes or more.
pub fn bandwidth_vs_size(
    scenario: &str,
    rows: &[CaseRow<'_>],
    labels: &[String],
    refs: &[NvbandwidthSeries],
) -> Option<Figure> {
    let title = format!("{scenario}: how does bandwidth change with transfer size?");
    // With both, this plot draws the host link only (the device rows have their bar chart).
    let (_, link) = super::device_and_link(rows);
    let link: Vec<CaseRow<'_>> = link.into_iter().copied().collect();
    let rows = if link.is_empty() { rows } else { &link[..] };
    let mut series = size_series(rows, labels);
    if !series.iter().any(|(_, g)| g.by_size.len() >= MIN_SIZES) {
        return None;
    }
    // Draw the series with the most sizes first; say how many were left out.
    series.sort_by_key(|(_, g)| std::cmp::Reverse(g.by_size.len()));
    let hidden = series.len().saturating_sub(MAX_SERIES);
    series.truncate(MAX_SERIES);
    let lines: Vec<Line> = series.iter().map(|(n, g)| g.line(n)).collect();
    let sizes = chart::sizes_of(series.iter().flat_map(|(_, g)| g.by_size.keys().copied()));
    let refs = super::nvbandwidth::reference_lines(refs, super::NvbandwidthMeasure::HostLink);
    let mut caption = String::from(
        "Median GB/s (1e9 B/s) per strategy, direction and lane; shaded band: min–max of the samples; ticks at the sizes measured; points more than a decade apart are not joined",
    );
    caption.push_str(if refs.is_empty() {
        "."
    } else {
        "; dashed: nvbandwidth reference."
    });
    let caption = chart::series_left_out(caption, hidden);
    let data = chart::size_plot_data(
        "bandwidth-vs-size",
        &sizes,
        series.iter().map(|(_, g)| g.direction.as_str()),
    );
    let svg = chart::lines(
        &title,
        "transfer size (binary units: KiB, MiB, GiB)",
        "median GB/s",
        &lines,
        &refs,
        XAxis::LogBytes(&sizes),
    );
    Some(Figure::from_svg(title, caption, svg, data))
}
