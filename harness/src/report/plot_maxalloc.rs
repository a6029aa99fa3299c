//! Plot (e): the largest device allocation with the case's host memory held and after it was
//! freed — the article's "pinned memory makes a later cudaMalloc fail" claim, measured.

use super::CaseRow;
use super::chart::{self, Bars, Figure, MAX_CATEGORIES};
use super::labels::case_memory_words;
use std::collections::HashSet;

pub fn max_alloc(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Figure {
    let title = format!("{scenario}: how much device memory can still be allocated?");
    let mut seen = HashSet::new();
    let cases: Vec<&CaseRow<'_>> = rows
        .iter()
        .filter(|(set, r)| {
            (r.max_alloc_held_mib.is_some() || r.max_alloc_free_mib.is_some())
                && seen.insert((*set, r.case_key.as_str()))
        })
        .collect();
    if cases.is_empty() {
        return Figure::omitted(
            &title,
            "No plot: no case in this scenario probed the largest device allocation.",
        );
    }
    let hidden = cases.len().saturating_sub(MAX_CATEGORIES);
    let cases = &cases[..cases.len().min(MAX_CATEGORIES)];
    let bars = Bars {
        title: title.clone(),
        x_desc: "largest cuMemAlloc that succeeded (MiB)".into(),
        series: vec![
            "with host memory held".into(),
            "after host memory freed".into(),
        ],
        categories: cases
            .iter()
            .map(|(set, r)| format!("{}{}", labels[*set], case_memory_words(r)))
            .collect(),
        values: cases
            .iter()
            .map(|(_, r)| vec![r.max_alloc_held_mib, r.max_alloc_free_mib])
            .collect(),
        whiskers: Vec::new(),
        refs: Vec::new(),
        digits: 0,
        missing: "not probed".into(),
    };
    let mut caption =
        String::from("A shorter first bar means holding the host memory cost device headroom.");
    if hidden > 0 {
        caption.push_str(&format!(" {hidden} more cases are in the tables."));
    }
    Figure::from_svg(
        title,
        caption,
        chart::hbars(&bars),
        vec![("plot", "max-alloc".to_string())],
    )
}
