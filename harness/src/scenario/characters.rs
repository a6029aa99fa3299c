//! Which characters scenario text may hold: no control or bidirectional formatting character in
//! any key or string (labels, names, claims, notes), since they reach terminals and Markdown
//! tables; a `description` may span lines (newlines and tabs are kept there).

use super::raw::{Entry, Kind, Pos, Table, Value};
use crate::error::Problem;
use crate::input::is_unsafe_char;

/// Longest scenario `name`, in characters: results files are named
/// `<stamp>-<name>-<host>.samples.csv`, which must stay within 255 bytes.
pub const MAX_NAME_CHARS: usize = 64;

/// Adds a located problem for every key or string holding a character that must not reach a
/// terminal raw.
pub fn check(root: &Table, problems: &mut Vec<Problem>) {
    table(root, problems);
}

fn table(t: &Table, problems: &mut Vec<Problem>) {
    for e in &t.entries {
        entry(e, problems);
    }
}

fn entry(e: &Entry, problems: &mut Vec<Problem>) {
    if let Some(c) = e.key.chars().find(|&c| is_unsafe_char(c)) {
        problems.push(refusal(e.key_pos, "the key", c));
    }
    let multi_line = e.key == "description";
    value(&e.key, &e.value, multi_line, problems);
}

fn value(key: &str, v: &Value, multi_line: bool, problems: &mut Vec<Problem>) {
    match &v.kind {
        Kind::Str(s) => {
            let bad = s
                .chars()
                .find(|&c| is_unsafe_char(c) && !(multi_line && matches!(c, '\n' | '\t')));
            if let Some(c) = bad {
                problems.push(refusal(v.pos, &format!("`{key}`"), c));
            }
        }
        Kind::Array(items) => {
            for x in items {
                value(key, x, multi_line, problems);
            }
        }
        Kind::Table(t) => table(t, problems),
        Kind::Tables(ts) => ts.iter().for_each(|t| table(t, problems)),
        Kind::Int(_) | Kind::Float(_) | Kind::Bool(_) | Kind::Datetime(_) => {}
    }
}

fn refusal(pos: Pos, what: &str, c: char) -> Problem {
    pos.problem(format!(
        "{what} holds the control or text-direction character U+{:04X}, which would act on a terminal or split a table row: remove it",
        u32::from(c)
    ))
}

#[cfg(test)]
mod tests {
    use crate::Error;

    fn problems(text: &str) -> String {
        match crate::scenario::parse("t.toml", text) {
            Err(e @ Error::Scenario(_)) => e.to_string(),
            other => panic!("not refused: {other:?}"),
        }
    }

    const CASE: &str = "[[case]]
host = \"pageable\"
size = \"1MiB\"
";

    #[test]
    fn control_and_bidi_characters_are_refused_where_they_are() {
        for (label, col) in [
            ("\\u001b[31mRED", 9),
            ("a\\u0007b", 9),
            ("two\\nlines", 9),
            ("nul\\u0000", 9),
            ("rtl\\u202Etxt", 9),
        ] {
            let text = format!("name = \"x\"\ndescription = \"d\"\n{CASE}label = \"{label}\"\n");
            let e = problems(&text);
            assert!(
                e.contains(&format!(
                    "t.toml:6:{col}: `label` holds the control or text-direction character U+"
                )),
                "{label}: {e}"
            );
        }
    }

    #[test]
    fn a_description_may_span_lines_but_holds_no_escape() {
        let ok =
            format!("name = \"x\"\ndescription = \"\"\"one\n\ttwo\"\"\"\n{CASE}label = \"a\"\n");
        if let Err(e) = crate::scenario::parse("t.toml", &ok) {
            panic!("{e}");
        }
        let bad = format!("name = \"x\"\ndescription = \"a\\u001bb\"\n{CASE}label = \"a\"\n");
        assert!(problems(&bad).contains("t.toml:2:15: `description` holds"));
    }

    #[test]
    fn a_name_too_long_for_a_file_name_is_refused() {
        let long = "n".repeat(super::MAX_NAME_CHARS + 1);
        let e = problems(&format!(
            "name = \"{long}\"\ndescription = \"d\"\n{CASE}label = \"a\"\n"
        ));
        assert!(
            e.contains("t.toml:1:8: `name` is 65 characters long"),
            "{e}"
        );
        let fits = "n".repeat(super::MAX_NAME_CHARS);
        let text = format!("name = \"{fits}\"\ndescription = \"d\"\n{CASE}label = \"a\"\n");
        if let Err(e) = crate::scenario::parse("t.toml", &text) {
            panic!("{e}");
        }
    }
}
