//! The report's plots: tick values and scales, the memory timelines of each observer, the
//! accounting plots of one page on one scale, which cases a memory plot leaves out, latency
//! scenarios without bandwidth bars, clean SVG and ellipsized labels.

use crate::common;
use crate::report_render::{figures, published, root, synthetic, texts};
use pinscope::compare;
use pinscope::report;
use pinscope::results::ResultSet;

/// The numbers an SVG writes as `<text>` elements anchored at `anchor` (`end`: the y axis's
/// ticks of a line chart; `middle`: the x axis's ticks of a bar chart).
fn tick_values(fig: &str, anchor: &str) -> Vec<f64> {
    let attr = format!("text-anchor=\"{anchor}\"");
    fig.split("<text")
        .skip(1)
        .filter(|t| t[..t.find('>').unwrap_or(0)].contains(&attr))
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            body[..body.find("</text>")?].trim().parse().ok()
        })
        .collect()
}

/// The y coordinate of the SVG `<text>` element whose text starts with `start`.
fn text_y(fig: &str, start: &str) -> f64 {
    let at = fig.find(start).expect("text present");
    let tag = &fig[fig[..at].rfind("<text").expect("text tag")..at];
    tag.split(" y=\"")
        .nth(1)
        .and_then(|v| v.split('"').next())
        .and_then(|v| v.parse().ok())
        .expect("y attribute")
}

/// The real run's rows in `tests/fixtures/timeline/` (see its README).
fn timeline_fixture() -> ResultSet {
    ResultSet::load(&root().join("tests/fixtures/timeline/h200-wddm-pinned-4g.csv")).expect("loads")
}

#[test]
fn timelines_name_each_observer_and_draw_the_change_from_before() {
    let set = timeline_fixture();
    let html = report::render_report(std::slice::from_ref(&set), &[], "t").expect("renders");
    let timelines: Vec<&str> = figures(&html)
        .into_iter()
        .filter(|f| f.contains("data-plot=\"timeline\""))
        .collect();
    // Only `pageable` moved past its observer's noise: one chart, its MemAvailable only.
    assert_eq!(timelines.len(), 1, "{timelines:?}");
    let fig = timelines[0];
    assert!(
        fig.contains("data-title=\"After free: pageable"),
        "{fig:.300}"
    );
    let t = texts(fig);
    assert!(
        t.iter()
            .any(|x| x == "MemAvailable [procfs.mem_available; noise 64 MiB]"),
        "no legend naming the observer: {t:?}"
    );
    assert!(
        t.iter()
            .any(|x| x == "change against before allocation (MiB)")
    );
    // The legend sits at the top, under the title: above the plot's x axis description.
    let legend = text_y(fig, "MemAvailable [");
    assert!(
        legend < 80.0 && legend < text_y(fig, "ms after free"),
        "{legend}"
    );
    // The axis spans the change (about -175 MiB), not the machine's 128 GiB of MemAvailable.
    let ticks = tick_values(fig, "end");
    assert!(ticks.iter().any(|v| *v <= -100.0), "{ticks:?}");
    assert!(ticks.contains(&0.0), "0 (before) on the axis: {ticks:?}");
    assert!(
        ticks.iter().all(|v| v.abs() < 1000.0),
        "absolute values: {ticks:?}"
    );
    // The series that stayed within their noise are counted, and the rule is stated.
    assert!(html.contains(pinscope::report::TIMELINE_NOISE_RULE));
    for quiet in [
        "procfs.vm_rss",
        "cuda.used",
        "ledger.pinned",
        "procfs.vm_hwm",
    ] {
        assert!(!fig.contains(quiet), "{quiet} drawn");
    }
}

