//! Combinations of host memory, flags, engine, direction and mode that the language refuses or
//! accepts, sizes and chunks, and the ranges of the measurement keys.

use super::tests::*;
use super::*;

// ---- combinations -----------------------------------------------------------------------------

#[test]
fn kernel_on_pageable_memory_is_rejected() {
    assert_problems(&[(
        "[[case]]\nlabel = \"k\"\nhost = \"pageable\"\nengine = \"kernel\"\n",
        &[&format!("6:10: case `k`: {}", expand::KERNEL_NEEDS_MAPPED)],
    )]);
    assert_eq!(
        expand::KERNEL_NEEDS_MAPPED,
        "zero-copy kernel access needs mapped memory: add \"mapped\" to flags (host = \"alloc\" or \"register\") or use host = \"managed\""
    );
}

#[test]
fn kernel_on_unmapped_pinned_memory_is_rejected_and_mapped_or_managed_is_accepted() {
    assert_problems(&[(
        "[[case]]\nlabel = \"k\"\nengine = \"kernel\"\n",
        &[&format!("5:10: case `k`: {}", expand::KERNEL_NEEDS_MAPPED)],
    )]);
    ok("[[case]]\nlabel = \"a\"\nflags = [\"mapped\"]\nengine = \"kernel\"\n");
    ok("[[case]]\nlabel = \"r\"\nhost = \"register\"\nflags = [\"mapped\"]\nengine = \"kernel\"\n");
    ok("[[case]]\nlabel = \"m\"\nhost = \"managed\"\nengine = \"kernel\"\n");
}

#[test]
fn write_combined_needs_alloc() {
    assert_problems(&[(
        "[[case]]\nlabel = \"w\"\nhost = \"register\"\nflags = [\"write-combined\"]\n",
        &[
            "6:9: case `w`: write-combined memory exists only for host = \"alloc\" (cuMemHostAlloc): remove it from flags or use host = \"alloc\"",
        ],
    )]);
    ok("[[case]]\nlabel = \"w\"\nflags = [\"write-combined\", \"portable\"]\n");
}

#[test]
fn pageable_and_managed_take_no_flags() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"p\"\nhost = \"pageable\"\nflags = [\"mapped\"]\n",
            &[
                "6:9: case `p`: host = \"pageable\" takes no flags (flags are for host = \"alloc\" or \"register\"): remove mapped",
            ],
        ),
        (
            "[[case]]\nlabel = \"m\"\nhost = \"managed\"\nflags = [\"portable\", \"write-combined\"]\n",
            &[
                "6:9: case `m`: host = \"managed\" takes no flags (flags are for host = \"alloc\" or \"register\"): remove portable+write-combined",
            ],
        ),
    ]);
}

