//! Unit tests of the scenario language: one per rule, each asserting the exact message and where
//! it points (1-based line:column).
//!
//! Size: over 500 lines on purpose: one short test per language rule, kept together so the rules
//! can be read as a list.

use super::*;

/// Two lines every test file starts with, so cases begin on line 3.
pub(super) const HEAD: &str = "name = \"t\"\ndescription = \"q\"\n";

/// All problems of `HEAD + body` as (line, column, message); empty when it parses.
pub(super) fn problems(body: &str) -> Vec<(usize, usize, String)> {
    match parse("t.toml", &format!("{HEAD}{body}")) {
        Ok(_) => Vec::new(),
        Err(Error::Scenario(p)) => p
            .items
            .into_iter()
            .map(|p| (p.line, p.column, p.message))
            .collect(),
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}

pub(super) fn p(line: usize, column: usize, message: &str) -> (usize, usize, String) {
    (line, column, message.to_string())
}

/// A table test: each row is a body (after `HEAD`) and every problem it must give, in order, as
/// "line:column: message".
pub(super) fn assert_problems(rows: &[(&str, &[&str])]) {
    for (body, want) in rows {
        let got: Vec<String> = problems(body)
            .into_iter()
            .map(|(line, column, message)| format!("{line}:{column}: {message}"))
            .collect();
        assert_eq!(got, *want, "body: {body:?}");
    }
}

pub(super) fn ok(body: &str) -> Scenario {
    match parse("t.toml", &format!("{HEAD}{body}")) {
        Ok(s) => s,
        Err(e) => panic!("expected to parse, got: {e}"),
    }
}

/// What `f` reads from each case that `body` (after `HEAD`) expands to, in order.
pub(super) fn each_case<T>(body: &str, f: impl Fn(&Case) -> T) -> Vec<T> {
    ok(body).cases.iter().map(f).collect()
}

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
            "5:9: case `d`: `chunk` applies only to mode = \"staged\" or \"register-per-copy\": remove it or set mode",
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

// ---- types and names --------------------------------------------------------------------------

#[test]
fn wrong_types_say_what_was_expected() {
    let cases = [
        (
            "size = true",
            "`size` must be a size like \"64MiB\" or a whole number of bytes, not a boolean",
        ),
        (
            "streams = \"2\"",
            "`streams` must be a whole number from 1 to 16, not a string",
        ),
        (
            "host = 3",
            "`host` must be one of \"pageable\", \"alloc\", \"register\", \"managed\", not an integer",
        ),
        (
            "host = \"alocc\"",
            "`host` must be one of \"pageable\", \"alloc\", \"register\", \"managed\", not \"alocc\"; did you mean \"alloc\"?",
        ),
        (
            "direction = \"up\"",
            "`direction` must be one of \"h2d\", \"d2h\", \"bidirectional\", not \"up\"",
        ),
        (
            "flags = \"mapped\"",
            "`flags` must be an array like [\"mapped\", \"portable\"], not a string",
        ),
        (
            "flags = [\"maped\"]",
            "`flags` must contain only \"portable\", \"mapped\", \"write-combined\", not \"maped\"; did you mean \"mapped\"?",
        ),
        (
            "flags = [\"mapped\", \"mapped\"]",
            "`flags` lists \"mapped\" twice",
        ),
        (
            "measure = 3",
            "`measure` must be a table, like measure = { min_samples = 5 }, not an integer",
        ),
        (
            "measure = { verify = 1 }",
            "`measure.verify` must be true or false, not an integer",
        ),
        (
            "measure = { time_limit = 10 }",
            "`measure.time_limit` must be a duration like \"2s\" or \"100ms\", not an integer",
        ),
        (
            "probes = { hold_after_free = \"2 fortnights\" }",
            "`probes.hold_after_free` is not a valid duration: `2 fortnights` has an unknown time unit `fortnights`: use us, ms, s, m or h",
        ),
        ("label = 5", "`label` must be a string, not an integer"),
    ];
    for (line, msg) in cases {
        let body = if line.starts_with("label") {
            format!("[[case]]\n{line}\n")
        } else {
            format!("[[case]]\nlabel = \"x\"\n{line}\n")
        };
        let got = problems(&body);
        assert_eq!(got.len(), 1, "{line}: {got:?}");
        assert_eq!(got[0].2, msg, "{line}");
    }
}

#[test]
fn unknown_keys_are_located_with_a_suggestion() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"a\"\n[[case]]\nlabel = \"b\"\nchunks = \"16MiB\"\n",
            &["7:1: unknown key `chunks` in [[case]] #2; did you mean `chunk`?"],
        ),
        (
            "[[case]]\nlabel = \"a\"\ncolour = \"red\"\n",
            &["5:1: unknown key `colour` in [[case]] #1"],
        ),
        (
            "[defaults]\nthread = 4\n[[case]]\nlabel = \"a\"\n",
            &["4:1: unknown key `thread` in [defaults]; did you mean `threads`?"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nmeasure = { min_sample = 4 }\n",
            &[
                "5:13: unknown key `min_sample` in `measure` of [[case]] #1; did you mean `min_samples`?",
            ],
        ),
        (
            "descripton = \"x\"\n[[case]]\nlabel = \"a\"\n",
            &["3:1: unknown key `descripton` at the top level; did you mean `description`?"],
        ),
        (
            "[defaults]\nlabel = \"x\"\nsweep = { size = [\"1MiB\"] }\n[[case]]\nlabel = \"a\"\n",
            &[
                "4:1: `label` cannot be in [defaults]: each [[case]] needs its own",
                "5:1: `sweep` cannot be in [defaults]: put axes for every case in the top-level [sweep]",
            ],
        ),
    ]);
}

