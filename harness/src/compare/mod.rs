//! `pinscope compare`: match runs from different machines case by case, with verdicts.
//!
//! [`build`] turns loaded result sets into a [`Comparison`] (pure data); one [`Exporter`] per
//! output format (one file each) turns that into text.

mod csvfmt;
mod gate;
mod json;
mod markdown;
mod memory;
mod model;
mod table;

pub use csvfmt::CsvExporter;
pub use gate::Match;
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use memory::{HostCost, HostPhase, MemoryFinding, Moved, PinCost};
pub use model::*;
pub use table::TableExporter;

use crate::Error;
use crate::accounting::{Metric, Phase};
use crate::results::{ResultSet, Status};
use crate::scenario::Direction;
use crate::stats::Verdict;

/// The text formats `compare` prints (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
}

/// Turns a comparison into one output format.
pub trait Exporter {
    fn render(&self, cmp: &Comparison) -> String;
}

/// The exporter for a `--format` value. `color` only affects the table.
pub fn exporter(format: Format, color: bool) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(TableExporter { color }),
        Format::Markdown => Box::new(MarkdownExporter),
        Format::Csv => Box::new(CsvExporter),
        Format::Json => Box::new(JsonExporter),
    }
}

/// The results CSVs among the paths given: a `x.samples.csv` whose `x.csv` is also given (as
/// `results/*.csv` picks both up) is its companion, read with it, and dropped with a note; one
/// given without its `x.csv` is refused with a sentence naming the file to give instead.
pub fn results_inputs(
    paths: &[std::path::PathBuf],
    quiet: bool,
) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut kept = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(stem) = name.as_deref().and_then(|n| n.strip_suffix(".samples.csv")) else {
            kept.push(p.clone());
            continue;
        };
        let main = p.with_file_name(format!("{stem}.csv"));
        if paths.contains(&main) {
            skipped.push((p.display().to_string(), main.display().to_string()));
        } else {
            return Err(Error::BadResults {
                path: p.clone(),
                reason: format!(
                    "it is a samples file, read together with its results CSV: give {} instead",
                    main.display()
                ),
            });
        }
    }
    if !quiet {
        match skipped.as_slice() {
            [] => {}
            [(samples, csv)] => eprintln!(
                "note: skipped {samples} as an input: it holds the raw samples of {csv} and is read with it"
            ),
            many => eprintln!(
                "note: skipped {} .samples.csv inputs: each holds the raw samples of the results CSV beside it and is read with it",
                many.len()
            ),
        }
    }
    Ok(kept)
}

/// Loads result files, naming the file in any error.
pub fn load_all(paths: &[std::path::PathBuf]) -> Result<Vec<ResultSet>, Error> {
    paths
        .iter()
        .map(|p| {
            let set = ResultSet::load(p).map_err(|e| match e {
                // Errors from the reader already name the file; keep them as they are.
                e @ (Error::BadResults { .. } | Error::Input { .. } | Error::Io { .. }) => e,
                other => Error::BadResults {
                    path: p.clone(),
                    reason: other.to_string(),
                },
            })?;
            if set.rows.is_empty() {
                return Err(Error::BadResults {
                    path: p.clone(),
                    reason: "it has a header but no rows: the run that wrote it finished no case"
                        .into(),
                });
            }
            Ok(set)
        })
        .collect()
}

// ---- shared cell formatting --------------------------------------------------------------

pub(crate) fn fmt_gbs(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |v| format!("{v:.2}"))
}

pub(crate) fn fmt_mib(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |v| format!("{v:+.1}"))
}

pub(crate) fn fmt_ci(c: &crate::stats::Comparison) -> String {
    match c.ci {
        Some((lo, hi)) => format!("[{lo:.3}, {hi:.3}]"),
        None => "n/a (<2 samples)".into(),
    }
}

/// What a run shows in its GB/s column: the median, or `failed` / `skipped` when the case did
/// not finish (the reasons are listed by [`unfinished_lines`]).
pub(crate) fn cell_value(c: Option<&Cell>) -> String {
    match c {
        None => "(absent)".into(),
        Some(Cell {
            status: Status::Failed(_),
            ..
        }) => "failed".into(),
        Some(Cell {
            status: Status::Skipped(_),
            ..
        }) => "skipped".into(),
        Some(c) => fmt_gbs(c.median_gbs),
    }
}

