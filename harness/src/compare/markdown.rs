//! GitHub-flavoured Markdown: paste into an issue or a README.

use super::{
    Comparison, Exporter, TABLE_WIDTH, accounting_grids, bandwidth_grid, header_lines,
    only_in_lines, split_to_width, unfinished_lines,
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
        out.push_str("\n### Bandwidth (median GB/s)\n\n");
        for (i, (h, r)) in split_to_width(&h, &r, 2, TABLE_WIDTH).iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&md_table(h, r));
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
        let unfinished = unfinished_lines(cmp);
        if !unfinished.is_empty() {
            out.push_str("\n### Not finished\n\n");
            for l in unfinished {
                out.push_str(&format!("- {}\n", cell(&l)));
            }
        }
        let only = only_in_lines(cmp);
        if !only.is_empty() {
            out.push_str("\n### Cases not in every run\n\n");
            for l in only {
                out.push_str(&format!("- {}\n", cell(&l)));
            }
        }
        out
    }
}
