//! The terminal summary's plain-words answer (the report page's, as `topic: text`), on a
//! recorded H200 run.

use pinscope::report::console_lines;
use pinscope::results::{Samples, read_rows};
use std::path::Path;

#[test]
fn answer_names_the_fastest_and_the_frugal_choice_on_recorded_h200_data() {
    let rows = read_rows(Path::new("tests/fixtures/runs/h200-headline.csv")).unwrap();
    let lines = console_lines(&rows, &Samples::default());
    for l in &lines {
        println!("{l}");
    }
    // The console says what the report page says.
    assert!(
        lines[0].starts_with(
            "Host → GPU: fastest is pinned copy-engine (pinned, copy engine, H2D, 512 MiB) at 55.3 GB/s"
        ),
        "{}",
        lines[0]
    );
    // In this run the 512 MiB buffers were as fast as the 4 GiB ones for D2H.
    assert!(
        lines.contains(&"GPU → host: least page-locked memory within 5% of the fastest: pinned copy-engine (pinned, copy engine, D2H, 512 MiB) at 55.2 GB/s (100%), holding only 512 MiB.".to_string()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("GPU → host: plain pageable copies")),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 7, "no failed or skipped rows in this run");
}

/// A fastest way that holds no page-locked memory (the mapping copied per tensor, warm, on a
/// published H100 model-load run) gets no sentence about ways that hold less.
#[test]
fn a_fastest_way_that_holds_nothing_is_not_compared_with_ways_that_hold_less() {
    let rows = read_rows(&crate::common::published_run("h100", "model-load")).unwrap();
    let lines = console_lines(&rows, &Samples::default());
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Host → GPU: fastest is mmap")
                && l.ends_with("holding 0 B page-locked.")),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("holds less page-locked memory")),
        "{lines:?}"
    );
}
