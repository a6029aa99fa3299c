//! Robustness: property tests (fixed budget) on every reader of user input (`properties`), the
//! malformed-file corpus in `tests/fixtures/malformed/` with the message each file must produce
//! (`malformed`), and the flush / atomic-write / partial-run guarantees of the results writers
//! (`writers`). CPU only. This file holds the checks the properties and the corpus share.

mod malformed;
mod properties;
mod writers;

use crate::common;

use common::files::entry_names;
use common::fixture;
use pinscope::Error;
use pinscope::platform::Recorded;
use pinscope::results::{
    self, Lane, MachineKey, ResultSet, ResultsWriter, Row, SampleRow, Sidecar, Status,
};
use pinscope::scenario::{self, Direction, Engine, HostFlags, HostKind, Mode};
use pinscope::units::{self, GIB, KIB, MIB};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn malformed(name: &str) -> PathBuf {
    fixture("malformed").join(name)
}

fn read_fixture(rel: &str) -> String {
    std::fs::read_to_string(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn shipped_scenarios() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), text)
        })
        .collect();
    assert!(!out.is_empty(), "no shipped scenarios in {}", dir.display());
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// Checks shared by the properties and the corpus tests
// ---------------------------------------------------------------------------------------------

/// A scenario rejection: `Error::Scenario`, at least one problem, each problem a single line at
/// a 1-based location inside the text, and every line of the Display after the first is
/// `  <path>:<line>:<col>: <message>`.
fn assert_scenario_rejection(e: &Error, path: &str, text: &str) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    let Error::Scenario(problems) = e else {
        return Err(TestCaseError::fail(format!(
            "not a scenario error: {shown}"
        )));
    };
    prop_assert!(!problems.items.is_empty(), "no problems in: {shown}");
    let last_line = text.split('\n').count();
    for p in &problems.items {
        prop_assert!(p.line >= 1 && p.column >= 1, "0-based location in: {shown}");
        prop_assert!(
            p.line <= last_line,
            "line {} is past the end of a {last_line}-line text: {shown}",
            p.line
        );
        prop_assert!(!p.message.contains('\n'), "multi-line message: {shown}");
        prop_assert!(!p.message.trim().is_empty(), "empty message: {shown}");
    }
    let mut lines = shown.lines();
    let first = lines.next().unwrap_or_default();
    prop_assert!(
        first.starts_with(path),
        "first line does not name the file: {shown}"
    );
    let n = problems.items.len();
    prop_assert_eq!(lines.clone().count(), n, "one line per problem: {}", shown);
    for l in lines {
        let rest = l.strip_prefix(&format!("  {path}:"));
        let loc_ok = rest.is_some_and(|r| {
            let mut it = r.splitn(3, ':');
            let line = it.next().and_then(|x| x.parse::<usize>().ok());
            let col = it.next().and_then(|x| x.parse::<usize>().ok());
            let msg = it.next().unwrap_or("");
            line.is_some() && col.is_some() && msg.starts_with(' ')
        });
        prop_assert!(loc_ok, "`{l}` is not `  {path}:line:col: message`");
    }
    Ok(())
}

/// A results-file rejection: `Error::BadResults`, one line, naming the file.
fn assert_results_rejection(e: &Error, path: &str) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    prop_assert!(
        matches!(e, Error::BadResults { .. }),
        "not a BadResults error: {shown}"
    );
    prop_assert!(!shown.contains('\n'), "more than one line: {shown}");
    prop_assert!(
        shown.starts_with(&format!("{path} cannot be used: ")),
        "does not name the file: {shown}"
    );
    prop_assert_eq!(e.exit_code(), 2);
    Ok(())
}

fn must_reject_scenario(name: &str) -> String {
    let path = malformed(name);
    match scenario::load(&path) {
        Ok(s) => panic!("{name} was accepted with {} cases", s.cases.len()),
        Err(e) => {
            let text =
                String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
            assert_scenario_rejection(&e, &path.display().to_string(), &text)
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            assert_eq!(e.exit_code(), 2, "{name}");
            e.to_string()
        }
    }
}

fn must_reject_results(name: &str) -> String {
    let path = malformed(name);
    match results::read_rows(&path) {
        Ok(rows) => panic!("{name} was accepted with {} rows", rows.len()),
        Err(e) => {
            assert_results_rejection(&e, &path.display().to_string())
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            e.to_string()
        }
    }
}

/// `Display` after the `path` prefix, for exact comparisons that do not depend on where the
/// repository is checked out.
fn after_path(shown: &str, name: &str) -> String {
    let p = malformed(name).display().to_string();
    shown.replace(&p, "<f>")
}
