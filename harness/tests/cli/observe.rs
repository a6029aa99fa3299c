//! `observe` runs real commands: their exit status and signals are passed on, their process tree
//! is followed, what was seen is written even when they are killed, and `report` turns an
//! observed run into a page that answers in plain words.

use crate::common;

use common::*;
#[test]
fn a_command_that_does_not_exist_is_one_sentence_and_exit_127_with_no_files_left() {
    let d = tempfile::tempdir().expect("dir");
    pinscope()
        .args(["observe", "-q", "-o"])
        .arg(d.path())
        .args(["--", "no-such-command-pinscope-test"])
        .refused(127, "`no-such-command-pinscope-test` was not found");
    assert!(files::entry_names(d.path()).is_empty(), "nothing left");
}

#[test]
fn out_dir_onto_an_existing_file_and_a_zero_interval_are_refused() {
    let d = tempfile::tempdir().expect("dir");
    let f = d.path().join("taken");
    std::fs::write(&f, "mine").expect("file");
    pinscope()
        .args(["observe", "-o"])
        .arg(&f)
        .args(["--", "no-such-command-pinscope-test"])
        .refused(2, "is a file, not a folder");
    assert_eq!(std::fs::read_to_string(&f).expect("kept"), "mine");
    pinscope()
        .args(["observe", "--interval", "0s", "--", "x"])
        .refused(2, "--interval 0s is not a duration above 0");
    pinscope()
        .args(["observe", "--cupti", "/no/such/cupti", "--", "x"])
        .refused(2, "--cupti /no/such/cupti is neither the CUPTI library");
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Stdio};
    use std::time::{Duration, Instant};

    /// The file of `dir` whose name ends with `suffix` (one observed run per folder).
    fn file_ending(dir: &Path, suffix: &str) -> PathBuf {
        let names = files::entry_names(dir);
        let name = names
            .iter()
            .find(|n| n.ends_with(suffix))
            .unwrap_or_else(|| panic!("no *{suffix} in {names:?}"));
        dir.join(name)
    }

    /// The JSON sidecar of the run in `dir`.
    fn sidecar(dir: &Path) -> serde_json::Value {
        let text = std::fs::read_to_string(file_ending(dir, ".observed.json")).expect("sidecar");
        serde_json::from_str(&text).expect("JSON")
    }

    /// `pinscope observe -q -o DIR -- ARGS…`: its exit status.
    fn observe(dir: &Path, args: &[&str]) -> i32 {
        let out = pinscope()
            .args(["observe", "-q", "--interval", "50ms", "-o"])
            .arg(dir)
            .arg("--")
            .args(args)
            .output()
            .expect("pinscope ran");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        out.status.code().expect("an exit status")
    }

    #[test]
    fn the_commands_exit_status_is_pinscopes_and_its_output_its_own() {
        let d = tempfile::tempdir().expect("dir");
        let out = pinscope()
            .args(["observe", "-q", "-o"])
            .arg(d.path())
            .args(["--", "sh", "-c", "echo from-the-command; exit 7"])
            .output()
            .expect("ran");
        assert_eq!(out.status.code(), Some(7));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "from-the-command\n");
        let s = sidecar(d.path());
        assert_eq!(s["ending"]["ended_by"], "exit");
        assert_eq!(s["ending"]["code"], 7);
        assert_eq!(s["command"][0], "sh");
        assert!(s["samples"].as_u64().expect("samples") >= 1);
        let events = std::fs::read_to_string(file_ending(d.path(), ".events.csv")).expect("events");
        assert_eq!(
            events,
            "t_s,duration_s,pid,tid,call,bytes,flags,result,address,library\n"
        );
    }

    #[test]
    fn a_file_that_cannot_be_run_is_one_sentence_and_exit_126() {
        let d = tempfile::tempdir().expect("dir");
        let script = d.path().join("not-executable.sh");
        std::fs::write(&script, "echo hi\n").expect("script");
        let out = d.path().join("out");
        pinscope()
            .args(["observe", "-q", "-o"])
            .arg(&out)
            .arg("--")
            .arg(&script)
            .refused(126, "cannot be run (permission denied, or not a program)");
        assert!(files::entry_names(&out).is_empty(), "nothing left");
    }

    #[test]
    fn a_folder_holding_an_observed_run_still_reports_its_results_csvs() {
        let d = tempfile::tempdir().expect("dir");
        assert_eq!(observe(d.path(), &["true"]), 0);
        copy_run(d.path(), "h200-headline");
        let page = d.path().join("page.html");
        pinscope()
            .args(["report", "-q", "-o"])
            .arg(&page)
            .arg(d.path())
            .assert()
            .success();
        assert_html_page(&page);
    }

    #[test]
    fn a_command_killed_by_a_signal_gives_128_plus_n_and_results_are_written() {
        for (sig, code) in [("INT", 130), ("TERM", 143)] {
            let d = tempfile::tempdir().expect("dir");
            let script = format!("kill -{sig} $$; echo not-killed");
            assert_eq!(observe(d.path(), &["sh", "-c", &script]), code, "SIG{sig}");
            let s = sidecar(d.path());
            assert_eq!(s["ending"]["ended_by"], "signal", "SIG{sig}");
            assert_eq!(s["ending"]["signal"], code - 128);
            let timeline =
                std::fs::read_to_string(file_ending(d.path(), ".timeline.csv")).expect("timeline");
            assert!(timeline.starts_with("t_s,pid,observer,reading,value,unit\n"));
            assert!(timeline.contains(",tree,tree,processes,"), "{timeline}");
        }
    }

    /// Starts `pinscope observe -o DIR -- sleep 30` (in a process group of its own when
    /// `group`) and waits until its timeline has a sample.
    // The child is returned to the test, which waits for it.
    #[allow(clippy::zombie_processes)]
    fn observing_sleep(dir: &Path, group: bool) -> Child {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pinscope"));
        c.args(["observe", "-q", "--interval", "50ms", "-o"])
            .arg(dir)
            .args(["--", "sleep", "30"])
            .stdout(Stdio::null());
        if group {
            use std::os::unix::process::CommandExt;
            c.process_group(0);
        }
        let mut child = c.spawn().expect("pinscope started");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let sampled = files::entry_names(dir)
                .iter()
                .filter(|n| n.ends_with(".timeline.csv"))
                .any(|n| {
                    std::fs::read_to_string(dir.join(n)).is_ok_and(|t| t.contains("processes"))
                });
            if sampled {
                return child;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no sample within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(args: &[&str]) {
        let ok = std::process::Command::new("kill")
            .args(args)
            .status()
            .expect("kill ran");
        assert!(ok.success(), "kill {args:?}");
    }

    #[test]
    fn sigterm_to_pinscope_is_forwarded_and_what_was_seen_is_kept() {
        let d = tempfile::tempdir().expect("dir");
        let child = observing_sleep(d.path(), false);
        kill(&["-TERM", &child.id().to_string()]);
        let out = child.wait_with_output().expect("waited");
        assert_eq!(out.status.code(), Some(143));
        let s = sidecar(d.path());
        assert_eq!(s["ending"]["signal"], 15);
        assert_eq!(s["signals_received"][0], "SIGTERM (forwarded)");
    }

    #[test]
    fn ctrl_c_to_the_process_group_ends_the_command_not_pinscope() {
        let d = tempfile::tempdir().expect("dir");
        let child = observing_sleep(d.path(), true);
        // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
        kill(&["-INT", "--", &format!("-{}", child.id())]);
        let out = child.wait_with_output().expect("waited");
        assert_eq!(out.status.code(), Some(130));
        let s = sidecar(d.path());
        assert_eq!(s["ending"]["signal"], 2);
        assert_eq!(s["signals_received"][0], "SIGINT");
    }

    /// Tree series `reading` of a timeline: (first value, largest value).
    fn first_and_peak(timeline: &str, reading: &str) -> (f64, f64) {
        let values: Vec<f64> = timeline
            .lines()
            .filter_map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                (c.get(1) == Some(&"tree") && c.get(3) == Some(&reading))
                    .then(|| c.get(4)?.parse().ok())?
            })
            .collect();
        let first = *values.first().expect("a value");
        (first, values.iter().copied().fold(first, f64::max))
    }

    #[test]
    fn a_child_holding_memory_is_seen_in_the_tree_and_the_report_says_so() {
        let d = tempfile::tempdir().expect("dir");
        // The shell starts a child that allocates and touches 64 MiB, then sleeps.
        let child = "b = bytearray(64 << 20); b[::4096] = b'x' * (len(b) // 4096); import time; time.sleep(1)";
        let script = format!("sleep 0.2; python3 -c \"{child}\" & wait");
        assert_eq!(observe(d.path(), &["sh", "-c", &script]), 0);
        let s = sidecar(d.path());
        assert!(s["max_processes"].as_u64().expect("count") >= 2, "{s}");
        let timeline =
            std::fs::read_to_string(file_ending(d.path(), ".timeline.csv")).expect("timeline");
        let (first, peak) = first_and_peak(&timeline, "vm_rss");
        assert!(peak - first >= 48.0 * 1048576.0, "VmRSS {first} → {peak}");

        let page = d.path().join("page.html");
        pinscope()
            .args(["report", "-q", "-o"])
            .arg(&page)
            .arg(file_ending(d.path(), ".timeline.csv"))
            .assert()
            .success();
        let html = std::fs::read_to_string(&page).expect("page");
        assert_contains_all(
            &html,
            &[
                "exited with status 0",
                "VmRSS peaked at",
                "from its first reading",
                "allocation events: ",
                "data-plot=\"observed-timeline\"",
            ],
        );
        assert!(
            html.find("VmRSS peaked at") < html.find("<svg"),
            "the answer comes first"
        );
        // The same run named by its sidecar.
        let again = d.path().join("again.html");
        pinscope()
            .args(["report", "-q", "-o"])
            .arg(&again)
            .arg(file_ending(d.path(), ".observed.json"))
            .assert()
            .success();
    }
}
