//! The "Results files" section of `docs/results-schema.md`, the "Columns" sections of
//! `docs/latency.md` (the latency columns) and `docs/accounting.md` (the host phase and probe
//! columns) and the latter's table of metrics together list every column the writer writes (and
//! the family `d_<phase>_<metric>_mib` with every phase and metric), so the docs cannot fall
//! behind the CSV.

use pinscope::accounting::{Metric, Phase, parse_column};
use pinscope::results::{ResultsWriter, base_columns, columns};

fn results_section() -> String {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/results-schema.md"
    ))
    .expect("docs/results-schema.md is readable");
    let start = readme
        .find("## Results files")
        .expect("a Results files section");
    let end = start
        + readme[start..]
            .find("Beside it")
            .expect("the section's end");
    readme[start..end].to_string()
        + &section("/../docs/latency.md", "## Columns")
        + &section("/../docs/accounting.md", "## Columns")
        + &section("/../docs/accounting.md", "## What each observer can see")
}

/// The section headed `heading` of a document under the repository root (`rel` from the crate).
fn section(rel: &str, heading: &str) -> String {
    let path = format!("{}{rel}", env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("{path} has no {heading} section"));
    let end = doc[start + 3..]
        .find("\n## ")
        .map_or(doc.len(), |e| start + 3 + e);
    doc[start..end].to_string()
}

/// Every word of every `code span` in the section, split at commas and spaces.
fn listed(section: &str) -> Vec<String> {
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split([',', ' ']).map(str::trim).map(String::from))
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn readme_lists_every_results_column() {
    let words = listed(&results_section());
    let family = |c: &str| parse_column(c).is_some();
    let missing: Vec<String> = columns()
        .into_iter()
        .filter(|c| !family(c) && !words.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/results-schema.md lacks the columns {missing:?}"
    );
    for m in Metric::ALL.map(Metric::name) {
        assert!(
            words.iter().any(|w| w == m),
            "docs/results-schema.md lacks the metric {m}"
        );
    }
    for p in Phase::ALL.map(Phase::name) {
        assert!(
            words.iter().any(|w| w.starts_with(&format!("d_{p}_"))),
            "docs/results-schema.md lacks the d_{p}_<m>_mib family"
        );
    }
    // Nothing listed as a column that the writer does not write.
    let all = columns();
    for w in &words {
        let looks_like_column = w.ends_with("_mib")
            || w.ends_with("_gbs")
            || w.ends_with("_ms")
            || w.ends_with("_pct")
            || w.ends_with("_bytes");
        if looks_like_column && !w.contains('<') {
            assert!(
                all.contains(w),
                "docs/results-schema.md lists `{w}`, which is not a column"
            );
        }
    }
    assert_eq!(base_columns(), written_head());
}

/// The columns a results file written by `ResultsWriter` opens with, up to the first column of
/// the accounting family: the fixed columns as the writer really writes them.
fn written_head() -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("run.csv");
    drop(ResultsWriter::create(&path).expect("a new results file"));
    let text = std::fs::read_to_string(&path).expect("the file just written");
    let header: Vec<&str> = text
        .lines()
        .next()
        .expect("a header line")
        .split(',')
        .collect();
    let family = header
        .iter()
        .position(|c| parse_column(c).is_some())
        .unwrap_or_else(|| panic!("no accounting column in {header:?}"));
    header[..family].iter().map(|c| c.to_string()).collect()
}
