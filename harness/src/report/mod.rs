//! Plots (one file per plot kind, SVG rendered to a `String` by plotters) and the self-contained
//! HTML report: inline SVG and CSS, no JavaScript, no network references.
//!
//! [`render_report`] is pure (result sets in, HTML out); [`report_command`] and [`write_report`]
//! add the file I/O. Data are aggregated before plotting, so 100 000 rows draw as a handful of
//! lines and bars.
//!
//! Size: over 500 lines: the report page's sections (machines, observers, scenarios, summary,
//! failures, sidecar lists, reference) are small functions that share the page's helpers; the
//! plots themselves are in their own files.

pub(crate) mod answer;
mod chart;
mod compare_page;
pub mod device_memory;
mod fleet;
pub mod html;
pub mod labels;
pub mod latency;
mod machine_line;
pub mod memory_cost;
mod nvbandwidth;
pub mod platform;
mod platform_answer;
mod plot_accounting;
mod plot_maxalloc;
mod plot_runs;
mod plot_size;
mod plot_strategy;
mod plot_timeline;
mod settings_table;
pub mod summary;

pub use answer::console_lines;
pub use answer::{Sentence, answer};
pub use chart::Figure;
pub use compare_page::render_compare_html;
pub use memory_cost::max_alloc_detail;
pub use nvbandwidth::{
    NvbandwidthMeasure, NvbandwidthSeries, load as load_nvbandwidth, parse as parse_nvbandwidth,
};
pub use plot_runs::runs_side_by_side;
pub use plot_timeline::NOISE_RULE as TIMELINE_NOISE_RULE;
pub use summary::summary_text;

use crate::Error;
use crate::results::{
    ClaimStatus, ClaimVerdict, Lane, NodeFolder, ObserverStatus, ProbeRecord, ResultSet, Row,
    Sidecar,
};
use html::escape;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// One row of one result set (index into the sets, row).
pub(crate) type CaseRow<'a> = (usize, &'a Row);

/// `rows` split into (device-memory rows, host-link rows). A plot that holds both draws them
/// apart: device memory runs at thousands of GB/s and would flatten the host link's bars and
/// lines to slivers.
pub(crate) fn device_and_link<'r, 'a>(
    rows: impl IntoIterator<Item = &'r CaseRow<'a>>,
) -> (Vec<&'r CaseRow<'a>>, Vec<&'r CaseRow<'a>>)
where
    'a: 'r,
{
    rows.into_iter()
        .partition(|(_, r)| r.lane == crate::results::Lane::Device)
}

/// The strategy a row measured: host memory kind / flags / engine / mode, plus the staging
/// parameters when they are not the defaults.
pub fn strategy_label(r: &Row) -> String {
    let flags = r.flags.label();
    let mut parts: Vec<&str> = vec![crate::results::host_name(r.host)];
    if !r.flags.is_empty() {
        parts.push(&flags);
    }
    parts.push(r.engine.name());
    parts.push(r.mode.name());
    let mut s = parts.join("/");
    if r.chunk_bytes > 0 {
        s.push_str(&format!(
            " chunk {}",
            crate::units::format_size(r.chunk_bytes)
        ));
        if r.ring > 1 {
            s.push_str(&format!("×{}", r.ring));
        }
    }
    if r.streams > 1 {
        s.push_str(&format!(" {} streams", r.streams));
    }
    // Host threads only do work in the staging ring and the CPU engines; the CSV keeps the
    // setting on every row, the label names it only where it was used.
    if r.threads > 1 && (r.mode == crate::scenario::Mode::Staged || r.engine.is_cpu()) {
        s.push_str(&format!(" {} threads", r.threads));
    }
    s
}

/// Raw bandwidth samples of every set, looked up by case and lane.
pub(crate) struct SampleIndex<'a> {
    sets: &'a [ResultSet],
}

impl<'a> SampleIndex<'a> {
    pub(crate) fn new(sets: &'a [ResultSet]) -> Self {
        SampleIndex { sets }
    }

    pub(crate) fn get(&self, set: usize, case_key: &str, lane: Lane) -> &'a [f64] {
        self.sets[set].samples.bandwidth(case_key, lane)
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".into(), |v| format!("{v:.digits$}"))
}

