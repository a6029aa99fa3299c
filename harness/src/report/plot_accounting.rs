//! Plot (c): memory-accounting deltas (MiB) per observer metric, grouped bars per case.

use super::CaseRow;
use super::chart::{self, Bars, Figure};
use super::labels::case_memory_words;
use crate::accounting::{Metric, Phase};
use crate::results::Row;
use std::collections::HashSet;

/// The range (MiB) of every accounting delta after allocation or after free in `rows`, 0
/// included: the one scale a page's accounting plots share, so +2 MiB on one plot never draws as
/// wide as +4 GiB on the next.
pub fn page_scale<'r>(rows: impl Iterator<Item = &'r Row>) -> Option<(f64, f64)> {
    let mut range: Option<(f64, f64)> = None;
    for r in rows {
        for (p, _, v) in &r.accounting {
            let plotted = matches!(p, Phase::Alloc | Phase::Free);
            if plotted && v.is_finite() {
                let (l, h) = range.unwrap_or((0.0, 0.0));
                range = Some((l.min(*v), h.max(*v)));
            }
        }
    }
    range
}

/// The caption's sentence about the shared scale.
pub const SHARED_SCALE: &str = "Every accounting plot on this page uses the same MiB scale, so bar lengths compare across plots.";

/// The caption's sentence on cases that hold device memory, after allocation.
pub const DEVICE_HELD: &str = " A case whose label ends in \"device memory\" held that much device memory too: device observers (CUDA used, NVML used, dedicated) count its device buffer, which is not a cost of pinning; the Memory sentence gives what the page-locked memory cost alone.";

/// ` + <size> device memory` for a case that allocated device memory, else empty: the words that
/// keep a bar of its device buffer from being read as a cost of pinning.
pub(super) fn device_held(r: &Row) -> String {
    if r.device_bytes > 0 {
        format!(
            " + {} device memory",
            crate::units::format_size(r.device_bytes)
        )
    } else {
        String::new()
    }
}

/// What each observer saw after allocation (`phase` `alloc`) or after free and hold (`free`),
/// drawn on the page's shared `scale` ([`page_scale`]): one bar per metric, in
/// [`Metric::READER_ORDER`], labelled with its declaration's label.
pub fn accounting(
    scenario: &str,
    phase: Phase,
    rows: &[CaseRow<'_>],
    labels: &[String],
    scale: Option<(f64, f64)>,
) -> Figure {
    let what = if phase == Phase::Alloc {
        "after allocation (host and device memory)"
    } else {
        "after free and hold"
    };
    let title = format!("{scenario}: what did each observer see {what}?");
    let mut cases = first_row_per_case(rows, |r| r.has_accounting_at(phase));
    let metrics: Vec<Metric> = Metric::READER_ORDER
        .into_iter()
        .filter(|m| {
            cases
                .iter()
                .any(|(_, r)| r.accounting_value(phase, *m).is_some())
        })
        .collect();
    if cases.is_empty() || metrics.is_empty() {
        return Figure::omitted(
            &title,
            format!("No plot: no case in this scenario recorded accounting deltas {what}."),
        );
    }
    let left_out = chart::keep_drawable(&mut cases, "cases are in the tables.");
    let caption = format!(
        "Signed deltas in MiB; MemAvailable going negative means host memory was taken. Missing bars: that observer is unavailable on the machine. {SHARED_SCALE}{}",
        if phase == Phase::Alloc {
            DEVICE_HELD
        } else {
            ""
        }
    );
    let bars = Bars {
        title,
        x_desc: "change against before allocation (MiB)".into(),
        series: metrics
            .iter()
            .map(|m| m.declaration().label.to_string())
            .collect(),
        categories: cases
            .iter()
            .map(|(set, r)| {
                let held = if phase == Phase::Alloc {
                    device_held(r)
                } else {
                    String::new()
                };
                format!("{}{}{held}", labels[*set], case_memory_words(r))
            })
            .collect(),
        values: cases
            .iter()
            .map(|(_, r)| {
                metrics
                    .iter()
                    .map(|m| r.accounting_value(phase, *m))
                    .collect()
            })
            .collect(),
        digits: 0,
        x_range: scale,
        ..Bars::default()
    };
    Figure::bars(
        &bars,
        &caption,
        left_out,
        chart::plot_kind(format!("accounting-{}", phase.name())),
    )
}

/// The rows `keep` accepts, only the first of each case: memory belongs to the case, not to its
/// lanes.
pub(super) fn first_row_per_case<'r, 'a>(
    rows: &'r [CaseRow<'a>],
    keep: impl Fn(&Row) -> bool,
) -> Vec<&'r CaseRow<'a>> {
    // Sized once: growing it re-hashed every 170-byte key seen so far.
    let mut seen = HashSet::with_capacity(rows.len());
    rows.iter()
        .filter(|(set, r)| keep(r) && seen.insert((*set, r.case_key.as_str())))
        .collect()
}

/// The bar chart category of each case: its run label and its memory in words.
pub(super) fn case_categories(cases: &[&CaseRow<'_>], labels: &[String]) -> Vec<String> {
    cases
        .iter()
        .map(|(set, r)| format!("{}{}", labels[*set], case_memory_words(r)))
        .collect()
}
