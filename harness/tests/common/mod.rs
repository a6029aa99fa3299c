//! Helpers shared by the integration tests: the `pinscope` command, the guard of the no-GPU
//! tests, fixture paths, the checks on a refusal's one-line error, and the small cases and
//! scenarios the GPU tests run. Each test binary uses some of them.

#![allow(dead_code)]

pub mod files;
pub mod model_files;

use assert_cmd::Command;
use assert_cmd::assert::Assert;
use pinscope::run::RunOptions;
use pinscope::scenario::{
    Case, Direction, Engine, HostFlags, HostKind, Measure, Mode, Probes, Scenario, Threads,
};
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The binary, started in the repository root with `RUST_BACKTRACE=1` (a panic would print a
/// backtrace; the tests assert there is none).
pub fn pinscope() -> Command {
    // Started directly, not through cargo's runner: under Wine the runner is a Linux script that
    // a Windows process cannot start.
    let mut c = Command::new(binary());
    c.env("RUST_BACKTRACE", "1");
    let root = repo();
    if root.is_dir() {
        c.current_dir(root);
    }
    c
}

/// The pinscope binary: `PINSCOPE_BIN`, else the one cargo built, else `dist/pinscope` in the
/// current folder (where the test binaries built by `scripts/build-dist.sh` run on a GPU machine
/// without the build tree).
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("PINSCOPE_BIN") {
        return p.into();
    }
    let built = Path::new(env!("CARGO_BIN_EXE_pinscope"));
    if built.exists() {
        return built.into();
    }
    Path::new("dist").join("pinscope")
}

/// The repository root (absent where the tests run from `dist/` on another machine).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the no-GPU test `body` (named `test`) where this machine cannot load the CUDA driver.
/// Where it can, the no-GPU behaviour cannot be seen: the test says on stderr that it is skipped
/// and asserts instead that the binary loads the driver the test found (`info --json` does not
/// give the no-driver sentence), so neither path passes without checking something.
pub fn without_driver(test: &str, body: impl FnOnce()) {
    if !pinscope::cuda::driver_present() {
        body();
        return;
    }
    eprintln!(
        "SKIPPED {test}: a CUDA driver is present here, so the no-GPU behaviour cannot be seen; \
         checked instead that the binary finds the driver"
    );
    let out = pinscope().args(["info", "--json"]).output().expect("runs");
    let info: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("`info --json` prints JSON only");
    let why = info["gpu_unavailable"].as_str().unwrap_or_default();
    assert!(
        !why.contains("no NVIDIA driver found"),
        "{test}: the test loads the CUDA driver but the binary says: {why}"
    );
}

/// A file under `tests/fixtures`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// A recorded run under `tests/fixtures/runs`.
pub fn run_fixture(name: &str) -> PathBuf {
    fixture("runs").join(name)
}

/// A copy of the recorded run `name` (CSV, JSON, samples when it has them) in `dir`, as `run`
/// writes it; returns the CSV's path.
pub fn copy_run(dir: &Path, name: &str) -> PathBuf {
    for ext in ["csv", "json", "samples.csv"] {
        let from = run_fixture(&format!("{name}.{ext}"));
        if from.exists() {
            std::fs::copy(&from, dir.join(format!("{name}.{ext}"))).expect("copy");
        }
    }
    dir.join(format!("{name}.csv"))
}

/// No panic message and no backtrace.
pub fn no_panic() -> impl Predicate<str> {
    predicate::str::contains("panicked")
        .or(predicate::str::contains("stack backtrace"))
        .or(predicate::str::contains("RUST_BACKTRACE"))
        .not()
}

/// Exactly one line, `error: …`, and no panic.
pub fn one_error_line() -> impl Predicate<str> {
    predicate::function(|s: &str| s.lines().count() == 1 && s.ends_with('\n'))
        .and(predicate::str::starts_with("error: "))
        .and(no_panic())
}

/// Asserts `text` contains every one of `parts`, showing the text when one is missing.
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no `{part}` in:\n{text}");
    }
}

/// A command that must be refused.
pub trait Refused {
    /// Runs it and asserts it exits with `code` and one error line containing `words`.
    fn refused(&mut self, code: i32, words: impl Into<String>) -> Assert;
    /// Runs it and asserts it exits with `code`, stderr containing `words`, and no panic; stderr
    /// may have more lines (clap's usage errors print the usage too).
    fn fails(&mut self, code: i32, words: impl Into<String>) -> Assert;
}