fn section(out: &mut String, id: &str, title: &str) {
    let _ = write!(out, "<section id=\"{id}\">\n<h2>{}</h2>\n", escape(title));
}

fn para(out: &mut String, text: &str) {
    let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(text));
}

fn machines(out: &mut String, sets: &[ResultSet], labels: &[String]) {
    section(out, "machines", "Machines");
    let head = [
        "run",
        "file",
        "host",
        "platform",
        "os",
        "kernel",
        "cpu",
        "RAM",
        "gpu",
        "driver",
        "CUDA",
        "driver model",
        "PCIe",
        "evidence",
    ];
    let rows: Vec<Vec<String>> = sets
        .iter()
        .zip(labels)
        .map(|(s, l)| {
            let file = s.path.display().to_string();
            match &s.sidecar {
                Some(c) => {
                    let m = &c.machine;
                    let g = m.gpu.clone().unwrap_or_default();
                    let k = m.key();
                    vec![
                        l.trim().to_string(),
                        file,
                        m.host_name.clone(),
                        m.platform.to_string(),
                        m.os.clone(),
                        m.kernel.clone(),
                        format!("{} ({} threads)", m.cpu, m.cpu_threads),
                        crate::units::format_size(m.ram_bytes),
                        g.name.clone(),
                        g.driver_version.clone(),
                        g.cuda_driver_version.clone(),
                        g.driver_model.to_string(),
                        k.pcie_link,
                        m.platform_evidence.join("; "),
                    ]
                }
                None => {
                    let k = s
                        .rows
                        .first()
                        .map(|r| (*r.machine).clone())
                        .unwrap_or_default();
                    vec![
                        l.trim().to_string(),
                        file,
                        k.host_name,
                        k.platform.to_string(),
                        k.os,
                        "(no sidecar)".into(),
                        String::new(),
                        String::new(),
                        k.gpu,
                        k.driver_version,
                        String::new(),
                        k.driver_model.to_string(),
                        k.pcie_link,
                        String::new(),
                    ]
                }
            }
        })
        .collect();
    out.push_str(&html::table(&head, &rows, &|_| ""));
    out.push_str(&settings_table::settings_table(sets, labels));
    out.push_str("</section>\n");
}

/// A table row: its CSS class (empty for none) and its cells.
type ClassedRow = (&'static str, Vec<String>);

/// What a section holding one table says: its anchor and heading, the table's column heads,
/// and the note given in place of a table without rows.
struct TableText {
    id: &'static str,
    title: &'static str,
    head: &'static [&'static str],
    empty: &'static str,
}

impl TableText {
    /// The section: `lead` (when there are rows) and the table of `rows`, each row its CSS
    /// class (empty for none) and its cells; or only the note when there are no rows.
    fn write(&self, out: &mut String, lead: Option<&str>, rows: &[ClassedRow]) {
        section(out, self.id, self.title);
        if rows.is_empty() {
            para(out, self.empty);
        } else {
            if let Some(lead) = lead {
                para(out, lead);
            }
            let cells: Vec<Vec<String>> = rows.iter().map(|(_, c)| c.clone()).collect();
            out.push_str(&html::table(self.head, &cells, &|i| rows[i].0));
        }
        out.push_str("</section>\n");
    }
}

const OBSERVERS: TableText = TableText {
    id: "observers",
    title: "Memory observers",
    head: &["run", "observer", "state", "why not"],
    empty: "No observer list was recorded (no sidecar).",
};

fn observers(out: &mut String, sets: &[ResultSet], labels: &[String]) {
    let rows = sidecar_rows(sets, labels, |c| &c.observers, observer_cells);
    let unavailable = rows.iter().filter(|(class, _)| !class.is_empty()).count();
    let lead = format!(
        "{unavailable} of {} observers were unavailable; their columns are empty and their bars missing.",
        rows.len()
    );
    OBSERVERS.write(out, Some(&lead), &rows);
}

/// An observer's table row after the run: name, state and why it is unavailable (marked
/// `skipped` when it is).
fn observer_cells(o: &ObserverStatus) -> ClassedRow {
    let (class, state) = if o.available {
        ("", "available")
    } else {
        ("skipped", "unavailable")
    };
    let cells = vec![
        o.observer.to_string(),
        state.into(),
        o.reason.clone().unwrap_or_default(),
    ];
    (class, cells)
}

