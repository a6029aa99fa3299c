//! Property tests (fixed budget) on every reader of user input: scenarios, results CSVs, sidecars,
//! sizes and columns; none may panic, and each refusal is a located, typed error.

use super::*;

/// Pieces of scenario text: valid and invalid keys and values, so generated files get past the
/// TOML parser and into validation and expansion.
fn scenario_text() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "label",
        "host",
        "flags",
        "engine",
        "direction",
        "mode",
        "size",
        "chunk",
        "ring",
        "streams",
        "threads",
        "measure",
        "probes",
        "sweep",
        "guard",
        "measure.batch",
        "measure.time_limit",
        "probes.hold_after_free",
        "sizes",
        "bogus",
    ]);
    let value = prop::sample::select(vec![
        "\"a\"",
        "\"alloc\"",
        "\"pageable\"",
        "\"register\"",
        "\"managed\"",
        "\"kernel\"",
        "\"copy\"",
        "\"staged\"",
        "\"h2d\"",
        "\"bidirectional\"",
        "[\"mapped\"]",
        "[\"write-combined\", \"portable\"]",
        "\"64MiB\"",
        "\"16MiB\"",
        "\"1e30GiB\"",
        "\"-1MiB\"",
        "\"0\"",
        "0",
        "-5",
        "3",
        "17",
        "9223372036854775807",
        "1.5",
        "nan",
        "true",
        "[]",
        "[1, 2, 3]",
        "{ size = [\"16MiB\", \"32MiB\"], ring = [2, 3] }",
        "{ size = [] }",
        "{ min_samples = 5, max_samples = 2 }",
        "{ hold_after_free = \"1s\", hold_interval = \"0s\" }",
        "1979-05-27",
        "\"10s\"",
        "\"1e300\"",
    ]);
    let line = (key, value).prop_map(|(k, v)| format!("{k} = {v}\n"));
    let block =
        prop::collection::vec(line, 0..6).prop_map(|ls| format!("[[case]]\n{}", ls.concat()));
    let head = prop::sample::select(vec![
        "name = \"p\"\ndescription = \"d\"\n",
        "name = \"Bad Name\"\n",
        "description = \"no name\"\n",
        "",
    ]);
    let sweep = prop::sample::select(vec![
        "",
        "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n",
        "[sweep]\nsize = []\n",
        "[defaults]\nsize = \"32MiB\"\n",
        "[[claim]]\ntext = \"t\"\ncase = \"a\"\nmetric = \"bw_median_gbs\"\nop = \">=\"\nvalue = 1.0\n",
    ]);
    (head, sweep, prop::collection::vec(block, 0..4))
        .prop_map(|(h, s, bs)| format!("{h}{s}{}", bs.concat()))
}

/// A shipped scenario with one edit (a deletion, an insertion or a truncation) at a random place.
fn mutated_scenario() -> impl Strategy<Value = String> {
    let texts: Vec<String> = shipped_scenarios().into_iter().map(|(_, t)| t).collect();
    (
        prop::sample::select(texts),
        any::<prop::sample::Index>(),
        0..3u8,
        "[\\[\\]{}=\"',.#\n a-z0-9]{0,4}",
    )
        .prop_map(|(text, at, how, ins)| {
            let chars: Vec<char> = text.chars().collect();
            let i = at.index(chars.len().max(1));
            let (a, b) = chars.split_at(i.min(chars.len()));
            let a: String = a.iter().collect();
            let b: String = b.iter().collect();
            match how {
                0 => format!("{a}{}", b.chars().skip(1 + i % 7).collect::<String>()),
                1 => format!("{a}{ins}{b}"),
                _ => a,
            }
        })
}

fn opt_f64() -> impl Strategy<Value = Option<f64>> {
    // Values with at most 6 decimals, as the writer prints them (`{:.6}`).
    prop::option::of((-1_000_000_000_000i64..1_000_000_000_000).prop_map(|k| k as f64 / 1e6))
}

