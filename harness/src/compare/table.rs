//! Aligned plain-text tables for a terminal; verdicts coloured only when asked (a TTY without
//! `NO_COLOR`).

use super::{
    Align, Comparison, Exporter, Grid, Tone, closing_lists, memory_list, opening_lines, text_tables,
};

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

pub struct TableExporter {
    pub color: bool,
}

/// The characters column `j` needs: its widest cell or its head.
pub(crate) fn width(head: &[String], rows: &[Vec<String>], j: usize) -> usize {
    rows.iter()
        .map(|r| r[j].chars().count())
        .chain(std::iter::once(head[j].chars().count()))
        .max()
        .unwrap_or(0)
}

/// Aligns each column as the grid says ([`Grid::align`]); `paint` may wrap a padded cell, given
/// its tone (`None` for the head).
pub(crate) fn align(grid: &Grid, paint: &dyn Fn(Option<Tone>, String) -> String) -> String {
    let (head, rows) = (&grid.head, &grid.rows);
    let ncol = head.len();
    let width = |j: usize| width(head, rows, j);
    let widths: Vec<usize> = (0..ncol).map(width).collect();
    let mut out = String::new();
    let line = |cells: &[String], tones: Option<&[Tone]>, out: &mut String| {
        let mut parts = Vec::with_capacity(ncol);
        for j in 0..ncol {
            let pad = widths[j] - cells[j].chars().count();
            let padded = match grid.align[j] {
                Align::Right => format!("{}{}", " ".repeat(pad), cells[j]),
                Align::Left => format!("{}{}", cells[j], " ".repeat(pad)),
            };
            parts.push(paint(tones.map(|t| t[j]), padded));
        }
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(head, None, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&rule.join("  "));
    out.push('\n');
    for (r, t) in rows.iter().zip(&grid.tones) {
        line(r, Some(t), &mut out);
    }
    out
}

impl Exporter for TableExporter {
    fn render(&self, cmp: &Comparison) -> String {
        let color = self.color;
        let paint = |tone: Option<Tone>, padded: String| -> String {
            if !color {
                return padded;
            }
            match tone {
                None => format!("{BOLD}{padded}{RESET}"),
                Some(Tone::Good) => format!("{GREEN}{padded}{RESET}"),
                Some(Tone::Bad) => format!("{RED}{padded}{RESET}"),
                Some(Tone::Plain) => padded,
            }
        };
        let mut out = String::new();
        for l in opening_lines(cmp) {
            out.push_str(&l);
            out.push('\n');
        }
        if let Some((title, lines)) = memory_list(cmp) {
            out.push_str(&format!("\n{title}\n"));
            for l in lines {
                out.push_str(&l);
                out.push('\n');
            }
        }
        for t in text_tables(cmp, "Bandwidth (median GB/s, 1 GB = 1e9 bytes)") {
            out.push_str(&format!("\n{}\n", t.title));
            let parts: Vec<String> = t.parts.iter().map(|g| align(g, &paint)).collect();
            out.push_str(&parts.join("\n"));
        }
        for (title, lines) in closing_lists(cmp) {
            out.push_str(&format!("\n{title}\n"));
            for l in lines {
                out.push_str(&l);
                out.push('\n');
            }
        }
        out
    }
}
