//! One convention across commands: `-o/--output` names a file (`-` is standard output),
//! `--out-dir` is `run`'s folder, `--format` chooses among several formats (older spellings
//! still work), completions and the man page come from the same definition, `compare --fail-on`
//! exits 4, and the help of each command is its own.

use crate::common;

use common::{Refused, Succeeds, assert_html_page, no_panic, pinscope, repo};
use predicates::prelude::*;

const QUICK_A: &str = "reports/h200/20261203-095848-quick-vm.csv";
const QUICK_B: &str = "reports/h200-x2/20261130-082648-quick-vm.csv";

fn stdout_of(args: &[&str]) -> String {
    let out = pinscope().args(args).output().expect("runs");
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn help_of_help_and_the_usage_line_that_says_a_bare_scenario_runs() {
    let help = pinscope().args(["help", "--help"]).stdout_ok();
    assert!(help.contains("Usage: pinscope help [COMMAND]"), "{help}");
    let help = stdout_of(&["--help"]);
    assert!(help.contains("pinscope <SCENARIO>..."), "{help}");
    assert!(help.contains("4 `compare --fail-on`"), "{help}");
}

#[test]
fn quiet_is_offered_only_where_it_does_something_and_says_what() {
    for (cmd, words) in [
        ("run", "one summary line per scenario"),
        ("plan", "one summary line per scenario instead of its table"),
        ("compare", "notes on skipped inputs"),
        ("report", "notes on skipped inputs"),
    ] {
        let help = stdout_of(&[cmd, "--help"]);
        assert!(
            help.contains("-q, --quiet") && help.contains(words),
            "{cmd}: {help}"
        );
    }
    for cmd in ["info", "scenarios"] {
        assert!(!stdout_of(&[cmd, "--help"]).contains("--quiet"), "{cmd}");
    }
    // Before the command, as older command lines wrote it.
    let plan = pinscope().args(["-q", "plan", "quick"]).stdout_ok();
    assert!(plan.starts_with("quick: "), "{plan}");
}

#[test]
fn run_names_its_folder_out_dir_and_still_takes_out() {
    let help = stdout_of(&["run", "--help"]);
    assert!(help.contains("--out-dir <DIR>"), "{help}");
    assert!(
        !help.contains("--out <"),
        "the old spelling is hidden: {help}"
    );
    assert!(help.contains(&format!("more than {} cases", pinscope::run::SWEEP_LIMIT)));
    let dir = tempfile::tempdir().expect("tempdir");
    // Accepted by the parser: without a GPU the run stops at the driver (3), not at usage (2).
    for flag in ["--out-dir", "--out", "-o"] {
        pinscope()
            .args(["run", "quick", "--case-timeout", "1h", flag])
            .arg(dir.path().join("r"))
            .assert()
            .code(predicate::in_iter([0, 3]))
            .stderr(no_panic());
    }
}

#[test]
fn info_json_is_format_json() {
    let a = pinscope()
        .args(["info", "--format", "json"])
        .output()
        .expect("runs");
    let b = pinscope().args(["info", "--json"]).output().expect("runs");
    assert_eq!(a.status.code(), b.status.code());
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).expect("JSON on stdout");
    assert!(v.get("machine").is_some());
    let w: serde_json::Value = serde_json::from_slice(&b.stdout).expect("JSON on stdout");
    // The same observers, equally available (a reason may name the process id, which differs).
    let observers = |j: &serde_json::Value| -> Vec<(String, bool)> {
        j["observers"]
            .as_array()
            .expect("observers")
            .iter()
            .map(|o| (o["name"].to_string(), o["available"] == true))
            .collect()
    };
    assert_eq!(observers(&v), observers(&w));
}

#[test]
fn compare_writes_its_format_to_stdout_or_to_the_output_file() {
    let json = stdout_of(&["compare", QUICK_A, QUICK_B, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert!(v.get("entries").is_some());
    let html = stdout_of(&["compare", QUICK_A, QUICK_B, "--format", "html", "-o", "-"]);
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"));
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("c.md");
    pinscope()
        .args(["compare", QUICK_A, QUICK_B, "--format", "markdown", "-o"])
        .arg(&file)
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("wrote "));
    let md = std::fs::read_to_string(&file).expect("written");
    assert!(md.contains('|'), "{md}");
    // The older --html still writes the page beside the table on stdout.
    let page = dir.path().join("c.html");
    let compared = pinscope()
        .args(["compare", QUICK_A, QUICK_B, "--html"])
        .arg(&page)
        .stdout_ok();
    assert!(compared.contains("baseline"), "{compared}");
    assert_html_page(&page);
}

#[test]
fn compare_fail_on_exits_0_without_a_matching_verdict() {
    // A run against itself: no case changed.
    pinscope()
        .args(["compare", QUICK_A, QUICK_A, "--fail-on", "change"])
        .assert()
        .code(0);
    // The published one-GPU and two-GPU hosts: 3 samples against 3 are too few for a verdict,
    // so no case fails the gate (a pair with enough samples does: compare_report.rs).
    pinscope()
        .args(["compare", QUICK_A, QUICK_B, "--fail-on", "slower"])
        .assert()
        .code(0);
    pinscope()
        .args(["compare", QUICK_A, QUICK_B, "--fail-on", "sideways"])
        .fails(2, "sideways");
}

#[test]
fn report_writes_to_stdout_with_dash() {
    // The run is copied into the folder and named relatively: an absolute Unix path does not
    // reach a Windows build run under Wine from another drive.
    let dir = tempfile::tempdir().expect("tempdir");
    let stem = QUICK_A.trim_end_matches(".csv");
    for ext in [".csv", ".samples.csv", ".json"] {
        let from = repo().join(format!("{stem}{ext}"));
        std::fs::copy(&from, dir.path().join(format!("run{ext}"))).expect("copy the run");
    }
    let out = pinscope()
        .current_dir(dir.path())
        .arg("report")
        .arg("run.csv")
        .args(["-o", "-"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("<html"));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("-").exists(), "no file named -");
}

#[test]
fn completions_and_man_page_come_from_the_command_definition() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let text = stdout_of(&["completions", shell]);
        assert!(
            text.contains("pinscope") && text.contains("out-dir"),
            "{shell}"
        );
    }
    let man = stdout_of(&["man"]);
    assert!(man.contains(".TH pinscope 1"), "{man}");
    for cmd in ["run", "plan", "compare", "report", "scenarios"] {
        assert!(man.contains(cmd), "the man page names {cmd}");
    }
    pinscope().args(["completions", "tcsh"]).fails(2, "tcsh");
}
