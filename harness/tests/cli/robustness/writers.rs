//! The results writers: flush per case, an atomic sidecar, partial runs that `compare` and `report`
//! accept and say are partial.

use super::*;

fn fixture_rows() -> Vec<Row> {
    results::read_rows(&fixture("runs/h200-headline.csv")).unwrap_or_else(|e| panic!("{e}"))
}

fn fixture_sidecar() -> Sidecar {
    Sidecar::read(&fixture("runs/h200-headline.json")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn write_case_flushes_before_the_writer_is_dropped() {
    let rows = fixture_rows();
    assert!(rows.len() >= 2, "fixture has {} rows", rows.len());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("run.csv");
    let mut w = ResultsWriter::create(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(results::read_rows(&path).map(|r| r.len()).ok(), Some(0));
    let sample = SampleRow {
        case_key: rows[0].case_key.clone(),
        lane: Some(Lane::H2d),
        series: results::Series::Bandwidth,
        index: results::SampleIndex::Number(0),
        t_ms: None,
        value: 55.25,
    };
    w.write_case(&rows[..1], std::slice::from_ref(&sample))
        .unwrap_or_else(|e| panic!("{e}"));
    // The writer is still alive: what a crash now would leave on disk.
    let seen = results::read_rows(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen, rows[..1].to_vec());
    let samples =
        results::read_samples(&results::samples_path(&path)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(samples, vec![sample]);
    w.write_case(&rows[1..2], &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = results::read_rows(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen, rows[..2].to_vec());
    drop(w);
}

/// Text with a newline, ESC or a bidi override, from a CSV anyone may have written, reads back
/// as visible escapes: one line, nothing a terminal acts on.
#[test]
fn escaped_text_reads_back_as_visible_escapes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("evil.csv");
    let mut w = ResultsWriter::create(&path).unwrap_or_else(|e| panic!("{e}"));
    let row = Row {
        case_label: "\u{1b}[31mRED\u{1b}]0;pwned\u{7}".into(),
        case_key: "two\nlines".into(),
        machine: std::sync::Arc::new(MachineKey {
            gpu: "\u{202e}lmth.exe".into(),
            ..MachineKey::default()
        }),
        ..Row::default()
    };
    w.write_case(std::slice::from_ref(&row), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    drop(w);
    let back = results::read_rows(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back[0].case_label, "\\u{1b}[31mRED\\u{1b}]0;pwned\\u{7}");
    assert_eq!(back[0].case_key, "two\\nlines");
    assert_eq!(back[0].machine.gpu, "\\u{202e}lmth.exe");
}

#[test]
fn sidecar_write_atomic_leaves_no_temporary_file_and_reads_back() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("run.json");
    let mut s = fixture_sidecar();
    s.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    s.partial = true;
    s.run_id = "second".into();
    s.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    let names = entry_names(dir.path());
    assert_eq!(
        names,
        vec!["run.json".to_string()],
        "left behind: {names:?}"
    );
    assert_eq!(Sidecar::read(&path).ok(), Some(s));
}

#[test]
fn a_reader_sees_the_old_sidecar_or_the_new_one_never_half() {
    // write_atomic writes a uniquely named temporary file and renames it over the target. A
    // writer that dies after writing its temporary file leaves the old sidecar whole and
    // readable; a file called `run.json.tmp` is not pinscope's and is never touched.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("run.json");
    let old = fixture_sidecar();
    old.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    let full = std::fs::read(&path).unwrap_or_default();
    let tmp = dir.path().join("run.json.tmp");
    std::fs::write(&tmp, &full[..full.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Sidecar::read(&path).ok(), Some(old.clone()));
    // The next write replaces the target in one step and leaves the foreign file alone.
    let mut new = old;
    new.run_id = "new".into();
    new.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        std::fs::read(&tmp).ok().as_deref(),
        Some(&full[..full.len() / 2]),
        "a file pinscope did not create was changed"
    );
    assert_eq!(
        Sidecar::read(&path).map(|s| s.run_id).ok().as_deref(),
        Some("new")
    );
    // And a half-written sidecar (what a non-atomic write could leave) is refused, not misread.
    let e = Sidecar::from_bytes(&path, &full[..full.len() / 2]).expect_err("half a file");
    assert!(e.to_string().contains("it is not valid JSON"), "{e}");
}

fn partial_set(dir: &Path) -> ResultSet {
    let csv = dir.join("partial.csv");
    std::fs::copy(fixture("runs/h200-headline.csv"), &csv).unwrap_or_else(|e| panic!("{e}"));
    let mut s = fixture_sidecar();
    s.partial = true;
    s.finished_at = None;
    s.write_atomic(&results::sidecar_path(&csv))
        .unwrap_or_else(|e| panic!("{e}"));
    ResultSet::load(&csv).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_partial_sidecar_marks_the_set_partial() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let set = partial_set(dir.path());
    assert!(set.is_partial());
    let whole =
        ResultSet::load(&fixture("runs/h200-headline.csv")).unwrap_or_else(|e| panic!("{e}"));
    assert!(!whole.is_partial());
}

#[test]
fn compare_accepts_a_partial_run_and_says_so() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let partial = partial_set(dir.path());
    let whole =
        ResultSet::load(&fixture("runs/h200-headline.csv")).unwrap_or_else(|e| panic!("{e}"));
    let cmp = pinscope::compare::build(&[whole, partial], 0.02);
    assert_eq!(
        cmp.runs.iter().map(|r| r.partial).collect::<Vec<_>>(),
        [false, true]
    );
    assert!(
        cmp.notes
            .iter()
            .any(|n| n.contains("partial.csv) is a partial run")),
        "{:?}",
        cmp.notes
    );
    assert!(!cmp.entries.is_empty());
}

#[test]
fn report_accepts_a_partial_run_and_shows_a_banner() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let partial = partial_set(dir.path());
    let page =
        pinscope::report::render_report(&[partial], &[], "t").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        page.contains("<div class=\"banner\">Partial run"),
        "no banner"
    );
    assert!(
        page.contains("partial.csv"),
        "the banner does not name the file"
    );
}
