//! `compare` and `report` end to end on the synthetic development fixture (see
//! `tests/fixtures/results/README.md`). The inputs are generated into a temporary directory at
//! test time; to run these tests on real runs, change `fixture_paths` to return their paths.

use crate::devfixture;

// The binary is started directly (not through assert_cmd's cargo_bin, which prefixes the cargo
// runner): under Wine the runner is a Linux script a Windows process cannot start.
use assert_cmd::Command;
use pinscope::cli::{CompareFormat, ReportArgs};
use pinscope::compare::{self, Comparison, Exporter};
use pinscope::report;
use pinscope::results::{Lane, ResultSet};
use pinscope::stats::Verdict;
use std::path::{Path, PathBuf};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
}

/// The result files the tests read: the baseline first. Swap this one line for real runs, e.g.
/// `vec![PathBuf::from("../reports/windows/results.csv"), PathBuf::from("../reports/wsl2/results.csv")]`.
fn fixture_paths(tmp: &Path) -> Vec<PathBuf> {
    devfixture::write_pair(tmp)
}

/// A temporary folder and the result files written into it by `fixture_paths`.
fn tmp_fixture_paths() -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let paths = fixture_paths(tmp.path());
    (tmp, paths)
}

fn fixture_sets(tmp: &Path) -> Vec<ResultSet> {
    compare::load_all(&fixture_paths(tmp)).expect("fixtures load")
}

fn build(tmp: &Path) -> Comparison {
    compare::build(&fixture_sets(tmp), 0.02)
}

fn entry<'a>(c: &'a Comparison, label: &str, lane: Lane) -> &'a compare::Entry {
    c.entries
        .iter()
        .find(|e| {
            (e.case_label == label || e.case_label.starts_with(&format!("{label} (")))
                && e.lane == lane
        })
        .unwrap_or_else(|| panic!("no entry {label} {lane:?}"))
}

#[test]
fn compare_matches_cases_and_lists_the_unmatched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let c = build(tmp.path());
    assert_eq!(c.runs.len(), 2);
    assert!(c.runs[1].partial);
    // The baseline lacks "pinned 1 GiB"; B lacks "registered 1 MiB": both listed.
    let e = entry(&c, "registered 1 MiB", Lane::H2d);
    assert!(e.cells[0].is_some() && e.cells[1].is_none());
    let e = entry(&c, "pinned 1 GiB", Lane::D2h);
    assert!(e.cells[0].is_none() && e.cells[1].is_some());
    let text = compare::TableExporter { color: false }.render(&c);
    assert!(text.contains("only in A: registered 1 MiB (h2d)"), "{text}");
    assert!(text.contains("only in B: pinned 1 GiB (h2d)"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when asked for none");
    // Machine differences and the partial note are in the header.
    assert!(
        text.contains("differs — platform: A=windows  B=wsl2"),
        "{text}"
    );
    assert!(!text.contains("differs — gpu"), "{text}");
    assert!(text.contains("partial run"), "{text}");
}

#[test]
fn compare_verdicts_follow_the_data() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let c = build(tmp.path());
    let pinned = entry(&c, "pinned 256 MiB", Lane::H2d).cells[1]
        .as_ref()
        .and_then(|c| c.change)
        .expect("change");
    assert_eq!(pinned.verdict, Verdict::Faster);
    assert!((pinned.ratio - 1.25).abs() < 0.02, "{}", pinned.ratio);
    let (lo, hi) = pinned.ci.expect("ci");
    assert!(lo > 1.0 && lo <= pinned.ratio && pinned.ratio <= hi);
    let pageable = entry(&c, "pageable 16 MiB", Lane::D2h).cells[1]
        .as_ref()
        .and_then(|c| c.change)
        .expect("change");
    assert_eq!(pageable.verdict, Verdict::WithinNoise);
    // Failed in A, skipped in B: statuses shown, no verdict.
    let failed = entry(&c, "mapped 64 MiB", Lane::H2d);
    let a = failed.cells[0].as_ref().expect("present");
    assert!(
        a.status
            .to_field()
            .starts_with("failed: CUDA_ERROR_OUT_OF_MEMORY")
    );
    assert!(failed.cells[1].as_ref().expect("present").change.is_none());
    let skipped = entry(&c, "pageable 64 MiB", Lane::H2d);
    assert!(
        skipped.cells[1]
            .as_ref()
            .expect("b")
            .status
            .to_field()
            .starts_with("skipped: ")
    );
    // Accounting columns any run has, side by side.
    assert!(
        c.accounting_columns
            .contains(&"d_alloc_shared_mib".to_string())
    );
    assert!(
        c.accounting_columns
            .contains(&"d_alloc_proc_rss_mib".to_string())
    );
    assert!(
        !c.accounting_columns
            .contains(&"d_free_committed_mib".to_string())
    );
}

