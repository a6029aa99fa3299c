//! The terminal summary's plain-words answer, on a recorded H200 run.

use pinscope::report::answer_lines;
use pinscope::results::read_rows;
use std::path::Path;

#[test]
fn answer_names_the_fastest_and_the_frugal_choice_on_recorded_h200_data() {
    let rows = read_rows(Path::new("tests/fixtures/runs/h200-headline.csv")).unwrap();
    let lines = answer_lines(&rows);
    for l in &lines {
        println!("{l}");
    }
    assert!(
        lines[0].starts_with("host->GPU: fastest is pinned copy-engine at 55.3 GB/s"),
        "{}",
        lines[0]
    );
    // In this run the 512 MiB buffers were as fast as the 4 GiB ones for D2H.
    assert!(
        lines.contains(&"GPU->host: pinned copy-engine reaches 100% of that (55.2 GB/s) with only 512 MiB page-locked.".to_string()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("GPU->host: plain pageable copies")),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 5, "no failed or skipped rows in this run");
}
