//! Scenario parsing stays linear in the file (issue 11): a 100 001-case file (≈3.9 MB, just under
//! the 4 MiB limit) must be refused for its case count, and a 50 000-value sweep expanded, each in
//! well under a second on a 2-core machine (release build; `plan`/`run` took 53 s and 6.3 s before).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn many_cases(n: usize) -> String {
    let mut s = String::from("name = \"many\"\ndescription = \"many cases\"\n\n");
    for i in 0..n {
        s.push_str(&format!("[[case]]\nlabel = \"c{i}\"\nhost = \"alloc\"\n"));
    }
    s
}

fn bench(c: &mut Criterion) {
    let many = many_cases(100_001);
    let values: Vec<String> = (1..=50_000).map(|i| format!("\"{i}KiB\"")).collect();
    let sweep = format!(
        "name = \"s\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\nsweep = {{ size = [{}] }}\n",
        values.join(", ")
    );
    let mut g = c.benchmark_group("scenario parsing");
    g.sample_size(10);
    g.bench_function(
        "100 001 [[case]] blocks (refused: over the case limit)",
        |b| b.iter(|| pinscope::scenario::parse("many.toml", black_box(&many)).is_err()),
    );
    g.bench_function("one 50 000-value size sweep", |b| {
        b.iter(|| pinscope::scenario::parse("sweep.toml", black_box(&sweep)).map(|s| s.cases.len()))
    });
    let parsed = pinscope::scenario::parse("sweep.toml", &sweep).expect("the sweep parses");
    g.bench_function("plan table of the 50 000-case sweep", |b| {
        b.iter(|| pinscope::scenario::plan_table(black_box(&parsed), None, 0.5).len())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