/// Bandwidths, times and spreads: never negative (the reader refuses a negative one).
fn opt_nonneg_f64() -> impl Strategy<Value = Option<f64>> {
    prop::option::of((0i64..1_000_000_000_000).prop_map(|k| k as f64 / 1e6))
}

/// Text fields as the reader gives them back: it trims every field, so generated values have no
/// surrounding whitespace (inner spaces, commas and quotes must survive). Control characters
/// come back as visible escapes (`escaped_text_reads_back_as_visible_escapes`).
fn field() -> impl Strategy<Value = String> {
    "[ -~\u{e9}\u{4e2d}]{0,12}".prop_map(|s| s.trim().to_string())
}

/// Sweep axes: case keys with values of any text but the `;` that separates them.
fn axes() -> impl Strategy<Value = scenario::Axes> {
    let key = prop::sample::select(scenario::CaseKey::ALL.to_vec());
    prop::collection::vec((key, "[!-:<-~\u{e9}\u{4e2d}]{1,8}"), 0..4).prop_map(|pairs| {
        let mut axes = scenario::Axes::default();
        for (k, v) in pairs {
            axes.push(k, v);
        }
        axes
    })
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![
        Just(Status::Ok),
        field()
            .prop_filter("non-empty", |s| !s.is_empty())
            .prop_map(|s| Status::Failed(pinscope::results::Failure::parse(&s))),
        field()
            .prop_filter("non-empty", |s| !s.is_empty())
            .prop_map(Status::Skipped),
    ]
}

fn machine_key() -> impl Strategy<Value = MachineKey> {
    let fields = (
        field(),
        field(),
        field(),
        field(),
        field(),
        field(),
        field(),
    );
    fields.prop_map(
        |(host_name, platform, os, driver_model, gpu, driver_version, pcie_link)| MachineKey {
            host_name,
            platform: Recorded::read(&platform),
            os,
            driver_model: Recorded::read(&driver_model),
            gpu,
            driver_version,
            pcie_link,
        },
    )
}

/// What a row measured: lane, host memory, flags, engine, direction and mode.
type Kind = (Lane, Option<HostKind>, HostFlags, Engine, Direction, Mode);

fn kind() -> impl Strategy<Value = Kind> {
    let mut hosts: Vec<Option<HostKind>> = HostKind::ALL.into_iter().map(Some).collect();
    hosts.push(None);
    let flags = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(p, m, w)| HostFlags {
        portable: p,
        mapped: m,
        write_combined: w,
    });
    (
        prop::sample::select(vec![Lane::H2d, Lane::D2h, Lane::Sum, Lane::Device]),
        prop::sample::select(hosts),
        flags,
        prop::sample::select(Engine::ALL.to_vec()),
        prop::sample::select(Direction::ALL.to_vec()),
        prop::sample::select(Mode::ALL.to_vec()),
    )
}

/// A row's numbers: bandwidth, time and latency columns; set-up times with the bytes held;
/// accounting deltas with the probe columns.
type Numbers = (
    Vec<Option<f64>>,
    (Vec<Option<f64>>, u64, u64),
    (Vec<Option<f64>>, Vec<Option<f64>>),
);

fn numbers() -> impl Strategy<Value = Numbers> {
    // Bandwidth and time columns, then the latency percentiles (µs).
    let bw = prop::collection::vec(opt_nonneg_f64(), 13);
    let setup = (
        prop::collection::vec(opt_nonneg_f64(), 4),
        any::<u64>(),
        any::<u64>(),
    );
    let acct = (
        prop::collection::vec(opt_f64(), 24),
        prop::collection::vec(opt_f64(), 5),
    );
    (bw, setup, acct)
}