#[test]
fn latency_modes_take_4_byte_copies_of_host_memory_only() {
    for mode in ["latency", "latency-sync", "enqueue"] {
        let text = format!(
            "{HEAD}[[case]]\nlabel = \"a\"\nmode = \"{mode}\"\nsize = 4\nhost = \"pageable\"\n"
        );
        let s = parse("t.toml", &text).expect("a 4-byte latency case is valid");
        assert_eq!((s.cases[0].size, s.cases[0].mode.name()), (4, mode));
        assert_eq!(
            s.cases[0].route(),
            Route::Latency {
                call: match mode {
                    "latency" => LatencyCall::AsyncAndSync,
                    "latency-sync" => LatencyCall::Sync,
                    _ => LatencyCall::Enqueue,
                },
                wait: Wait::Stream,
            }
        );
        assert_eq!(s.cases[0].measure.samples, 1000);
    }
    assert_problems(&[
        (
            "[[case]]\nlabel = \"k\"\nmode = \"latency\"\nengine = \"kernel\"\nhost = \"alloc\"\nflags = [\"mapped\"]\n",
            &[
                "5:8: case `k`: mode = \"latency\" times copies (or, except \"latency-sync\", launches of engine = \"empty\"): it needs engine = \"copy\", not \"kernel\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"m\"\nmode = \"enqueue\"\nhost = \"managed\"\n",
            &[
                "5:8: case `m`: mode = \"enqueue\" times copies from pageable, allocated or registered memory: use host = \"pageable\", \"alloc\" or \"register\", not \"managed\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"b\"\nmode = \"latency-sync\"\ndirection = \"bidirectional\"\n",
            &[
                "6:13: case `b`: direction = \"bidirectional\" needs engine = \"copy\" and mode = \"direct\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"s\"\nmode = \"latency\"\nmeasure = { samples = 5 }\n",
            &["6:23: `measure.samples` must be a whole number from 10 to 1000000, not 5"],
        ),
    ]);
}

#[test]
fn waits_empty_kernels_and_chases_follow_their_rules() {
    let s = parse(
        "t.toml",
        &format!("{HEAD}[[case]]\nlabel = \"e\"\nengine = \"empty\"\nmode = \"latency\"\nwait = \"blocking\"\n[[case]]\nlabel = \"c\"\nengine = \"chase-random\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nsize = \"2MiB\"\n"),
    )
    .expect("valid");
    assert_eq!(s.cases[0].wait, Wait::Blocking);
    assert!(
        s.cases[0].key().ends_with(",wait=blocking"),
        "{}",
        s.cases[0].key()
    );
    assert_eq!(
        (s.cases[0].device_bytes(), s.cases[0].pinned_bytes()),
        (0, 0)
    );
    assert!(
        !s.cases[1].key().contains("wait="),
        "the default wait keeps old keys"
    );
    assert_eq!(s.cases[1].device_bytes(), 0);
    assert_problems(&[
        (
            "[[case]]\nlabel = \"w\"\nwait = \"spin\"\n",
            &[
                "5:8: case `w`: wait = \"spin\" says how a latency sample's end is awaited: it needs mode = \"latency\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"e\"\nengine = \"empty\"\nsize = \"4KiB\"\ndirection = \"d2h\"\n",
            &[
                "5:10: case `e`: engine = \"empty\" moves nothing (no host buffer, no direction, no size): remove `direction`, `size`",
            ],
        ),
        (
            "[[case]]\nlabel = \"e\"\nengine = \"empty\"\nmode = \"latency-sync\"\n",
            &[
                "6:8: case `e`: mode = \"latency-sync\" times copies (or, except \"latency-sync\", launches of engine = \"empty\"): it needs engine = \"copy\", not \"empty\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"c\"\nengine = \"chase\"\nhost = \"alloc\"\n",
            &[&format!("5:10: case `c`: {}", expand::KERNEL_NEEDS_MAPPED)],
        ),
        (
            "[[case]]\nlabel = \"c\"\nengine = \"chase\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nsize = \"1KiB\"\n",
            &[
                "8:8: case `c`: engine = \"chase\" chains one pointer per 128 bytes: `size` must be at least 4KiB, not 1KiB",
            ],
        ),
    ]);
}

#[test]
fn chunk_larger_than_size_is_rejected() {
    assert_problems(&[(
        "[[case]]\nlabel = \"c\"\nhost = \"register\"\nmode = \"register-per-copy\"\nsize = \"8MiB\"\nchunk = \"16MiB\"\n",
        &["8:9: case `c`: `chunk` (16MiB) is larger than `size` (8MiB)"],
    )]);
}

#[test]
fn sizes_must_be_positive_multiples_of_16() {
    assert_problems(&[
        (
            "[defaults]\nsize = 0\n[[case]]\nlabel = \"a\"\n",
            &["4:8: `size` must be a positive multiple of 4 bytes, not 0"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsize = \"1002B\"\n",
            &["5:8: `size` must be a positive multiple of 4 bytes, not \"1002B\" (1002 bytes)"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsize = \"100\"\n",
            &[
                "5:8: case `a`: `size` must be a multiple of 16 bytes, not 100, unless mode is \"latency\", \"latency-sync\" or \"enqueue\" (those take any multiple of 4)",
            ],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsize = -32\n",
            &["5:8: `size` must be a positive multiple of 4 bytes, not -32"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1000\"\n",
            &["7:9: `chunk` must be a positive multiple of 16 bytes, not \"1000\""],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsize = \"12 parsecs\"\n",
            &[
                "5:8: `size` is not a valid size: `12 parsecs` has an unknown unit `parsecs`: use B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)",
            ],
        ),
    ]);
}

#[test]
fn staged_needs_pageable_copy_and_chunk() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"s\"\nmode = \"staged\"\nchunk = \"16MiB\"\n",
            &[
                "5:8: case `s`: mode = \"staged\" copies pageable memory through a pinned ring: it needs host = \"pageable\", not \"alloc\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"s\"\nhost = \"managed\"\nengine = \"kernel\"\nmode = \"staged\"\nchunk = \"16MiB\"\n",
            &[
                "7:8: case `s`: mode = \"staged\" copies pageable memory through a pinned ring: it needs host = \"pageable\", not \"managed\"",
                "7:8: case `s`: mode = \"staged\" needs engine = \"copy\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"s\"\nhost = \"pageable\"\nmode = \"staged\"\n",
            &[
                "6:8: case `s`: mode = \"staged\" needs `chunk`, the size of each staging buffer, like chunk = \"16MiB\"",
            ],
        ),
    ]);
    ok("[[case]]\nlabel = \"s\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"16MiB\"\n");
}

#[test]
fn register_per_copy_needs_register_and_copy() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"r\"\nmode = \"register-per-copy\"\n",
            &[
                "5:8: case `r`: mode = \"register-per-copy\" registers pageable memory around each copy: it needs host = \"register\", not \"alloc\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"r\"\nhost = \"register\"\nflags = [\"mapped\"]\nengine = \"kernel\"\nmode = \"register-per-copy\"\n",
            &["8:8: case `r`: mode = \"register-per-copy\" needs engine = \"copy\""],
        ),
    ]);
    // Without `chunk` the whole buffer is registered.
    let s = ok("[[case]]\nlabel = \"r\"\nhost = \"register\"\nmode = \"register-per-copy\"\n");
    assert_eq!(s.cases[0].chunk, None);
}

#[test]
fn chunk_with_direct_mode_is_rejected() {
    assert_problems(&[(
        "[[case]]\nlabel = \"d\"\nchunk = \"16MiB\"\n",
        &[
            "5:9: case `d`: `chunk` applies only to mode = \"staged\" or \"register-per-copy\" or \"load-pread\" or \"load-direct\": remove it or set mode",
        ],
    )]);
}

#[test]
fn bidirectional_needs_copy_engine_and_direct_mode() {
    let msg = "direction = \"bidirectional\" needs engine = \"copy\" and mode = \"direct\"";
    assert_problems(&[
        (
            "[[case]]\nlabel = \"b\"\nflags = [\"mapped\"]\nengine = \"kernel\"\ndirection = \"bidirectional\"\n",
            &[&format!("7:13: case `b`: {msg}")],
        ),
        (
            "[[case]]\nlabel = \"b\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"16MiB\"\ndirection = \"bidirectional\"\n",
            &[&format!("8:13: case `b`: {msg}")],
        ),
    ]);
}

#[test]
fn ranges_are_enforced() {
    let cases = [
        (
            "ring = 0",
            "`ring` must be a whole number, 1 or more, not 0",
        ),
        (
            "streams = 17",
            "`streams` must be a whole number from 1 to 16, not 17",
        ),
        (
            "streams = 0",
            "`streams` must be a whole number from 1 to 16, not 0",
        ),
        (
            "threads = 257",
            "`threads` must be a whole number from 1 to 256, not 257",
        ),
        (
            "measure = { min_samples = 0 }",
            "`measure.min_samples` must be a whole number from 1 to 100000, not 0",
        ),
        (
            "measure = { max_samples = 100001 }",
            "`measure.max_samples` must be a whole number from 1 to 100000, not 100001",
        ),
        (
            "measure = { warmup = -1 }",
            "`measure.warmup` must be a whole number, 0 or more, not -1",
        ),
        (
            "measure = { target_spread = 1.0 }",
            "`measure.target_spread` must be a number between 0 and 1 (exclusive), like 0.01, not 1",
        ),
        (
            "measure = { target_spread = 0 }",
            "`measure.target_spread` must be a number between 0 and 1 (exclusive), like 0.01, not 0",
        ),
    ];
    for (line, msg) in cases {
        let got = problems(&format!("[[case]]\nlabel = \"x\"\n{line}\n"));
        assert_eq!(got.len(), 1, "{line}: {got:?}");
        assert_eq!(got[0].0, 5, "{line}");
        assert_eq!(got[0].2, msg, "{line}");
    }
}

#[test]
fn min_samples_above_max_samples_is_rejected() {
    assert_problems(&[(
        "[[case]]\nlabel = \"x\"\nmeasure.min_samples = 10\nmeasure.max_samples = 5\n",
        &["5:23: case `x`: `measure.min_samples` (10) is larger than `measure.max_samples` (5)"],
    )]);
}

#[test]
fn hold_interval_must_be_at_least_a_millisecond_when_holding() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"x\"\nprobes = { hold_interval = \"0s\" }\n",
            &[
                "5:28: case `x`: `probes.hold_interval` is 0ns: give at least 1ms when `probes.hold_after_free` is above zero (the observers are read at most once a millisecond)",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nprobes = { hold_after_free = \"1h\", hold_interval = \"1us\" }\n",
            &[
                "5:52: case `x`: `probes.hold_interval` is 1µs: give at least 1ms when `probes.hold_after_free` is above zero (the observers are read at most once a millisecond)",
            ],
        ),
    ]);
    ok("[[case]]\nlabel = \"x\"\nprobes = { hold_after_free = \"1h\", hold_interval = \"1ms\" }\n");
    ok("[[case]]\nlabel = \"x\"\nprobes = { hold_interval = \"0s\", hold_after_free = \"0s\" }\n");
}