/// "A mapped 64 MiB (h2d): failed: …" for every cell that did not finish.
pub(crate) fn unfinished_lines(cmp: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for e in &cmp.entries {
        for (c, r) in e.cells.iter().zip(&cmp.runs) {
            if let Some(c) = c.as_ref().filter(|c| !c.status.is_ok()) {
                out.push(format!(
                    "{} {} ({}): {}",
                    r.label,
                    e.case_label,
                    e.lane.name(),
                    c.status.to_field()
                ));
            }
        }
    }
    out
}

/// The bandwidth table as a header and rows of plain strings (table, markdown and HTML use it).
/// The last column of each non-baseline run is its verdict.
pub(crate) fn bandwidth_grid(cmp: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let g = grid(cmp, &BANDWIDTH);
    (g.head, g.rows)
}

/// The title of [`latency_grid`]'s table.
pub const LATENCY_TITLE: &str = "Latency (median µs per operation, the chase's per load; lower is better: time/A below 1 is faster)";

/// The latency table (rows whose number is a time) as a header and rows of plain strings: each
/// run's median time, then per non-baseline run the time ratio to the baseline (below 1: less
/// time), its interval and the verdict (`faster` when the time went down). Empty rows when no
/// entry is a time.
pub fn latency_grid(cmp: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let g = grid(cmp, &LATENCY);
    (g.head, g.rows)
}

/// What a cell says to a reader scanning a terminal table: nothing special, good news (a
/// faster verdict) or bad news (a slower verdict, a failed case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Plain,
    Good,
    Bad,
}

/// How a column lines up in a terminal table: text to the left, numbers to the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A table as plain strings with the [`Tone`] of each cell and the [`Align`] of each column,
/// both set where the cells are made.
pub(crate) struct Grid {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// `[row][column]`, as `rows`.
    pub tones: Vec<Vec<Tone>>,
    /// One per column.
    pub align: Vec<Align>,
}

impl Grid {
    /// A grid whose cells are all plain: its first `text` columns are text, the rest numbers.
    fn plain(head: Vec<String>, rows: Vec<Vec<String>>, text: usize) -> Grid {
        let tones = rows.iter().map(|r| vec![Tone::Plain; r.len()]).collect();
        let align = (0..head.len())
            .map(|j| if j < text { Align::Left } else { Align::Right })
            .collect();
        Grid {
            head,
            rows,
            tones,
            align,
        }
    }

    /// The grid of the columns `cols`, in that order.
    fn columns(&self, cols: &[usize]) -> Grid {
        let pick = |r: &Vec<String>| cols.iter().map(|j| r[*j].clone()).collect();
        Grid {
            head: pick(&self.head),
            rows: self.rows.iter().map(pick).collect(),
            tones: self
                .tones
                .iter()
                .map(|t| cols.iter().map(|j| t[*j]).collect())
                .collect(),
            align: cols.iter().map(|j| self.align[*j]).collect(),
        }
    }
}

/// The tone of a run's number cell: bad when the case failed.
fn status_tone(c: Option<&Cell>) -> Tone {
    match c.map(|c| &c.status) {
        Some(Status::Failed(_)) => Tone::Bad,
        _ => Tone::Plain,
    }
}

/// The tone of a verdict cell.
fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::Faster => Tone::Good,
        Verdict::Slower => Tone::Bad,
        Verdict::WithinNoise
        | Verdict::Inconclusive
        | Verdict::TooFewSamples
        | Verdict::Undecided => Tone::Plain,
    }
}

/// What one comparison grid holds: the entries whose number is a time or those whose number is
/// a bandwidth, and how it heads and shows each run's number and each change.
struct GridKind {
    measures_time: bool,
    /// The head of a run's number column, after its label.
    value_head: &'static str,
    /// What a later run's ratio column head says between its label and `/` and the baseline's.
    ratio_head: &'static str,
    /// A run's number cell.
    value: fn(Option<&Cell>) -> String,
    /// A later run's ratio and interval cells.
    change: fn(&crate::stats::Comparison) -> [String; 2],
}

const BANDWIDTH: GridKind = GridKind {
    measures_time: false,
    value_head: "GB/s",
    ratio_head: "",
    value: cell_value,
    change: |ch| [format!("{:.3}", ch.ratio), fmt_ci(ch)],
};

