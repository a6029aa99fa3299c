//! `compare --html`: the comparison as a self-contained page, in the report's HTML shell, with
//! the runs-side-by-side plot.

use super::html::{escape, page, table};
use crate::Error;
use crate::compare::{Comparison, accounting_grids, bandwidth_grid, closing_lists, header_lines};
use crate::results::ResultSet;
use std::fmt::Write;

/// The comparison page: the runs, the platforms side by side (bandwidth per strategy, what each
/// observer saw, headroom, claims), then the full tables with ratios and verdicts. `sets` are the
/// loaded runs in the comparison's order (they carry the observers, probes and claims).
pub fn render_compare_html(cmp: &Comparison, sets: &[ResultSet]) -> Result<String, Error> {
    let names: Vec<String> = cmp
        .runs
        .iter()
        .zip(sets)
        .map(|(r, s)| format!("{} {}", r.label, super::platform::platform_of(s)))
        .collect();
    let title = format!("pinscope compare: {}", names.join(" vs "));
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
    body.push_str("<ul>\n");
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
    let (h, rows) = bandwidth_grid(cmp);
    let head: Vec<&str> = h.iter().map(String::as_str).collect();
    body.push_str("<h2>Bandwidth (median GB/s)</h2>\n");
    body.push_str(&table(&head, &rows, &|i| {
        if rows[i].iter().any(|c| c == "failed") {
            "failed"
        } else if rows[i].iter().any(|c| c == "skipped") {
            "skipped"
        } else {
            ""
        }
    }));
    body.push_str(&super::latency::compare_table(cmp));
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