#[test]
fn a_run_where_nothing_moved_gets_one_sentence_and_no_timeline() {
    // A real H200 run (ollama-like, 2026-12-02 09:47 UTC) in which every observer stayed within
    // its noise after the free, kept as a fixture with its phase and timeline readings.
    let run =
        root().join("tests/fixtures/runs/quiet-after-free/20261202-094711-ollama-like-vm.csv");
    let html =
        report::render_report(&[ResultSet::load(&run).expect("loads")], &[], "o").expect("renders");
    assert!(!html.contains("data-plot=\"timeline\""));
    assert_eq!(
        html.matches("no memory observer moved by more than its noise")
            .count(),
        1
    );
}

fn figure_of<'h>(html: &'h str, plot: &str) -> &'h str {
    figures(html)
        .into_iter()
        .find(|f| f.contains(&format!("data-plot=\"{plot}\"")))
        .unwrap_or_else(|| panic!("no {plot} figure"))
}

#[test]
fn accounting_plots_of_one_page_share_their_scale() {
    // The platform page: dedicated GPU memory moved +2 MiB, shared +4099 MiB; both axes reach
    // past 4000 MiB, so the +2 MiB bar is a sliver, not a full-width bar.
    let sets = synthetic();
    let page = report::render_compare_html(&compare::build(&sets, 0.02), &sets).expect("renders");
    let shared = tick_values(figure_of(&page, "platform-observer-shared"), "middle");
    let dedicated = tick_values(figure_of(&page, "platform-observer-dedicated"), "middle");
    assert!(shared.iter().any(|v| *v >= 4000.0), "{shared:?}");
    assert_eq!(shared, dedicated);
    // A real run's report: the plots after allocation share the page's scale after allocation;
    // the plots after free one of their own, so what is still held after a free is not drawn
    // as nothing on the allocation's ±GiB.
    let set = timeline_fixture();
    let html = report::render_report(std::slice::from_ref(&set), &[], "t").expect("renders");
    let alloc = tick_values(figure_of(&html, "accounting-alloc"), "middle");
    assert!(alloc.iter().any(|v| *v >= 4000.0), "{alloc:?}");
    let free = tick_values(figure_of(&html, "accounting-free"), "middle");
    let widest = |t: &[f64]| t.iter().fold(0f64, |m, v| m.max(v.abs()));
    assert!(
        widest(&free) * 4.0 < widest(&alloc),
        "{free:?} against {alloc:?}"
    );
    let two = [
        timeline_fixture(),
        ResultSet::load(&common::published_run("h200", "pinned-churn")).expect("loads"),
    ];
    let html = report::render_report(&two, &[], "t").expect("renders");
    let frees: Vec<Vec<f64>> = figures(&html)
        .into_iter()
        .filter(|f| f.contains("data-plot=\"accounting-free\""))
        .map(|f| tick_values(f, "middle"))
        .collect();
    assert!(frees.len() >= 2, "{} plots after free", frees.len());
    assert!(frees.iter().all(|t| *t == frees[0]), "{frees:?}");
}

/// Texts of the SVG `<text>` elements of a whole page, tooltips left out.
fn drawn_texts(html: &str) -> Vec<String> {
    texts(html)
        .into_iter()
        .map(|t| match t.find("</title>") {
            Some(end) => t[end + "</title>".len()..].to_string(),
            None => t,
        })
        .collect()
}

