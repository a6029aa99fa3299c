//! The real `pinscope` binary on failure paths: exit codes (2 bad input, 3 no GPU/driver), one
//! sentence on stderr, never a panic or a backtrace. Tests that need the GPU to be *absent* check
//! for the driver first and say so when they cannot apply (on the GPU machine).

use crate::common;

use common::*;
use predicates::prelude::*;

const NEEDS_DRIVER: &str = "pinscope needs an NVIDIA GPU with its driver installed";

#[test]
fn run_without_a_gpu_exits_3_with_one_line() {
    without_driver("run_without_a_gpu_exits_3_with_one_line", || {
        let out = tempfile::tempdir().expect("tempdir");
        pinscope()
            .args(["run", "scenarios/quick.toml", "--out"])
            .arg(out.path())
            .refused(3, "no NVIDIA driver found")
            .stderr(predicate::str::contains(NEEDS_DRIVER));
        // Nothing was written for a run that never started.
        let left: Vec<_> = std::fs::read_dir(out.path()).expect("dir").collect();
        assert!(left.is_empty(), "files written: {left:?}");
    });
}

#[test]
fn implicit_run_without_a_gpu_and_empty_library_path_exits_3() {
    without_driver(
        "implicit_run_without_a_gpu_and_empty_library_path_exits_3",
        || {
            let out = tempfile::tempdir().expect("tempdir");
            pinscope()
                .env("LD_LIBRARY_PATH", "")
                .args(["scenarios/quick.toml", "--out"])
                .arg(out.path())
                .refused(3, NEEDS_DRIVER);
        },
    );
}

#[test]
fn info_without_a_gpu_describes_the_machine_and_exits_3() {
    without_driver(
        "info_without_a_gpu_describes_the_machine_and_exits_3",
        || {
            pinscope()
                .arg("info")
                .assert()
                .code(3)
                .stdout(predicate::str::contains("GPU: none usable"))
                .stdout(predicate::str::contains("no NVIDIA driver found"))
                .stdout(predicate::str::contains("platform:"))
                .stdout(predicate::str::contains("ram:"))
                .stderr(no_panic());
        },
    );
}

#[test]
fn info_json_without_a_gpu_is_valid_json_with_the_machine() {
    without_driver(
        "info_json_without_a_gpu_is_valid_json_with_the_machine",
        || {
            let out = pinscope().args(["info", "--json"]).output().expect("runs");
            // Only JSON on stdout (the sentence about the GPU goes to stderr and into the JSON),
            // and the same exit code as `info`.
            assert_eq!(out.status.code(), Some(3));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
            assert!(
                v["machine"]["ram_bytes"].as_u64().is_some_and(|r| r > 0),
                "{v}"
            );
            assert!(v["observers"].is_array(), "{v}");
            assert!(no_panic().eval(&String::from_utf8_lossy(&out.stderr)));
        },
    );
}

#[test]
fn bad_scenario_exits_2_with_path_line_col() {
    let bad = fixture("malformed/wrong-types.toml");
    let shown = bad.display().to_string();
    pinscope()
        .arg("run")
        .arg(&bad)
        .fails(
            2,
            format!(
                "  {shown}:8:11: `streams` must be a whole number from 1 to 16, not a string\n"
            ),
        )
        .stderr(predicate::str::starts_with(format!(
            "error: {shown} has 2 problems\n"
        )));
}

/// Validation comes first: even without a driver a broken file is exit 2, not 3. After `--` a
/// scenario still means `run` (refused here for what is in it, not for the `--`).
#[test]
fn bad_scenario_is_refused_before_the_gpu_is_needed() {
    for before in [&[][..], &["--"][..]] {
        pinscope()
            .args(before)
            .arg(fixture("malformed/truncated.toml"))
            .fails(2, "truncated.toml:6:11: TOML syntax error");
    }
}

#[test]
fn non_utf8_scenario_exits_2_located() {
    pinscope()
        .arg("plan")
        .arg(fixture("malformed/not-utf8.toml"))
        .fails(2, "not-utf8.toml:2:34: the file is not UTF-8 text");
}