#[test]
fn compare_refuses_other_schema_naming_the_file() {
    let (tmp, paths) = tmp_fixture_paths();
    let text = std::fs::read_to_string(&paths[1]).expect("read");
    let bad = tmp.path().join("future.csv");
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[1] = lines[1].replacen("1,", "99,", 1);
    std::fs::write(&bad, lines.join("\n")).expect("write");
    let err = compare::load_all(&[paths[0].clone(), bad.clone()]).expect_err("refused");
    let msg = err.to_string();
    assert!(msg.contains("future.csv") && msg.contains("99"), "{msg}");
    assert!(!msg.contains('\n'), "one sentence: {msg}");

    let out = Command::new(env!("CARGO_BIN_EXE_pinscope"))
        .args(["compare"])
        .arg(&paths[0])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("future.csv"));
}

#[test]
fn compare_formats() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let c = build(tmp.path());
    let md = compare::exporter(CompareFormat::Markdown, false).render(&c);
    assert!(
        md.contains(
            "| case | lane | A GB/s | A n | B GB/s | B n | B/A | B 95% CI | B verdict |\n|---|---|"
        ),
        "{md}"
    );
    let json = compare::exporter(CompareFormat::Json, false).render(&c);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json parses");
    assert_eq!(v["entries"].as_array().map(Vec::len), Some(c.entries.len()));
    assert_eq!(v["runs"][0]["label"], "A");
    let csv = compare::exporter(CompareFormat::Csv, false).render(&c);
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(rdr.records().count(), c.entries.len() * 2);
    let table = compare::TableExporter { color: true }.render(&c);
    // Each coloured cell, its padding trimmed: green says faster, red says slower or failed.
    let painted = |colour: &str| -> Vec<String> {
        table
            .split(colour)
            .skip(1)
            .filter_map(|t| {
                t.split_once("\x1b[0m")
                    .map(|(cell, _)| cell.trim().to_string())
            })
            .collect()
    };
    let green = painted("\x1b[32m");
    assert!(
        !green.is_empty() && green.iter().all(|c| c == "faster"),
        "{green:?}"
    );
    let red = painted("\x1b[31m");
    assert!(red.iter().any(|c| c == "failed"), "{red:?}");
    assert!(
        red.iter().all(|c| c == "failed" || c == "slower"),
        "{red:?}"
    );
    assert!(table.contains("A mapped 64 MiB (h2d): failed: CUDA_ERROR_OUT_OF_MEMORY"));
}

#[test]
fn compare_command_writes_html() {
    let (tmp, paths) = tmp_fixture_paths();
    let html = tmp.path().join("out/compare.html");
    Command::new(env!("CARGO_BIN_EXE_pinscope"))
        .arg("compare")
        .args(&paths)
        .args(["--format", "markdown", "--html"])
        .arg(&html)
        .assert()
        .success()
        .stdout(predicates::str::contains("| pinned 256 MiB | h2d |"));
    let page = std::fs::read_to_string(&html).expect("html written");
    assert!(page.contains("<svg") && !page.contains("<script") && !page.contains("http"));
}

fn nvbandwidth_sample() -> Vec<report::NvbandwidthSeries> {
    report::load_nvbandwidth(&fixtures_dir().join("h200-linux-nvbandwidth-h2d.json"))
        .expect("real nvbandwidth sample parses")
}

#[test]
fn nvbandwidth_real_sample_parses() {
    let s = nvbandwidth_sample();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].testname, "host_to_device_memcpy_ce");
    assert!((s[0].bandwidth_gbs - 55.3137).abs() < 1e-3);
    assert_eq!(s[0].matrix_gbs, vec![55.3137]);
    assert_eq!(s[0].status, "Passed");
}

