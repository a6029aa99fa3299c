//! The staging memcpy's per-chunk hand-off cost: one copy split over every CPU, by the copy crew
//! (persistent spinning threads, the default), a rayon pool (workers park between jobs) and one
//! thread. The 256 KiB job is mostly hand-off (waking threads, claiming, joining); the 16 MiB job
//! is the staged ring's chunk. Run `cargo bench --bench crew` on the machine whose CPUs count.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pinscope::cuda::CopyCrew;
use pinscope::cuda::crew::DEFAULT_SPIN;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let crew = CopyCrew::new(threads, DEFAULT_SPIN).expect("copy threads start");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool");
    let mut g = c.benchmark_group(format!("staging memcpy, {threads} threads"));
    for size in [256usize << 10, 16 << 20] {
        let src = vec![7u8; size];
        let mut dst = vec![0u8; size];
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_with_input(BenchmarkId::new("crew", size), &size, |b, _| {
            b.iter(|| crew.copy(black_box(&mut dst), black_box(&src)))
        });
        g.bench_with_input(BenchmarkId::new("rayon", size), &size, |b, _| {
            b.iter(|| {
                let part = size.div_ceil(threads);
                pool.scope(|s| {
                    for (d, c) in dst.chunks_mut(part).zip(src.chunks(part)) {
                        s.spawn(move |_| d.copy_from_slice(c));
                    }
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("one thread", size), &size, |b, _| {
            b.iter(|| black_box(&mut dst).copy_from_slice(black_box(&src)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