/// One table row per item `items` picks from each run's sidecar: the run's label, then `cells`.
fn sidecar_rows<'s, T: 's>(
    sets: &'s [ResultSet],
    labels: &[String],
    items: impl Fn(&'s Sidecar) -> &'s [T],
    cells: impl Fn(&'s T) -> ClassedRow,
) -> Vec<ClassedRow> {
    let mut rows = Vec::new();
    for (s, l) in sets.iter().zip(labels) {
        for item in s.sidecar.iter().flat_map(&items) {
            let (class, item_cells) = cells(item);
            let mut row = vec![l.trim().to_string()];
            row.extend(item_cells);
            rows.push((class, row));
        }
    }
    rows
}

/// Scenario names in first-seen order over all sets.
fn scenario_names(sets: &[ResultSet]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in sets {
        for r in &s.rows {
            if names.last().map(String::as_str) != Some(&*r.scenario)
                && !names.iter().any(|n| **n == *r.scenario)
            {
                names.push(r.scenario.to_string());
            }
        }
        for sc in s.sidecar.iter().flat_map(|c| &c.scenarios) {
            if !names.contains(&sc.name) {
                names.push(sc.name.clone());
            }
        }
    }
    names
}

fn scenarios(out: &mut String, sets: &[ResultSet], names: &[String]) {
    section(out, "scenarios", "Scenarios");
    for name in names {
        let rec = sets
            .iter()
            .filter_map(|s| s.sidecar.as_ref())
            .flat_map(|c| &c.scenarios)
            .find(|s| &s.name == name);
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        match rec {
            Some(r) => {
                let _ = writeln!(out, "<p>{}</p>", escape(&r.description));
                let _ = writeln!(
                    out,
                    "<details><summary>{} (TOML as run)</summary>\n<pre>{}</pre></details>",
                    escape(&r.path),
                    escape(&r.text)
                );
            }
            None => para(out, "The scenario text was not recorded (no sidecar)."),
        }
    }
    out.push_str("</section>\n");
}

fn summary_rows(rows: &[CaseRow<'_>], labels: &[String]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|(set, r)| {
            // A latency row shows its time in the bandwidth's place: median, and p99 as spread.
            let (median, min, max, spread) = match latency::time_cells(r) {
                Some((p50, tail)) => (p50, "—".into(), "—".into(), tail),
                None => (
                    opt(r.bw_median_gbs, 2),
                    opt(r.bw_min_gbs, 2),
                    opt(r.bw_max_gbs, 2),
                    opt(r.bw_spread_pct, 1),
                ),
            };
            vec![
                format!("{}{}", labels[*set], r.case_label),
                labels::strategy_words(r),
                r.lane.name().to_string(),
                crate::units::format_size(r.size_bytes),
                crate::units::format_size(r.pinned_bytes),
                median,
                min,
                max,
                spread,
                r.samples.to_string(),
                r.outliers.to_string(),
                r.verified.to_string(),
                r.status.to_field(),
                strategy_label(r),
                r.axes.joined(", "),
            ]
        })
        .collect()
}

/// Tables longer than this are folded into a `<details>` element.
const FOLD_ROWS: usize = 200;
/// A scenario with more rows than this is summarised by strategy, lane and size instead of
/// listed row by row (every row stays in the results CSV, named under the table).
pub const LIST_ROWS: usize = 2_000;
/// Lines of an aggregated summary; further groups are counted.
const MAX_AGGREGATE_ROWS: usize = 500;

/// The summary of a scenario with many rows: one line per strategy, lane and size with the
/// distribution of the rows' medians.
fn aggregated_summary(out: &mut String, rows: &[CaseRow<'_>], labels: &[String], paths: &[&Path]) {
    let mut groups: std::collections::BTreeMap<(String, Lane, u64), (usize, Vec<f64>)> =
        Default::default();
    let mut files = std::collections::BTreeSet::new();
    for (set, r) in rows {
        files.insert(*set);
        let g = groups
            .entry((
                format!("{}{}", labels[*set], strategy_label(r)),
                r.lane,
                r.size_bytes,
            ))
            .or_default();
        g.0 += 1;
        if let Some(v) = r.bw_median_gbs.filter(|_| r.status.is_ok()) {
            g.1.push(v);
        }
    }
    let total = groups.len();
    let cells: Vec<Vec<String>> = groups
        .into_iter()
        .take(MAX_AGGREGATE_ROWS)
        .map(|((strategy, lane, size), (n, v))| {
            let s = crate::stats::Sample::new(v).ok();
            let q = |q: f64| opt(s.as_ref().map(|s| s.quantile(q)), 2);
            vec![
                strategy,
                lane.name().to_string(),
                crate::units::format_size(size),
                n.to_string(),
                s.as_ref().map_or(0, crate::stats::Sample::len).to_string(),
                q(0.0),
                q(0.5),
                q(1.0),
            ]
        })
        .collect();
    para(
        out,
        &format!(
            "{} rows, more than the {LIST_ROWS} a page lists: one line per strategy, lane and size, with the spread of the rows' median GB/s ({total} lines{}).",
            rows.len(),
            if total > MAX_AGGREGATE_ROWS {
                format!(", the first {MAX_AGGREGATE_ROWS} shown")
            } else {
                String::new()
            }
        ),
    );
    let head = [
        "strategy",
        "lane",
        "size",
        "rows",
        "ok",
        "min median GB/s",
        "median",
        "max median GB/s",
    ];
    out.push_str(&html::table(&head, &cells, &|_| ""));
    out.push_str("<p class=\"note\">Every row is in the results CSV: ");
    for (i, set) in files.into_iter().enumerate() {
        let path = paths
            .get(set)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let _ = write!(
            out,
            "{}<a href=\"{}\">{}{}</a>",
            if i > 0 { ", " } else { "" },
            escape(&path),
            escape(&labels[set]),
            escape(&path)
        );
    }
    out.push_str("</p>\n");
}

fn summary(
    out: &mut String,
    scenarios: &ScenarioRows<'_, '_>,
    nvb: &[NvbandwidthSeries],
    paths: &[&Path],
) {
    let labels = scenarios.labels;
    section(out, "summary", "Parameters and numbers");
    let head = [
        "case",
        "strategy, in words",
        "lane",
        "size",
        "page-locked",
        "median GB/s (latency: µs)",
        "min",
        "max",
        "spread % (latency: p99)",
        "samples",
        "outliers",
        "verified",
        "status",
        "host/flags/engine/mode",
        "sweep axes",
    ];
    for name in scenarios.names {
        let rows = scenarios.of(name);
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        if rows.is_empty() {
            para(out, "No cases of this scenario were recorded.");
            continue;
        }
        if rows.len() > LIST_ROWS {
            aggregated_summary(out, rows, labels, paths);
            continue;
        }
        let mut cells = summary_rows(rows, labels);
        for r in nvb
            .iter()
            .filter(|r| r.measure != NvbandwidthMeasure::LatencyNs)
        {
            cells.push(vec![
                format!("nvbandwidth {} (reference)", r.testname),
                "NVIDIA's nvbandwidth, copy engine".into(),
                r.lane_words().into(),
                r.buffer_size
                    .map(crate::units::format_size)
                    .unwrap_or_default(),
                String::new(),
                format!("{:.2}", r.bandwidth_gbs),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                r.status.clone(),
                String::new(),
                String::new(),
            ]);
        }
        let table = html::table(&head, &cells, &|i| match rows.get(i).map(|r| &r.1.status) {
            Some(crate::results::Status::Failed(_)) => "failed",
            Some(crate::results::Status::Skipped(_)) => "skipped",
            _ => "",
        });
        if rows.len() > FOLD_ROWS {
            let _ = writeln!(
                out,
                "<details><summary>{} rows</summary>\n{table}</details>",
                rows.len()
            );
        } else {
            out.push_str(&table);
        }
    }
    out.push_str("</section>\n");
}

const FAILURES: TableText = TableText {
    id: "failures",
    title: "Failed and skipped cases",
    head: &["case", "lane", "scenario", "status", "reason"],
    empty: "Every case finished.",
};

fn failures(out: &mut String, all: &[CaseRow<'_>], labels: &[String]) {
    let rows: Vec<ClassedRow> = all
        .iter()
        .filter_map(|(set, r)| {
            let (kind, why) = match &r.status {
                crate::results::Status::Failed(w) => ("failed", w.to_string()),
                crate::results::Status::Skipped(w) => ("skipped", w.clone()),
                crate::results::Status::Ok => return None,
            };
            let cells = vec![
                format!("{}{}", labels[*set], r.case_label),
                r.lane.name().into(),
                r.scenario.to_string(),
                kind.into(),
                why,
            ];
            Some((kind, cells))
        })
        .collect();
    let text = if all.is_empty() {
        TableText {
            empty: "The results hold no case rows: no case finished.",
            ..FAILURES
        }
    } else {
        FAILURES
    };
    text.write(out, None, &rows);
}

const CLAIMS: TableText = TableText {
    id: "claims",
    title: "Claims checked",
    head: &["run", "scenario", "claim", "verdict", "detail"],
    empty: "No claims were checked in these runs.",
};

const PROBES: TableText = TableText {
    id: "probes",
    title: "Probes",
    head: &["run", "scenario", "probe", "value", "unit", "detail"],
    empty: "No probes ran in these runs.",
};

const DERIVED: TableText = TableText {
    id: "derived",
    title: "Derived results",
    head: &["run", "result", "value"],
    empty: "No derived results were recorded.",
};

/// A claim's table row after the run: scenario, claim, verdict and detail, marked `failed` when
/// it did not hold and `skipped` when it did not apply.
fn claim_cells(v: &ClaimVerdict) -> ClassedRow {
    let class = match v.verdict {
        ClaimStatus::Held => "",
        ClaimStatus::NotHeld => "failed",
        ClaimStatus::NotApplicable => "skipped",
    };
    let cells = vec![
        v.scenario.clone(),
        v.text.clone(),
        v.verdict.name().into(),
        v.detail.clone(),
    ];
    (class, cells)
}

/// A probe's table cells after the run: scenario, probe, value, unit and detail. The max-alloc
/// probe's name and detail are made from its case's row (`rows`), so that they say what was held
/// whatever pinscope wrote the sidecar.
fn probe_cells(p: &ProbeRecord, rows: &[Row]) -> Vec<String> {
    let max_alloc = rows
        .iter()
        .find(|r| r.case_key == p.case_key)
        .filter(|_| p.name.starts_with(ProbeRecord::MAX_ALLOC))
        .and_then(|r| {
            let held = if r.max_alloc_host_only_mib().is_some() {
                "only host memory held"
            } else {
                "host and device memory held"
            };
            Some((
                format!("{}, {held}", ProbeRecord::MAX_ALLOC),
                max_alloc_detail(r)?,
            ))
        });
    let (name, detail) = max_alloc.unwrap_or_else(|| (p.name.clone(), p.detail.clone()));
    vec![
        p.scenario.clone(),
        name,
        format!("{:.2}", p.value),
        p.unit.clone(),
        detail,
    ]
}

/// A derived result's table cells after the run: its name and value.
fn derived_cells((name, value): &(String, String)) -> ClassedRow {
    ("", vec![name.clone(), value.clone()])
}

/// The claims, probes and derived results the runs' sidecars hold.
fn sidecar_lists(out: &mut String, sets: &[ResultSet], labels: &[String]) {
    let claims = sidecar_rows(sets, labels, |c| &c.claims, claim_cells);
    CLAIMS.write(out, None, &claims);
    let mut probes = Vec::new();
    for (s, l) in sets.iter().zip(labels) {
        for p in s.sidecar.iter().flat_map(|c| &c.probes) {
            let mut row = vec![l.trim().to_string()];
            row.extend(probe_cells(p, &s.rows));
            probes.push(("", row));
        }
    }
    PROBES.write(out, None, &probes);
    let derived = sidecar_rows(sets, labels, |c| &c.derived, derived_cells);
    DERIVED.write(out, None, &derived);
}

fn reference(out: &mut String, nvb: &[NvbandwidthSeries]) {
    const REFERENCE: TableText = TableText {
        id: "reference",
        title: "Reference: nvbandwidth",
        head: &["test", "result", "buffer", "status", "file"],
        empty: "No nvbandwidth output was given (--nvbandwidth FILE.json).",
    };
    let rows: Vec<ClassedRow> = nvb
        .iter()
        .map(|r| {
            let cells = vec![
                r.testname.clone(),
                r.value_text(),
                r.buffer_size
                    .map(crate::units::format_size)
                    .unwrap_or_else(|| "not recorded".into()),
                r.status.clone(),
                r.source.clone(),
            ];
            ("", cells)
        })
        .collect();
    REFERENCE.write(out, None, &rows);
}

/// The run's [`answer::Headline`] as `data-headline-*` attributes of its answer list, in the
/// page's words, for the index of published reports (`scripts/publish.sh pages`): the fastest
/// way, its GB/s, the page-locked memory it holds, the staging ring's share of its bandwidth and
/// the ring's page-locked memory.
fn headline_attrs(rows: &[&Row]) -> String {
    let Some(h) = answer::headline(rows) else {
        return String::new();
    };
    let mut a = format!(
        " data-headline-fastest=\"{}\" data-headline-gbs=\"{:.1}\" data-headline-pinned=\"{}\"",
        escape(&h.fastest),
        h.gbs,
        crate::units::format_size(h.pinned_held)
    );
    if let Some((share, held)) = h.ring {
        let _ = write!(
            a,
            " data-headline-ring-share=\"{:.0}%\" data-headline-ring-pinned=\"{}\"",
            share * 100.0,
            crate::units::format_size(held)
        );
    }
    a
}

/// "The answer, in plain words": per scenario (and run), the question and the sentences of
/// [`answer::answer`].
fn answer_section(out: &mut String, sets: &[ResultSet], scenarios: &ScenarioRows<'_, '_>) {
    let labels = scenarios.labels;
    section(out, "answer", "The answer, in plain words");
    for name in scenarios.names {
        let rows = scenarios.of(name);
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        if let Some(r) = sets
            .iter()
            .filter_map(|s| s.sidecar.as_ref())
            .flat_map(|c| &c.scenarios)
            .find(|s| &s.name == name)
        {
            let _ = writeln!(out, "<p class=\"question\">{}</p>", escape(&r.description));
        }
        // Runs with the same answer (a fleet of equal machines) get it once, naming them all.
        let mut blocks: Vec<(String, String, Vec<usize>)> = Vec::new();
        let mut seen: HashMap<(String, String), usize> = HashMap::new();
        for (i, s) in sets.iter().enumerate() {
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|(set, _)| *set == i)
                .map(|(_, r)| *r)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let key = (platform::platform_of(s), answer_block(&mine, s, name));
            match seen.get(&key) {
                Some(&b) => blocks[b].2.push(i),
                None => {
                    seen.insert(key.clone(), blocks.len());
                    blocks.push((key.0, key.1, vec![i]));
                }
            }
        }
        for (platform, block, runs) in blocks {
            if sets.len() > 1 {
                let _ = writeln!(
                    out,
                    "<p class=\"run\">{}:</p>",
                    escape(&fleet::runs_heading(labels, &runs, &platform))
                );
            }
            out.push_str(&block);
        }
    }
    out.push_str("</section>\n");
}

/// One run's answer to scenario `name`: the sentences of [`answer::answer`] as a list.
fn answer_block(mine: &[&Row], s: &ResultSet, name: &str) -> String {
    let mut out = format!("<ul class=\"answer\"{}>\n", headline_attrs(mine));
    for l in answer::answer(mine, &s.samples, s.sidecar.as_ref(), name) {
        let class = match l.verdict {
            Some(ClaimStatus::Held) => " class=\"verdict-held\"",
            Some(ClaimStatus::NotHeld) => " class=\"verdict-not-held\"",
            Some(ClaimStatus::NotApplicable) | None => "",
        };
        let topic = match l.verdict {
            Some(v) => format!("Claim {v}"),
            None => l.topic.clone(),
        };
        let _ = writeln!(
            out,
            "<li><strong{class}>{}:</strong> {}</li>",
            escape(&topic),
            escape(&l.text)
        );
    }
    out.push_str("</ul>\n");
    out
}

/// Renders the whole report as one self-contained HTML page.
pub fn render_report(
    sets: &[ResultSet],
    nvbandwidth: &[NvbandwidthSeries],
    title: &str,
) -> Result<String, Error> {
    render_fleet_report(sets, &[], nvbandwidth, title)
}

/// [`render_report`] for runs gathered from a fleet folder: the nodes' table comes first (a
/// fleet where no node wrote results still gets a page saying why).
pub fn render_fleet_report(
    sets: &[ResultSet],
    nodes: &[NodeFolder],
    nvbandwidth: &[NvbandwidthSeries],
    title: &str,
) -> Result<String, Error> {
    if sets.is_empty() && !nodes.is_empty() {
        return Ok(fleet::nodes_only_page(title, nodes));
    }
    if sets.is_empty() {
        return Err(Error::Usage(
            "there is nothing to report: give at least one results CSV".into(),
        ));
    }
    let labels = fleet::run_labels(sets, nodes);
    let all: Vec<CaseRow<'_>> = sets
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.rows.iter().map(move |r| (i, r)))
        .collect();
    let mut by_scenario: HashMap<&str, Vec<CaseRow<'_>>> = HashMap::new();
    for cr in &all {
        by_scenario.entry(&*cr.1.scenario).or_default().push(*cr);
    }
    let names = scenario_names(sets);
    let scenario_rows = ScenarioRows {
        names: &names,
        by_scenario: &by_scenario,
        labels: &labels,
    };

    let mut body = String::with_capacity(64 * 1024 + all.len() * 400);
    let _ = writeln!(body, "<h1>{}</h1>", escape(title));
    body.push_str(&machine_line::machine_lines(sets, &labels));
    page_intro(&mut body, sets, &labels, &all, names.len());
    if let Some(f) = fleet::fleet_section(sets, nodes) {
        body.push_str(&f);
    }
    if !nodes.is_empty() {
        fleet::nodes_section(&mut body, nodes);
    }
    let several_platforms = platform::platforms_differ(sets);
    nav(&mut body, several_platforms);
    answer_section(&mut body, sets, &scenario_rows);
    if several_platforms {
        body.push_str(&platform::platform_sections(sets, &labels));
    }
    plots(&mut body, sets, &all, &scenario_rows, nvbandwidth);
    let paths: Vec<&Path> = sets.iter().map(|s| s.path.as_path()).collect();
    summary(&mut body, &scenario_rows, nvbandwidth, &paths);
    machines(&mut body, sets, &labels);
    observers(&mut body, sets, &labels);
    scenarios(&mut body, sets, &names);
    failures(&mut body, &all, &labels);
    sidecar_lists(&mut body, sets, &labels);
    reference(&mut body, nvbandwidth);
    Ok(html::page(title, &body))
}

/// The rows of every run grouped by scenario, in the page's scenario order, with the runs'
/// labels.
struct ScenarioRows<'a, 'r> {
    names: &'a [String],
    by_scenario: &'a HashMap<&'r str, Vec<CaseRow<'r>>>,
    labels: &'a [String],
}

impl<'r> ScenarioRows<'_, 'r> {
    /// The rows of scenario `name` (none when no run has it).
    fn of(&self, name: &str) -> &[CaseRow<'r>] {
        self.by_scenario.get(name).map_or(&[][..], |v| v.as_slice())
    }
}

