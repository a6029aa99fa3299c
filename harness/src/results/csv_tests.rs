//! Tests of the results and samples CSV files: columns, writing, reading, result sets.

use super::csv_write::{row_fields, sample_fields};
use super::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every file under `reports/` that `keep` accepts, sorted.
fn reports_files(keep: fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("reports/").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every results CSV under `reports/` (the published runs and their comparisons).
fn published() -> Vec<PathBuf> {
    reports_files(|p| {
        p.extension().is_some_and(|x| x == "csv")
            && !p.to_string_lossy().ends_with(".samples.csv")
            && crate::results::observed_stem(p).is_none()
    })
}

/// The rows written back under the file's own header (older files lack later columns).
fn rewritten(header: &csv::StringRecord, rows: &[Row]) -> Vec<u8> {
    let all = columns();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).unwrap();
    for r in rows {
        let fields = row_fields(r);
        let cells: Vec<&str> = header
            .iter()
            .map(|name| {
                let i = all.iter().position(|c| c == name).expect("known column");
                fields[i].as_str()
            })
            .collect();
        w.write_record(cells).unwrap();
    }
    w.into_inner().unwrap()
}

/// Fails naming `path` and its first differing line unless `again` is `bytes`.
fn assert_written_back(path: &Path, again: &[u8], bytes: &[u8]) {
    assert!(
        again == bytes,
        "{} differs when written back:\n{}",
        path.display(),
        String::from_utf8_lossy(again)
            .lines()
            .zip(String::from_utf8_lossy(bytes).lines())
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("written {a}\n   file {b}"))
            .unwrap_or_default()
    );
}

/// Every samples file under `reports/`.
fn published_samples() -> Vec<PathBuf> {
    reports_files(|p| p.to_string_lossy().ends_with(".samples.csv"))
}

/// Every published samples file, read into typed rows (lane, series with its observer,
/// index with its snapshot) and written back by the writer's own field function, gives the
/// same bytes; the views' streamed read loads it too.
#[test]
fn published_samples_are_read_and_written_back_byte_for_byte() {
    let files = published_samples();
    let mut checked = 0;
    let mut typed_before = 0;
    for sp in files {
        let samples = read_samples(&sp).unwrap_or_else(|e| panic!("{e}"));
        typed_before += samples
            .iter()
            .filter(|s| {
                matches!(s.series, Series::Phase(_))
                    && s.index == SampleIndex::Phase(crate::probe::Moment::Before)
            })
            .count();
        Samples::read(&sp).unwrap_or_else(|e| panic!("{e}"));
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(SAMPLE_COLUMNS).unwrap();
        for s in &samples {
            w.write_record(sample_fields(s)).unwrap();
        }
        assert_written_back(&sp, &w.into_inner().unwrap(), &std::fs::read(&sp).unwrap());
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} samples files");
    assert!(typed_before > 1000, "{typed_before} readings before a case");
}

/// A series or snapshot that names nothing pinscope writes is refused with the file, the
/// line and the name, never kept as text.
#[test]
fn unknown_series_and_snapshots_are_refused_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.samples.csv");
    let head =
        "schema_version,case_key,lane,series,index,t_ms,value\n1,k,,phase:cuda.used,before,0,1\n";
    for (line, needle) in [
        ("1,k,,phase:gpu.used,before,0,1", "observer `gpu`"),
        ("1,k,,phase:cuda.used,touched,0,1", "index `touched`"),
        ("1,k,,bandwidth,0,,1", "series `bandwidth`"),
    ] {
        std::fs::write(&p, format!("{head}{line}\n")).unwrap();
        let e = read_samples(&p).expect_err(line).to_string();
        assert!(e.contains("x.samples.csv") && e.contains("line 3"), "{e}");
        assert!(e.contains(needle), "{e}");
        let e = Samples::read(&p).expect_err(line).to_string();
        assert!(e.contains("x.samples.csv") && e.contains("line 3"), "{e}");
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn published_results_are_read_and_written_back_byte_for_byte() {
    let files = published();
    assert!(files.len() >= 20, "{files:?}");
    for p in files {
        let bytes = std::fs::read(&p).unwrap();
        let rows = read_rows_from(&p, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let mut rdr = csv::Reader::from_reader(bytes.as_slice());
        let header = rdr.headers().unwrap().clone();
        assert_written_back(&p, &rewritten(&header, &rows), &bytes);
    }
}

/// The run, the machine and the scenario are held once for all the rows that repeat them.
#[test]
fn rows_share_the_texts_they_repeat() {
    let p = published()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("h200-headline"))
        .expect("a published h200-headline run");
    let rows = read_rows(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(rows.len() > 2);
    for r in &rows[1..] {
        assert!(Arc::ptr_eq(&r.run_id, &rows[0].run_id));
        assert!(Arc::ptr_eq(&r.started_at, &rows[0].started_at));
        assert!(Arc::ptr_eq(&r.scenario, &rows[0].scenario));
        assert!(Arc::ptr_eq(&r.machine, &rows[0].machine));
    }
    // A row that differs gets its own value; the next row shares it again.
    let mut text = std::fs::read_to_string(&p).unwrap();
    let second = text.match_indices('\n').nth(1).unwrap().0 + 1;
    let host = &rows[1].machine.host_name;
    let at = second + text[second..].find(host.as_str()).unwrap();
    text.replace_range(at..at + host.len(), "other-host");
    let rows = read_rows_from(&p, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows[1].machine.host_name, "other-host");
    assert_eq!(rows[2].machine.host_name, *host);
    assert!(!Arc::ptr_eq(&rows[1].machine, &rows[0].machine));
    assert!(!Arc::ptr_eq(&rows[2].machine, &rows[0].machine));
    assert!(Arc::ptr_eq(&rows[3].machine, &rows[2].machine));
}
