//! Writing and reading back 100 000 result rows (CSV + samples CSV) in a temporary directory.
//! The rows are the synthetic development fixture, not measurements.

#[path = "../tests/fixtures/results/devfixture.rs"]
mod devfixture;

use criterion::{Criterion, criterion_group, criterion_main};
use pinscope::results::{ResultSet, ResultsWriter};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let (set, samples) = devfixture::big_set_with_samples(100_000, 5);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.csv");
    let mut g = c.benchmark_group("csv 100k rows");
    g.sample_size(10);
    g.bench_function("write+read", |b| {
        b.iter(|| {
            let mut w = ResultsWriter::create(&path).expect("create");
            for chunk in set.rows.chunks(1000) {
                w.write_case(chunk, &[]).expect("write");
            }
            w.write_case(&[], &samples).expect("write samples");
            drop(w);
            black_box(ResultSet::load(&path).expect("load").rows.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
