//! Plot (f): run A against run B (and more) per case: grouped bars of the median bandwidth.

use super::chart::{self, Bars, Figure};
use crate::compare::Comparison;

pub fn runs_side_by_side(cmp: &Comparison) -> Figure {
    let title = "Runs side by side: median bandwidth per case".to_string();
    let mut entries: Vec<_> = cmp
        .entries
        .iter()
        .filter(|e| {
            !e.measures_time
                && e.cells
                    .iter()
                    .flatten()
                    .filter(|c| c.median_gbs.is_some())
                    .count()
                    >= 1
        })
        .collect();
    if entries.is_empty() {
        return Figure::omitted(&title, "No plot: no case has a bandwidth in any run.");
    }
    let left_out = chart::keep_drawable(&mut entries, "cases are in the table.");
    let caption = "Missing bar: the run lacks the case or it did not finish.";
    let bars = Bars {
        title,
        x_desc: "median GB/s".into(),
        series: cmp
            .runs
            .iter()
            .map(|r| format!("{} {}", r.label, r.path))
            .collect(),
        categories: entries
            .iter()
            .map(|e| format!("{} {}", e.case_label, e.lane.name()))
            .collect(),
        values: entries
            .iter()
            .map(|e| {
                e.cells
                    .iter()
                    .map(|c| c.as_ref().and_then(|c| c.median_gbs))
                    .collect()
            })
            .collect(),
        digits: 1,
        missing: "—".into(),
        ..Bars::default()
    };
    Figure::bars(
        &bars,
        caption,
        left_out,
        chart::plot_kind("runs-side-by-side"),
    )
}
