//! The malformed-file corpus in `tests/fixtures/malformed/`: each file and the message it must
//! produce.

use super::*;

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
    let src = include_str!("malformed.rs");
    let dir = fixture("malformed");
    let names = entry_names(&dir);
    assert!(names.len() >= 15, "corpus is missing: {names:?}");
    for n in names {
        let quoted = format!("\"{n}\"");
        assert!(
            src.contains(&quoted),
            "{n} has no test in robustness/malformed.rs"
        );
    }
}