const LATENCY: GridKind = GridKind {
    measures_time: true,
    value_head: "µs (p50)",
    ratio_head: " time",
    value: |c| match c {
        Some(c) if c.status.is_ok() => c
            .time_p50_us
            .map_or_else(|| "—".into(), |v| format!("{v:.2}")),
        c => cell_value(c),
    },
    // The verdict compares rates; the time ratio is its inverse.
    change: |ch| {
        let ci = match ch.ci {
            Some((lo, hi)) => format!("[{:.3}, {:.3}]", 1.0 / hi, 1.0 / lo),
            None => "n/a (<2 samples)".into(),
        };
        [format!("{:.3}", 1.0 / ch.ratio), ci]
    },
};

/// The grid of `kind`: case and lane, each run's number and its raw samples (n), then per later
/// run its ratio to the baseline, the interval and the verdict (`—` where there is no change).
fn grid(cmp: &Comparison, kind: &GridKind) -> Grid {
    let base = cmp
        .runs
        .first()
        .map_or("A".to_string(), |r| r.label.clone());
    let mut head = vec!["case".to_string(), "lane".to_string()];
    let mut align = vec![Align::Left; 2];
    for r in &cmp.runs {
        head.push(format!("{} {}", r.label, kind.value_head));
        head.push(format!("{} n", r.label));
        align.extend([Align::Right; 2]);
    }
    for r in cmp.runs.iter().skip(1) {
        head.push(format!("{}{}/{base}", r.label, kind.ratio_head));
        head.push(format!("{} 95% CI", r.label));
        head.push(format!("{} verdict", r.label));
        align.extend([Align::Right, Align::Left, Align::Left]);
    }
    let (rows, tones) = cmp
        .entries
        .iter()
        .filter(|e| e.measures_time == kind.measures_time)
        .map(|e| {
            let mut row = vec![e.case_label.clone(), lane_cell(e)];
            let mut tones = vec![Tone::Plain; 2];
            for c in &e.cells {
                row.push((kind.value)(c.as_ref()));
                row.push(
                    c.as_ref()
                        .map_or_else(|| "—".into(), |c| c.samples.to_string()),
                );
                tones.extend([status_tone(c.as_ref()), Tone::Plain]);
            }
            for c in e.cells.iter().skip(1) {
                match c.as_ref().and_then(|c| c.change.as_ref()) {
                    Some(ch) => {
                        row.extend((kind.change)(ch));
                        row.push(ch.verdict.name().to_string());
                        tones.extend([Tone::Plain, Tone::Plain, verdict_tone(ch.verdict)]);
                    }
                    None => {
                        row.extend(["—".to_string(), "—".to_string(), "—".to_string()]);
                        tones.extend([Tone::Plain; 3]);
                    }
                }
            }
            (row, tones)
        })
        .unzip();
    Grid {
        head,
        rows,
        tones,
        align,
    }
}

/// The lane column of an accounting row: a case's memory belongs to the case, so one-way cases
/// show their direction and bidirectional ones `bidir`.
pub(crate) fn case_lane(e: &Entry) -> &'static str {
    if e.direction == Direction::Bidirectional {
        "bidir"
    } else {
        e.lane.name()
    }
}

/// The lane column of a bandwidth row: `h2d`, `d2h`, or `bidir h2d` / `bidir d2h` / `bidir sum`
/// for the lanes of a bidirectional case (so its H2D lane is never taken for the one-way copy).
pub(crate) fn lane_cell(e: &Entry) -> String {
    if e.direction == Direction::Bidirectional {
        format!("bidir {}", e.lane.name())
    } else {
        e.lane.name().to_string()
    }
}

/// What an accounting cell says for a phase the run did not record.
pub const NOT_RECORDED: &str = "not recorded";

