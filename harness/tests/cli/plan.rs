//! `plan` says what `run` would do: cases refused for the free device memory given, the GPUs a
//! case runs on, hold settings, derived results, and where a shipped scenario was read from.

use crate::common;

use common::*;
use predicates::prelude::*;

// ---- plan says what run would do ----------------------------------------------------------------

/// `pinscope plan` of `text` (written to a file) with `args` after the file: stdout, stderr.
fn plan_with(text: &str, args: &[&str]) -> (String, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("s.toml");
    std::fs::write(&p, text).expect("write");
    let a = pinscope().arg("plan").arg(&p).args(args).assert().success();
    let o = a.get_output();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn plan_refuses_what_does_not_fit_in_the_free_device_memory_given() {
    let text = "name = \"devfree\"\ndescription = \"d\"\n[[case]]\nlabel = \"big\"\nhost = \"pageable\"\nsize = \"2GiB\"\n";
    let (out, _) = plan_with(text, &["--device-free", "1GiB"]);
    assert_contains_all(
        &out,
        &[
            "refused: past the card: needs 2 GiB of 1 GiB free",
            "1 case (1 refused)",
        ],
    );
    let (out, _) = plan_with(text, &["--device-free", "1GiB", "-q"]);
    assert!(out.contains("(1 refused)"), "{out}");
    let (out, _) = plan_with(text, &["--device-free", "4GiB"]);
    assert!(!out.contains("refused"), "{out}");
}

#[test]
fn plan_says_one_gpu_for_a_single_device_index() {
    let body = "description = \"d\"\n[[case]]\nlabel = \"c\"\n";
    let (out, _) = plan_with(&format!("name = \"one\"\ndevices = 99\n{body}"), &[]);
    assert!(
        out.contains("each case runs on GPU 99 (checked when run)"),
        "{out}"
    );
    assert!(!out.contains("with N GPUs"), "{out}");
    let (out, _) = plan_with(&format!("name = \"two\"\ndevices = \"0,1\"\n{body}"), &[]);
    assert!(
        out.contains("each of these 2 GPUs alone, then on all at once (3 runs"),
        "{out}"
    );
    let (out, _) = plan_with(&format!("name = \"all\"\ndevices = \"all\"\n{body}"), &[]);
    assert!(
        out.contains("with N GPUs each case runs on each GPU alone"),
        "{out}"
    );
}

#[test]
fn a_hold_interval_under_a_millisecond_is_refused_and_a_long_hold_is_warned() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("hold.toml");
    std::fs::write(
        &p,
        "name = \"hold\"\ndescription = \"d\"\n[[case]]\nlabel = \"x\"\nprobes = { hold_after_free = \"1h\", hold_interval = \"1us\" }\n",
    )
    .expect("write");
    pinscope()
        .arg("plan")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "hold.toml:5:52: case `x`: `probes.hold_interval` is 1µs: give at least 1ms",
        ))
        .stderr(no_panic());
    let (out, _) = plan_with(
        "name = \"hold\"\ndescription = \"d\"\n[[case]]\nlabel = \"x\"\nprobes = { hold_after_free = \"1h\" }\n",
        &[],
    );
    assert!(
        out.contains("longer than run's default --case-timeout 10m, which would stop it"),
        "{out}"
    );
    let (out, _) = plan_with(
        "name = \"hold\"\ndescription = \"d\"\n[[case]]\nlabel = \"x\"\nprobes = { hold_after_free = \"5s\" }\n",
        &[],
    );
    assert!(!out.contains("--case-timeout"), "{out}");
}

#[test]
fn plan_shows_how_a_derived_result_is_computed() {
    let (out, _) = plan_with(
        r#"name = "load"
description = "d"
[[case]]
label = "pageable"
host = "pageable"
[[case]]
label = "pinned"
host = "alloc"
[[derived]]
text = "time to load the model"
cases = ["pageable", "pinned"]
metric = "time_median_ms"
scale = 1e-3
unit = "s"
"#,
        &[],
    );
    assert!(
        out.contains(
            "derived \"time to load the model\" = time_median_ms of `pageable` + `pinned`, summed, × 0.001, in s"
        ),
        "{out}"
    );
}

#[test]
fn plan_table_aligns_wide_characters() {
    let (out, _) = plan_with(
        r#"name = "wide"
description = "d"
[[case]]
label = "模型加载"
host = "pageable"
[[case]]
label = "model"
host = "alloc"
"#,
        &[],
    );
    // The column after the label starts at the same terminal column on both rows: a CJK
    // character takes two columns, so "模型加载" (8) is padded like an 8-letter label.
    let start_after = |label: &str| {
        let line = out.lines().find(|l| l.contains(label)).expect("row");
        let at = line.find(label).expect("label") + label.len();
        let rest = &line[at..];
        let gap = rest.len() - rest.trim_start().len();
        pinscope::units::display_width(&line[..at]) + gap
    };
    assert_eq!(start_after("模型加载"), start_after("model"), "{out}");
}

// ---- shipped scenarios read from another folder -----------------------------------------------

#[test]
fn a_shipped_scenario_says_it_is_shipped_and_a_missing_file_is_noted() {
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let mut by_name = pinscope();
    by_name
        .current_dir(elsewhere.path())
        .args(["plan", "ollama-like"]);
    let a = by_name.assert().success().stderr("");
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        out.contains(&format!(
            "  shipped with pinscope {version} (as scenarios/ollama-like.toml)"
        )),
        "{out}"
    );
    assert!(!out.contains("from scenarios/"), "{out}");
    // A path to a file that is not there: the shipped copy, and a note that says so.
    let mut by_path = pinscope();
    by_path
        .current_dir(elsewhere.path())
        .args(["plan", "-q", "scenarios/quick.toml"]);
    by_path.assert().success().stderr(format!(
        "note: scenarios/quick.toml does not exist here: using the copy of `quick` shipped with pinscope {version}\n"
    ));
    // The file itself, where it exists: no note.
    pinscope()
        .args(["plan", "-q", "scenarios/quick.toml"])
        .assert()
        .success()
        .stderr("");
}
