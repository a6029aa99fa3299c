//! Rendering the HTML report over 100 000 rows (5 samples each) of synthetic data — target: under
//! 2 s on a 2-core machine. Aggregation happens before plotting, so no plot draws 100k points.
//! Measured 2026-11-30 on the 2-core dev box (`cargo bench --bench report -- --quick`):
//! 0.85–1.21 s, median 0.92 s; with the answer-first renderer (issue 14) 0.55 s. Same box: bootstrap 2×30 at 10k resamples 6.0 ms; CSV write+read
//! of 100k rows + 500k samples 2.7 s.

#[path = "../tests/fixtures/results/devfixture.rs"]
mod devfixture;

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let sets = vec![devfixture::big_set(100_000, 5)];
    let mut g = c.benchmark_group("report 100k rows");
    g.sample_size(10);
    g.bench_function("render_report", |b| {
        b.iter(|| {
            black_box(
                pinscope::report::render_report(black_box(&sets), &[], "bench")
                    .expect("renders")
                    .len(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
