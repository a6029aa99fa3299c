//! Plot (c): memory-accounting deltas (MiB) per observer metric, grouped bars per case.

use super::CaseRow;
use super::chart::{self, Bars, Figure};
use super::html::{self, escape};
use super::labels::case_memory_words;
use crate::accounting::{Metric, Phase};
use crate::results::Row;
use std::collections::HashSet;

/// The range (MiB) of every accounting delta after allocation or after free in `rows`, 0
/// included: the one scale the platform page's accounting plots share, so +2 MiB on one plot
/// never draws as wide as +4 GiB on the next.
pub fn page_scale<'r>(rows: impl Iterator<Item = &'r Row>) -> Option<(f64, f64)> {
    scale_of(rows, |p| matches!(p, Phase::Alloc | Phase::Free))
}

/// The range (MiB) of every accounting delta at `phase` in `rows`, 0 included: the scale a
/// report's plots of that phase share. The plots after free get their own: what is still held
/// after a free is tens of MiB, and on the allocation's ±GiB scale it would draw as nothing.
pub fn phase_scale<'r>(rows: impl Iterator<Item = &'r Row>, phase: Phase) -> Option<(f64, f64)> {
    scale_of(rows, |p| p == phase)
}

fn scale_of<'r>(
    rows: impl Iterator<Item = &'r Row>,
    plotted: impl Fn(Phase) -> bool,
) -> Option<(f64, f64)> {
    let mut range: Option<(f64, f64)> = None;
    for r in rows {
        for (p, _, v) in &r.accounting {
            if plotted(*p) && v.is_finite() {
                let (l, h) = range.unwrap_or((0.0, 0.0));
                range = Some((l.min(*v), h.max(*v)));
            }
        }
    }
    range
}

/// The smallest change (MiB) an accounting plot shows as a move: it prints whole MiB, so less
/// than half of one prints as 0.
pub const PRINTED_MIB: f64 = 0.5;

/// Whether the case of row `r` moved some observer beyond that metric's noise
/// ([`Metric::noise`]) at `phase`, by at least [`PRINTED_MIB`]: only such cases get bars.
pub fn moved_beyond_noise(r: &Row, phase: Phase) -> bool {
    Metric::ALL.into_iter().any(|m| {
        r.accounting_value(phase, m)
            .is_some_and(|v| v.abs() > m.noise().mib && v.abs() >= PRINTED_MIB)
    })
}

/// The caption's sentence about the shared scale (the platform page's observer plots).
pub const SHARED_SCALE: &str = "Every accounting plot on this page uses the same MiB scale, so bar lengths compare across plots.";

/// The caption's sentence about the scale of the report's plots after allocation.
const PHASE_SCALE_ALLOC: &str = "Every plot after allocation on this page uses the same MiB scale, so bar lengths compare across plots.";
/// The caption's sentence about the scale of the report's plots after free.
const PHASE_SCALE_FREE: &str = "Every plot after free on this page uses the same MiB scale (its own: what is still held after a free is far less than what was allocated), so bar lengths compare across plots.";

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

/// What each observer saw after allocation (`phase` `alloc`) or after free and hold (`free`), as
/// HTML: the bars of the cases that moved some observer beyond its noise
/// ([`moved_beyond_noise`]), drawn on the page's shared `scale` for the phase ([`phase_scale`]),
/// one bar per metric in [`Metric::READER_ORDER`] labelled with its declaration's label; then one
/// line naming the cases that moved nothing, which folds out into the table of their deltas.
pub fn accounting(
    scenario: &str,
    phase: Phase,
    rows: &[CaseRow<'_>],
    labels: &[String],
    scale: Option<(f64, f64)>,
) -> String {
    let title = format!(
        "{scenario}: what did each observer see {}?",
        phase_words(phase)
    );
    let cases = first_row_per_case(rows, |r| r.has_accounting_at(phase));
    let metrics = metrics_read(&cases, phase);
    if cases.is_empty() || metrics.is_empty() {
        return Figure::omitted(
            &title,
            format!(
                "No plot: no case in this scenario recorded accounting deltas {}.",
                phase_words(phase)
            ),
        )
        .to_html();
    }
    let (moved, quiet): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .partition(|(_, r)| moved_beyond_noise(r, phase));
    let mut out = String::new();
    let none_moved = moved.is_empty();
    if !none_moved {
        out.push_str(&bars(title, phase, moved, labels, scale, &metrics).to_html());
    }
    if !quiet.is_empty() {
        out.push_str(&quiet_cases(phase, &quiet, labels, &metrics, none_moved));
    }
    out
}

/// "after allocation (host and device memory)" or "after free and hold".
fn phase_words(phase: Phase) -> &'static str {
    if phase == Phase::Alloc {
        "after allocation (host and device memory)"
    } else {
        "after free and hold"
    }
}

