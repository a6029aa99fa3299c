//! Types, names and required keys, TOML syntax, sweeps and the defaults tables.

use super::tests::*;
use super::*;

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

#[test]
fn repeat_sets_every_cases_samples_and_nothing_else() {
    let mut s = ok(
        "[defaults]\nmeasure = { min_samples = 2, max_samples = 40, time_limit = \"1s\" }\n[[case]]\nlabel = \"a\"\n[[case]]\nlabel = \"b\"\nmeasure = { min_samples = 7, max_samples = 9 }\n",
    );
    let before: Vec<Measure> = s.cases.iter().map(|c| c.measure.clone()).collect();
    s.measure_each(3);
    for (c, was) in s.cases.iter().zip(before) {
        assert_eq!(
            (c.measure.min_samples, c.measure.max_samples),
            (3, 3),
            "{}",
            c.label
        );
        let rest = Measure {
            min_samples: was.min_samples,
            max_samples: was.max_samples,
            ..c.measure.clone()
        };
        assert_eq!(rest, was, "{}: only the sample counts change", c.label);
    }
}