/// Accounting deltas in long form, one table per phase (host memory alone, host and device
/// memory, after free):
/// one row per case and run, one column per metric any run has, in MiB; `—` = unavailable.
pub(crate) fn accounting_grids(cmp: &Comparison) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    for (phase, title) in [
        (
            Phase::Host,
            "after the host memory alone was allocated and first touched",
        ),
        (
            Phase::Alloc,
            "after the host and device memory were allocated and first touched",
        ),
        (Phase::Free, "after free and the hold"),
    ] {
        let cols: Vec<(usize, Metric)> = cmp
            .accounting_keys
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| *p == phase)
            .map(|(j, (_, m))| (j, *m))
            .collect();
        if cols.is_empty() {
            continue;
        }
        let mut head = vec!["case".to_string(), "lane".to_string(), "run".to_string()];
        head.extend(cols.iter().map(|(_, m)| m.declaration().header.to_string()));
        let mut rows = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for e in &cmp.entries {
            if !seen.insert(e.case_key.as_str()) {
                continue;
            }
            for (c, r) in e.cells.iter().zip(&cmp.runs) {
                let Some(c) = c else { continue };
                let vals: Vec<Option<f64>> = cols.iter().map(|(j, _)| c.accounting[*j]).collect();
                // A run without the host phase says so in its table, rather than vanishing.
                let not_recorded = phase == Phase::Host && c.host_phase == HostPhase::NotRecorded;
                if vals.iter().all(Option::is_none) && !not_recorded {
                    continue;
                }
                let mut row = vec![
                    e.case_label.clone(),
                    case_lane(e).to_string(),
                    r.label.clone(),
                ];
                if not_recorded {
                    row.extend(vals.iter().map(|_| NOT_RECORDED.to_string()));
                } else {
                    row.extend(vals.into_iter().map(fmt_mib));
                }
                rows.push(row);
            }
        }
        if !rows.is_empty() {
            out.push((
                format!(
                    "Memory accounting deltas {title} (MiB; — = observer unavailable; {NOT_RECORDED} = not recorded by this run)"
                ),
                head,
                rows,
            ));
        }
    }
    out
}

/// A table of the text exporters: its title and its parts, each a header and rows, split so
/// each part fits [`TABLE_WIDTH`].
pub(crate) struct TextTable {
    pub title: String,
    pub parts: Vec<Grid>,
}

/// The tables the text exporters print after the header lines, in order: the bandwidth grid
/// titled `bandwidth_title` (not for a comparison of latency runs alone: no empty table), the
/// latency grid when there are latency rows, then one accounting table per phase.
pub(crate) fn text_tables(cmp: &Comparison, bandwidth_title: &str) -> Vec<TextTable> {
    let split = |title: &str, g: Grid, keep| TextTable {
        title: title.to_string(),
        parts: column_groups(&g.head, &g.rows, keep, TABLE_WIDTH)
            .iter()
            .map(|cols| g.columns(cols))
            .collect(),
    };
    let bandwidth = grid(cmp, &BANDWIDTH);
    let latency = grid(cmp, &LATENCY);
    let mut out = Vec::new();
    if !bandwidth.rows.is_empty() || latency.rows.is_empty() {
        out.push(split(bandwidth_title, bandwidth, 2));
    }
    if !latency.rows.is_empty() {
        out.push(split(LATENCY_TITLE, latency, 2));
    }
    for (title, h, r) in accounting_grids(cmp) {
        out.push(split(&title, Grid::plain(h, r, 3), 3));
    }
    out
}

/// The columns of each table a wide table is split into: the first `keep` columns repeated, so
/// each fits `max` characters as [`table::align`] prints it (two spaces between columns).
fn column_groups(
    head: &[String],
    rows: &[Vec<String>],
    keep: usize,
    max: usize,
) -> Vec<Vec<usize>> {
    let width = |j: usize| table::width(head, rows, j);
    let keep = keep.min(head.len());
    let base: usize = (0..keep).map(|j| width(j) + 2).sum();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut used = base;
    for j in keep..head.len() {
        let w = width(j) + 2;
        match groups.last_mut() {
            Some(g) if used + w <= max + 2 => {
                g.push(j);
                used += w;
            }
            _ => {
                groups.push(vec![j]);
                used = base + w;
            }
        }
    }
    if groups.is_empty() {
        return vec![(0..head.len()).collect()];
    }
    groups
        .into_iter()
        .map(|g| (0..keep).chain(g).collect())
        .collect()
}

/// Terminal tables are split to fit this many columns.
pub const TABLE_WIDTH: usize = 120;

/// "only in B: case (lane)" lines for entries some runs lack.
pub(crate) fn only_in_lines(cmp: &Comparison) -> Vec<String> {
    cmp.partial_entries()
        .into_iter()
        .map(|(e, present)| {
            format!(
                "only in {}: {} ({})",
                present.join(", "),
                e.case_label,
                e.lane.name()
            )
        })
        .collect()
}

