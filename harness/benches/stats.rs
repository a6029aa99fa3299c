//! Bootstrap CI of the ratio of medians for 2 × 30 samples (10 000 resamples).

use criterion::{Criterion, criterion_group, criterion_main};
use pinscope::stats::{DEFAULT_RESAMPLES, Sample, bootstrap_ratio_ci};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let a = Sample::new((0..30).map(|i| 20.0 + (i % 7) as f64 * 0.1).collect()).expect("finite");
    let b = Sample::new((0..30).map(|i| 21.0 + (i % 5) as f64 * 0.1).collect()).expect("finite");
    c.bench_function("bootstrap_ratio_ci 2x30, 10k resamples", |bn| {
        bn.iter(|| bootstrap_ratio_ci(black_box(&a), black_box(&b), DEFAULT_RESAMPLES, 0.95))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