#[test]
fn memory_plots_leave_out_cases_that_moved_no_observer() {
    // The latency scenario's 4-byte and 64 KiB copies move CUDA used by one 2 MiB page and the
    // ledger by their own bytes: only the four pointer-chase cases (2 MiB and 256 MiB of pinned
    // memory) get bars after allocation, and no case moved anything after free and hold.
    let set = published("latency");
    let html = report::render_report(std::slice::from_ref(&set), &[], "latency").expect("renders");
    let alloc = figure_of(&html, "accounting-alloc");
    let cases = drawn_texts(alloc)
        .into_iter()
        .filter(|t| t.contains(" · "))
        .count();
    assert_eq!(cases, 4, "{:?}", drawn_texts(alloc));
    assert!(
        html.contains("After allocation (host and device memory), 40 more cases moved no observer beyond its noise and have no bars: pinned (4 B), pinned (64 KiB), registered (4 B)"),
        "the quiet cases after allocation are named in one line"
    );
    assert!(html.contains(
        "After free and hold, none of the 44 cases moved an observer beyond its noise: "
    ));
    assert!(!html.contains("data-plot=\"accounting-free\""));
    // Each line folds out into the table of its cases' deltas, with each metric's noise.
    assert_eq!(html.matches("<details class=\"quiet\">").count(), 2);
    assert!(html.contains("<th>CUDA used MiB (noise 4)</th>"));
    // A case that moved is drawn whatever its size: the ollama-like run's loads are.
    let html = report::render_report(&[published("ollama-like")], &[], "o").expect("renders");
    assert!(
        drawn_texts(figure_of(&html, "accounting-alloc"))
            .iter()
            .any(|t| t.starts_with("load-pinned-33 ·"))
    );
}

#[test]
fn a_latency_scenario_says_nothing_of_bandwidth_bars() {
    let html = report::render_report(&[published("size-curve")], &[], "s").expect("renders");
    assert!(
        !html.contains("which way is fastest"),
        "no bandwidth heading"
    );
    assert!(html.contains("data-plot=\"latency-size-curve\""));
}

#[test]
fn plots_are_clean() {
    for scenario in [
        "h200-headline",
        "ollama-like",
        "size-curve",
        "latency",
        "pinned-churn",
    ] {
        let html = report::render_report(&[published(scenario)], &[], scenario).expect("renders");
        // No minor grid (plotters draws it as lines of opacity 0.1) and no signed zero.
        assert!(
            !html.contains("<line opacity=\"0.1\""),
            "{scenario}: minor grid"
        );
        for t in drawn_texts(&html) {
            assert!(
                t != "-0" && !t.starts_with("-0.0") || t.parse::<f64>().is_ok_and(|v| v != 0.0),
                "{scenario}: {t}"
            );
        }
        // Text is at least 12 px.
        for size in html
            .split("font-size=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next()?.parse::<f64>().ok())
        {
            assert!(size >= 12.0, "{scenario}: font-size {size}");
        }
    }
    // Two sizes draw no bandwidth-against-size line (h200-headline: 512 MiB and 4 GiB).
    let html = report::render_report(&[published("h200-headline")], &[], "h").expect("renders");
    assert!(!html.contains("data-plot=\"bandwidth-vs-size\""));
    // ollama-like's 16 KiB copy reaches 2 GB/s: the log GB/s axis labels ticks below 10.
    let html = report::render_report(&[published("ollama-like")], &[], "o").expect("renders");
    let curve = figure_of(&html, "latency-size-curve");
    let ticks = tick_values(curve, "end");
    assert!(ticks.iter().any(|v| *v > 0.0 && *v < 10.0), "{ticks:?}");
}

#[test]
fn long_labels_are_ellipsized_in_plots_and_whole_in_tables() {
    let mut set = published("ollama-like");
    let long = format!("{}-长标签", "a-very-long-case-name".repeat(14));
    for r in &mut set.rows {
        r.case_label = long.clone();
    }
    let html = report::render_report(std::slice::from_ref(&set), &[], "o").expect("renders");
    let fig = figure_of(&html, "bandwidth-bars");
    assert!(
        !drawn_texts(fig).iter().any(|t| t.contains(&long)),
        "drawn whole"
    );
    assert!(drawn_texts(fig).iter().any(|t| t.ends_with('…')));
    assert!(
        fig.contains(&format!(
            "<title>pinned, copy engine, H2D · 1.71 GiB · {long}</title>"
        )),
        "tooltip"
    );
    let svg_width: f64 = fig
        .split("<svg width=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|w| w.parse().ok())
        .expect("svg width");
    assert!(svg_width < 2000.0, "{svg_width}");
    let params = &html[html.find("<section id=\"summary\">").expect("table")..];
    assert!(params.contains(&format!("<td>{long}</td>")));
}