/// The metrics some case recorded at `phase`, in [`Metric::READER_ORDER`].
fn metrics_read(cases: &[&CaseRow<'_>], phase: Phase) -> Vec<Metric> {
    Metric::READER_ORDER
        .into_iter()
        .filter(|m| {
            cases
                .iter()
                .any(|(_, r)| r.accounting_value(phase, *m).is_some())
        })
        .collect()
}

/// The bar chart of the cases that moved.
fn bars(
    title: String,
    phase: Phase,
    mut cases: Vec<&CaseRow<'_>>,
    labels: &[String],
    scale: Option<(f64, f64)>,
    metrics: &[Metric],
) -> Figure {
    let left_out = chart::keep_drawable(&mut cases, "cases are in the tables.");
    let caption = format!(
        "Signed deltas in MiB; MemAvailable going negative means host memory was taken. Missing bars: that observer is unavailable on the machine. {}{}",
        if phase == Phase::Alloc {
            PHASE_SCALE_ALLOC
        } else {
            PHASE_SCALE_FREE
        },
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

/// Case names a quiet-cases line lists before it counts the rest.
const QUIET_NAMED: usize = 12;

/// One line (a `<details>` summary) naming the cases that moved no observer beyond its noise at
/// `phase`, folding out into the table of their deltas; `all` when no case of the scenario moved.
fn quiet_cases(
    phase: Phase,
    quiet: &[&CaseRow<'_>],
    labels: &[String],
    metrics: &[Metric],
    all: bool,
) -> String {
    let mut names: Vec<String> = Vec::new();
    for (set, r) in quiet {
        let n = format!(
            "{}{} ({})",
            labels[*set],
            r.case_label,
            crate::units::format_size(r.size_bytes)
        );
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let more = names.len().saturating_sub(QUIET_NAMED);
    names.truncate(QUIET_NAMED);
    let listed = if more > 0 {
        format!("{} and {more} more", names.join(", "))
    } else {
        names.join(", ")
    };
    let what = if all {
        format!(
            "none of the {} cases moved an observer beyond its noise",
            quiet.len()
        )
    } else {
        format!(
            "{} more cases moved no observer beyond its noise and have no bars",
            quiet.len()
        )
    };
    let summary = format!(
        "{}, {what}: {listed} (see the table).",
        capitalized(phase_words(phase)),
    );
    let mut head: Vec<String> = vec!["case".into()];
    head.extend(
        metrics
            .iter()
            .map(|m| format!("{} MiB (noise {})", m.declaration().header, m.noise().mib)),
    );
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let cells: Vec<Vec<String>> = quiet
        .iter()
        .map(|(set, r)| {
            let mut row = vec![format!("{}{}", labels[*set], case_memory_words(r))];
            row.extend(metrics.iter().map(|m| {
                r.accounting_value(phase, *m)
                    .map_or_else(|| "—".into(), |v| chart::fixed(v, 1))
            }));
            row
        })
        .collect();
    format!(
        "<details class=\"quiet\"><summary>{}</summary>\n{}</details>\n",
        escape(&summary),
        html::table(&head, &cells, &|_| "")
    )
}

/// `after allocation` → `After allocation`.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
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