/// Puts `numbers` in their columns of `r`.
fn set_numbers(r: &mut Row, (bw, (times, pinned_bytes, device_bytes), (acct, probes)): Numbers) {
    let mut it = acct.into_iter();
    for (p, m) in pinscope::accounting::columns() {
        if let Some(Some(v)) = it.next() {
            r.accounting.push((p, m, v));
        }
    }
    [
        r.bw_median_gbs,
        r.bw_min_gbs,
        r.bw_max_gbs,
        r.bw_spread_pct,
        r.time_median_ms,
        r.time_min_ms,
        r.time_max_ms,
        r.wall_median_ms,
        r.lat_min_us,
        r.lat_p50_us,
        r.lat_p90_us,
        r.lat_p99_us,
        r.lat_event_p50_us,
    ] = bw[..].try_into().expect("13 columns");
    [r.alloc_ms, r.register_ms, r.unregister_ms, r.free_ms] =
        times[..].try_into().expect("4 times");
    [
        r.max_alloc_held_mib,
        r.max_alloc_free_mib,
        r.pinned_ceiling_mib,
        r.max_alloc_host_mib,
        r.pinned_ceiling_cap_mib,
    ] = probes[..].try_into().expect("5 probes");
    r.pinned_bytes = pinned_bytes;
    r.device_bytes = device_bytes;
}

fn row() -> impl Strategy<Value = Row> {
    let ids = (field(), field(), field(), field(), any::<u32>(), field());
    let sizes = (
        any::<u64>(),
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
    );
    let verified = prop::sample::select(vec![
        results::Verification::Yes,
        results::Verification::No,
        results::Verification::Off,
        results::Verification::NotApplicable,
    ]);
    let outcome = (status(), any::<u32>(), any::<u32>(), axes(), verified);
    let parts = (machine_key(), ids, kind(), sizes, outcome, numbers());
    parts.prop_map(|(machine, ids, kind, sizes, outcome, numbers)| {
        let (run_id, started_at, scenario, case_label, case_index, case_key) = ids;
        let (lane, host, flags, engine, direction, mode) = kind;
        let (size_bytes, chunk_bytes, ring, streams, threads, batch) = sizes;
        let (status, samples, outliers, axes, verified) = outcome;
        let mut r = Row {
            run_id: run_id.into(),
            started_at: started_at.into(),
            machine: machine.into(),
            scenario: scenario.into(),
            case_label,
            case_index: case_index as usize,
            case_key,
            lane,
            host,
            flags,
            engine,
            direction,
            mode,
            size_bytes,
            chunk_bytes,
            ring,
            streams,
            threads,
            batch,
            axes,
            status,
            samples,
            outliers,
            verified,
            stopped_by: None,
            device: Some(pinscope::results::Device::Gpu(0)),
            gpus_at_once: 1,
            wait: None,
            ..Row::default()
        };
        set_numbers(&mut r, numbers);
        r
    })
}

/// The header and first data line of a real results file, and data lines built from it with one
/// field replaced by arbitrary text.
fn csv_with_bad_record() -> impl Strategy<Value = (String, usize)> {
    let text = read_fixture("runs/h200-headline.csv");
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_string();
    let good = lines.next().unwrap_or_default().to_string();
    let n_fields = header.split(',').count();
    (0..3usize, 0..n_fields, "[ -~]{0,8}", prop::bool::ANY).prop_map(
        move |(good_before, field, junk, quote)| {
            // Replace a field of a record without quotes (the header has none).
            let rec: Vec<String> = csv_split(&good);
            let mut bad = rec.clone();
            if let Some(f) = bad.get_mut(field) {
                *f = if quote {
                    format!("\"{}\"", junk.replace('"', "\"\""))
                } else {
                    junk.replace(['"', '\n', '\r'], "")
                };
            }
            let mut t = format!("{header}\n");
            for _ in 0..good_before {
                t.push_str(&good);
                t.push('\n');
            }
            t.push_str(&bad.join(","));
            t.push('\n');
            (t, good_before + 2)
        },
    )
}

