//! Plot (e): the largest device allocation with the case's host memory held and after it was
//! freed — the article's "pinned memory makes a later cudaMalloc fail" claim, measured.

use super::CaseRow;
use super::chart::{self, Bars, Figure};
use super::plot_accounting::{case_categories, first_row_per_case};

pub fn max_alloc(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Figure {
    let title = format!("{scenario}: how much device memory can still be allocated?");
    let mut cases = first_row_per_case(rows, |r| {
        r.max_alloc_held_mib.is_some() || r.max_alloc_free_mib.is_some()
    });
    if cases.is_empty() {
        return Figure::omitted(
            &title,
            "No plot: no case in this scenario probed the largest device allocation.",
        );
    }
    let left_out = chart::keep_drawable(&mut cases, "cases are in the tables.");
    let caption = "A shorter first bar means holding the host memory cost device headroom.";
    let bars = Bars {
        title,
        x_desc: "largest cuMemAlloc that succeeded (MiB)".into(),
        series: vec![
            "with host memory held".into(),
            "after host memory freed".into(),
        ],
        categories: case_categories(&cases, labels),
        values: cases
            .iter()
            .map(|(_, r)| vec![r.max_alloc_held_mib, r.max_alloc_free_mib])
            .collect(),
        digits: 0,
        missing: "not probed".into(),
        ..Bars::default()
    };
    Figure::bars(&bars, caption, left_out, chart::plot_kind("max-alloc"))
}