#[test]
fn missing_scenario_file_exits_2_with_one_sentence() {
    pinscope()
        .args(["run", "scenarios/does-not-exist.toml"])
        .refused(2, "scenarios/does-not-exist.toml")
        .stderr(predicate::str::contains("does not exist: check the path"));
}

#[test]
fn missing_scenario_file_for_plan_exits_2() {
    pinscope()
        .args(["plan", "nowhere.toml"])
        .refused(2, "nowhere.toml");
}

#[test]
fn allow_pinned_out_of_range_exits_2() {
    for cmd in ["run", "plan"] {
        pinscope()
            .args([cmd, "--allow-pinned", "2", "scenarios/quick.toml"])
            .fails(2, "--allow-pinned")
            .stderr(predicate::str::contains("0.9"));
    }
}

#[test]
fn allow_pinned_not_a_number_is_a_usage_error() {
    pinscope()
        .args(["run", "--allow-pinned", "lots", "scenarios/quick.toml"])
        .fails(2, "--allow-pinned");
}

#[test]
fn pinned_cap_above_75_percent_of_ram_is_refused() {
    // The rule itself, on any machine: 13 GiB of 16 GiB is above 75%.
    let ram = 16 * pinscope::units::GIB;
    let e = pinscope::run::ceiling_cap(Some("13GiB"), ram).expect_err("above 75% is refused");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("more than 75%"), "{e}");
    assert_eq!(
        pinscope::run::ceiling_cap(Some("12GiB"), ram).ok(),
        Some(12 * pinscope::units::GIB)
    );
    let e = pinscope::run::ceiling_cap(Some("-1GiB"), ram).expect_err("not a size");
    assert_eq!(e.exit_code(), 2);
}

#[test]
fn bad_option_values_of_run_exit_2_before_the_gpu_is_opened() {
    for (option, says) in [
        (
            ["--case-timeout", "soon"],
            "--case-timeout: `soon` is not a duration",
        ),
        // Like `--allow-pinned`, a bad `--pinned-cap` is refused before a GPU is needed: exit 2,
        // not 3, on a machine without one.
        (["--pinned-cap", "1000TiB"], "more than 75%"),
    ] {
        pinscope()
            .arg("run")
            .args(option)
            .arg("scenarios/quick.toml")
            .refused(2, says);
    }
}

#[test]
fn compare_with_one_file_is_a_usage_error() {
    pinscope()
        .arg("compare")
        .arg(fixture("runs/h200-headline.csv"))
        .fails(2, "2 values required")
        .stderr(predicate::str::contains("Usage: pinscope compare"));
}

#[test]
fn compare_on_a_non_csv_names_the_file() {
    for bad in [
        "png-header.csv",
        "toml-as-results.csv",
        "empty.csv",
        "schema-v2.csv",
    ] {
        let path = fixture("malformed").join(bad);
        pinscope()
            .arg("compare")
            .arg(fixture("runs/h200-headline.csv"))
            .arg(&path)
            .refused(2, format!("error: {} cannot be used: ", path.display()));
    }
}

#[test]
fn compare_on_a_missing_file_exits_2_naming_it() {
    pinscope()
        .arg("compare")
        .arg(fixture("runs/h200-headline.csv"))
        .arg("no-such-run.csv")
        .refused(2, "no-such-run.csv");
}

#[test]
fn compare_with_a_bad_sidecar_names_the_sidecar() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("other.csv");
    std::fs::copy(fixture("runs/h200-headline.csv"), &csv).expect("copy");
    std::fs::copy(
        fixture("malformed/sidecar-v2.json"),
        dir.path().join("other.json"),
    )
    .expect("copy");
    pinscope()
        .arg("compare")
        .arg(fixture("runs/h200-headline.csv"))
        .arg(&csv)
        .refused(2, "other.json cannot be used: its schema_version is 2");
}

#[test]
fn report_on_a_non_csv_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    pinscope()
        .arg("report")
        .arg(fixture("malformed/png-header.csv"))
        .arg("-o")
        .arg(dir.path().join("r.html"))
        .refused(2, "png-header.csv cannot be used");
    assert!(!dir.path().join("r.html").exists());
}