/// Under the title: a banner per partial run, the synthetic-data banner, and one sentence that
/// counts the files, scenarios and rows and states the units.
fn page_intro(
    body: &mut String,
    sets: &[ResultSet],
    labels: &[String],
    all: &[CaseRow<'_>],
    scenarios: usize,
) {
    for (s, l) in sets.iter().zip(labels) {
        if s.is_partial() {
            let why = s
                .sidecar
                .as_ref()
                .and_then(|c| c.timed_out.as_ref())
                .map(|t| format!(" The watchdog ended it: {}.", escape(&t.to_string())))
                .unwrap_or_default();
            let _ = writeln!(
                body,
                "<div class=\"banner\">Partial run {}({}): it stopped early and holds only the cases that finished.{why}</div>",
                escape(l),
                escape(&s.path.display().to_string())
            );
        }
    }
    if let Some(b) = platform::synthetic_banner(sets) {
        body.push_str(&b);
    }
    let rows_total = all.len();
    let ok = all.iter().filter(|r| r.1.status.is_ok()).count();
    para(
        body,
        &format!(
            "{} result file(s), {scenarios} scenario(s), {rows_total} rows ({ok} ok, {} failed or skipped). GB/s = 1e9 bytes per second; KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes.",
            sets.len(),
            rows_total - ok
        ),
    );
}

/// The links to the page's sections (the platforms section only when there is one).
fn nav(body: &mut String, several_platforms: bool) {
    body.push_str("<nav><a href=\"#answer\">answer</a> · ");
    if several_platforms {
        body.push_str("<a href=\"#platforms\">platforms side by side</a> · ");
    }
    body.push_str("<a href=\"#plots\">plots</a> · <a href=\"#summary\">parameters and numbers</a> · <a href=\"#machines\">machines</a> · <a href=\"#observers\">observers</a> · <a href=\"#scenarios\">scenarios</a> · <a href=\"#failures\">failed/skipped</a> · <a href=\"#claims\">claims</a> · <a href=\"#probes\">probes</a> · <a href=\"#derived\">derived</a> · <a href=\"#reference\">nvbandwidth</a></nav>\n");
}

/// "Plots: one per question": per scenario its figures and its memory timelines.
fn plots(
    body: &mut String,
    sets: &[ResultSet],
    all: &[CaseRow<'_>],
    scenarios: &ScenarioRows<'_, '_>,
    nvbandwidth: &[NvbandwidthSeries],
) {
    section(body, "plots", "Plots: one per question");
    let timelines = plot_timeline::TimelineIndex::new(sets);
    let memory_phases = [
        crate::accounting::Phase::Alloc,
        crate::accounting::Phase::Free,
    ]
    .map(|p| {
        (
            p,
            plot_accounting::phase_scale(all.iter().map(|(_, r)| *r), p),
        )
    });
    let samples = SampleIndex::new(sets);
    let labels = scenarios.labels;
    for name in scenarios.names {
        let rows = scenarios.of(name);
        let _ = writeln!(body, "<h3>{}</h3>", escape(name));
        let mut figs = plot_strategy::strategy_bars(name, rows, labels, &samples, nvbandwidth);
        figs.extend(plot_size::bandwidth_vs_size(
            name,
            rows,
            labels,
            nvbandwidth,
        ));
        figs.extend(latency::figures(name, rows, labels));
        for f in figs {
            body.push_str(&f.to_html());
        }
        for (phase, scale) in memory_phases {
            body.push_str(&plot_accounting::accounting(
                name, phase, rows, labels, scale,
            ));
        }
        let max_alloc = plot_maxalloc::max_alloc(name, rows, labels);
        if max_alloc.is_svg() || scenarios.names.len() == 1 {
            body.push_str(&max_alloc.to_html());
        }
        body.push_str(&plot_timeline::scenario_timelines(&timelines, rows, labels));
    }
    if timelines.is_empty() {
        para(
            body,
            "No plot: no run recorded a timeline after freeing host memory.",
        );
    }
    body.push_str("</section>\n");
}

/// Renders the report and writes it to `out_path` (through a temporary file and a rename);
/// `pinscope run` calls this to put the report next to its CSV.
pub fn write_report(sets: &[ResultSet], out_path: &Path, title: &str) -> Result<(), Error> {
    let page = render_report(sets, &[], title)?;
    write_page(out_path, &page)
}

/// Writes a page atomically; refuses anything at `out_path` that is not a regular file.
pub fn write_page(out_path: &Path, page: &str) -> Result<(), Error> {
    crate::results::write_atomic(out_path, page.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::strategy_label;
    use crate::results::Row;

    /// The threads setting is on every CSV row; the label names it only where threads work.
    #[test]
    fn threads_are_named_only_for_the_ring_and_the_cpu_engines() {
        let row = |engine: &str, mode: &str, chunk: u64| Row {
            host: Some(crate::scenario::HostKind::Pageable),
            engine: engine.parse().unwrap(),
            mode: mode.parse().unwrap(),
            chunk_bytes: chunk,
            ring: 3,
            streams: 1,
            threads: 16,
            ..Row::default()
        };
        assert_eq!(
            strategy_label(&row("copy", "direct", 0)),
            "pageable/copy/direct"
        );
        assert_eq!(
            strategy_label(&row("copy", "staged", 16 << 20)),
            "pageable/copy/staged chunk 16 MiB×3 16 threads"
        );
        assert_eq!(
            strategy_label(&row("cpu-read", "direct", 0)),
            "pageable/cpu-read/direct 16 threads"
        );
    }
}
