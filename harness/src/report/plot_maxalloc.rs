//! Plot (e): the largest device allocation with only the case's host memory held and after it
//! was freed — the article's "pinned memory makes a later cudaMalloc fail" claim, measured. Files
//! from before the host phase probed with the case's device memory held too: their bar says so.

use super::CaseRow;
use super::chart::{self, Bars, Figure};
use super::plot_accounting::{case_categories, first_row_per_case};

pub fn max_alloc(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Figure {
    let title = format!("{scenario}: how much device memory can still be allocated?");
    let mut cases = first_row_per_case(rows, |r| {
        r.max_alloc_host_only_mib().is_some()
            || r.max_alloc_held_mib.is_some()
            || r.max_alloc_free_mib.is_some()
    });
    if cases.is_empty() {
        return Figure::omitted(
            &title,
            "No plot: no case in this scenario probed the largest device allocation.",
        );
    }
    let left_out = chart::keep_drawable(&mut cases, "cases are in the tables.");
    let both = cases
        .iter()
        .any(|(_, r)| r.max_alloc_host_only_mib().is_none() && r.max_alloc_held_mib.is_some());
    let mut caption = "A shorter first bar means holding the host memory alone (no device memory yet) cost device headroom.".to_string();
    let mut series = vec![
        "with only the host memory held".into(),
        "after it was freed".into(),
    ];
    if both {
        caption.push_str(" The middle bar, from files written before the host phase, held the case's device memory too: its shortfall is mostly the case's own device buffer, not pinning.");
        series.insert(1, "with host and device memory held".into());
    }
    let bars = Bars {
        title,
        x_desc: "largest cuMemAlloc that succeeded (MiB)".into(),
        series,
        categories: case_categories(&cases, labels),
        values: cases
            .iter()
            .map(|(_, r)| {
                let host = r.max_alloc_host_only_mib();
                if both {
                    let held = r.max_alloc_held_mib.filter(|_| host.is_none());
                    vec![host, held, r.max_alloc_free_mib]
                } else {
                    vec![host, r.max_alloc_free_mib]
                }
            })
            .collect(),
        digits: 0,
        missing: "not probed".into(),
        ..Bars::default()
    };
    Figure::bars(&bars, &caption, left_out, chart::plot_kind("max-alloc"))
}