/// Splits one CSV record keeping each field's quotes, so fields can be swapped textually.
fn csv_split(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn scenario_parser_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        if let Err(e) = scenario::parse("f.toml", &text) {
            assert_scenario_rejection(&e, "f.toml", &text)?;
        }
    }

    #[test]
    fn scenario_parser_locates_every_problem_of_generated_files(text in scenario_text()) {
        if let Err(e) = scenario::parse("gen.toml", &text) {
            assert_scenario_rejection(&e, "gen.toml", &text)?;
        }
    }

    #[test]
    fn scenario_parser_locates_problems_in_edited_shipped_scenarios(text in mutated_scenario()) {
        if let Err(e) = scenario::parse("edit.toml", &text) {
            assert_scenario_rejection(&e, "edit.toml", &text)?;
        }
    }

    #[test]
    fn scenario_loader_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let path = dir.path().join("b.toml");
        std::fs::write(&path, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Err(e) = scenario::load(&path) {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            assert_scenario_rejection(&e, &path.display().to_string(), &text)?;
        }
    }

    #[test]
    fn size_and_duration_parsers_never_panic(text in "\\PC{0,24}") {
        if let Err(e) = units::parse_size(&text) {
            prop_assert!(!e.0.contains('\n') && e.0.contains('`'), "{}", e.0);
        }
        if let Ok(d) = units::parse_duration(&text) {
            prop_assert!(d.as_secs() <= 7 * 24 * 3600, "{text:?} gave {d:?}");
        }
    }

    #[test]
    fn sizes_in_units_round_trip(n in 0u64..(1 << 44), unit in 0..4usize) {
        let (name, mult) = [("B", 1), ("KiB", KIB), ("MiB", MIB), ("GiB", GIB)][unit];
        let text = format!("{n}{name}");
        match n.checked_mul(mult) {
            Some(bytes) => prop_assert_eq!(units::parse_size(&text), Ok(bytes)),
            None => prop_assert!(units::parse_size(&text).is_err_and(|e| e.0.contains("too large"))),
        }
    }

    #[test]
    fn mib_sizes_round_trip_exactly(n in 0u64..(1 << 40)) {
        prop_assert_eq!(units::parse_size(&format!("{n}MiB")), Ok(n * MIB));
    }

    #[test]
    fn format_size_of_whole_units_parses_back(k in 1u64..(1 << 20), unit in 0..4usize) {
        let bytes = k * [1, KIB, MIB, GIB][unit];
        let shown = units::format_size(bytes);
        if !shown.contains('.') {
            prop_assert_eq!(units::parse_size(&shown), Ok(bytes), "{}", shown);
        }
    }

    #[test]
    fn whole_seconds_round_trip(n in 0u64..(7 * 24 * 3600)) {
        prop_assert_eq!(units::parse_duration(&format!("{n}s")), Ok(std::time::Duration::from_secs(n)));
    }

    #[test]
    fn csv_reader_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        if let Err(e) = results::read_rows_from(Path::new("x.csv"), &bytes) {
            assert_results_rejection(&e, "x.csv")?;
        }
    }

    #[test]
    fn csv_reader_names_the_line_of_a_bad_record((text, line) in csv_with_bad_record()) {
        if let Err(e) = results::read_rows_from(Path::new("x.csv"), text.as_bytes()) {
            assert_results_rejection(&e, "x.csv")?;
            let shown = e.to_string();
            // Our own messages say `line N`; the csv crate's (wrong field count) say `line: N`.
            prop_assert!(
                shown.contains(&format!("line {line}")) || shown.contains(&format!("line: {line},")),
                "the bad record is on line {line}: {shown}"
            );
        }
    }

    #[test]
    fn rows_written_by_results_writer_read_back_equal(rows in prop::collection::vec(row(), 1..4)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let path = dir.path().join("r.csv");
        let mut w = ResultsWriter::create(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        w.write_case(&rows, &[]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        drop(w);
        let back = results::read_rows(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, rows);
    }
}