impl Refused for Command {
    fn refused(&mut self, code: i32, words: impl Into<String>) -> Assert {
        self.assert()
            .code(code)
            .stderr(one_error_line())
            .stderr(predicate::str::contains(words.into()))
    }

    fn fails(&mut self, code: i32, words: impl Into<String>) -> Assert {
        self.assert()
            .code(code)
            .stderr(predicate::str::contains(words.into()))
            .stderr(no_panic())
    }
}

/// Asserts that `pinscope` with each of the `cases`' arguments exits with `code` and one error
/// line containing the case's words.
pub fn all_refused(code: i32, cases: &[(&[&str], &str)]) {
    for (args, words) in cases {
        pinscope().args(*args).refused(code, *words);
    }
}

/// A command that must succeed.
pub trait Succeeds {
    /// Runs it, asserts it exits 0 without a panic, and returns its standard output.
    fn stdout_ok(&mut self) -> String;
}

impl Succeeds for Command {
    fn stdout_ok(&mut self) -> String {
        let out = self.assert().success().stderr(no_panic());
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    }
}

/// Asserts `path` holds an HTML page.
pub fn assert_html_page(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.contains("<html"), "{}: not a page", path.display());
}

/// A small case for the GPU tests: sampled briefly, observed with a short hold; chunks of at
/// most 16 MiB for the modes that take one.
pub fn gpu_case(
    label: &str,
    host: HostKind,
    flags: HostFlags,
    engine: Engine,
    direction: Direction,
    mode: Mode,
    size: u64,
) -> Case {
    Case {
        scenario: "gpu-test".into(),
        label: label.into(),
        host,
        flags,
        engine,
        direction,
        mode,
        size,
        chunk: (mode != Mode::Direct).then_some(size.min(16 << 20)),
        ring: 3,
        streams: 1,
        threads: Threads::Count(4),
        measure: Measure {
            warmup: 1,
            min_samples: 3,
            max_samples: 5,
            target_spread: 0.05,
            time_limit: Duration::from_secs(5),
            verify: true,
            batch: 0,
            ..Measure::default()
        },
        probes: Probes {
            hold_after_free: Duration::from_millis(200),
            hold_interval: Duration::from_millis(50),
            ..Probes::default()
        },
        guard: true,
        ..Case::default()
    }
}

/// A scenario of `cases`, numbered in order, written nowhere.
pub fn scenario_of(name: &str, description: &str, path: &str, cases: Vec<Case>) -> Scenario {
    let cases = cases
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            c.index = i;
            c
        })
        .collect();
    Scenario {
        name: name.into(),
        description: description.into(),
        path: path.into(),
        shipped: false,
        text: String::new(),
        cases,
        claims: vec![],
        derived: vec![],
        devices: None,
        files: Default::default(),
        model: None,
    }
}

/// Options of a quiet GPU test run: no report, one GPU, no device-memory overflow.
pub fn quiet_run(allow_pinned: f64, case_timeout: Duration) -> RunOptions {
    RunOptions {
        allow_pinned,
        only: None,
        quiet: true,
        case_timeout,
        write_report: false,
        fleet: None,
        allow_vram_overflow: false,
    }
}

/// The results CSVs published in `reports/<machine>/` (not their samples files), oldest first.
pub fn published_runs(machine: &str) -> Vec<PathBuf> {
    let dir = repo().join("reports").join(machine);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".csv") && !n.ends_with(".samples.csv")
        })
        .collect();
    found.sort();
    found
}

/// The newest results CSV of `scenario` published in `reports/<machine>/`.
pub fn published_run(machine: &str, scenario: &str) -> PathBuf {
    published_runs(machine)
        .into_iter()
        .rfind(|p| published_scenario(p) == Some(scenario))
        .unwrap_or_else(|| panic!("no {scenario} results in reports/{machine}"))
}

/// The scenario a published results file holds, from its name:
/// `<yyyymmdd>-<hhmmss>-<scenario>-<host tag>.csv`.
fn published_scenario(path: &Path) -> Option<&str> {
    let stem = path.file_stem()?.to_str()?;
    Some(stem.get("yyyymmdd-hhmmss-".len()..)?.rsplit_once('-')?.0)
}
