//! The renderer on real and SYNTHETIC result files: a golden file for `compare`'s markdown, the
//! 120-column terminal tables, and the structure of the report and comparison pages (the answer
//! first, plots labelled at measured sizes, no cut labels, one direction per series, the
//! platform page showing unavailable observers as unavailable).
//!
//! The SYNTHETIC windows-wddm / wsl2 fixtures are made by `tests/fixtures/synthetic/make.py` from
//! a real H200 run; they are not measurements. `UPDATE_GOLDEN=1 cargo test` rewrites the golden
//! file.

use pinscope::compare::{self, Exporter};
use pinscope::report;
use pinscope::results::ResultSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The published results CSV of `scenario` in `reports/<dir>/`.
fn published_in(dir: &str, scenario: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join("../reports").join(dir))
        .expect("published folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(&format!("-{scenario}-vm.csv"))
        })
        .collect();
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no {scenario} results in reports/{dir}"))
}

fn synthetic() -> Vec<ResultSet> {
    let dir = root().join("tests/fixtures/synthetic");
    let mut sets = compare::load_all(&[
        dir.join("SYNTHETIC-windows-wddm-wddm-pinned-4g.csv"),
        dir.join("SYNTHETIC-wsl2-wddm-pinned-4g.csv"),
    ])
    .expect("synthetic fixtures load");
    // Paths as a reader would give them, so the golden file does not depend on the checkout.
    for s in &mut sets {
        s.path = PathBuf::from(s.path.file_name().expect("file name"));
    }
    sets
}

fn published(scenario: &str) -> ResultSet {
    ResultSet::load(&published_in("h200", scenario)).expect("loads")
}

#[test]
fn compare_markdown_matches_the_golden_file() {
    let cmp = compare::build(&synthetic(), 0.02);
    let md = compare::MarkdownExporter.render(&cmp);
    let golden = root().join("tests/fixtures/synthetic/compare.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &md).expect("golden written");
    }
    let want = std::fs::read_to_string(&golden).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        md, want,
        "markdown changed; UPDATE_GOLDEN=1 cargo test rewrites the golden file"
    );
    assert!(md.contains("SYNTHETIC DATA"));
    assert!(
        md.contains("| case | lane | run |"),
        "accounting has a lane column"
    );
}

#[test]
fn terminal_tables_fit_120_columns_and_have_lanes() {
    let sets = vec![
        ResultSet::load(&published_in("h200", "h200-headline")).expect("loads"),
        ResultSet::load(&published_in("h200-x2", "h200-headline")).expect("loads"),
    ];
    let cmp = compare::build(&sets, 0.02);
    let text = compare::TableExporter { color: false }.render(&cmp);
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("case ") {
            in_table = true;
            assert!(line.contains(" lane "), "{line}");
        }
        if line.is_empty() {
            in_table = false;
        }
        if in_table {
            assert!(
                line.chars().count() <= 120,
                "{} wide: {line}",
                line.chars().count()
            );
        }
    }
    // The bidirectional case's lanes are told apart from the one-way copies.
    assert!(text.contains("bidir h2d"), "{text}");
    assert!(text.contains(" bidir  "), "{text}");
}

