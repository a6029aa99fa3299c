//! Rendering the HTML report over 100 000 rows (5 samples each) of synthetic data — target: under
//! 2 s on a 2-core machine. Aggregation happens before plotting, so no plot draws 100k points.

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
