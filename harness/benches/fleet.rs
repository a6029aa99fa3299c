//! What users wait for at fleet scale, on SYNTHETIC inputs replicated from the published
//! h200-headline runs: every row and every sample is a real one, only the case keys are made
//! unique (replica r appends " r0000123" to the case label, as scripts/fleet-inputs.py does).
//!
//! - `report`: loading 10 000 rows with their real samples file (every series the run
//!   recorded, about 180 lines per row: 1.8 M lines, 370 MB) and rendering the page.
//! - `compare`: 2 × 100 000 matched cases with the real runs' bandwidth samples (about 18 per
//!   row), the bootstrap of every case included.
//! - `plan`: a 100 000-case staged sweep (2 directions × 50 chunks × 1 000 ring depths,
//!   threads = "auto"), its summary and its table, with the machine's RAM given as the CLI gives
//!   it.
//!
//! scripts/fleet-timings.sh times the same commands on the release binary at full size
//! (docs/fleet.md has its table).

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use pinscope::results::{ResultSet, ResultsWriter, Row, SampleRow, Samples};
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Replica `r` of `row` as case `index`: the label and the key's label part get " r0000123".
fn replica(row: &Row, r: usize, index: usize) -> Row {
    let suffix = format!(" r{r:07}");
    let prefix = format!("{}/{}/", row.scenario, row.case_label);
    let rest = row
        .case_key
        .strip_prefix(&prefix)
        .expect("key = scenario/label/…");
    let mut out = row.clone();
    out.case_key = format!("{}/{}{suffix}/{rest}", row.scenario, row.case_label);
    out.case_label.push_str(&suffix);
    out.case_index = index;
    out
}

/// `n` rows replicated from the run at `src`, each with its samples (every series).
fn write_replicated(src: &Path, n: usize, out: &Path) {
    let rows = pinscope::results::read_rows(src).expect("published rows");
    let samples =
        pinscope::results::read_samples(&pinscope::results::samples_path(src)).expect("samples");
    let mut w = ResultsWriter::create(out).expect("create");
    for i in 0..n {
        let (r, k) = (i / rows.len(), i % rows.len());
        let row = replica(&rows[k], r, i);
        let mine: Vec<SampleRow> = samples
            .iter()
            .filter(|s| s.case_key == rows[k].case_key)
            .map(|s| SampleRow {
                case_key: row.case_key.clone(),
                ..s.clone()
            })
            .collect();
        w.write_case(std::slice::from_ref(&row), &mine)
            .expect("write");
    }
}

/// `n` rows replicated from the run at `src` in memory, with its bandwidth samples.
fn replicated_set(src: &Path, n: usize) -> ResultSet {
    let base = ResultSet::load(src).expect("published run");
    let mut set = ResultSet {
        path: PathBuf::from(format!("synthetic-{n}.csv")),
        rows: Vec::with_capacity(n),
        samples: Samples::default(),
        sidecar: None,
    };
    for i in 0..n {
        let (r, k) = (i / base.rows.len(), i % base.rows.len());
        let row = replica(&base.rows[k], r, i);
        for &v in base.bandwidth_samples(&base.rows[k].case_key, row.lane) {
            set.samples.push_bandwidth(&row.case_key, row.lane, v);
        }
        set.rows.push(row);
    }
    set
}

fn report(c: &mut Criterion) {
    let dir = tempfile::Builder::new()
        .prefix("synthetic-fleet")
        .tempdir()
        .expect("tempdir");
    let path = dir.path().join("synthetic-10k.csv");
    write_replicated(
        &common::published_run("h200", "h200-headline"),
        10_000,
        &path,
    );
    let mut g = c.benchmark_group("report 10k rows, real samples (1.8 M lines)");
    g.sample_size(10);
    g.bench_function("load + render", |b| {
        b.iter(|| {
            let set = ResultSet::load(black_box(&path)).expect("loads");
            let page = pinscope::report::render_report(std::slice::from_ref(&set), &[], "bench");
            black_box(page.expect("renders").len())
        })
    });
    g.finish();
}

fn compare(c: &mut Criterion) {
    let sets = vec![
        replicated_set(&common::published_run("h200", "h200-headline"), 100_000),
        replicated_set(&common::published_run("h200-x2", "h200-headline"), 100_000),
    ];
    let mut g = c.benchmark_group("compare 2 x 100k matched cases");
    g.sample_size(10);
    g.bench_function("build (bootstrap of every case)", |b| {
        b.iter(|| black_box(pinscope::compare::build(black_box(&sets), 0.02)))
    });
    g.finish();
}

fn plan(c: &mut Criterion) {
    let chunks: Vec<String> = (1..=50).map(|c| format!("\"{c}MiB\"")).collect();
    let rings: Vec<String> = (1..=1000).map(|r| r.to_string()).collect();
    let text = format!(
        "name = \"sweep100k\"\ndescription = \"staged ring sweep\"\n[defaults]\nhost = \"pageable\"\nmode = \"staged\"\nsize = \"1GiB\"\nthreads = \"auto\"\n[[case]]\nlabel = \"ring\"\nsweep = {{ direction = [\"h2d\", \"d2h\"], chunk = [{}], ring = [{}] }}\n",
        chunks.join(", "),
        rings.join(", ")
    );
    let ram = Some(128u64 << 30);
    let mut g = c.benchmark_group("plan of a 100k-case staged sweep");
    g.sample_size(10);
    g.bench_function("parse + summary (plan -q)", |b| {
        b.iter(|| {
            let s = pinscope::scenario::parse("sweep.toml", black_box(&text)).expect("parses");
            black_box(pinscope::scenario::plan_summary(&s, ram, 0.5, None))
        })
    });
    let parsed = pinscope::scenario::parse("sweep.toml", &text).expect("parses");
    g.bench_function("table (plan)", |b| {
        b.iter(|| black_box(pinscope::scenario::plan_table(black_box(&parsed), ram, 0.5).len()))
    });
    g.finish();
}

criterion_group!(benches, report, compare, plan);
criterion_main!(benches);