/// Text of the SVG `<text>` elements of one figure.
fn texts(fig: &str) -> Vec<String> {
    fig.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

fn figures(html: &str) -> Vec<&str> {
    html.split("<figure")
        .skip(1)
        .map(|f| &f[..f.find("</figure>").expect("closed")])
        .collect()
}

#[test]
fn report_opens_with_the_answer_and_draws_clean_plots() {
    for scenario in [
        "h200-headline",
        "ollama-like",
        "wddm-pinned-4g",
        "zero-copy",
    ] {
        let set = published(scenario);
        let html =
            report::render_report(std::slice::from_ref(&set), &[], scenario).expect("renders");
        let answer = html
            .find("<section id=\"answer\">")
            .expect("answer section");
        let plots = html.find("<section id=\"plots\">").expect("plots section");
        let params = html
            .find("<section id=\"summary\">")
            .expect("parameter table");
        assert!(
            answer < plots && plots < params,
            "{scenario}: answer, plots, parameters"
        );
        assert!(html[answer..plots].contains("fastest is"), "{scenario}");
        assert!(!html.contains('…'), "{scenario}: a label was cut");
        for fig in figures(&html) {
            let head = &fig[..fig.find('>').expect("tag")];
            if head.contains("data-plot=\"bandwidth-vs-size\"") {
                let sizes = head
                    .split("data-measured-sizes=\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .expect("measured sizes");
                let t = texts(fig);
                let measured: Vec<&str> = sizes.split('|').collect();
                let first = measured.first().expect("a size");
                let last = measured.last().expect("a size");
                assert!(
                    t.iter().any(|x| x == first) && t.iter().any(|x| x == last),
                    "{scenario}: ticks {t:?} lack the smallest or largest measured size {sizes}"
                );
                let size_like = |x: &str| {
                    ["B", "KiB", "MiB", "GiB", "TiB"].iter().any(|u| {
                        x.strip_suffix(u)
                            .is_some_and(|n| n.trim_end().parse::<f64>().is_ok())
                    })
                };
                for x in t.iter().filter(|x| size_like(x)) {
                    assert!(
                        measured.contains(&x.as_str()),
                        "{scenario}: {x} was not measured"
                    );
                }
                assert!(!t.iter().any(|x| x.contains("953.67")), "{scenario}");
            }
            if let Some(d) = head.split("data-series-directions=\"").nth(1) {
                let d = d.split('"').next().expect("value");
                assert!(
                    d.split('|').all(|x| !x.contains(',')),
                    "{scenario}: a series mixes directions: {d}"
                );
            }
        }
    }
    // zero-copy sweeps sizes: it gets the size plot; ollama-like's strategies span sizes too.
    let html = report::render_report(&[published("zero-copy")], &[], "z").expect("renders");
    assert!(html.contains("data-plot=\"bandwidth-vs-size\""));
    // A scenario measured at one size gets bars only.
    let html = report::render_report(&[published("host-alloc-flags")], &[], "h").expect("renders");
    assert!(!html.contains("data-plot=\"bandwidth-vs-size\""));
    assert!(html.contains("data-plot=\"bandwidth-bars\""));
}

#[test]
fn bidirectional_lanes_are_their_own_series() {
    let html = report::render_report(&[published("h200-headline")], &[], "h").expect("renders");
    assert!(html.contains("pinned, copy engine, bidirectional, H2D lane"));
    assert!(html.contains("pinned, copy engine, H2D"));
}

#[test]
fn platform_page_shows_each_platform_and_unavailable_observers() {
    let sets = synthetic();
    let cmp = compare::build(&sets, 0.02);
    let page = pinscope::report::render_compare_html(&cmp, &sets).expect("renders");
    assert!(page.contains("SYNTHETIC DATA"));
    assert!(page.contains("<section id=\"platforms\">"));
    assert!(page.contains("A windows-wddm vs B wsl2"));
    for plot in [
        "platform-bandwidth",
        "platform-observer-shared",
        "platform-observer-proc_rss",
        "platform-observer-ledger_pinned",
        "platform-headroom",
    ] {
        assert!(page.contains(&format!("data-plot=\"{plot}\"")), "{plot}");
    }
    // WSL2 has no DXGI: its shared-memory bars say unavailable, never 0.
    let shared = figures(&page)
        .into_iter()
        .find(|f| f.contains("data-plot=\"platform-observer-shared\""))
        .expect("shared figure");
    assert!(texts(shared).iter().any(|t| t == "unavailable"));
    assert!(page.contains("unavailable: Windows only"));
    // Windows has no procfs: MemAvailable is unavailable there.
    assert!(page.contains("unavailable: Linux and WSL2 only"));
    // Claims with each platform's verdict.
    assert!(page.contains("Claims, with each platform"));
    assert!(page.contains("under WDDM a 4 GB cudaMallocHost grows shared GPU memory"));
    assert!(!page.to_lowercase().contains("<script"));
    assert!(!page.contains("http://") && !page.contains("https://"));

    // `report` given runs from different platforms shows the same sections.
    let html = report::render_report(&sets, &[], "t").expect("renders");
    assert!(html.contains("<section id=\"platforms\">"));
    assert!(html.contains("SYNTHETIC DATA"));
}
