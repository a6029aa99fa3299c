//! GitHub-flavoured Markdown: paste into an issue or a README.

use super::{Comparison, Exporter, closing_lists, memory_list, opening_lines, text_tables};

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
        for l in opening_lines(cmp) {
            out.push_str(&format!("- {}\n", cell(&l)));
        }
        if let Some((title, lines)) = memory_list(cmp) {
            out.push_str(&format!("\n### {title}\n\n"));
            for l in lines {
                out.push_str(&format!("- {}\n", cell(&l)));
            }
        }
        for t in text_tables(cmp, "Bandwidth (median GB/s)") {
            out.push_str(&format!("\n### {}\n\n", t.title));
            // A blank line between the parts: Markdown would join tables that touch.
            let parts: Vec<String> = t.parts.iter().map(|g| md_table(&g.head, &g.rows)).collect();
            out.push_str(&parts.join("\n"));
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