#[test]
fn labels_are_required_and_unique() {
    assert_problems(&[(
        "[[case]]\nlabel = \"a\"\n[[case]]\nlabel = \"a\"\n[[case]]\nhost = \"alloc\"\n",
        &[
            "6:9: label `a` is already used by [[case]] #1 (line 3): labels must be unique",
            "7:1: [[case]] #3 has no `label`: add label = \"...\", unique in this file",
        ],
    )]);
}

#[test]
fn name_description_and_cases_are_required() {
    let got = match parse("t.toml", "") {
        Err(Error::Scenario(p)) => p.items.into_iter().map(|p| p.message).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        got,
        vec![
            "missing `name`: add name = \"...\" (lowercase letters, digits, - and _)",
            "missing `description`: add description = \"...\", the question this scenario answers",
            "no [[case]] blocks: a scenario needs at least one",
        ]
    );
    let got = match parse(
        "t.toml",
        "name = \"My Test\"\ndescription = \" \"\ncase = 3\n",
    ) {
        Err(Error::Scenario(p)) => p
            .items
            .into_iter()
            .map(|p| (p.line, p.column, p.message))
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        got,
        vec![
            p(
                1,
                8,
                "`name` must use only a-z, 0-9, - and _, not \"My Test\""
            ),
            p(
                2,
                15,
                "`description` must not be empty: say which question the scenario answers"
            ),
            p(
                3,
                8,
                "`case` must be written as [[case]] blocks, not an integer"
            ),
        ]
    );
}

#[test]
fn toml_syntax_errors_are_located() {
    let got = problems("[[case]]\nlabel = \"a\"\nsize = = 3\n");
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0, got[0].1), (5, 8));
    assert!(got[0].2.starts_with("TOML syntax error: "), "{}", got[0].2);
    // A duplicate key is a syntax error too, located at the second one.
    let got = problems("[[case]]\nlabel = \"a\"\nlabel = \"b\"\n");
    assert_eq!((got[0].0, got[0].1), (5, 1));
    assert_eq!(got[0].2, "TOML syntax error: duplicate key");
}

// ---- sweeps -----------------------------------------------------------------------------------

