//! The renderer on real and SYNTHETIC result files: a golden file for `compare`'s markdown, the
//! 120-column terminal tables, and the structure of the report and comparison pages (the answer
//! first, plots labelled at measured sizes, no cut labels, one direction per series, the
//! platform page showing unavailable observers as unavailable).
//!
//! The SYNTHETIC windows-wddm / wsl2 fixtures are made by `tests/fixtures/synthetic/make.py` from
//! a real H200 run; they are not measurements. `UPDATE_GOLDEN=1 cargo test` rewrites the golden
//! file.

use crate::common;

use pinscope::accounting::{Metric, Phase};
use pinscope::compare::{self, Exporter};
use pinscope::report;
use pinscope::results::ResultSet;
use std::path::{Path, PathBuf};

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

pub(crate) fn synthetic() -> Vec<ResultSet> {
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

pub(crate) fn published(scenario: &str) -> ResultSet {
    ResultSet::load(&common::published_run("h200", scenario)).expect("loads")
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
        ResultSet::load(&common::published_run("h200", "h200-headline")).expect("loads"),
        ResultSet::load(&common::published_run("h200-x2", "h200-headline")).expect("loads"),
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
pub(crate) fn texts(fig: &str) -> Vec<String> {
    fig.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

pub(crate) fn figures(html: &str) -> Vec<&str> {
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

/// The page's text cut into blocks (list items, paragraphs, table cells, captions), tags removed.
fn blocks(html: &str) -> Vec<String> {
    let mut text = String::new();
    let mut in_tag = false;
    let mut tag = String::new();
    for c in html.chars() {
        match (in_tag, c) {
            (false, '<') => {
                in_tag = true;
                tag.clear();
            }
            (true, '>') => {
                in_tag = false;
                let name = tag.trim_start_matches('/');
                let name = name.split([' ', '\n']).next().unwrap_or("");
                if [
                    "li",
                    "p",
                    "td",
                    "th",
                    "figcaption",
                    "h2",
                    "h3",
                    "tr",
                    "text",
                    "title",
                ]
                .contains(&name)
                {
                    text.push('\u{1}');
                }
            }
            (true, c) => tag.push(c),
            (false, c) => text.push(c),
        }
    }
    text.split('\u{1}')
        .map(|b| {
            b.trim()
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        })
        .filter(|b| !b.is_empty())
        .collect()
}

#[test]
fn no_published_page_attributes_device_memory_to_pinning() {
    let csvs = common::published_runs("h200");
    assert!(csvs.len() > 10);
    for csv in &csvs {
        let set = ResultSet::load(csv).expect("loads");
        let html = report::render_report(std::slice::from_ref(&set), &[], "t").expect("renders");
        let text = blocks(&html);
        // What a case with device memory moved in CUDA used: host and device memory together.
        let device_numbers: Vec<String> = set
            .rows
            .iter()
            .filter(|r| r.device_bytes > 0)
            .filter_map(|r| r.accounting_value(Phase::Alloc, Metric::CudaUsed))
            .filter(|v| *v >= 64.0)
            .map(|v| format!("CUDA used {v:+.0} MiB"))
            .collect();
        for b in &text {
            assert!(
                !b.contains("is what holding it costs the device budget"),
                "{}: {b}",
                csv.display()
            );
            if b.contains("page-locked") {
                for n in &device_numbers {
                    assert!(
                        !b.contains(n.as_str()) || b.contains("device memory"),
                        "{}: `{n}` is told as a cost of pinning: {b}",
                        csv.display()
                    );
                }
            }
        }
        // The plots: a bar after allocation of a case holding device memory says so in its
        // label, so its device buffer is not read as what the page-locked memory cost.
        let Some(fig) = figures(&html)
            .into_iter()
            .find(|f| f.contains("data-plot=\"accounting-alloc\""))
        else {
            continue;
        };
        for r in set.rows.iter().filter(|r| r.device_bytes > 0) {
            let start = format!("{} · ", r.case_label);
            for label in texts(fig).iter().filter(|t| t.starts_with(&start)) {
                assert!(
                    label.ends_with(" device memory"),
                    "{}: the bar `{label}` does not say it holds device memory",
                    csv.display()
                );
            }
        }
    }
}

#[test]
fn the_wddm_pinned_4g_page_says_what_pinning_alone_cost() {
    let set = published("wddm-pinned-4g");
    let html = report::render_report(std::slice::from_ref(&set), &[], "w").expect("renders");
    let text = blocks(&html);
    let memory = text
        .iter()
        .find(|b| b.starts_with("Memory"))
        .expect("a Memory sentence");
    // The first case holding 4 GiB page-locked and no device memory: `alloc`, whose CSV row says
    // CUDA used +8 MiB and pinscope's ledger +4096 MiB.
    let alloc = set
        .rows
        .iter()
        .find(|r| r.case_label == "alloc")
        .expect("alloc row");
    assert_eq!(alloc.device_bytes, 0);
    for (m, words) in [
        (Metric::CudaUsed, "CUDA used"),
        (Metric::LedgerPinned, "pinscope's ledger"),
    ] {
        let v = alloc.accounting_value(Phase::Alloc, m).expect("observed");
        let want = format!("{words} {v:+.0} MiB");
        assert!(memory.contains(&want), "{want} not in {memory}");
    }
    assert!(
        memory.contains("for alloc (no device memory held yet)"),
        "{memory}"
    );
    assert!(!memory.contains("+4104"), "{memory}");
    // The claim on the same page agrees with the Memory sentence.
    assert!(
        text.iter()
            .any(|b| b.contains("cudaMemGetInfo barely moves") && b.contains("8.000")),
        "the claim's detail"
    );
    // Its max-alloc probe says what was held, and that holding it cost nothing measurable.
    let probe = text
        .iter()
        .find(|b| b.starts_with("alloc: ") && b.contains("MiB with only its"))
        .expect("the max-alloc probe's sentence");
    assert!(probe.contains("nothing measurable"), "{probe}");
}

#[test]
fn the_platform_page_opens_with_the_answer_measured_per_platform() {
    let sets = synthetic();
    let page = report::render_compare_html(&compare::build(&sets, 0.02), &sets).expect("renders");
    // The title names each run's file and platform, not just "A linux vs B linux".
    let title = &page[page.find("<h1>").expect("h1")..page.find("</h1>").expect("h1 end")];
    assert!(
        title.contains("SYNTHETIC-windows-wddm-wddm-pinned-4g.csv") && title.contains("wsl2"),
        "{title}"
    );
    // Verdicts come first, before the platforms, the observers and the accounting tables.
    let verdicts = page.find("<section id=\"verdicts\">").expect("verdicts");
    let answer = page.find("<div id=\"platform-answer\">").expect("answer");
    let machines = page.find("<h3>The machines</h3>").expect("machines");
    assert!(verdicts < answer && answer < machines);
    assert!(page[verdicts..answer].contains("B against A: faster in"));
    // The answer's numbers are the CSVs' numbers.
    let text = blocks(&page);
    let wddm = &sets[0];
    let alloc = wddm
        .rows
        .iter()
        .find(|r| r.case_label == "alloc")
        .expect("alloc row");
    let shared = alloc
        .accounting_value(Phase::Alloc, Metric::Shared)
        .expect("shared");
    let booked = text
        .iter()
        .find(|b| b.starts_with("A windows-wddm: allocating 4 GiB page-locked"))
        .expect("the WDDM booking sentence");
    assert!(
        booked.contains(&format!("shared GPU memory {shared:+.0} MiB")),
        "{booked}"
    );
    let wsl = text
        .iter()
        .find(|b| b.starts_with("B wsl2: allocating 4 GiB page-locked"))
        .expect("the WSL2 booking sentence");
    assert!(
        wsl.contains("shared GPU memory is not observable on this platform"),
        "{wsl}"
    );
    assert!(
        text.iter()
            .any(|b| b.starts_with("Pinned ceiling") && b.contains("B wsl2 1024 MiB"))
    );
    assert!(text.iter().any(
        |b| b.starts_with("Bandwidth on B wsl2 against A windows-wddm") && b.contains("0.97×")
    ));
    assert!(
        text.iter()
            .any(|b| b.starts_with("Claims whose verdict differs")
                && b.contains("held on A windows-wddm"))
    );
}

#[test]
fn every_table_scrolls_inside_the_page() {
    let set = published("h200-headline");
    let html = report::render_report(std::slice::from_ref(&set), &[], "h").expect("renders");
    let tables = html.matches("<table>").count();
    assert!(tables >= 5, "{tables} tables");
    assert_eq!(
        html.matches("<div class=\"scroll\"><table>").count(),
        tables
    );
    assert!(html.contains(".scroll{overflow-x:auto"));
}

#[test]
fn the_first_screen_names_the_machine() {
    let set = published("latency");
    let html = report::render_report(std::slice::from_ref(&set), &[], "latency").expect("renders");
    let h1 = html.find("</h1>").expect("title");
    let line = &html[h1..html.find("<nav>").expect("nav")];
    assert!(
        line.contains("<p class=\"machine\">NVIDIA H200 · driver 580.159.04 · PCIe Gen5 x16 · host vm · Linux (Ubuntu 24.04.3 LTS)</p>"),
        "{line}"
    );
    // Runs on two kinds of machine: a line each, headed by its runs.
    let sets = synthetic();
    let html = report::render_report(&sets, &[], "two").expect("renders");
    let lines: Vec<&str> = html
        .split("<p class=\"machine\">")
        .skip(1)
        .map(|l| &l[..l.find("</p>").expect("closed")])
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("Run A: NVIDIA") && lines[0].contains("Windows, WDDM"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("Run B: NVIDIA") && lines[1].contains("WSL2"),
        "{lines:?}"
    );
}

#[test]
fn identical_runs_share_one_settings_column() {
    let path = common::published_run("h200", "quick");
    let four: Vec<ResultSet> = (0..4)
        .map(|_| ResultSet::load(&path).expect("loads"))
        .collect();
    let html = report::render_report(&four, &[], "four").expect("renders");
    let at = html
        .find("Settings that change the answer")
        .expect("settings");
    let head = &html[at..at + html[at..].find("</tr>").expect("head")];
    assert!(head.contains("<th>A–D (identical)</th>"), "{head}");
    assert_eq!(head.matches("<th>").count(), 2, "{head}");
    // The published runs of one machine differ in one setting, the CPU the copies ran on: one
    // value column names the values the runs share once, and that one per run.
    let sets: Vec<ResultSet> = common::published_runs("h200")
        .iter()
        .map(|p| ResultSet::load(p).expect("loads"))
        .collect();
    let html = report::render_report(&sets, &[], "all").expect("renders");
    let at = html
        .find("Settings that change the answer")
        .expect("settings");
    let table = &html[at..at + html[at..].find("</table>").expect("table")];
    let head = &table[..table.find("</tr>").expect("head")];
    assert_eq!(head.matches("<th>").count(), 2, "{head}");
    assert!(
        table.contains("<td>580.159.04") || table.contains("1980 MHz"),
        "values once"
    );
}

#[test]
fn derived_results_show_how_they_are_computed() {
    let set = published("ollama-like");
    let html =
        report::render_report(std::slice::from_ref(&set), &[], "ollama-like").expect("renders");
    let table = &html[html.find("id=\"derived\"").expect("derived table")..];
    let table = &table[..table.find("</table>").expect("closed")];
    assert!(table.contains("how it is computed"), "{table}");
    // A load time is a sum over the model's cases, and the page says so beside the value.
    assert!(
        table.contains("model load, 33/33 layers, from pageable memory (mmap-like)")
            && table.contains("summed"),
        "{table}"
    );
    assert!(!table.contains("not recorded"), "{table}");
}