#[test]
fn plan_accepts_every_shipped_scenario() {
    let mut n = 0;
    for entry in std::fs::read_dir(repo().join("harness/scenarios")).expect("harness/scenarios/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|x| x == "toml") {
            n += 1;
            pinscope()
                .arg("plan")
                .arg(&path)
                .assert()
                .success()
                .stdout(predicate::str::is_empty().not())
                .stderr(no_panic());
        }
    }
    assert!(n >= 4, "only {n} shipped scenarios found");
}

/// An installed binary has no repository beside it: shipped scenarios are found by name from any
/// folder, by the path the documents use, and listed with their question.
#[test]
fn shipped_scenarios_are_found_by_name_from_any_folder() {
    let elsewhere = tempfile::tempdir().expect("tempdir");
    for arg in [
        "ollama-like",
        "ollama-like.toml",
        "scenarios/ollama-like.toml",
    ] {
        pinscope()
            .current_dir(elsewhere.path())
            .args(["plan", arg])
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "shipped with pinscope 0.1.0 (as scenarios/ollama-like.toml)",
            ))
            .stderr(no_panic());
    }
    pinscope()
        .current_dir("/")
        .args(["plan", "-q", "ollama-like"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("ollama-like: "));
    pinscope()
        .current_dir(elsewhere.path())
        .args(["plan", "olama-like"])
        .refused(2, "olama-like does not exist")
        .stderr(predicate::str::contains("did you mean `ollama-like`?"));
}

#[test]
fn a_file_in_the_current_folder_is_used_before_a_shipped_scenario() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(repo().join("harness/scenarios/quick.toml")).expect("read");
    let mine = text.replacen("name = \"quick\"", "name = \"mine\"", 1);
    assert_ne!(mine, text, "quick.toml has a name line");
    std::fs::write(dir.path().join("quick.toml"), mine).expect("write");
    let plan = pinscope()
        .current_dir(dir.path())
        .args(["plan", "-q", "quick.toml"])
        .stdout_ok();
    assert!(plan.starts_with("mine: "), "{plan}");
}

#[test]
fn scenarios_lists_each_with_its_question_and_show_prints_one() {
    let list = pinscope()
        .arg("scenarios")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list = String::from_utf8(list).expect("UTF-8");
    for entry in std::fs::read_dir(repo().join("harness/scenarios")).expect("harness/scenarios/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|x| x == "toml") {
            let name = path
                .file_stem()
                .expect("stem")
                .to_string_lossy()
                .into_owned();
            assert!(
                list.lines()
                    .any(|l| l.split_whitespace().next() == Some(name.as_str())),
                "{name} is listed:\n{list}"
            );
        }
    }
    let file = std::fs::read_to_string(repo().join("harness/scenarios/quick.toml")).expect("read");
    pinscope()
        .current_dir("/")
        .args(["scenarios", "show", "quick"])
        .assert()
        .success()
        .stdout(file);
    pinscope()
        .args(["scenarios", "show", "quik"])
        .refused(2, "`quik` is not a shipped scenario: did you mean `quick`?");
}

#[test]
fn version_prints_name_and_version() {
    pinscope()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("pinscope {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_shows_examples() {
    pinscope()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"))
        .stdout(predicate::str::contains(
            "pinscope plan scenarios/ollama-like.toml",
        ))
        .stdout(predicate::str::contains(
            "pinscope compare windows.csv wsl2.csv",
        ));
}

#[test]
fn no_arguments_is_a_usage_error() {
    pinscope().fails(2, "Usage:");
}

#[test]
fn unknown_subcommand_like_path_is_treated_as_a_missing_scenario() {
    // `pinscope foo` means `pinscope run foo`: a missing file, not a clap error about `foo`.
    pinscope().arg("foo").refused(2, "foo");
}

#[test]
fn a_bad_device_list_is_refused_before_the_gpu_is_touched() {
    for (arg, says) in [
        ("0,x", "--device 0,x: `x` is not a GPU"),
        ("1,1", "--device 1,1: GPU 1 is listed twice in `1,1`"),
        ("", "--device : no GPU given"),
    ] {
        pinscope()
            .args(["run", "scenarios/quick.toml", "--device", arg])
            .refused(2, says);
    }
}

#[test]
fn scenarios_asking_for_different_gpus_need_device_on_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.toml");
    let b = dir.path().join("b.toml");
    std::fs::write(
        &a,
        "name = \"a\"\ndescription = \"q\"\ndevices = \"all\"\n[[case]]\nlabel = \"x\"\n",
    )
    .expect("write");
    std::fs::write(
        &b,
        "name = \"b\"\ndescription = \"q\"\ndevices = [1]\n[[case]]\nlabel = \"x\"\n",
    )
    .expect("write");
    pinscope()
        .arg("run")
        .arg(&a)
        .arg(&b)
        .refused(2, "asks for devices = \"1\"")
        .stderr(predicate::str::contains(
            "run them separately or pass --device",
        ));
}

