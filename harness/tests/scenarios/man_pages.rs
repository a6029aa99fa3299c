//! The manual pages as a user installs them: `pinscope man --out-dir DIR` writes one page per
//! command, every page a page names exists, groff reads each without a warning, and man shows the
//! examples lined up as written.

use crate::common;

use common::{Refused, Succeeds, pinscope};
use std::path::Path;
use std::process::Command;

/// The `NAME(1)` references in a page's roff (`pinscope\-run(1)` reads `pinscope-run(1)`).
fn references(roff: &str) -> Vec<String> {
    let text = roff.replace("\\-", "-");
    let mut out = Vec::new();
    for (i, _) in text.match_indices("(1)") {
        let start = text[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(0, |j| j + 1);
        out.push(text[start..i].to_string());
    }
    out
}

fn written_pages(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A Linux tool's output, or None where it is not installed (or under Wine).
fn tool(program: &str, args: &[&str], page: &Path) -> Option<std::process::Output> {
    if cfg!(windows) {
        return None;
    }
    Command::new(program)
        .args(args)
        .arg(page)
        .env("MANWIDTH", "100")
        .output()
        .ok()
}

#[test]
fn every_page_that_is_named_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("man1");
    pinscope().args(["man", "--out-dir"]).arg(&out).stdout_ok();
    let names = written_pages(&out);
    for want in [
        "pinscope.1",
        "pinscope-run.1",
        "pinscope-plan.1",
        "pinscope-scenarios-show.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let mut named = 0;
    for name in &names {
        let roff = std::fs::read_to_string(out.join(name)).expect("read a page");
        for r in references(&roff) {
            named += 1;
            assert!(
                names.contains(&format!("{r}.1")),
                "{name} names {r}(1), not written: {names:?}"
            );
        }
    }
    assert!(
        named > names.len(),
        "the pages name each other ({named} references)"
    );
    let top = std::fs::read_to_string(out.join("pinscope.1")).expect("read");
    assert_eq!(
        pinscope().arg("man").stdout_ok(),
        top,
        "`pinscope man` prints pinscope(1)"
    );
    let run = std::fs::read_to_string(out.join("pinscope-run.1")).expect("read");
    assert_eq!(pinscope().args(["man", "run"]).stdout_ok(), run);
}

#[test]
fn groff_reads_every_page_and_man_keeps_the_examples_in_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    pinscope()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .stdout_ok();
    for name in written_pages(dir.path()) {
        let page = dir.path().join(&name);
        let Some(out) = tool("groff", &["-man", "-Tutf8", "-ww", "-z"], &page) else {
            eprintln!("groff is not installed here: the pages' roff was not checked");
            return;
        };
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && warnings.is_empty(),
            "{name}: {warnings}"
        );
    }
    let Some(out) = tool("man", &["-l"], &dir.path().join("pinscope.1")) else {
        return;
    };
    let shown = String::from_utf8_lossy(&out.stdout);
    // Two example lines whose descriptions start in the same column, as in `--help`.
    let column = |example: &str| {
        let line = shown
            .lines()
            .find(|l| l.contains(example))
            .expect("example shown");
        line.find("  run a")
            .or_else(|| line.find("  show the"))
            .expect("description")
    };
    assert_eq!(
        column("pinscope scenarios/quick.toml"),
        column("pinscope plan scenarios/ollama-like.toml"),
        "{shown}"
    );
}

#[test]
fn a_command_without_a_page_is_refused() {
    pinscope().args(["man", "rn"]).refused(2, "pinscope-run.1");
    let dir = tempfile::tempdir().expect("tempdir");
    pinscope()
        .args(["man", "run", "--out-dir"])
        .arg(dir.path())
        .fails(2, "cannot be used with");
}