#[test]
fn report_has_every_section_and_is_self_contained() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sets = fixture_sets(tmp.path());
    let html =
        report::render_report(&sets, &nvbandwidth_sample(), "dev <fixture>").expect("renders");
    for id in [
        "machines",
        "observers",
        "scenarios",
        "plots",
        "summary",
        "failures",
        "claims",
        "probes",
        "derived",
        "reference",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{id}\">")),
            "missing {id}"
        );
    }
    assert!(html.contains("<svg"));
    assert!(html.matches("<svg").count() >= 5, "plots a, b, c, d, e");
    assert!(!html.to_lowercase().contains("<script"));
    assert!(!html.contains("http://") && !html.contains("https://"));
    // Strings from files are escaped.
    assert!(html.contains("&lt;not a real scenario&gt;"));
    assert!(html.contains("dev &lt;fixture&gt;"));
    assert!(!html.contains("<not a real scenario>"));
    assert!(!html.contains("<b>& friends"));
    assert!(html.contains("Partial run"));
    assert!(html.contains("CUDA_ERROR_OUT_OF_MEMORY"));
    assert!(html.contains("guard: exceeds --allow-pinned"));
    assert!(html.contains("host_to_device_memcpy_ce"));
    assert!(html.contains("DXGI is only on native Windows &lt;synthetic&gt;"));
    assert!(html.contains("model load time (synthetic)"));
    assert!(html.contains("pinned ceiling"));
    // Every svg draws something beyond its background.
    for svg in html.split("<svg").skip(1) {
        let svg = &svg[..svg.find("</svg>").expect("closed")];
        assert!(
            svg.matches("<rect").count()
                + svg.matches("<polyline").count()
                + svg.matches("<path").count()
                > 1
        );
    }
}

#[test]
fn report_omits_empty_plots_with_a_sentence() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut sets = fixture_sets(tmp.path());
    sets.truncate(1);
    for r in &mut sets[0].rows {
        r.accounting.clear();
        r.max_alloc_held_mib = None;
        r.max_alloc_host_mib = None;
        r.max_alloc_free_mib = None;
    }
    sets[0].samples.drop_timelines();
    let html = report::render_report(&sets, &[], "t").expect("renders");
    assert!(html.contains("No plot: no case in this scenario recorded accounting deltas"));
    assert!(
        html.contains("No plot: no case in this scenario probed the largest device allocation.")
    );
    assert!(html.contains("No plot: no run recorded a timeline"));
}

#[test]
fn report_command_and_write_report() {
    let (tmp, paths) = tmp_fixture_paths();
    let out = tmp.path().join("rep/index.html");
    let args = ReportArgs {
        results: paths.clone(),
        output: out.clone(),
        nvbandwidth: vec![fixtures_dir().join("h200-linux-nvbandwidth-h2d.json")],
        title: None,
        force: false,
        quiet: true,
        format: pinscope::cli::ReportFormat::Html,
    };
    assert_eq!(
        pinscope::cli::report_command(&args, true).expect("report"),
        0
    );
    assert!(
        std::fs::read_to_string(&out)
            .expect("written")
            .contains("<svg")
    );
    let sets = compare::load_all(&paths).expect("load");
    let next = tmp.path().join("next-to-csv.html");
    report::write_report(&sets[..1], &next, "run").expect("write_report");
    assert!(next.exists());

    let bad = tmp.path().join("bad-nvb.json");
    std::fs::write(&bad, "{ nope").expect("write");
    let args = ReportArgs {
        nvbandwidth: vec![bad],
        ..args
    };
    let e = pinscope::cli::report_command(&args, true)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("bad-nvb.json"), "{e}");
}

/// Writes the synthetic fixture to `$PINSCOPE_FIXTURE_OUT` (default `target/dev-fixture`) for
/// trying `pinscope compare/report` and `scripts/check-report.sh` by hand:
/// `cargo test --test compare_report -- --ignored write_dev_fixture_files`.
#[test]
#[ignore = "writes files outside the temp dir; run by hand"]
fn write_dev_fixture_files() {
    let dir = std::env::var_os("PINSCOPE_FIXTURE_OUT").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/dev-fixture"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).expect("mkdir");
    for p in devfixture::write_pair(&dir) {
        println!("{}", p.display());
    }
}

// ---- the README's compare pair: real H200 runs -------------------------------------------

/// The README's showcase pair: the one-GPU H200 host (with the host-only phase) against the
/// two-GPU H200 host (written before pinscope recorded that phase).
const README_A: &str = "reports/h200/20261203-095848-quick-vm.csv";
const README_B: &str = "reports/h200-x2/20261130-082648-quick-vm.csv";

