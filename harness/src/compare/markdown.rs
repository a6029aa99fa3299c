//! GitHub-flavoured Markdown: paste into an issue or a README.

use super::{
    Comparison, Exporter, LATENCY_TITLE, TABLE_WIDTH, accounting_grids, bandwidth_grid,
    closing_lists, header_lines, latency_grid, split_to_width,
};

pub struct MarkdownExporter;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub(crate) fn md_table(head: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}|\n",
        head.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "),
        head.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for r in rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}

impl Exporter for MarkdownExporter {
    fn render(&self, cmp: &Comparison) -> String {
        let mut out = String::from("## pinscope compare\n\n");
        for l in header_lines(cmp) {
            out.push_str(&format!("- {}\n", cell(&l)));
        }
        let (h, r) = bandwidth_grid(cmp);
        // A comparison of latency runs alone has no bandwidth rows: no empty table.
        if !r.is_empty() || latency_grid(cmp).1.is_empty() {
            out.push_str("\n### Bandwidth (median GB/s)\n\n");
            for (i, (h, r)) in split_to_width(&h, &r, 2, TABLE_WIDTH).iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&md_table(h, r));
            }
        }
        let (h, r) = latency_grid(cmp);
        if !r.is_empty() {
            out.push_str(&format!("\n### {LATENCY_TITLE}\n\n"));
            for (h, r) in split_to_width(&h, &r, 2, TABLE_WIDTH) {
                out.push_str(&md_table(&h, &r));
            }
        }
        for (title, h, r) in accounting_grids(cmp) {
            out.push_str(&format!("\n### {title}\n\n"));
            for (i, (h, r)) in split_to_width(&h, &r, 3, TABLE_WIDTH).iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&md_table(h, r));
            }
        }
        for (title, lines) in closing_lists(cmp) {
            out.push_str(&format!("\n### {title}\n\n"));
            for l in lines {
                out.push_str(&format!("- {}\n", cell(&l)));
            }
        }
        out
    }
}
