//! The HTML shell shared by `report` and `compare --html`: one self-contained page, inline CSS,
//! no JavaScript, no network references.

use std::fmt::Write;

/// Escapes text for HTML element content and double-quoted attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "\
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1300px;padding:1em 2em;color:#222;background:#fff;overflow-wrap:break-word}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{margin-bottom:.3em}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1em}
table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.failed td{background:#fdecea}tr.skipped td{background:#fff8e1}
.banner{background:#fff3cd;border:1px solid #e0c060;padding:.6em 1em;margin:1em 0;font-weight:bold}
.note{color:#555;font-size:.9em}.machine{color:#333;margin:.1em 0 .6em}
details.quiet{color:#555;font-size:.9em;margin:.5em 0 1em}.omitted{color:#666;font-style:italic}
figure{margin:1em 0}figcaption{color:#444;font-size:.9em}
svg{max-width:100%;height:auto;display:block}
pre{background:#f7f7f7;border:1px solid #e4e4e4;padding:.6em;overflow-x:auto;font-size:.85em}
.verdict-held,.verdict-faster{color:#1a7f37;font-weight:bold}
.verdict-not-held,.verdict-slower{color:#b42318;font-weight:bold}
";

/// Wraps `body` (already HTML) in a complete page with `title` (plain text, escaped here).
pub fn page(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 2048);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n{body}\n<footer class=\"note\">Made by pinscope {} — self-contained: no scripts, no external resources.</footer>\n</body>\n</html>\n",
        escape(title),
        env!("CARGO_PKG_VERSION"),
    );
    out
}

/// A table of plain-text cells (escaped here), in a box that scrolls sideways when the table is
/// wider than the page. Cells that parse as numbers are right-aligned; `row_class` may give a
/// row a CSS class (e.g. `failed`).
pub fn table(
    head: &[&str],
    rows: &[Vec<String>],
    row_class: &dyn Fn(usize) -> &'static str,
) -> String {
    let mut out = String::with_capacity(64 + rows.len() * 160);
    out.push_str("<div class=\"scroll\"><table>\n<thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, r) in rows.iter().enumerate() {
        let class = row_class(i);
        if class.is_empty() {
            out.push_str("<tr>");
        } else {
            let _ = write!(out, "<tr class=\"{class}\">");
        }
        for c in r {
            let numeric = {
                let t = c.trim_start_matches(['+', '-']);
                !t.is_empty() && t.parse::<f64>().is_ok()
            };
            if numeric {
                let _ = write!(out, "<td class=\"num\">{}</td>", escape(c));
            } else {
                let _ = write!(out, "<td>{}</td>", escape(c));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    /// A table wider than the page scrolls inside it instead of running off its edge.
    #[test]
    fn tables_scroll_sideways_inside_the_page() {
        let t = table(&["a", "b"], &[vec!["1".into(), "x".into()]], &|_| "");
        assert!(t.starts_with("<div class=\"scroll\"><table>"), "{t}");
        assert!(t.trim_end().ends_with("</table></div>"), "{t}");
        assert!(CSS.contains(".scroll{overflow-x:auto"));
    }

    #[test]
    fn page_has_no_script_or_links() {
        let p = page("t <x>", "<p>hi</p>");
        assert!(p.contains("t &lt;x&gt;"));
        assert!(!p.contains("<script"));
        assert!(!p.contains("http"));
    }
}
