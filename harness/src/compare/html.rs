//! `compare --html`: the comparison as a self-contained page, in the report's HTML shell, with
//! the runs-side-by-side plot.

use super::{
    Comparison, accounting_grid, bandwidth_grid, header_lines, only_in_lines, unfinished_lines,
};
use crate::Error;
use crate::report::html::{escape, page, table};
use std::fmt::Write;

pub fn render_html(cmp: &Comparison) -> Result<String, Error> {
    let mut body = String::from("<h1>pinscope compare</h1>\n");
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
    body.push_str(&crate::report::runs_side_by_side(cmp).to_html());
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
    let (h, rows) = accounting_grid(cmp);
    if !rows.is_empty() {
        let head: Vec<&str> = h.iter().map(String::as_str).collect();
        body.push_str("<h2>Memory accounting deltas (MiB)</h2>\n");
        body.push_str(&table(&head, &rows, &|_| ""));
    }
    let unfinished = unfinished_lines(cmp);
    if !unfinished.is_empty() {
        body.push_str("<h2>Not finished</h2>\n<ul>\n");
        for l in unfinished {
            let _ = writeln!(body, "<li>{}</li>", escape(&l));
        }
        body.push_str("</ul>\n");
    }
    let only = only_in_lines(cmp);
    if !only.is_empty() {
        body.push_str("<h2>Cases not in every run</h2>\n<ul>\n");
        for l in only {
            let _ = writeln!(body, "<li>{}</li>", escape(&l));
        }
        body.push_str("</ul>\n");
    }
    Ok(page("pinscope compare", &body))
}
