//! `check --prom FILE` through the real binary: the file is read back by a parser of the text
//! format, written also when the check could not run, refused where it is not a `.prom` name or
//! not a regular file, and never seen half-written by a concurrent reader.

use crate::common;

use common::*;
use prometheus_parse::{LineInfo, Scrape, Value};
use std::path::Path;

/// The file's samples, after checking that every line is one of the format's.
fn read_back(path: &Path) -> Scrape {
    let text = std::fs::read_to_string(path).expect("the .prom file");
    for line in text.lines() {
        assert!(
            !matches!(LineInfo::parse(line), LineInfo::Ignored | LineInfo::Empty),
            "{line:?}"
        );
    }
    promtool_accepts(path);
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("parses")
}

/// Prometheus's own linter, `promtool check metrics` (Debian's `prometheus` package), reads the
/// file from standard input and must accept it. Skipped where promtool is not installed, unless
/// `PINSCOPE_REQUIRE_PROMTOOL` is set (CI sets it and installs the package).
fn promtool_accepts(path: &Path) {
    let file = std::fs::File::open(path).expect("the .prom file");
    let out = match std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(file)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            assert!(
                std::env::var_os("PINSCOPE_REQUIRE_PROMTOOL").is_none(),
                "promtool is required here but could not run: {e}"
            );
            return;
        }
    };
    assert!(
        out.status.success(),
        "promtool check metrics refused {}: {}{}",
        path.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn gauge(s: &Scrape, name: &str) -> Option<f64> {
    s.samples
        .iter()
        .find(|x| x.metric == name)
        .and_then(|x| match x.value {
            Value::Gauge(v) => Some(v),
            _ => None,
        })
}

#[test]
fn check_prom_without_a_gpu_writes_a_file_that_says_so() {
    without_driver("check_prom_without_a_gpu", || {
        let dir = tempfile::tempdir().expect("tempdir");
        let prom = dir.path().join("pinscope.prom");
        let out = pinscope()
            .args(["check", "--quick", "--prom"])
            .arg(&prom)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(3));
        let s = read_back(&prom);
        assert_eq!(gauge(&s, "pinscope_check_up"), Some(0.0));
        assert_eq!(gauge(&s, "pinscope_check_severity"), Some(3.0));
        assert!(
            s.samples
                .iter()
                .all(|x| x.labels.get("gpu") == Some("none"))
        );
        assert!(
            s.samples
                .iter()
                .all(|x| x.labels.get("host").is_some_and(|h| !h.is_empty()))
        );
        if cfg!(target_os = "linux") {
            assert!(gauge(&s, "pinscope_pin_budget_bytes").is_some_and(|b| b > 0.0));
            assert!(gauge(&s, "pinscope_pin_budget_mappings").is_some_and(|n| n > 0.0));
            assert_eq!(gauge(&s, "pinscope_pin_budget_registrations"), None);
        }
        // Only the file: no temporary file left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["pinscope.prom"]);
    });
}

#[test]
fn check_prom_refuses_other_names_and_what_is_not_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let txt = dir.path().join("notes.txt");
    std::fs::write(&txt, "mine").expect("write");
    let out = pinscope()
        .args(["check", "--prom"])
        .arg(&txt)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("*.prom"));
    assert_eq!(std::fs::read_to_string(&txt).expect("kept"), "mine");
    let folder = dir.path().join("folder.prom");
    std::fs::create_dir(&folder).expect("mkdir");
    let out = pinscope()
        .args(["check", "--prom"])
        .arg(&folder)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(folder.is_dir());
    #[cfg(unix)]
    {
        let link = dir.path().join("link.prom");
        std::os::unix::fs::symlink(&txt, &link).expect("symlink");
        let out = pinscope()
            .args(["check", "--prom"])
            .arg(&link)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(std::fs::read_to_string(&txt).expect("kept"), "mine");
    }
}

/// A reader polling the file while `check` rewrites it many times sees either no file yet or a
/// whole one (as many lines as the last one written), never a part.
#[test]
fn a_reader_never_sees_half_a_prom_file() {
    use std::sync::atomic::{AtomicBool, Ordering};
    without_driver("a_reader_never_sees_half_a_prom_file", || {
        let dir = tempfile::tempdir().expect("tempdir");
        let prom = dir.path().join("node.prom");
        let done = AtomicBool::new(false);
        let seen = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut seen = Vec::new();
                while !done.load(Ordering::Relaxed) {
                    if let Ok(text) = std::fs::read_to_string(&prom) {
                        seen.push(text);
                    }
                }
                seen
            });
            for _ in 0..12 {
                pinscope()
                    .args(["check", "--quick", "--prom"])
                    .arg(&prom)
                    .output()
                    .expect("runs");
            }
            done.store(true, Ordering::Relaxed);
            reader.join().expect("reader")
        });
        let whole = std::fs::read_to_string(&prom)
            .expect("written")
            .lines()
            .count();
        assert!(!seen.is_empty(), "the reader saw the file at least once");
        for text in &seen {
            assert!(text.ends_with('\n'), "{text:?}");
            assert_eq!(text.lines().count(), whole, "{text:?}");
        }
    });
}
