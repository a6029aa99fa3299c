//! Plot (d): hold-after-free timelines — samples with series `timeline:<observer>.<metric>`,
//! x = milliseconds since the free. One chart per metric, one line per case.

use super::chart::{self, Figure, Line, MAX_SERIES, downsample};
use crate::results::ResultSet;
use std::collections::{BTreeMap, HashMap};

/// Points kept per line; longer timelines are reduced to per-bucket min and max.
pub const MAX_POINTS: usize = 2_000;

/// Points of one timeline, keyed by metric, then by (result set, case key).
type ByMetric<'a> = BTreeMap<&'a str, BTreeMap<(usize, &'a str), Vec<(f64, f64)>>>;

pub fn timelines(sets: &[ResultSet], labels: &[String]) -> Vec<Figure> {
    // metric -> (set, case_key) -> points
    let mut by_metric: ByMetric<'_> = BTreeMap::new();
    for (i, s) in sets.iter().enumerate() {
        for x in &s.samples {
            if let (Some(metric), Some(t)) = (x.series.strip_prefix("timeline:"), x.t_ms) {
                by_metric
                    .entry(metric)
                    .or_default()
                    .entry((i, x.case_key.as_str()))
                    .or_default()
                    .push((t, x.value));
            }
        }
    }
    if by_metric.is_empty() {
        return vec![Figure::omitted(
            "Hold-after-free timelines",
            "No plot: no run recorded a timeline after freeing host memory.",
        )];
    }
    let case_labels: Vec<HashMap<&str, &str>> = sets
        .iter()
        .map(|s| {
            s.rows
                .iter()
                .map(|r| (r.case_key.as_str(), r.case_label.as_str()))
                .collect()
        })
        .collect();
    by_metric
        .into_iter()
        .map(|(metric, cases)| {
            let title = format!("Hold-after-free timeline: {metric}");
            let hidden = cases.len().saturating_sub(MAX_SERIES);
            let series: Vec<Line> = cases
                .into_iter()
                .take(MAX_SERIES)
                .map(|((set, key), mut pts)| {
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let label = case_labels[set].get(key).copied().unwrap_or(key);
                    Line {
                        name: format!("{}{label}", labels[set]),
                        points: downsample(&pts, MAX_POINTS)
                            .into_iter()
                            .map(|(x, y)| (x, y, y, y))
                            .collect(),
                    }
                })
                .collect();
            let mut caption = format!(
                "{metric} as sampled while holding after the free; a slow return to the baseline is a lazy release."
            );
            if hidden > 0 {
                caption.push_str(&format!(" {hidden} more cases are not drawn."));
            }
            match chart::lines(&title, "ms after free", metric, &series, &[], false) {
                Ok(svg) => Figure::Svg {
                    title,
                    caption,
                    svg,
                },
                Err(e) => Figure::omitted(&title, format!("The plot could not be drawn ({e}).")),
            }
        })
        .collect()
}
