//! Claims and their metrics, and input that must be refused without a panic.

use super::tests::*;
use super::*;

// ---- claims -----------------------------------------------------------------------------------

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