#[test]
fn all_gpus_without_a_driver_is_the_no_gpu_sentence() {
    without_driver("all_gpus_without_a_driver_is_the_no_gpu_sentence", || {
        pinscope()
            .args(["run", "scenarios/multi-gpu.toml"])
            .refused(3, NEEDS_DRIVER);
    });
}

#[test]
fn plan_says_a_multi_gpu_scenario_runs_each_case_several_times() {
    let plan = pinscope()
        .args(["plan", "scenarios/multi-gpu.toml"])
        .stdout_ok();
    assert_contains_all(
        &plan,
        &[
            "devices = \"all\": with N GPUs each case runs on each GPU alone, then on all at once (N + 1 runs",
        ],
    );
}

// ---- standard output closed by its reader ----------------------------------------------------

/// Runs `pinscope args` in `dir` with its standard output read by a reader that closes it after
/// one line; returns the exit code and stderr.
fn read_one_line_then_close(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinscope"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut first = String::new();
    {
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout).read_line(&mut first).expect("reads");
        // Dropped here: the reader goes away, as `head -1` does.
    }
    assert!(!first.is_empty(), "{args:?} printed a first line");
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut err)
        .expect("stderr");
    let status = child.wait().expect("ends");
    (status.code(), err)
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_exit_0() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // 1 000 cases: a table far larger than a pipe's buffer, so writes meet the closed pipe.
    let mut text = String::from("name = \"big\"\ndescription = \"a thousand cases\"\n");
    for i in 0..1000 {
        text.push_str(&format!(
            "[[case]]\nlabel = \"case number {i} with a long label\"\nhost = \"pageable\"\n"
        ));
    }
    std::fs::write(tmp.path().join("big.toml"), text).expect("write");
    let commands: [&[&str]; 6] = [
        &["plan", "big.toml"],
        &["plan", "-q", "big.toml", "big.toml"],
        &["scenarios"],
        &["scenarios", "show", "quick"],
        &["completions", "bash"],
        &["man"],
    ];
    for args in commands {
        let (code, err) = read_one_line_then_close(tmp.path(), args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(no_panic().eval(&err), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    }
}

// ---- numbers and values written with a minus sign ----------------------------------------------

#[test]
fn a_negative_number_gets_pinscopes_own_sentence_not_claps_tip() {
    let out = tempfile::tempdir().expect("tempdir");
    let out_dir = out.path().to_string_lossy().into_owned();
    for (args, says) in [
        (
            vec!["check", "--min-h2d", "-5"],
            "--min-h2d -5 is not a bandwidth",
        ),
        (
            vec!["check", "--min-link-share", "-1"],
            "--min-link-share -1 is not a share",
        ),
        (vec!["check", "--device", "-1"], "--device -1:"),
        (vec!["info", "--device", "-1"], "--device -1:"),
        (
            vec![
                "run",
                "--out-dir",
                &out_dir,
                "--device",
                "-1",
                "scenarios/quick.toml",
            ],
            "--device -1:",
        ),
        (
            vec![
                "run",
                "--out-dir",
                &out_dir,
                "--case-timeout",
                "-5m",
                "scenarios/quick.toml",
            ],
            "--case-timeout:",
        ),
        (
            vec!["plan", "--device-free", "-1GiB", "scenarios/quick.toml"],
            "--device-free:",
        ),
    ] {
        pinscope()
            .args(&args)
            .refused(2, says)
            .stderr(predicate::str::contains("tip:").not());
    }
}

#[test]
fn allow_pinned_has_one_rule_and_one_sentence_in_run_and_plan() {
    let out = tempfile::tempdir().expect("tempdir");
    for value in ["0", "-0.1", "0.95", "2"] {
        let stderr: Vec<String> = ["run", "plan"]
            .iter()
            .map(|cmd| {
                let mut c = pinscope();
                c.arg(cmd)
                    .args(["--allow-pinned", value, "scenarios/quick.toml"]);
                if *cmd == "run" {
                    c.arg("--out-dir").arg(out.path());
                }
                let a = c.fails(2, "give a fraction above 0 and at most 0.9");
                String::from_utf8_lossy(&a.get_output().stderr).into_owned()
            })
            .collect();
        assert_eq!(stderr[0], stderr[1], "--allow-pinned {value}");
    }
    // 0.9 itself is allowed by both.
    pinscope()
        .args([
            "plan",
            "--allow-pinned",
            "0.9",
            "-q",
            "scenarios/quick.toml",
        ])
        .stdout_ok();
}

// ---- the same run given twice, rows repeated in a file ----------------------------------------

#[test]
fn report_and_compare_note_a_run_given_twice_and_repeated_rows() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = copy_run(tmp.path(), "h200-headline");
    let html = tmp.path().join("page.html");
    pinscope()
        .arg("report")
        .arg(&csv)
        .arg(&csv)
        .arg("-o")
        .arg(&html)
        .assert()
        .success()
        .stderr(predicate::str::contains("hold the same run (run id"));
    pinscope()
        .arg("compare")
        .arg(&csv)
        .arg(&csv)
        .assert()
        .success()
        .stderr(predicate::str::contains("hold the same run (run id"));
    // Every row twice: each repeated case is named once.
    let text = std::fs::read_to_string(&csv).expect("csv");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    let rows: Vec<&str> = lines.collect();
    let doubled = tmp.path().join("doubled.csv");
    let mut out = format!("{header}\n");
    for r in rows.iter().chain(&rows) {
        out.push_str(r);
        out.push('\n');
    }
    std::fs::write(&doubled, out).expect("write");
    let a = pinscope()
        .arg("report")
        .arg(&doubled)
        .arg("-o")
        .arg(&html)
        .assert()
        .success()
        .stderr(no_panic());
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    let notes = err
        .lines()
        .filter(|l| l.contains(" 2 times: every copy is read"))
        .count();
    assert_eq!(notes, rows.len(), "{err}");
    assert!(err.contains("doubled.csv has the row of case `"), "{err}");
}