#[test]
fn sweep_problems_are_located() {
    assert_problems(&[
        (
            "[sweep]\nsize = []\n[[case]]\nlabel = \"a\"\n",
            &["4:8: sweep axis `size` in [sweep] has no values: give at least one"],
        ),
        (
            "[sweep]\nsizes = [\"1MiB\"]\n[[case]]\nlabel = \"a\"\n",
            &["4:1: unknown sweep axis `sizes` in [sweep]; did you mean `size`?"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsweep = { size = \"1MiB\" }\n",
            &[
                "5:18: sweep axis `size` in the sweep of [[case]] #1 must be an array of values, like size = [\"64MiB\", \"1GiB\"], or a range like \"64MiB..1GiB x2\", not a string",
            ],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsweep = { label = [\"x\"] }\n",
            &["5:11: `label` cannot be swept: write one [[case]] per label"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsweep = { flags = [\"mapped\"] }\n",
            &[
                "5:20: each value of the sweep axis `flags` is an array of flags, like flags = [[], [\"mapped\"]], not a string",
            ],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsize = \"1MiB\"\nsweep = { size = [\"2MiB\"] }\n",
            &["6:11: `size` is both set and swept in [[case]] #1: remove one"],
        ),
        (
            "[[case]]\nlabel = \"a\"\nsweep = 3\n",
            &[
                "5:9: `sweep` in [[case]] #1 must be a table of axes, like sweep = { size = [\"64MiB\", \"1GiB\"] }, not an integer",
            ],
        ),
    ]);
}

#[test]
fn a_bad_combination_is_reported_once_with_the_axis_values_behind_it() {
    assert_problems(&[(
        "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n[[case]]\nlabel = \"c\"\nhost = \"register\"\nmode = \"register-per-copy\"\nchunk = \"16MiB\"\nsweep = { size = [\"8MiB\", \"64MiB\", \"4MiB\"] }\n",
        &[
            "10:19: case `c` with size=8MiB: `chunk` (16MiB) is larger than `size` (8MiB)",
            "10:36: case `c` with size=4MiB: `chunk` (16MiB) is larger than `size` (4MiB)",
        ],
    )]);
}

#[test]
fn sweeps_over_the_limit_are_refused_before_expanding() {
    let values = |n: usize| {
        (1..=n)
            .map(|i| (i * 16).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let body = format!(
        "[sweep]\nsize = [{}]\n[[case]]\nlabel = \"big\"\nsweep = {{ \"measure.batch\" = [{}], ring = [{}] }}\n",
        values(1000),
        values(10),
        values(11)
    );
    assert_problems(&[(
        &body,
        &[
            "5:1: the sweep of case `big` expands to 110000 cases; the limit is 100000: split it or reduce axes",
        ],
    )]);
}

#[test]
fn dotted_measure_and_probe_axes_and_flag_arrays_sweep() {
    let got = each_case(
        "[[case]]\nlabel = \"a\"\nsweep = { \"measure.batch\" = [1, 8], probes = { max_alloc = [true] }, flags = [[], [\"mapped\", \"portable\"]] }\n",
        |c| {
            (
                c.measure.batch,
                c.probes.max_alloc,
                c.flags.label(),
                c.axes.clone(),
            )
        },
    );
    let ax = |b: &str, f: &str| {
        Axes::parse(&format!(
            "measure.batch={b};probes.max_alloc=true;flags={f}"
        ))
        .expect("axes")
    };
    assert_eq!(
        got,
        vec![
            (1, true, "none".to_string(), ax("1", "none")),
            (
                1,
                true,
                "portable+mapped".to_string(),
                ax("1", "mapped+portable")
            ),
            (8, true, "none".to_string(), ax("8", "none")),
            (
                8,
                true,
                "portable+mapped".to_string(),
                ax("8", "mapped+portable")
            ),
        ]
    );
}

#[test]
fn a_case_that_sets_a_top_level_axis_key_is_not_expanded_along_it() {
    let got = each_case(
        "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n[[case]]\nlabel = \"a\"\n[[case]]\nlabel = \"b\"\ndirection = \"bidirectional\"\n",
        |c| (c.index, c.label.clone(), c.direction),
    );
    let want = [
        (0, "a", Direction::H2d),
        (1, "a", Direction::D2h),
        (2, "b", Direction::Bidirectional),
    ];
    assert_eq!(got, want.map(|(i, l, d)| (i, l.to_string(), d)));
}

#[test]
fn sizes_in_sweeps_keep_what_was_written() {
    let got = each_case(
        "[[case]]\nlabel = \"a\"\nsweep = { size = [\"64MiB\", \"1.5GB\", 4096, \"4GiB\"] }\n",
        |c| {
            (
                c.size,
                c.axes.get(CaseKey::Size).unwrap_or_default().to_string(),
            )
        },
    );
    let want = [
        (64 << 20, "64MiB"),
        (1_500_000_000, "1.5GB"),
        (4096, "4096"),
        (4 << 30, "4GiB"),
    ];
    assert_eq!(got, want.map(|(size, shown)| (size, shown.to_string())));
}

// ---- defaults ---------------------------------------------------------------------------------

#[test]
fn defaults_and_measure_tables_merge_key_by_key() {
    let s = ok(
        "[defaults]\nhost = \"register\"\nsize = \"64MiB\"\nmeasure = { min_samples = 3, batch = 4 }\nprobes.max_alloc = true\n[[case]]\nlabel = \"a\"\nsize = \"1GiB\"\nmeasure = { batch = 8 }\n[[case]]\nlabel = \"b\"\n",
    );
    let a = &s.cases[0];
    assert_eq!((a.host, a.size), (HostKind::Register, 1 << 30));
    assert_eq!(
        a.measure,
        Measure {
            min_samples: 3,
            batch: 8,
            ..Measure::default()
        }
    );
    assert!(a.probes.max_alloc);
    let b = &s.cases[1];
    assert_eq!(
        (b.size, b.measure.batch, b.measure.min_samples),
        (64 << 20, 4, 3)
    );
    // Built-in defaults.
    let s = ok("[[case]]\nlabel = \"d\"\n");
    let d = &s.cases[0];
    assert_eq!(
        (
            d.host,
            d.engine,
            d.direction,
            d.mode,
            d.size,
            d.chunk,
            d.ring,
            d.streams,
            d.threads
        ),
        (
            HostKind::Alloc,
            Engine::Copy,
            Direction::H2d,
            Mode::Direct,
            512 << 20,
            None,
            3,
            1,
            Threads::Auto
        )
    );
    assert_eq!(
        (d.measure.clone(), d.probes.clone()),
        (Measure::default(), Probes::default())
    );
    assert_eq!((d.scenario.as_str(), d.index), ("t", 0));
}

// ---- claims -----------------------------------------------------------------------------------

const CLAIM_CASES: &str =
    "[[case]]\nlabel = \"pinned\"\n[[case]]\nlabel = \"pageable\"\nhost = \"pageable\"\n";

#[test]
fn claims_are_validated() {
    let s = ok(&format!(
        "{CLAIM_CASES}[[claim]]\ntext = \"pinned is 2x pageable\"\ncase = \"pinned\"\nmetric = \"bw_median_gbs\"\nop = \">=\"\nvalue = 2\nof = \"pageable.bw_median_gbs\"\nplatforms = [\"linux\", \"wsl2\"]\n"
    ));
    assert_eq!(
        s.claims,
        vec![crate::claims::Claim {
            text: "pinned is 2x pageable".into(),
            case: "pinned".into(),
            metric: ClaimMetric::Row(RowMetric::BwMedianGbs),
            op: crate::claims::Op::Ge,
            factor: 2.0,
            relative_to: Some(Reference::Case {
                label: "pageable".into(),
                metric: ClaimMetric::Row(RowMetric::BwMedianGbs),
            }),
            platforms: vec![PlatformTag::Linux, PlatformTag::Wsl2],
        }]
    );
    // Line 8 is the [[claim]] header.
    assert_problems(&[
        (
            &format!(
                "{CLAIM_CASES}[[claim]]\ntext = \"x\"\ncase = \"pined\"\nmetric = \"bw_median\"\nop = \"==\"\nvalue = \"2\"\nof = \"pagable.bw_median_gbs\"\nplatforms = [\"win\"]\nmetrics = 1\n"
            ),
            &[
                "10:8: [[claim]] #1 names case `pined`, which is not a label in this file; did you mean `pinned`?",
                "11:10: unknown metric `bw_median` in [[claim]] #1; did you mean `bw_median_gbs`?",
                "12:6: `op` must be one of \">=\", \"<=\", \">\", \"<\", not \"==\"",
                "13:9: `value` must be a number, not a string",
                "14:6: `of` in [[claim]] #1 names case `pagable`, which is not a label in this file; did you mean `pageable`?",
                "15:14: `platforms` must be an array of \"linux\", \"wsl2\", \"windows\", \"windows-wddm\", \"windows-tcc\", not \"win\"; did you mean \"windows\"?",
                "16:1: unknown key `metrics` in [[claim]] #1; did you mean `metric`?",
            ],
        ),
        (
            &format!(
                "{CLAIM_CASES}[[claim]]\ncase = \"pinned\"\nmetric = \"alloc_ms\"\nop = \"<\"\nvalue = 1.0\nof = \"bytes\"\n"
            ),
            &[
                "8:1: [[claim]] #1 has no `text`: say what is claimed and where the claim comes from",
                "13:6: `of` must be \"pinned_bytes\", \"size\" or \"<label>.<metric>\", not \"bytes\"",
            ],
        ),
        (
            &format!(
                "{CLAIM_CASES}[[claim]]\ntext = \"t\"\ncase = \"pinned\"\nmetric = \"alloc_ms\"\nop = \"<\"\nvalue = 1.0\nof = \"pinned.shared_mib\"\n"
            ),
            &["14:6: `of` in [[claim]] #1 names unknown metric `shared_mib`"],
        ),
    ]);
}

#[test]
fn claim_metrics_follow_the_accounting_metrics() {
    let all = validate_blocks::metric_names();
    for m in crate::accounting::Metric::ALL {
        for phase in crate::accounting::Phase::ALL {
            let name = crate::accounting::column(phase, m);
            assert!(all.contains(&name), "{name}");
            assert_eq!(
                ClaimMetric::parse(&name),
                Some(ClaimMetric::Accounting(phase, m))
            );
        }
    }
    for name in &all {
        let m = ClaimMetric::parse(name).expect("each name reads back");
        assert_eq!(&m.to_string(), name);
    }
    assert_eq!(
        ClaimMetric::parse("d_host_shared_mib").map(ClaimMetric::unit),
        Some(Unit::Mib)
    );
    assert_eq!(ClaimMetric::parse("d_touch_shared_mib"), None);
    assert_eq!(ClaimMetric::parse("shared_mib"), None);
    assert_eq!(
        all.len(),
        // 12 row metrics, 5 latency metrics, 2 read from the status (out_of_memory,
        // mismatched_copies), and each accounting metric at each phase
        19 + crate::accounting::Phase::ALL.len() * crate::accounting::Metric::ALL.len()
    );
}

/// The "Metrics:" paragraph of scenarios/README.md names every row metric and the platform tags
/// table row every tag.
#[test]
fn readme_names_every_claim_metric_and_platform() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/README.md"))
            .expect("scenarios/README.md");
    let metrics = readme
        .split("\nMetrics: ")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a Metrics paragraph");
    for m in RowMetric::ALL {
        assert!(metrics.contains(&format!("`{m}`")), "{m}");
    }
    let platforms = readme
        .lines()
        .find(|l| l.starts_with("| `platforms` |"))
        .expect("the platforms row");
    for p in PlatformTag::ALL {
        assert!(platforms.contains(&format!("\"{p}\"")), "{p}");
    }
}

// ---- robustness -------------------------------------------------------------------------------

#[test]
fn odd_inputs_do_not_panic() {
    let inputs = [
        "",
        "\u{feff}",
        "=",
        "[[case]]\n[[case]]\n",
        "case = [1, {a = 1}]",
        "case = [{label = \"x\"}]\nname = \"a\"\ndescription = \"b\"",
        "sweep = { measure = 1, probes = { hold_interval = [] } }",
        "[sweep]\nsize = [\"99999999999999999999GiB\", 9223372036854775807, -9223372036854775808]",
        "x = 1979-05-27T07:32:00Z\nclaim = 4\n[defaults]\nmeasure = { time_limit = \"1e400\" }",
        "name = \"é\"\ndescription = \"ü\"\n[[case]]\nlabel = \"ß\"\nsize = \"1.0000000000000000000001GiB\"",
        "[[claim]]\n[[claim]]\nof = \".\"\nplatforms = [[]]",
    ];
    for text in inputs {
        let _ = parse("odd.toml", text);
    }
    // Deep nesting must not overflow the stack (toml_edit limits the depth; `raw` recurses).
    for open in ["[", "{a="] {
        let deep = format!("x = {}", open.repeat(100_000));
        let _ = parse("deep.toml", &deep);
    }
    let deep = format!("x = {}1{}", "[".repeat(60), "]".repeat(60));
    let _ = parse("deep.toml", &deep);
}

#[test]
fn a_file_over_the_case_limit_is_refused() {
    let values = (1..=400)
        .map(|i| (i * 16).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let case = |l: &str| {
        format!(
            "[[case]]\nlabel = \"{l}\"\nsweep = {{ size = [{values}], ring = [{}] }}\n",
            (1..=150)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    assert_problems(&[(
        &format!("{}{}", case("a"), case("b")),
        &[
            "6:1: the sweeps of this file expand to 120000 cases, counting up to case `b`; the limit is 100000: split the file or reduce axes",
        ],
    )]);
}

// ---- engines, guard, ceiling chunk ------------------------------------------------------------

#[test]
fn every_engine_name_parses_and_unknown_ones_are_listed() {
    for e in Engine::ALL {
        let (host, flags, dir) = match e {
            Engine::Copy => ("alloc", "[]", "h2d"),
            Engine::Kernel | Engine::KernelRead | Engine::Chase | Engine::ChaseRandom => {
                ("alloc", "[\"mapped\"]", "h2d")
            }
            Engine::KernelWrite => ("register", "[\"mapped\"]", "d2h"),
            Engine::CpuRead => ("alloc", "[\"write-combined\"]", "d2h"),
            Engine::CpuWrite => ("pageable", "[]", "h2d"),
            // Device memory only: no host, flags or direction (tests_vram.rs).
            Engine::DeviceRead
            | Engine::DeviceWrite
            | Engine::DeviceCopy
            | Engine::DeviceCopyEngine
            | Engine::Empty => {
                let s = ok(&format!("[[case]]\nlabel = \"e\"\nengine = \"{e}\"\n"));
                assert_eq!(s.cases[0].engine, e);
                continue;
            }
        };
        let s = ok(&format!(
            "[[case]]\nlabel = \"e\"\nhost = \"{host}\"\nflags = {flags}\nengine = \"{e}\"\ndirection = \"{dir}\"\n"
        ));
        assert_eq!(s.cases[0].engine, e);
    }
    assert_problems(&[(
        "[[case]]\nlabel = \"e\"\nengine = \"kernel_read\"\n",
        &[
            "5:10: `engine` must be one of \"copy\", \"kernel\", \"kernel-read\", \"kernel-write\", \"cpu-read\", \"cpu-write\", \"device-read\", \"device-write\", \"device-copy\", \"device-copy-engine\", \"empty\", \"chase\", \"chase-random\", not \"kernel_read\"; did you mean \"kernel-read\"?",
        ],
    )]);
}

#[test]
fn one_way_engines_need_their_direction() {
    // Each points at the `direction` value, the last line of the body.
    assert_problems(&[
        (
            "[[case]]\nlabel = \"x\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nengine = \"kernel-read\"\ndirection = \"d2h\"\n",
            &[
                "8:13: case `x`: engine = \"kernel-read\" only reads host memory from a kernel: it needs direction = \"h2d\", not \"d2h\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nhost = \"managed\"\nengine = \"kernel-write\"\ndirection = \"h2d\"\n",
            &[
                "7:13: case `x`: engine = \"kernel-write\" only writes host memory from a kernel: it needs direction = \"d2h\", not \"h2d\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nhost = \"pageable\"\nengine = \"cpu-read\"\ndirection = \"bidirectional\"\n",
            &[
                "7:13: case `x`: engine = \"cpu-read\" times the CPU reading the host buffer, as after a device-to-host copy: it needs direction = \"d2h\", not \"bidirectional\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nhost = \"register\"\nengine = \"cpu-write\"\ndirection = \"d2h\"\n",
            &[
                "7:13: case `x`: engine = \"cpu-write\" times the CPU writing the host buffer, as before a host-to-device copy: it needs direction = \"h2d\", not \"d2h\"",
            ],
        ),
        // A swept direction points at the value behind the problem and names it.
        (
            "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n[[case]]\nlabel = \"w\"\nengine = \"cpu-write\"\n",
            &[
                "4:21: case `w` with direction=d2h: engine = \"cpu-write\" times the CPU writing the host buffer, as before a host-to-device copy: it needs direction = \"h2d\", not \"d2h\"",
            ],
        ),
    ]);
}

#[test]
fn kernel_read_and_write_need_mapped_memory() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"r\"\nhost = \"pageable\"\nengine = \"kernel-read\"\n",
            &[&format!("6:10: case `r`: {}", expand::KERNEL_NEEDS_MAPPED)],
        ),
        (
            "[[case]]\nlabel = \"w\"\nhost = \"register\"\nengine = \"kernel-write\"\ndirection = \"d2h\"\n",
            &[&format!("6:10: case `w`: {}", expand::KERNEL_NEEDS_MAPPED)],
        ),
    ]);
}

#[test]
fn cpu_engines_take_any_host_kind_but_only_direct_mode() {
    for host in ["pageable", "alloc", "register", "managed"] {
        let s = ok(&format!(
            "[[case]]\nlabel = \"c\"\nhost = \"{host}\"\nengine = \"cpu-read\"\ndirection = \"d2h\"\n"
        ));
        assert_eq!(s.cases[0].device_bytes(), 0, "{host}");
    }
    assert_problems(&[
        (
            "[[case]]\nlabel = \"c\"\nhost = \"pageable\"\nengine = \"cpu-write\"\nmode = \"staged\"\nchunk = \"16MiB\"\n",
            &["7:8: case `c`: mode = \"staged\" needs engine = \"copy\""],
        ),
        (
            "[[case]]\nlabel = \"c\"\nhost = \"register\"\nengine = \"cpu-write\"\nmode = \"register-per-copy\"\n",
            &["7:8: case `c`: mode = \"register-per-copy\" needs engine = \"copy\""],
        ),
    ]);
}

#[test]
fn guard_is_a_sweepable_case_key() {
    let s = ok("[[case]]\nlabel = \"g\"\n");
    assert!(s.cases[0].guard);
    let s = ok("[defaults]\nguard = false\n[[case]]\nlabel = \"g\"\n");
    assert!(!s.cases[0].guard);
    let s = ok("[[case]]\nlabel = \"g\"\nsweep = { guard = [true, false] }\n");
    let got: Vec<(bool, String)> = s
        .cases
        .iter()
        .map(|c| (c.guard, c.axes.to_string()))
        .collect();
    assert_eq!(
        got,
        vec![(true, "guard=true".into()), (false, "guard=false".into())]
    );
    assert_problems(&[
        (
            "[[case]]\nlabel = \"g\"\nguard = \"no\"\n",
            &["5:9: `guard` must be true or false, not a string"],
        ),
        (
            "[[case]]\nlabel = \"g\"\nguards = false\n",
            &["5:1: unknown key `guards` in [[case]] #1; did you mean `guard`?"],
        ),
    ]);
}

#[test]
fn unguarded_managed_memory_is_refused() {
    assert_problems(&[(
        "[[case]]\nlabel = \"m\"\nhost = \"managed\"\nguard = false\n",
        &[&format!("6:9: case `m`: {}", expand::MANAGED_UNGUARDED)],
    )]);
    assert_eq!(
        expand::MANAGED_UNGUARDED,
        "guard = false with host = \"managed\" could oversubscribe device memory with managed memory, which can hang the GPU: keep guard = true for managed cases"
    );
    ok(
        "[[case]]\nlabel = \"m\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nengine = \"kernel-read\"\nguard = false\n",
    );
}

#[test]
fn ceiling_chunk_is_a_size_of_at_least_one_mib() {
    let s = ok("[[case]]\nlabel = \"c\"\n");
    assert_eq!(s.cases[0].probes.ceiling_chunk, 256 << 20);
    let s = ok(
        "[[case]]\nlabel = \"c\"\nprobes = { pinned_ceiling = true, ceiling_chunk = \"64MiB\" }\n",
    );
    assert_eq!(
        (
            s.cases[0].probes.pinned_ceiling,
            s.cases[0].probes.ceiling_chunk
        ),
        (true, 64 << 20)
    );
    assert_problems(&[
        (
            "[[case]]\nlabel = \"c\"\nprobes.ceiling_chunk = \"4KiB\"\n",
            &[
                "5:24: `probes.ceiling_chunk` must be at least 1MiB (the probe pins memory chunk by chunk), not \"4KiB\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"c\"\nprobes = { ceiling_chunks = \"4MiB\" }\n",
            &[
                "5:12: unknown key `ceiling_chunks` in `probes` of [[case]] #1; did you mean `ceiling_chunk`?",
            ],
        ),
    ]);
    let s = ok(
        "[[case]]\nlabel = \"c\"\nsweep = { \"probes.ceiling_chunk\" = [\"1MiB\", \"1GiB\"] }\n",
    );
    assert_eq!(s.cases.len(), 2);
}

// ---- derived ----------------------------------------------------------------------------------

#[test]
fn derived_blocks_are_read_with_defaults() {
    let s = ok(&format!(
        "{CLAIM_CASES}[[derived]]\ntext = \"load time\"\ncases = [\"pinned\", \"pageable\"]\nmetric = \"time_median_ms\"\nscale = 1e-3\nunit = \"s\"\n[[derived]]\ntext = \"tokens/s ceiling\"\ncases = [\"pinned\"]\nmetric = \"time_median_ms\"\nscale = 1000\ninvert = true\n"
    ));
    assert_eq!(
        s.derived,
        vec![
            crate::claims::Derived {
                text: "load time".into(),
                cases: vec!["pinned".into(), "pageable".into()],
                metric: ClaimMetric::Row(RowMetric::TimeMedianMs),
                scale: 1e-3,
                invert: false,
                unit: "s".into(),
            },
            crate::claims::Derived {
                text: "tokens/s ceiling".into(),
                cases: vec!["pinned".into()],
                metric: ClaimMetric::Row(RowMetric::TimeMedianMs),
                scale: 1000.0,
                invert: true,
                unit: String::new(),
            },
        ]
    );
}

#[test]
fn derived_blocks_are_validated() {
    // Line 8 is the [[derived]] header.
    assert_problems(&[
        (
            &format!(
                "{CLAIM_CASES}[[derived]]\ntext = 3\ncases = [\"pined\", 4, \"pinned\", \"pinned\"]\nmetric = \"time_median\"\nscale = 0\ninvert = \"yes\"\nunit = 1\nunits = \"s\"\n"
            ),
            &[
                "9:8: `text` must be a string, not an integer",
                "10:10: [[derived]] #1 names case `pined`, which is not a label in this file; did you mean `pinned`?",
                "10:19: `cases` must contain only case labels (strings), not an integer",
                "10:32: `cases` in [[derived]] #1 lists `pinned` twice",
                "11:10: unknown metric `time_median` in [[derived]] #1; did you mean `time_median_ms`?",
                "12:9: `scale` must be a finite number other than 0, not 0",
                "13:10: `invert` must be true or false, not a string",
                "14:8: `unit` must be a string, not an integer",
                "15:1: unknown key `units` in [[derived]] #1; did you mean `unit`?",
            ],
        ),
        (
            &format!("{CLAIM_CASES}[[derived]]\nscale = \"2\"\n"),
            &[
                "8:1: [[derived]] #1 has no `text`: say what the number is, like \"model load time\"",
                "8:1: [[derived]] #1 has no `cases`: list the labels whose metric is summed, like cases = [\"load\"]",
                "8:1: [[derived]] #1 has no `metric`: name the measured quantity, like \"time_median_ms\"",
                "9:9: `scale` must be a number, not a string",
            ],
        ),
        (
            &format!(
                "{CLAIM_CASES}[[derived]]\ntext = \"t\"\ncases = \"pinned\"\nmetric = \"alloc_ms\"\n[[derived]]\ntext = \"t\"\ncases = []\nmetric = \"alloc_ms\"\n"
            ),
            &[
                "10:9: `cases` must be an array of case labels, like cases = [\"load\"], not a string",
                "14:9: `cases` in [[derived]] #2 is empty: list at least one label",
            ],
        ),
        (
            &format!("derived = 3\n{CLAIM_CASES}"),
            &["3:11: `derived` must be written as [[derived]] blocks, not an integer"],
        ),
    ]);
}

#[test]
fn derived_cases_must_expand_to_one_case_each() {
    assert_problems(&[(
        "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n[[case]]\nlabel = \"a\"\nsweep = { size = [\"1MiB\", \"2MiB\"], ring = [3] }\n[[case]]\nlabel = \"b\"\ndirection = \"h2d\"\n[[derived]]\ntext = \"t\"\ncases = [\"b\", \"a\"]\nmetric = \"time_median_ms\"\n",
        &[
            "13:15: [[derived]] #1 names case `a`, which expands to 4 cases (swept over direction, size): a derived value takes one row per label; give each point its own [[case]] and label",
        ],
    )]);
}

// ---- threads ----------------------------------------------------------------------------------

#[test]
fn threads_take_auto_or_a_count_and_auto_is_the_default() {
    let s = ok(
        "[[case]]\nlabel = \"a\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1MiB\"\nthreads = \"auto\"\n\
                [[case]]\nlabel = \"b\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1MiB\"\nthreads = 6\n\
                [[case]]\nlabel = \"c\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1MiB\"\n",
    );
    let t: Vec<Threads> = s.cases.iter().map(|c| c.threads).collect();
    assert_eq!(t, vec![Threads::Auto, Threads::Count(6), Threads::Auto]);
    assert_eq!(Threads::Count(6).resolve(), 6);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    assert_eq!(Threads::Auto.resolve(), cpus.min(AUTO_THREADS_MAX));
    assert!(
        s.cases[0].key().ends_with("threads=auto"),
        "{}",
        s.cases[0].key()
    );
    assert!(s.cases[1].key().ends_with("threads=6"));
}

#[test]
fn threads_reject_other_words_and_types() {
    for (value, shown) in [("\"all\"", "\"all\""), ("1.5", "1.5"), ("true", "true")] {
        let got = problems(&format!("[[case]]\nlabel = \"a\"\nthreads = {value}\n"));
        assert_eq!(
            got,
            vec![p(
                5,
                11,
                &format!(
                    "`threads` must be \"auto\" (every CPU this process may use) or a whole number from 1 to 256, not {shown}"
                )
            )],
            "{value}"
        );
    }
}

// ---- devices ----------------------------------------------------------------------------------

#[test]
fn devices_take_all_an_index_or_a_list() {
    use crate::platform::DeviceSelection;
    let case = "[[case]]\nlabel = \"a\"\n";
    assert_eq!(ok(case).devices, None);
    assert_eq!(
        ok(&format!("devices = \"all\"\n{case}")).devices,
        Some(DeviceSelection::All)
    );
    assert_eq!(
        ok(&format!("devices = [0, 1]\n{case}")).devices,
        Some(DeviceSelection::List(vec![0, 1]))
    );
    assert_eq!(
        ok(&format!("devices = 1\n{case}")).devices,
        Some(DeviceSelection::List(vec![1]))
    );
}

#[test]
fn bad_devices_are_exact_problems() {
    let case = "[[case]]\nlabel = \"a\"\n";
    assert_problems(&[
        (
            &format!("devices = \"some\"\n{case}"),
            &[
                "3:11: `devices`: `some` is not a GPU: write a CUDA device index like 0, a list like 0,1, or all",
            ],
        ),
        (
            &format!("devices = [0, 0]\n{case}"),
            &["3:11: `devices`: GPU 0 is listed twice in `0,0`"],
        ),
        (
            &format!("devices = true\n{case}"),
            &[
                "3:11: `devices` must be \"all\", a GPU index like 0, or a list like [0, 1], not a boolean",
            ],
        ),
    ]);
}

/// Each mode's route carries exactly its settings: a register-per-copy case without `chunk`
/// registers the whole size (the CSV's `chunk_bytes` says so, not 0), a direct case has none,
/// churn takes `cycles` and `pause`.
#[test]
fn each_mode_gets_its_route_with_its_settings() {
    use std::time::Duration;
    let routes = each_case(
        "[[case]]\nlabel = \"d\"\n\n\
         [[case]]\nlabel = \"s\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"16MiB\"\nring = 4\nthreads = 3\n\n\
         [[case]]\nlabel = \"r\"\nhost = \"register\"\nmode = \"register-per-copy\"\nsize = \"64MiB\"\n\n\
         [[case]]\nlabel = \"c\"\nmode = \"churn\"\ncycles = 7\npause = \"2ms\"\n",
        |c| c.route(),
    );
    assert_eq!(
        routes,
        vec![
            Route::Direct,
            Route::Staged {
                chunk: 16 << 20,
                ring: 4,
                threads: 3
            },
            Route::RegisterPerCopy { slice: 64 << 20 },
            Route::Churn {
                cycles: 7,
                pause: Duration::from_millis(2)
            },
        ]
    );
    let chunks: Vec<u64> = routes.iter().map(|r| r.chunk_bytes()).collect();
    assert_eq!(chunks, [0, 16 << 20, 64 << 20, 0]);
}
