//! Robustness: property tests (fixed budget) on every reader of user input, the malformed-file
//! corpus in `tests/fixtures/malformed/` with the message each file must produce, and the
//! flush / atomic-write / partial-run guarantees of the results writers. CPU only.
//!
//! Size: over 500 lines on purpose: the malformed-file corpus table and its expected messages.

mod common;

use common::files::entry_names;
use common::fixture;
use pinscope::Error;
use pinscope::platform::Recorded;
use pinscope::results::{
    self, Lane, MachineKey, ResultSet, ResultsWriter, Row, SampleRow, Sidecar, Status,
};
use pinscope::scenario::{self, Direction, Engine, HostFlags, HostKind, Mode};
use pinscope::units::{self, GIB, KIB, MIB};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn malformed(name: &str) -> PathBuf {
    fixture("malformed").join(name)
}

fn read_fixture(rel: &str) -> String {
    std::fs::read_to_string(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn shipped_scenarios() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .map(|p| {
                    let text = std::fs::read_to_string(&p).unwrap_or_default();
                    (p.display().to_string(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// Checks shared by the properties and the corpus tests
// ---------------------------------------------------------------------------------------------

/// A scenario rejection: `Error::Scenario`, at least one problem, each problem a single line at
/// a 1-based location inside the text, and every line of the Display after the first is
/// `  <path>:<line>:<col>: <message>`.
fn assert_scenario_rejection(e: &Error, path: &str, text: &str) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    let Error::Scenario(problems) = e else {
        return Err(TestCaseError::fail(format!(
            "not a scenario error: {shown}"
        )));
    };
    prop_assert!(!problems.items.is_empty(), "no problems in: {shown}");
    let last_line = text.split('\n').count();
    for p in &problems.items {
        prop_assert!(p.line >= 1 && p.column >= 1, "0-based location in: {shown}");
        prop_assert!(
            p.line <= last_line,
            "line {} is past the end of a {last_line}-line text: {shown}",
            p.line
        );
        prop_assert!(!p.message.contains('\n'), "multi-line message: {shown}");
        prop_assert!(!p.message.trim().is_empty(), "empty message: {shown}");
    }
    let mut lines = shown.lines();
    let first = lines.next().unwrap_or_default();
    prop_assert!(
        first.starts_with(path),
        "first line does not name the file: {shown}"
    );
    let n = problems.items.len();
    prop_assert_eq!(lines.clone().count(), n, "one line per problem: {}", shown);
    for l in lines {
        let rest = l.strip_prefix(&format!("  {path}:"));
        let loc_ok = rest.is_some_and(|r| {
            let mut it = r.splitn(3, ':');
            let line = it.next().and_then(|x| x.parse::<usize>().ok());
            let col = it.next().and_then(|x| x.parse::<usize>().ok());
            let msg = it.next().unwrap_or("");
            line.is_some() && col.is_some() && msg.starts_with(' ')
        });
        prop_assert!(loc_ok, "`{l}` is not `  {path}:line:col: message`");
    }
    Ok(())
}

/// A results-file rejection: `Error::BadResults`, one line, naming the file.
fn assert_results_rejection(e: &Error, path: &str) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    prop_assert!(
        matches!(e, Error::BadResults { .. }),
        "not a BadResults error: {shown}"
    );
    prop_assert!(!shown.contains('\n'), "more than one line: {shown}");
    prop_assert!(
        shown.starts_with(&format!("{path} cannot be used: ")),
        "does not name the file: {shown}"
    );
    prop_assert_eq!(e.exit_code(), 2);
    Ok(())
}

fn must_reject_scenario(name: &str) -> String {
    let path = malformed(name);
    match scenario::load(&path) {
        Ok(s) => panic!("{name} was accepted with {} cases", s.cases.len()),
        Err(e) => {
            let text =
                String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
            assert_scenario_rejection(&e, &path.display().to_string(), &text)
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            assert_eq!(e.exit_code(), 2, "{name}");
            e.to_string()
        }
    }
}

fn must_reject_results(name: &str) -> String {
    let path = malformed(name);
    match results::read_rows(&path) {
        Ok(rows) => panic!("{name} was accepted with {} rows", rows.len()),
        Err(e) => {
            assert_results_rejection(&e, &path.display().to_string())
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            e.to_string()
        }
    }
}

/// `Display` after the `path` prefix, for exact comparisons that do not depend on where the
/// repository is checked out.
fn after_path(shown: &str, name: &str) -> String {
    let p = malformed(name).display().to_string();
    shown.replace(&p, "<f>")
}

// ---------------------------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Malformed-file corpus: each file and the message it must produce
// ---------------------------------------------------------------------------------------------

/// What each malformed scenario's message must contain after its path (`<f>`).
#[test]
fn malformed_scenarios_are_refused_with_located_messages() {
    let cases: &[(&str, &[&str])] = &[
        ("truncated.toml", &["<f>:6:11: TOML syntax error:"]),
        (
            "wrong-types.toml",
            &[
                "<f>:7:8: `size` must be a size like \"64MiB\" or a whole number of bytes, not a boolean",
                "<f>:8:11: `streams` must be a whole number from 1 to 16, not a string",
            ],
        ),
        (
            "negative-size.toml",
            &["<f>:7:8: `size` is not a valid size: `-64MiB` is not a size"],
        ),
        // Scientific notation is not a size.
        (
            "huge-size.toml",
            &["<f>:7:8: `size` is not a valid size: `1e30GiB` has an unknown unit `e30GiB`"],
        ),
        (
            "empty-sweep.toml",
            &["<f>:7:18: sweep axis `size` in the sweep of [[case]] #1 has no values"],
        ),
        // Refused before expanding.
        (
            "million-cases.toml",
            &["<f>:4:1: the sweep of case `alloc` expands to 1000000 cases; the limit is 100000"],
        ),
        // Every value of this sweep sits on one 33 KB line. Locating a value (`raw::Lines::pos`)
        // used to count the characters from the start of its line, quadratic in the line length
        // (4.6 s in a debug build); ASCII lines are now located in O(1).
        (
            "long-line-sweep.toml",
            &["<f>:4:1: the sweep of case `alloc` expands to 8000000000 cases"],
        ),
        (
            "duplicate-keys.toml",
            &["<f>:8:1: TOML syntax error: duplicate key"],
        ),
        // Control and text-direction characters would act on a terminal or split a table row.
        (
            "control-label.toml",
            &["<f>:5:9: `label` holds the control or text-direction character U+001B"],
        ),
        (
            "bidi-label.toml",
            &[
                "<f>:5:9: `label` holds the control or text-direction character U+202E",
                "<f>:10:9: `label` holds the control or text-direction character U+000A",
            ],
        ),
        // The results file is named after it: `<stamp>-<name>-<host>.samples.csv` must fit 255 bytes.
        (
            "long-name.toml",
            &["<f>:1:8: `name` is 300 characters long; names are limited to 64"],
        ),
        // Points at the first bad byte.
        (
            "not-utf8.toml",
            &[
                "<f>:2:34: the file is not UTF-8 text (the first bad byte is here): save it as UTF-8",
            ],
        ),
    ];
    for (file, parts) in cases {
        let e = after_path(&must_reject_scenario(file), file);
        for part in *parts {
            assert!(e.contains(part), "{file}: no `{part}` in:\n{e}");
        }
    }
}

/// Fast by construction: 10^18 cases (and a product that overflows u64) could never be built, so
/// the only way these return at all is by counting before expanding.
#[test]
fn astronomically_large_sweeps_are_refused_by_counting() {
    let values =
        |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(",\n");
    let sizes = values(1000, &|i| format!("\"{}KiB\"", 16 * (i + 1)));
    let ints = values(1000, &|i| (i + 1).to_string());
    let text = format!(
        "name = \"huge\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\nsweep = {{ size = [{sizes}], \"measure.batch\" = [{ints}], \"measure.warmup\" = [{ints}], \"measure.min_samples\" = [{ints}], \"measure.max_samples\" = [{ints}], ring = [{ints}] }}\n"
    );
    let e = scenario::parse("huge.toml", &text).map(|s| s.cases.len());
    let e = e.expect_err("10^18 cases must be refused").to_string();
    assert!(
        e.contains("expands to 1000000000000000000 cases; the limit is 100000"),
        "{e}"
    );
    // A seventh axis of 1000 threads values: 10^21 overflows u64 and must still be refused.
    let text = text.replace(
        "ring = [",
        &format!(
            "threads = [{}], ring = [",
            values(1000, &|i| (i % 256 + 1).to_string())
        ),
    );
    let e = scenario::parse("huge.toml", &text).map(|s| s.cases.len());
    assert!(e.is_err_and(|e| e.to_string().contains("the limit is 100000")));
}

#[test]
fn many_blocks_under_the_limit_each_are_refused_in_total() {
    let block = |i: usize| {
        format!(
            "[[case]]\nlabel = \"c{i}\"\nsweep = {{ \"measure.batch\" = [{}], ring = [{}] }}\n",
            (1..=100)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            (1..=100)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    // 11 blocks of 10^4 cases: each is fine, together they exceed 10^5.
    let text = format!(
        "name = \"many\"\ndescription = \"d\"\n{}",
        (0..11).map(block).collect::<String>()
    );
    let e = scenario::parse("many.toml", &text).map(|s| s.cases.len());
    let e = e
        .expect_err("110000 cases in total must be refused")
        .to_string();
    assert!(
        e.contains("the sweeps of this file expand to 110000 cases, counting up to case `c10`"),
        "{e}"
    );
}

/// The exact message of each results CSV that must be refused, after its path (`<f>`).
#[test]
fn malformed_results_csvs_are_refused_with_exact_messages() {
    for (file, message) in [
        (
            "schema-v2.csv",
            "<f> cannot be used: line 2 has schema_version `2`, this pinscope reads version 1; re-run the scenario or use the pinscope that wrote it",
        ),
        (
            "missing-column.csv",
            "<f> cannot be used: it has no `lane` column (is it a pinscope results CSV?)",
        ),
        // Names line and column.
        (
            "bad-number.csv",
            "<f> cannot be used: line 3: `size_bytes` is `lots`, not a whole number",
        ),
        (
            "toml-as-results.csv",
            "<f> cannot be used: it has no `schema_version` column, so it is not a pinscope results CSV",
        ),
    ] {
        assert_eq!(
            after_path(&must_reject_results(file), file),
            message,
            "{file}"
        );
    }
}

/// Files that are no CSV at all: how the message starts and a word it must contain.
#[test]
fn unreadable_results_files_are_refused() {
    for (file, start, part) in [
        (
            "png-header.csv",
            "<f> cannot be used: it is not a readable CSV (",
            "line 1",
        ),
        ("empty.csv", "<f> cannot be used: ", "schema_version"),
    ] {
        let e = after_path(&must_reject_results(file), file);
        assert!(e.starts_with(start) && e.contains(part), "{file}: {e}");
    }
}

/// The message of a sidecar that must be refused as bad results, after its path (`<f>`).
fn must_reject_sidecar(name: &str) -> String {
    let path = malformed(name);
    let e = Sidecar::read(&path).expect_err(name);
    assert_results_rejection(&e, &path.display().to_string()).unwrap_or_else(|f| panic!("{f}"));
    after_path(&e.to_string(), name)
}

#[test]
fn sidecar_of_another_schema_version_is_refused() {
    assert_eq!(
        must_reject_sidecar("sidecar-v2.json"),
        "<f> cannot be used: its schema_version is 2, this pinscope reads version 1"
    );
}

#[test]
fn truncated_sidecar_is_not_valid_json() {
    let e = must_reject_sidecar("truncated.json");
    assert!(
        e.starts_with("<f> cannot be used: it is not valid JSON (EOF while parsing"),
        "{e}"
    );
}

#[test]
fn non_utf8_sidecar_is_bad_results_not_an_io_error() {
    let e = Sidecar::from_bytes(
        Path::new("s.json"),
        b"{\"schema_version\": 1, \"x\": \"\xff\"}",
    )
    .expect_err("not UTF-8");
    assert!(matches!(e, Error::BadResults { .. }), "{e}");
}

#[test]
fn every_malformed_file_has_a_test() {
    // A file added to the corpus without a regression test above is a mistake.
    let src = include_str!("robustness.rs");
    let dir = fixture("malformed");
    let names = entry_names(&dir);
    assert!(names.len() >= 15, "corpus is missing: {names:?}");
    for n in names {
        let quoted = format!("\"{n}\"");
        assert!(src.contains(&quoted), "{n} has no test in robustness.rs");
    }
}

// ---------------------------------------------------------------------------------------------
// Flush per case, atomic sidecar, partial runs
// ---------------------------------------------------------------------------------------------

fn fixture_rows() -> Vec<Row> {
    results::read_rows(&fixture("runs/h200-headline.csv")).unwrap_or_else(|e| panic!("{e}"))
}

fn fixture_sidecar() -> Sidecar {
    Sidecar::read(&fixture("runs/h200-headline.json")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn write_case_flushes_before_the_writer_is_dropped() {
    let rows = fixture_rows();
    assert!(rows.len() >= 2, "fixture has {} rows", rows.len());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("run.csv");
    let mut w = ResultsWriter::create(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(results::read_rows(&path).map(|r| r.len()).ok(), Some(0));
    let sample = SampleRow {
        case_key: rows[0].case_key.clone(),
        lane: Some(Lane::H2d),
        series: results::Series::Bandwidth,
        index: results::SampleIndex::Number(0),
        t_ms: None,
        value: 55.25,
    };
    w.write_case(&rows[..1], std::slice::from_ref(&sample))
        .unwrap_or_else(|e| panic!("{e}"));
    // The writer is still alive: what a crash now would leave on disk.
    let seen = results::read_rows(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen, rows[..1].to_vec());
    let samples =
        results::read_samples(&results::samples_path(&path)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(samples, vec![sample]);
    w.write_case(&rows[1..2], &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = results::read_rows(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen, rows[..2].to_vec());
    drop(w);
}

/// Text with a newline, ESC or a bidi override, from a CSV anyone may have written, reads back
/// as visible escapes: one line, nothing a terminal acts on.
#[test]
fn escaped_text_reads_back_as_visible_escapes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("evil.csv");
    let mut w = ResultsWriter::create(&path).unwrap_or_else(|e| panic!("{e}"));
    let row = Row {
        case_label: "\u{1b}[31mRED\u{1b}]0;pwned\u{7}".into(),
        case_key: "two\nlines".into(),
        machine: std::sync::Arc::new(MachineKey {
            gpu: "\u{202e}lmth.exe".into(),
            ..MachineKey::default()
        }),
        ..Row::default()
    };
    w.write_case(std::slice::from_ref(&row), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    drop(w);
    let back = results::read_rows(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back[0].case_label, "\\u{1b}[31mRED\\u{1b}]0;pwned\\u{7}");
    assert_eq!(back[0].case_key, "two\\nlines");
    assert_eq!(back[0].machine.gpu, "\\u{202e}lmth.exe");
}

#[test]
fn sidecar_write_atomic_leaves_no_temporary_file_and_reads_back() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("run.json");
    let mut s = fixture_sidecar();
    s.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    s.partial = true;
    s.run_id = "second".into();
    s.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    let names = entry_names(dir.path());
    assert_eq!(
        names,
        vec!["run.json".to_string()],
        "left behind: {names:?}"
    );
    assert_eq!(Sidecar::read(&path).ok(), Some(s));
}

#[test]
fn a_reader_sees_the_old_sidecar_or_the_new_one_never_half() {
    // write_atomic writes a uniquely named temporary file and renames it over the target. A
    // writer that dies after writing its temporary file leaves the old sidecar whole and
    // readable; a file called `run.json.tmp` is not pinscope's and is never touched.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("run.json");
    let old = fixture_sidecar();
    old.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    let full = std::fs::read(&path).unwrap_or_default();
    let tmp = dir.path().join("run.json.tmp");
    std::fs::write(&tmp, &full[..full.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Sidecar::read(&path).ok(), Some(old.clone()));
    // The next write replaces the target in one step and leaves the foreign file alone.
    let mut new = old;
    new.run_id = "new".into();
    new.write_atomic(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        std::fs::read(&tmp).ok().as_deref(),
        Some(&full[..full.len() / 2]),
        "a file pinscope did not create was changed"
    );
    assert_eq!(
        Sidecar::read(&path).map(|s| s.run_id).ok().as_deref(),
        Some("new")
    );
    // And a half-written sidecar (what a non-atomic write could leave) is refused, not misread.
    let e = Sidecar::from_bytes(&path, &full[..full.len() / 2]).expect_err("half a file");
    assert!(e.to_string().contains("it is not valid JSON"), "{e}");
}

fn partial_set(dir: &Path) -> ResultSet {
    let csv = dir.join("partial.csv");
    std::fs::copy(fixture("runs/h200-headline.csv"), &csv).unwrap_or_else(|e| panic!("{e}"));
    let mut s = fixture_sidecar();
    s.partial = true;
    s.finished_at = None;
    s.write_atomic(&results::sidecar_path(&csv))
        .unwrap_or_else(|e| panic!("{e}"));
    ResultSet::load(&csv).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_partial_sidecar_marks_the_set_partial() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let set = partial_set(dir.path());
    assert!(set.is_partial());
    let whole =
        ResultSet::load(&fixture("runs/h200-headline.csv")).unwrap_or_else(|e| panic!("{e}"));
    assert!(!whole.is_partial());
}

#[test]
fn compare_accepts_a_partial_run_and_says_so() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let partial = partial_set(dir.path());
    let whole =
        ResultSet::load(&fixture("runs/h200-headline.csv")).unwrap_or_else(|e| panic!("{e}"));
    let cmp = pinscope::compare::build(&[whole, partial], 0.02);
    assert_eq!(
        cmp.runs.iter().map(|r| r.partial).collect::<Vec<_>>(),
        [false, true]
    );
    assert!(
        cmp.notes
            .iter()
            .any(|n| n.contains("partial.csv) is a partial run")),
        "{:?}",
        cmp.notes
    );
    assert!(!cmp.entries.is_empty());
}

#[test]
fn report_accepts_a_partial_run_and_shows_a_banner() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let partial = partial_set(dir.path());
    let page =
        pinscope::report::render_report(&[partial], &[], "t").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        page.contains("<div class=\"banner\">Partial run"),
        "no banner"
    );
    assert!(
        page.contains("partial.csv"),
        "the banner does not name the file"
    );
}
