//! `compare --html`: the comparison as a self-contained page, in the report's HTML shell, with
//! the runs-side-by-side plot.

use super::html::{escape, page, table};
use crate::Error;
use crate::compare::{
    Comparison, accounting_grids, bandwidth_grid, closing_lists, fmt_ci, header_lines, lane_cell,
    verdict_legend,
};
use crate::results::{ResultSet, Status};
use crate::stats::Verdict;
use std::fmt::Write;

/// The comparison page: a title naming each run's file, host, GPU and platform; the verdicts
/// first (counts and the lanes that changed, then the bandwidth table with ratios and
/// intervals); the runs and what differs between their machines; the platforms side by side
/// (their answer in plain words first); the accounting tables. `sets` are the loaded runs in the
/// comparison's order (they carry the observers, probes and claims).
pub fn render_compare_html(cmp: &Comparison, sets: &[ResultSet]) -> Result<String, Error> {
    let title = page_title(cmp, sets);
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    if let Some(b) = super::platform::synthetic_banner(sets) {
        body.push_str(&b);
    }
    for r in cmp.runs.iter().filter(|r| r.partial) {
        let _ = writeln!(
            body,
            "<div class=\"banner\">Partial run {} ({}): it holds only the cases that finished.</div>",
            escape(&r.label),
            escape(&r.path)
        );
    }
    verdicts(&mut body, cmp);
    body.push_str("<h2>The runs</h2>\n<ul>\n");
    for l in header_lines(cmp) {
        let _ = writeln!(body, "<li>{}</li>", escape(&l));
    }
    body.push_str("</ul>\n");
    if sets.len() == cmp.runs.len() && sets.len() >= 2 {
        let labels: Vec<String> = cmp.runs.iter().map(|r| format!("{} ", r.label)).collect();
        body.push_str(&super::platform::platform_sections(sets, &labels));
    } else {
        body.push_str(&super::runs_side_by_side(cmp).to_html());
    }
    for (t, h, rows) in accounting_grids(cmp) {
        let head: Vec<&str> = h.iter().map(String::as_str).collect();
        let _ = writeln!(body, "<h2>{}</h2>", escape(&t));
        body.push_str(&table(&head, &rows, &|_| ""));
    }
    for (t, lines) in closing_lists(cmp) {
        let _ = writeln!(body, "<h2>{}</h2>\n<ul>", escape(t));
        for l in lines {
            let _ = writeln!(body, "<li>{}</li>", escape(&l));
        }
        body.push_str("</ul>\n");
    }
    Ok(page(&title, &body))
}

/// `pinscope compare: A <file> (<host>, <GPU>, <platform>) vs B …`: what tells the runs apart
/// even when both ran on one platform.
pub fn page_title(cmp: &Comparison, sets: &[ResultSet]) -> String {
    let names: Vec<String> = cmp
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let file = std::path::Path::new(&r.path)
                .file_name()
                .map_or(r.path.clone(), |f| f.to_string_lossy().into_owned());
            match sets.get(i) {
                Some(s) => {
                    let m = s.rows.first().map(|r| &r.machine);
                    let host = m.map_or("", |m| m.host_name.as_str());
                    let gpu = m.map_or("", |m| m.gpu.as_str());
                    let platform = super::platform::platform_of(s);
                    let what: Vec<&str> = [host, gpu, platform.as_str()]
                        .into_iter()
                        .filter(|x| !x.is_empty())
                        .collect();
                    format!("{} {file} ({})", r.label, what.join(", "))
                }
                None => format!("{} {file}", r.label),
            }
        })
        .collect();
    format!("pinscope compare: {}", names.join(" vs "))
}

/// The verdicts, first: per later run, how many bandwidth lanes were faster, slower, unchanged
/// or undecided against the baseline, the lanes that changed, then the full bandwidth table and
/// the latency table (latency cases are compared by their time, in their own table).
fn verdicts(body: &mut String, cmp: &Comparison) {
    body.push_str(
        "<section id=\"verdicts\">\n<h2>Verdicts: bandwidth against the baseline</h2>\n<ul>\n",
    );
    let base = cmp.runs.first().map_or("A", |r| r.label.as_str());
    for (i, run) in cmp.runs.iter().enumerate().skip(1) {
        let changes: Vec<(&crate::compare::Entry, &crate::stats::Comparison)> = cmp
            .entries
            .iter()
            .filter(|e| !e.measures_time)
            .filter_map(|e| {
                let c = e.cells.get(i)?.as_ref()?.change.as_ref()?;
                Some((e, c))
            })
            .collect();
        let counts: Vec<String> = Verdict::ALL
            .into_iter()
            .map(|v| {
                let n = changes.iter().filter(|(_, c)| c.verdict == v).count();
                match v {
                    Verdict::Undecided => format!("no interval (n/a) in {n}"),
                    v => format!("{} in {n}", v.name()),
                }
            })
            .collect();
        let _ = writeln!(
            body,
            "<li><strong>{} against {base}: {} of {} lanes measured by both.</strong></li>",
            escape(&run.label),
            escape(&counts.join(", ")),
            changes.len()
        );
        for (e, c) in changes
            .iter()
            .filter(|(_, c)| matches!(c.verdict, Verdict::Faster | Verdict::Slower))
        {
            let n = |run: usize| {
                e.cells
                    .get(run)
                    .and_then(Option::as_ref)
                    .map_or(0, |c| c.samples)
            };
            let _ = writeln!(
                body,
                "<li><span class=\"verdict-{}\">{}</span>: {} {}, {} {:.3}× {base} (95% CI {}, n = {} / {})</li>",
                c.verdict.name(),
                c.verdict.name(),
                escape(&e.case_label),
                escape(&lane_cell(e)),
                escape(&run.label),
                c.ratio,
                escape(&fmt_ci(c)),
                n(0),
                n(i)
            );
        }
    }
    let _ = writeln!(body, "<li>{}</li>", escape(&verdict_legend(&cmp.rule)));
    body.push_str("</ul>\n");
    let (h, rows) = bandwidth_grid(cmp);
    let head: Vec<&str> = h.iter().map(String::as_str).collect();
    body.push_str("<h3>Bandwidth (median GB/s), ratios and verdicts</h3>\n");
    // The grid has one row per bandwidth entry, in order: a row is marked by how its cells ended.
    let classes: Vec<&str> = cmp
        .entries
        .iter()
        .filter(|e| !e.measures_time)
        .map(|e| {
            let statuses = || e.cells.iter().flatten().map(|c| &c.status);
            if statuses().any(|s| matches!(s, Status::Failed(_))) {
                "failed"
            } else if statuses().any(|s| matches!(s, Status::Skipped(_))) {
                "skipped"
            } else {
                ""
            }
        })
        .collect();
    debug_assert_eq!(classes.len(), rows.len());
    body.push_str(&table(&head, &rows, &|i| classes[i]));
    body.push_str(&super::latency::compare_table(cmp));
    body.push_str("</section>\n");
}