/// The titled lists that end every export, only those with lines: the cells that did not
/// finish ([`unfinished_lines`]), then the cases some runs lack ([`only_in_lines`]).
pub(crate) fn closing_lists(cmp: &Comparison) -> Vec<(&'static str, Vec<String>)> {
    [
        ("Not finished", unfinished_lines(cmp)),
        ("Cases not in every run", only_in_lines(cmp)),
    ]
    .into_iter()
    .filter(|(_, lines)| !lines.is_empty())
    .collect()
}

/// Header lines: the runs, the machine fields that differ or some run does not know, notes.
pub(crate) fn header_lines(cmp: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let synthetic: Vec<&str> = cmp
        .runs
        .iter()
        .filter(|r| r.synthetic)
        .map(|r| r.label.as_str())
        .collect();
    if !synthetic.is_empty() {
        out.push(format!(
            "SYNTHETIC DATA in run(s) {}: made up to test the renderer, not measurements.",
            synthetic.join(", ")
        ));
    }
    for (i, r) in cmp.runs.iter().enumerate() {
        let mut l = format!("{}  {}", r.label, r.path);
        if !r.run_id.is_empty() {
            l.push_str(&format!("  (run {}", r.run_id));
            if !r.started_at.is_empty() {
                l.push_str(&format!(", {}", r.started_at));
            }
            l.push(')');
        }
        if r.partial {
            l.push_str("  [partial]");
        }
        // The first run is the baseline.
        if i == 0 {
            l.push_str("  baseline");
        }
        out.push(l);
    }
    if cmp.machine_diffs.is_empty() {
        out.push("Machine fields: identical in every run.".into());
    } else {
        out.extend(cmp.machine_diffs.iter().map(|d| machine_line(d, &cmp.runs)));
    }
    out.extend(cmp.notes.iter().cloned());
    out
}

/// What the text exporters print first: [`header_lines`], then the [`verdict_legend`].
pub(crate) fn opening_lines(cmp: &Comparison) -> Vec<String> {
    let mut out = header_lines(cmp);
    out.push(verdict_legend(&cmp.rule));
    out
}

/// `differs — kernel: A=…  B=…` when the known values differ, else `unknown in B — kernel: A=…`:
/// a value a run does not know is no difference.
fn machine_line(d: &MachineDiff, runs: &[RunInfo]) -> String {
    let known: Vec<String> = d
        .values
        .iter()
        .zip(runs)
        .filter_map(|(v, r)| v.as_ref().map(|v| format!("{}={v}", r.label)))
        .collect();
    let unknown: Vec<&str> = d
        .values
        .iter()
        .zip(runs)
        .filter(|(v, _)| v.is_none())
        .map(|(_, r)| r.label.as_str())
        .collect();
    let unknown_in = format!("unknown in {}", unknown.join(", "));
    match (d.differs(), unknown.is_empty()) {
        (true, true) => format!("differs — {}: {}", d.field, known.join("  ")),
        (true, false) => format!("differs — {}: {}; {unknown_in}", d.field, known.join("  ")),
        (false, _) => format!("{unknown_in} — {}: {}", d.field, known.join("  ")),
    }
}

/// The rule every verdict follows, as the legend under the runs says it.
pub(crate) fn verdict_legend(rule: &crate::stats::VerdictRule) -> String {
    format!(
        "Verdicts: a verdict needs at least {n} raw samples per side (n columns); with fewer it reads \"too few samples\": ratio and interval are shown as information and --fail-on does not count it. Then a ratio of medians within ±{noise:.1}% reads \"no difference within noise\"; beyond it, \"faster\" or \"slower\" needs the {conf:.0}% bootstrap CI ({first} to {most} resamples: a case stops once its verdict is settled) to exclude 1, else \"interval includes 1\".",
        n = rule.min_samples,
        noise = rule.noise * 100.0,
        conf = rule.confidence * 100.0,
        first = crate::stats::FIRST_STAGE_RESAMPLES.min(rule.resamples),
        most = rule.resamples,
    )
}

/// The memory finding as lines (`A: allocating … moved …`), titled; none when no run held
/// page-locked memory with its memory observed.
pub(crate) fn memory_list(cmp: &Comparison) -> Option<(&'static str, Vec<String>)> {
    let finding = cmp.memory.as_ref()?;
    let names: Vec<String> = cmp.runs.iter().map(|r| r.label.clone()).collect();
    Some((
        "Memory: what the largest page-locked allocation cost",
        finding.lines(&names),
    ))
}

#[cfg(test)]
mod tests;
