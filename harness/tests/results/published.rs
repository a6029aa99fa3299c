//! `compare`, `report` and claims on the published results in `reports/`: real runs on NVIDIA
//! H200 machines (a host with one H200 and a host with two), so CI checks the tools on measured
//! data.

use crate::common;

use pinscope::accounting::{Metric, Phase};
use pinscope::compare;
use pinscope::report;
use pinscope::results::{Lane, ResultSet, read_rows};
use std::path::PathBuf;

use common::{published_run, published_runs};

fn reports() -> PathBuf {
    common::repo().join("reports")
}

#[test]
fn every_published_run_reads_back_and_renders() {
    let runs = published_runs("h200");
    assert!(runs.len() >= 12, "{runs:?}");
    for p in runs.iter().chain(published_runs("h200-x2").iter()) {
        let set = ResultSet::load(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(!set.rows.is_empty() && !set.samples.is_empty() && set.sidecar.is_some());
        assert!(!set.is_partial(), "{} is partial", p.display());
        let html = report::render_report(std::slice::from_ref(&set), &[], "t").expect("renders");
        assert!(
            html.contains("<svg") && !html.contains("<script"),
            "{}",
            p.display()
        );
        // The published page beside it exists.
        assert!(p.with_extension("html").exists(), "{}", p.display());
    }
}

#[test]
fn the_two_h200_hosts_compare_with_intervals_and_verdicts() {
    let sets = compare::load_all(&[
        published_run("h200", "h200-headline"),
        published_run("h200-x2", "h200-headline"),
    ])
    .expect("loads");
    let c = compare::build(&sets, 0.02);
    assert_eq!(c.runs.len(), 2);
    let pinned = c
        .entries
        .iter()
        .find(|e| e.case_label == "pinned copy-engine" && e.lane == Lane::H2d)
        .expect("pinned h2d");
    let change = pinned.cells[1]
        .as_ref()
        .and_then(|c| c.change)
        .expect("a comparison");
    // Same card, same link: the pinned copy engine is within 2% on both hosts.
    assert!((change.ratio - 1.0).abs() < 0.02, "{}", change.ratio);
    let (lo, hi) = change
        .ci
        .expect("a bootstrap interval from the raw samples");
    assert!(lo <= change.ratio && change.ratio <= hi);
    // Every case is in the newer run (A); the older two-GPU run (B) lacks only the device-local
    // copy the scenario gained later, and the comparison shows it absent there.
    assert!(c.entries.iter().all(|e| e.cells[0].is_some()));
    assert!(
        c.entries
            .iter()
            .filter(|e| e.cells[1].is_none())
            .all(|e| e.case_label.starts_with("device-local copy"))
    );
    let md = compare::exporter(pinscope::cli::CompareFormat::Markdown, false).render(&c);
    assert!(md.contains("| pinned copy-engine | h2d |"), "{md}");
    assert!(md.contains("differs — ram"), "{md}");
}

/// The platform page lists the observers behind each accounting metric that the runs recorded;
/// a metric whose observers no run's sidecar names (an observer newer than the runs) is left
/// out, so adding an observer leaves the published pages as they were.
#[test]
fn the_platform_page_lists_only_observers_the_runs_recorded() {
    let sets = compare::load_all(&[
        published_run("h200", "h200-headline"),
        published_run("h200-x2", "h200-headline"),
    ])
    .expect("loads");
    let html = report::render_compare_html(&compare::build(&sets, 0.02), &sets).expect("renders");
    for m in Metric::ALL {
        let obs = m.observers();
        let recorded = sets.iter().any(|s| {
            let side = s.sidecar.as_ref().expect("sidecar");
            side.observers.iter().any(|o| obs.contains(&o.observer))
        });
        let names: Vec<&str> = obs.iter().map(|o| o.name()).collect();
        let row = format!("{} [{}]</td>", m.declaration().label, names.join(" or "));
        assert_eq!(html.contains(&row), recorded, "{m}: {row}");
    }
}

/// Every published run's claims and derived values, evaluated again from its own scenario text
/// and rows on its recorded machine, read as the sidecar recorded them.
#[test]
fn published_claims_agree_with_a_fresh_evaluation() {
    let mut checked = (0, 0);
    for p in published_runs("h200")
        .into_iter()
        .chain(published_runs("h200-x2"))
        .chain(published_runs("h100"))
    {
        let set = ResultSet::load(&p).expect("loads");
        let side = set.sidecar.as_ref().expect("sidecar");
        let Some(rec) = side.scenarios.first() else {
            continue;
        };
        let scenario =
            pinscope::scenario::parse(&rec.path, &rec.text).expect("its own text parses");
        let fresh =
            pinscope::claims::evaluate(&scenario, &read_rows(&p).expect("rows"), &side.machine);
        let verdicts = |v: &[pinscope::results::ClaimVerdict]| -> Vec<(String, pinscope::results::ClaimStatus, String)> {
            v.iter()
                .map(|c| (c.text.clone(), c.verdict, c.detail.clone()))
                .collect()
        };
        // Word for word: the verdicts and their details, the derived values.
        assert_eq!(verdicts(&fresh), verdicts(&side.claims), "{}", p.display());
        let derived = pinscope::claims::derive(&scenario, &read_rows(&p).expect("rows"));
        assert_eq!(derived, side.derived, "{}", p.display());
        checked.0 += fresh.len();
        checked.1 += derived.len();
    }
    println!("{} claims and {} derived values", checked.0, checked.1);
    assert!(checked.0 > 0 && checked.1 > 0, "{checked:?}");
}

#[test]
fn the_article_000_experiment_on_linux_holds_where_it_applies() {
    let set = ResultSet::load(&published_run("h200", "wddm-pinned-4g")).expect("loads");
    let side = set.sidecar.expect("sidecar");
    assert!(
        side.machine
            .platform
            .is(pinscope::platform::Platform::Linux)
    );
    let held = side
        .claims
        .iter()
        .filter(|c| c.verdict == pinscope::results::ClaimStatus::Held)
        .count();
    let na = side
        .claims
        .iter()
        .filter(|c| c.verdict == pinscope::results::ClaimStatus::NotApplicable)
        .count();
    assert!(held >= 5 && na >= 4, "{:?}", side.claims);
    // 4 GiB pinned with cudaMallocHost: cudaMemGetInfo barely moves, VmRSS grows by the size.
    let alloc = set
        .rows
        .iter()
        .find(|r| r.case_label == "alloc")
        .expect("alloc row");
    assert!(
        alloc
            .accounting_value(Phase::Alloc, Metric::CudaUsed)
            .expect("cuda")
            < 64.0
    );
    assert!(
        alloc
            .accounting_value(Phase::Alloc, Metric::ProcRss)
            .expect("rss")
            > 4000.0
    );
    assert_eq!(
        alloc.accounting_value(Phase::Alloc, Metric::Shared),
        None,
        "no DXGI on Linux"
    );
}

#[test]
fn the_index_links_every_published_page() {
    let index = std::fs::read_to_string(reports().join("index.html")).expect("index");
    for p in published_runs("h200")
        .into_iter()
        .chain(published_runs("h200-x2"))
        .chain(published_runs("h100"))
    {
        let rel = p.with_extension("html");
        let rel = rel
            .strip_prefix(reports())
            .expect("inside reports")
            .to_string_lossy()
            .replace('\\', "/");
        assert!(index.contains(&rel), "index lacks {rel}");
    }
    assert!(
        index.contains("compare-h200-headline.html")
            && reports().join("compare-h200-headline.html").exists()
    );
}

#[test]
fn the_index_shows_each_runs_headline_from_its_report() {
    let index = std::fs::read_to_string(reports().join("index.html")).expect("index");
    // One headline cell per run: a bandwidth, a latency scenario's first latency sentence, or
    // the sentence saying no bandwidth was measured.
    // A model-load run's headline is its answer per cache state, cold first.
    let runs = ["h200", "h200-x2", "h100"]
        .iter()
        .map(|m| published_runs(m).len())
        .sum::<usize>();
    let headlines = index.matches(" GB/s</b>: ").count()
        + index.matches("copy takes ").count()
        + index.matches("no host-to-GPU bandwidth measured").count()
        + index.matches("cold cache, fastest here: ").count();
    assert_eq!(headlines, runs, "{index}");
    // ollama-like's headline is its fastest H2D case, as the CSV has it, and its ring's share.
    let set = ResultSet::load(&published_run("h200", "ollama-like")).expect("loads");
    let best = set
        .rows
        .iter()
        .filter(|r| r.lane == Lane::H2d && r.status.is_ok())
        .filter_map(|r| r.bw_median_gbs.map(|b| (b, r)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("a fastest case");
    let want = format!("<b>{:.1} GB/s</b>: {} (", best.0, best.1.case_label);
    assert!(index.contains(&want), "{want} not in the index");
    assert!(index.contains("staging ring 98% of it, holding 48 MiB"));
}

/// Top-level folders of the machines that made the published files (the GPU machine's home and
/// scratch folders, this repository's checkout), none of which a reader's machine has.
const MACHINE_FOLDERS: [&str; 4] = ["root", "tmp", "home", "work"];

/// Published files name no folder of the machine that made them (a reader's machine has none):
/// the GPU machine's output folders are written `$OUT`, a scenario copy by its file name.
#[test]
fn published_files_carry_no_machine_paths() {
    // The README of reports/ names the folders that were replaced.
    let readme = reports().join("README.md");
    fn walk(dir: &std::path::Path, skip: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("reports folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, skip, found);
                continue;
            }
            if path == skip {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let folders = MACHINE_FOLDERS.iter().map(|f| format!("/{f}/"));
            let scratch = std::iter::once(format!("$OUT/{}", MACHINE_FOLDERS[3]));
            for needle in folders.chain(scratch) {
                if text.contains(&needle) {
                    found.push(format!("{} holds {needle}", path.display()));
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(&reports(), &readme, &mut found);
    assert!(found.is_empty(), "{found:#?}");
}
