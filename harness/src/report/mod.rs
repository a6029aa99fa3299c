//! Plots (one file per plot kind, SVG rendered to a `String` by plotters) and the self-contained
//! HTML report: inline SVG and CSS, no JavaScript, no network references.
//!
//! [`render_report`] is pure (result sets in, HTML out); [`report_command`] and [`write_report`]
//! add the file I/O. Data are aggregated before plotting, so 100 000 rows draw as a handful of
//! lines and bars.

pub(crate) mod answer;
mod chart;
mod compare_page;
pub mod device_memory;
pub mod file_load;
mod findings;
mod fleet;
pub mod html;
pub mod labels;
pub mod latency;
mod machine_line;
pub mod memory_cost;
mod numbers_table;
mod nvbandwidth;
pub mod observed;
pub mod platform;
mod platform_answer;
mod plot_accounting;
mod plot_maxalloc;
mod plot_runs;
mod plot_size;
mod plot_strategy;
mod plot_timeline;
mod run_tables;
mod settings_table;
pub mod summary;

pub use answer::console_lines;
pub use answer::{Sentence, answer};
pub use chart::Figure;
pub use compare_page::render_compare_html;
pub use findings::{FINDINGS_SCHEMA, Findings};
pub use memory_cost::max_alloc_detail;
pub use numbers_table::LIST_ROWS;
pub use nvbandwidth::{
    NvbandwidthMeasure, NvbandwidthSeries, load as load_nvbandwidth, parse as parse_nvbandwidth,
};
pub use plot_runs::runs_side_by_side;
pub use plot_timeline::NOISE_RULE as TIMELINE_NOISE_RULE;
pub use summary::summary_text;

use crate::Error;
use crate::results::{ClaimStatus, Lane, NodeFolder, ResultSet, Row};
use html::escape;
use run_tables::{
    failures, machines, observers, reference, scenario_names, scenarios, sidecar_lists,
};
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
    let mut out = String::from("<ul class=\"answer\">\n");
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

/// The findings of the page [`render_fleet_report`] would write for the same runs, as data
/// (`pinscope report --format json`).
pub fn report_findings(sets: &[ResultSet], nodes: &[NodeFolder]) -> Findings {
    findings::findings(sets, &fleet::run_labels(sets, nodes))
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
    numbers_table::summary(&mut body, &scenario_rows, nvbandwidth, &paths);
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
