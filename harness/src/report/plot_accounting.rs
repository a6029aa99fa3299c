//! Plot (c): memory-accounting deltas (MiB) per observer metric, grouped bars per case.

use super::CaseRow;
use super::chart::{self, Bars, Figure, MAX_CATEGORIES};
use super::labels::case_memory_words;
use std::collections::HashSet;

/// Metrics in display order, with the names readers know them by.
pub const METRICS: &[(&str, &str)] = &[
    ("dedicated", "dedicated (DXGI local)"),
    ("shared", "shared GPU memory (DXGI non-local)"),
    ("proc_rss", "host RSS / working set"),
    ("mem_available", "MemAvailable"),
    ("committed", "committed"),
    ("ledger_pinned", "pinscope ledger (pinned)"),
    ("cuda_used", "CUDA used"),
    ("nvml_used", "NVML used"),
];

pub fn accounting(scenario: &str, phase: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Figure {
    let what = if phase == "alloc" {
        "after allocation"
    } else {
        "after free and hold"
    };
    let title = format!("{scenario}: what did each observer see {what}?");
    // Accounting belongs to the case, not the lane: first row of each case.
    let mut seen = HashSet::new();
    let cases: Vec<&CaseRow<'_>> = rows
        .iter()
        .filter(|(set, r)| {
            !r.accounting.is_empty()
                && r.accounting.iter().any(|(p, _, _)| p == phase)
                && seen.insert((*set, r.case_key.as_str()))
        })
        .collect();
    let metrics: Vec<&(&str, &str)> = METRICS
        .iter()
        .filter(|(m, _)| {
            cases
                .iter()
                .any(|(_, r)| r.accounting_value(phase, m).is_some())
        })
        .collect();
    if cases.is_empty() || metrics.is_empty() {
        return Figure::omitted(
            &title,
            format!("No plot: no case in this scenario recorded accounting deltas {what}."),
        );
    }
    let hidden = cases.len().saturating_sub(MAX_CATEGORIES);
    let cases = &cases[..cases.len().min(MAX_CATEGORIES)];
    let bars = Bars {
        title: title.clone(),
        x_desc: "change against before allocation (MiB)".into(),
        series: metrics.iter().map(|(_, n)| n.to_string()).collect(),
        categories: cases
            .iter()
            .map(|(set, r)| format!("{}{}", labels[*set], case_memory_words(r)))
            .collect(),
        values: cases
            .iter()
            .map(|(_, r)| {
                metrics
                    .iter()
                    .map(|(m, _)| r.accounting_value(phase, m))
                    .collect()
            })
            .collect(),
        whiskers: Vec::new(),
        refs: Vec::new(),
        digits: 0,
        missing: String::new(),
    };
    let mut caption = String::from(
        "Signed deltas in MiB; MemAvailable going negative means host memory was taken. Missing bars: that observer is unavailable on the machine.",
    );
    if hidden > 0 {
        caption.push_str(&format!(" {hidden} more cases are in the tables."));
    }
    Figure::from_svg(
        title,
        caption,
        chart::hbars(&bars),
        vec![("plot", format!("accounting-{phase}"))],
    )
}
