//! Plot (b): one bar per case and lane — the strategy in words, its size and the case's name —
//! with the 95% bootstrap CI of the median as whiskers (from the raw samples of that case).
//! Sorted fastest first within each direction, so the answer is the top bar.

use super::chart::{self, Bars, ByCategory, Figure};
use super::labels::{case_words, direction_key};
use super::{CaseRow, NvbandwidthMeasure, NvbandwidthSeries, SampleIndex};
use crate::results::{Lane, Row};
use crate::stats::{Sample, bootstrap_median_ci};

/// Resamples for the report's median CIs (fewer than `compare`'s 10 000: whiskers only).
pub const REPORT_RESAMPLES: usize = 2_000;

/// The "which way is fastest" bars (none for a scenario whose finished cases all measure a
/// time), and, when a scenario also measures device memory (thousands
/// of GB/s, which would flatten the host-link bars to slivers), those rows in a figure of their
/// own with the device-local reference.
pub fn strategy_bars(
    scenario: &str,
    rows: &[CaseRow<'_>],
    labels: &[String],
    samples: &SampleIndex<'_>,
    refs: &[NvbandwidthSeries],
) -> Vec<Figure> {
    let drawn = |r: &Row| r.status.is_ok() && r.bw_median_gbs.is_some() && !r.measures_time();
    let (device, link) = super::device_and_link(rows.iter().filter(|(_, r)| drawn(r)));
    let timed = rows
        .iter()
        .any(|(_, r)| r.status.is_ok() && r.measures_time());
    if device.is_empty() && link.is_empty() && timed {
        // A scenario that measures times has no bandwidth bars to draw: its time plots, which
        // follow, answer what it asks.
        return Vec::new();
    }
    if device.is_empty() || link.is_empty() {
        let all = device.into_iter().chain(link).collect();
        let title = format!("{scenario}: which way is fastest?");
        return vec![bars_of(title, all, labels, samples, refs, None)];
    }
    let note = "Device-memory rows are in the next plot.";
    vec![
        bars_of(
            format!("{scenario}: which way is fastest?"),
            link,
            labels,
            samples,
            refs,
            Some(note),
        ),
        bars_of(
            format!("{scenario}: how fast is device memory?"),
            device,
            labels,
            samples,
            refs,
            None,
        ),
    ]
}

/// One bar chart of `ok` (rows with a bandwidth), with the nvbandwidth references of the lanes
/// it draws.
fn bars_of(
    title: String,
    mut ok: Vec<&CaseRow<'_>>,
    labels: &[String],
    samples: &SampleIndex<'_>,
    refs: &[NvbandwidthSeries],
    note: Option<&str>,
) -> Figure {
    if ok.is_empty() {
        return Figure::omitted(
            &title,
            "No plot: no case in this scenario finished with a bandwidth.",
        );
    }
    let lane_rank = |l: Lane| match l {
        Lane::H2d => 0,
        Lane::D2h => 1,
        Lane::Sum => 2,
        Lane::Device => 3,
    };
    ok.sort_by(|a, b| {
        lane_rank(a.1.lane)
            .cmp(&lane_rank(b.1.lane))
            .then(b.1.bw_median_gbs.total_cmp_opt(a.1.bw_median_gbs))
    });
    let left_out = chart::keep_drawable(&mut ok, "are in the parameter table.");
    let mut caption = "One bar per case and lane: strategy, direction, size and the case's name; fastest first within each direction. Whiskers need at least two raw samples.".to_string();
    if let Some(note) = note {
        caption = format!("{caption} {note}");
    }
    let mut categories = Vec::new();
    let mut values = Vec::new();
    let mut whiskers = Vec::new();
    for (set, r) in &ok {
        let raw = samples.get(*set, &r.case_key, r.lane);
        let (median, ci) = match Sample::new(raw.to_vec()) {
            Ok(s) if s.len() >= 2 => (
                s.median(),
                Some(bootstrap_median_ci(&s, REPORT_RESAMPLES, 0.95)),
            ),
            Ok(s) => (s.median(), None),
            Err(_) => (r.bw_median_gbs.unwrap_or(0.0), None),
        };
        categories.push(format!("{}{}", labels[*set], case_words(r)));
        values.push(vec![Some(median)]);
        whiskers.push(vec![ci]);
    }
    let measure = if ok.iter().all(|(_, r)| r.lane == Lane::Device) {
        NvbandwidthMeasure::DeviceLocal
    } else {
        NvbandwidthMeasure::HostLink
    };
    let refs = super::nvbandwidth::reference_lines(refs, measure);
    let data = vec![
        ("plot", "bandwidth-bars".to_string()),
        (
            "series-directions",
            ok.iter()
                .map(|(_, r)| direction_key(r))
                .collect::<Vec<_>>()
                .join("|"),
        ),
    ];
    let bars = Bars {
        title,
        x_desc: "median GB/s (whiskers: 95% bootstrap CI of the median)".into(),
        series: vec!["median".into()],
        categories,
        values,
        whiskers,
        refs,
        digits: 1,
        missing: String::new(),
        by_category: Some(direction_colours(ok.iter().map(|(_, r)| r.lane))),
        x_range: None,
    };
    Figure::bars(&bars, &caption, left_out, data)
}

/// The colour of each direction, the same on every plot, and its legend text.
pub fn lane_colour(lane: Lane) -> (usize, &'static str) {
    match lane {
        Lane::H2d => (0, "host to device (H2D)"),
        Lane::D2h => (1, "device to host (D2H)"),
        Lane::Sum => (2, "both directions at once (sum)"),
        Lane::Device => (4, "device to device"),
    }
}

/// Bars coloured by their lane; the legend lists the lanes present, in the order first seen.
pub fn direction_colours(lanes: impl Iterator<Item = Lane>) -> ByCategory {
    let mut by = ByCategory::default();
    for lane in lanes {
        let (k, name) = lane_colour(lane);
        by.of.push(k);
        if !by.keys.iter().any(|(_, c)| *c == k) {
            by.keys.push((name.to_string(), k));
        }
    }
    by
}

trait CmpOpt {
    fn total_cmp_opt(&self, o: Option<f64>) -> std::cmp::Ordering;
}

impl CmpOpt for Option<f64> {
    fn total_cmp_opt(&self, o: Option<f64>) -> std::cmp::Ordering {
        self.unwrap_or(0.0).total_cmp(&o.unwrap_or(0.0))
    }
}
