//! Unit tests of the scenario language: one per rule, each asserting the exact message and where
//! it points (1-based line:column). One file per part of the language: combinations of host,
//! engine and mode; keys, types, sweeps and defaults; claims and odd input; engines, guard,
//! derived blocks, threads, devices and routes (`tests_combinations.rs`, `tests_keys.rs`,
//! `tests_claims.rs`, `tests_engines.rs`). This file holds the helpers they share.

use super::*;

/// Two lines every test file starts with, so cases begin on line 3.
pub(super) const HEAD: &str = "name = \"t\"\ndescription = \"q\"\n";

/// All problems of `HEAD + body` as (line, column, message); empty when it parses.
pub(super) fn problems(body: &str) -> Vec<(usize, usize, String)> {
    match parse("t.toml", &format!("{HEAD}{body}")) {
        Ok(_) => Vec::new(),
        Err(Error::Scenario(p)) => p
            .items
            .into_iter()
            .map(|p| (p.line, p.column, p.message))
            .collect(),
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}

pub(super) fn p(line: usize, column: usize, message: &str) -> (usize, usize, String) {
    (line, column, message.to_string())
}

/// A table test: each row is a body (after `HEAD`) and every problem it must give, in order, as
/// "line:column: message".
pub(super) fn assert_problems(rows: &[(&str, &[&str])]) {
    for (body, want) in rows {
        let got: Vec<String> = problems(body)
            .into_iter()
            .map(|(line, column, message)| format!("{line}:{column}: {message}"))
            .collect();
        assert_eq!(got, *want, "body: {body:?}");
    }
}

pub(super) fn ok(body: &str) -> Scenario {
    match parse("t.toml", &format!("{HEAD}{body}")) {
        Ok(s) => s,
        Err(e) => panic!("expected to parse, got: {e}"),
    }
}

/// What `f` reads from each case that `body` (after `HEAD`) expands to, in order.
pub(super) fn each_case<T>(body: &str, f: impl Fn(&Case) -> T) -> Vec<T> {
    ok(body).cases.iter().map(f).collect()
}

/// Two cases, `pinned` and `pageable`, for the claims and derived blocks to name.
pub(super) const CLAIM_CASES: &str =
    "[[case]]\nlabel = \"pinned\"\n[[case]]\nlabel = \"pageable\"\nhost = \"pageable\"\n";