// ---- info and check without a GPU ------------------------------------------------------------

#[test]
fn info_and_check_json_share_one_envelope_and_host_settings() {
    without_driver(
        "info_and_check_json_share_one_envelope_and_host_settings",
        || {
            let json = |args: &[&str]| -> serde_json::Value {
                let out = pinscope().args(args).output().expect("runs");
                assert_eq!(out.status.code(), Some(3), "{args:?}");
                serde_json::from_slice(&out.stdout).expect("JSON")
            };
            let info = json(&["info", "--json"]);
            let check = json(&["check", "--json"]);
            for v in [&info, &check] {
                assert_eq!(v["pinscope_version"], env!("CARGO_PKG_VERSION"), "{v}");
                assert_eq!(v["exit_code"], 3, "{v}");
                assert!(v["gpu_unavailable"].is_string(), "{v}");
            }
            // The host's settings are read without a GPU, by both.
            assert!(check["settings"].is_object(), "{check}");
            assert_eq!(check["settings"], info["machine"]["settings"]);
            // The text form says once that the GPU settings are unavailable.
            let text = pinscope().arg("info").output().expect("runs");
            let text = String::from_utf8_lossy(&text.stdout);
            assert!(!text.contains("unavailable: no usable GPU"), "{text}");
            assert_eq!(
                text.lines()
                    .filter(|l| l.contains("settings unavailable (no usable GPU): "))
                    .count(),
                1,
                "{text}"
            );
        },
    );
}
