//! What scenario messages suggest and how they quote what was written: the closest known name
//! to a typo, unknown keys of a table, a value shown as the file wrote it.

use super::raw::{self, Kind};
use crate::error::Problem;

/// The closest candidate, if any is close enough to be a likely typo.
pub(super) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// "; did you mean `x`?" or "".
pub(super) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!("; did you mean `{c}`?"))
}

/// A problem for each key of `t` not among `known`; `here` says where (`in [[claim]] #2`).
pub(super) fn unknown_keys(
    t: &raw::Table,
    here: &str,
    known: &[&str],
    problems: &mut Vec<Problem>,
) {
    for e in &t.entries {
        if !known.contains(&e.key.as_str()) {
            problems.push(e.key_pos.problem(format!(
                "unknown key `{}` {here}{}",
                e.key,
                did_you_mean(&e.key, known.iter().copied())
            )));
        }
    }
}

/// "; did you mean \"x\"?" or "" (for values, which are strings in TOML).
pub(super) fn did_you_mean_value<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!("; did you mean \"{c}\"?"))
}

pub(super) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value as it would appear in TOML, or its type for arrays and tables.
pub(super) fn shown(v: &raw::Value) -> String {
    match &v.kind {
        Kind::Str(s) => format!("\"{s}\""),
        Kind::Int(i) => i.to_string(),
        Kind::Float(f) => f.to_string(),
        Kind::Bool(b) => b.to_string(),
        other => other.type_name().to_string(),
    }
}