/// The repository's root, where the published runs are named from.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `pinscope args…` run in the repository's root: its exit code, stdout and stderr.
fn pinscope_in_root(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pinscope"))
        .current_dir(repo_root())
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The text of an HTML fragment with the page's entities read back.
fn unescaped(html: &str) -> String {
    html.replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The `Memory:` sentence of the report of one run.
fn report_memory_sentence(csv: &str) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let page = tmp.path().join("r.html");
    let page_arg = page.display().to_string();
    let (code, _, err) = pinscope_in_root(&["report", "-q", csv, "-o", &page_arg]);
    assert_eq!(code, Some(0), "{err}");
    let html = std::fs::read_to_string(&page).expect("page");
    let start = html.find("Memory:</strong> ").expect("a Memory sentence") + 17;
    let end = start + html[start..].find("</li>").expect("its end");
    unescaped(&html[start..end])
}

#[test]
fn compare_and_report_state_the_same_memory_finding_for_the_readme_pair() {
    let report_b = report_memory_sentence(README_B);
    assert!(report_b.contains("not recorded by this run"), "{report_b}");
    // The sentence without its full stop, as compare continues it with what stayed after the
    // free.
    let b = report_b.trim_end_matches('.');
    let report_a = report_memory_sentence(README_A);
    let a = report_a.trim_end_matches('.');
    assert!(a.contains("(no device memory held yet) moved"), "{a}");
    for format in ["table", "markdown"] {
        let (code, out, err) =
            pinscope_in_root(&["compare", README_A, README_B, "--format", format]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains(&format!("A: {a}")), "{format}: {out}");
        assert!(out.contains(&format!("B: {b}")), "{format}: {out}");
        assert!(!out.contains("booked nothing"), "{format}: {out}");
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let page = tmp.path().join("c.html");
    let page_arg = page.display().to_string();
    let (code, _, err) = pinscope_in_root(&[
        "compare", "-q", README_A, README_B, "--format", "html", "-o", &page_arg,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let html = unescaped(&std::fs::read_to_string(&page).expect("page"));
    assert!(html.contains(&format!("B linux: {b}")), "{html}");
    assert!(html.contains(&format!("A linux: {a}")), "{html}");
    assert!(!html.contains("booked nothing"));
    // JSON and CSV carry the finding as data.
    let (_, json, _) = pinscope_in_root(&["compare", README_A, README_B, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["memory"]["runs"][0]["host_memory_alone"], "recorded");
    assert_eq!(v["memory"]["runs"][1]["host_memory_alone"], "not-recorded");
    assert_eq!(v["memory"]["case_label"], "alloc-bidirectional");
    let (_, csv, _) = pinscope_in_root(&["compare", README_A, README_B, "--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let head = rdr.headers().expect("head").clone();
    let col = |name: &str| head.iter().position(|h| h == name).expect(name);
    let (run, phase) = (col("run"), col("host_phase"));
    for rec in rdr.records() {
        let rec = rec.expect("record");
        let want = if &rec[run] == "A" {
            "recorded"
        } else {
            "not-recorded"
        };
        assert_eq!(&rec[phase], want, "{rec:?}");
    }
}

#[test]
fn the_text_table_shows_b_not_recorded_in_the_host_only_table() {
    let (_, out, _) = pinscope_in_root(&["compare", README_A, README_B]);
    let table = &out[out
        .find("after the host memory alone")
        .expect("the host-only table")..];
    let table = &table[..table.find("\n\n").unwrap_or(table.len())];
    let b_rows: Vec<&str> = table
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("B"))
        .collect();
    assert!(!b_rows.is_empty(), "{table}");
    assert!(b_rows.iter().all(|l| l.contains("not recorded")), "{table}");
}

#[test]
fn the_readme_pair_has_too_few_samples_for_a_verdict_and_fail_on_does_not_count_it() {
    let (code, out, err) =
        pinscope_in_root(&["compare", README_A, README_B, "--fail-on", "slower"]);
    assert_eq!(code, Some(0), "3 samples against 3 fail no gate: {err}");
    assert!(
        err.contains("fail-on: 13 case(s) had fewer than 10 raw samples a side"),
        "the gate says what it did not count: {err}"
    );
    assert!(!err.contains("is slower than"), "{err}");
    assert!(out.contains("A n") && out.contains("B n"), "{out}");
    assert!(out.contains("too few samples"), "{out}");
    assert!(out.contains("at least 10 raw samples per side"), "{out}");
    // The ratio and the interval stay, as information: staged H2D is 0.944× A.
    let staged = out
        .lines()
        .find(|l| l.starts_with("staged") && l.contains(" h2d "))
        .expect("staged h2d");
    assert!(
        staged.contains("0.944") && staged.contains("[0.921, 0.949]"),
        "{staged}"
    );
    assert!(
        !out.lines()
            .any(|l| l.ends_with("slower") || l.ends_with("faster")),
        "{out}"
    );
    let (_, json, _) = pinscope_in_root(&["compare", README_A, README_B, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["min_samples"], 10);
    for e in v["entries"].as_array().expect("entries") {
        assert_eq!(e["cells"][1]["change"]["verdict"], "too-few-samples", "{e}");
    }
}

/// SYNTHETIC: the README's run A copied as `SYNTHETIC-<name>.csv` with its sidecar, each
/// bandwidth series replaced by 12 values around its first times `scale`: made up to test the
/// sample rule, not a measurement.
fn synthetic_copy(dir: &Path, name: &str, scale: f64) -> PathBuf {
    let src = repo_root().join(README_A);
    let csv = dir.join(format!("SYNTHETIC-{name}.csv"));
    std::fs::copy(&src, &csv).expect("csv");
    let sidecar = std::fs::read_to_string(src.with_extension("json")).expect("sidecar");
    let mut sidecar: serde_json::Value = serde_json::from_str(&sidecar).expect("json");
    sidecar["SYNTHETIC"] = "made up by compare_report.rs from a real run: not a measurement".into();
    std::fs::write(csv.with_extension("json"), sidecar.to_string()).expect("sidecar");
    let samples = std::fs::read_to_string(src.with_extension("samples.csv")).expect("samples");
    let mut out = Vec::new();
    for line in samples.lines() {
        // schema,case_key,lane,series,index,t_ms,value: the key is quoted and holds commas.
        let f: Vec<&str> = line.rsplitn(5, ',').collect();
        if f.len() < 5 || f[3] != "bw_gbs" {
            out.push(line.to_string());
            continue;
        }
        if f[2] != "0" {
            continue;
        }
        let value: f64 = f[0].parse().expect("value");
        for j in 0..12 {
            let v = value * scale * (1.0 + 0.001 * f64::from(j % 4));
            out.push(format!("{},bw_gbs,{j},,{v}", f[4]));
        }
    }
    std::fs::write(
        dir.join(format!("SYNTHETIC-{name}.samples.csv")),
        out.join("\n") + "\n",
    )
    .expect("write samples");
    csv
}

#[test]
fn a_synthetic_pair_with_enough_samples_gets_verdicts_and_fails_the_gate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = synthetic_copy(tmp.path(), "base", 1.0);
    let b = synthetic_copy(tmp.path(), "slower", 0.8);
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let (code, out, err) = pinscope_in_root(&["compare", &a, &b, "--fail-on", "slower"]);
    assert_eq!(code, Some(4), "{out}\n{err}");
    assert!(err.contains("is slower than in the baseline"), "{err}");
    assert!(out.contains("SYNTHETIC DATA"), "{out}");
    let alloc = out
        .lines()
        .find(|l| l.starts_with("alloc ") && l.contains(" h2d "))
        .expect("alloc h2d");
    assert!(
        alloc.contains(" 12 ") && alloc.ends_with("slower"),
        "{alloc}"
    );
    // The same run against itself: no difference within noise, with its interval.
    let (code, out, _) = pinscope_in_root(&["compare", &a, &a, "--fail-on", "change"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("no difference within noise"), "{out}");
}

#[test]
fn a_run_without_sidecar_is_unknown_not_different() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bare = tmp.path().join("bare.csv");
    std::fs::copy(repo_root().join(README_A), &bare).expect("copy");
    let bare = bare.display().to_string();
    let (code, out, err) = pinscope_in_root(&["compare", README_A, &bare]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("B=?"), "{out}");
    assert!(!out.contains("differs — kernel"), "{out}");
    assert!(out.contains("unknown in B — kernel: A=6.18.44"), "{out}");
}

#[test]
fn a_run_is_synthetic_by_its_sidecar_field_not_by_its_name() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let marked = synthetic_copy(tmp.path(), "marked", 1.0);
    assert!(ResultSet::load(&marked).expect("loads").is_synthetic());
    // The same measured run under a name that says SYNTHETIC is still a measurement.
    let src = repo_root().join(README_A);
    let named = tmp.path().join("SYNTHETIC-but-measured.csv");
    for ext in ["csv", "json", "samples.csv"] {
        std::fs::copy(src.with_extension(ext), named.with_extension(ext)).expect("copy");
    }
    assert!(!ResultSet::load(&named).expect("loads").is_synthetic());
}
