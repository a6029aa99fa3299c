//! Nothing a user types destroys results or hangs pinscope, on the real binary: outputs that
//! would replace an input or a read-only file, concurrent writers of one path, inputs that are
//! not regular files or cannot be read, sidecars and samples of another run, and text from a
//! results CSV that would act on a terminal or split a table row.

use crate::common;

use common::*;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Long enough that only a hang reaches it (each refusal takes milliseconds).
const HANG: Duration = Duration::from_secs(20);

/// The shipped quick scenario.
fn quick() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quick.toml")
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_default()
}

// ---- outputs -------------------------------------------------------------------------------

#[test]
fn report_never_writes_over_its_inputs_or_their_companions() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = copy_run(tmp.path(), "h200-staging-tune");
    let samples = tmp.path().join("h200-staging-tune.samples.csv");
    let json = tmp.path().join("h200-staging-tune.json");
    let before: Vec<Vec<u8>> = [&csv, &samples, &json].iter().map(|p| read(p)).collect();
    let dotted = tmp.path().join(".").join("h200-staging-tune.csv");
    for out in [&csv, &samples, &json, &dotted] {
        pinscope()
            .arg("report")
            .arg(&csv)
            .arg("-o")
            .arg(out)
            .timeout(HANG)
            .refused(2, "this command reads");
    }
    // compare's HTML page, and --force does not make an input writable.
    pinscope()
        .arg("compare")
        .arg(&csv)
        .arg(&csv)
        .arg("--html")
        .arg(&csv)
        .arg("--force")
        .timeout(HANG)
        .refused(2, "is the results CSV this command reads");
    let after: Vec<Vec<u8>> = [&csv, &samples, &json].iter().map(|p| read(p)).collect();
    assert!(before == after, "an input was changed");
}

#[cfg(unix)]
#[test]
fn a_read_only_report_is_replaced_only_with_force() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = copy_run(tmp.path(), "h200-headline");
    let out = tmp.path().join("ro.html");
    std::fs::write(&out, "precious").expect("write");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    pinscope()
        .args(["-q", "report"])
        .arg(&csv)
        .arg("-o")
        .arg(&out)
        .refused(2, "is read-only, so pinscope will not replace it");
    assert_eq!(read(&out), b"precious");
    pinscope()
        .args(["-q", "report"])
        .arg(&csv)
        .arg("-o")
        .arg(&out)
        .arg("--force")
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&read(&out)).contains("<svg"));
}

/// 50 pairs of `report` processes, each pair writing one path at the same time with different
/// titles: no process fails, each path holds one whole page, no temporary file is left and a
/// user's own `*.tmp` beside it is kept.
#[test]
fn fifty_concurrent_pairs_of_writers_each_leave_a_complete_page() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = copy_run(tmp.path(), "h200-headline");
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    let spawn = |pair: usize, who: usize| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pinscope"))
            .arg("report")
            .arg(&csv)
            .arg("-o")
            .arg(out.join(format!("r{pair}.html")))
            .arg("--title")
            .arg(format!("pair {pair} writer {who}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    for pair in 0..50 {
        std::fs::write(out.join(format!("r{pair}.html.tmp")), "mine").expect("write");
    }
    let children: Vec<_> = (0..50)
        .flat_map(|pair| [(pair, 0), (pair, 1)])
        .map(|(pair, who)| (pair, spawn(pair, who)))
        .collect();
    for (pair, child) in children {
        let o = child.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "pair {pair}: {err}");
        assert!(err.contains("wrote "), "pair {pair}: {err}");
    }
    for pair in 0..50 {
        let page = String::from_utf8_lossy(&read(&out.join(format!("r{pair}.html")))).into_owned();
        assert!(
            page.trim_end().ends_with("</html>"),
            "r{pair}.html is not whole"
        );
        assert!(
            page.contains(&format!("pair {pair} writer 0"))
                || page.contains(&format!("pair {pair} writer 1")),
            "r{pair}.html holds another pair's page"
        );
        assert_eq!(read(&out.join(format!("r{pair}.html.tmp"))), b"mine");
    }
    let n = std::fs::read_dir(&out).map(|d| d.count()).unwrap_or(0);
    assert_eq!(n, 100, "temporary files were left behind");
}

#[cfg(target_os = "linux")]
#[test]
fn an_output_that_cannot_be_created_is_named_as_given() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = copy_run(tmp.path(), "h200-headline");
    pinscope()
        .arg("report")
        .arg(&csv)
        .args(["-o", "/proc/x"])
        .refused(2, "/proc/x cannot be written");
}

// ---- inputs --------------------------------------------------------------------------------

/// Every kind of input, given as a FIFO with no writer, is refused at once (it used to block
/// forever in open()).
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_as_every_kind_of_input() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let fifo = |name: &str| {
        let p = dir.join(name);
        let ok = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfifo {name}");
        p
    };
    let toml = fifo("f.toml");
    let csv = fifo("f.csv");
    let out = dir.join("o.html");
    for args in [
        vec!["plan".into(), toml.clone()],
        vec!["run".into(), toml],
        vec!["report".into(), csv.clone(), "-o".into(), out.clone()],
    ] {
        pinscope()
            .args(&args)
            .timeout(HANG)
            .refused(2, "it is a FIFO (named pipe), not a regular file");
    }
    // Samples file and sidecar beside a real CSV, and an nvbandwidth file.
    let real = copy_run(dir, "h200-staging-tune");
    for companion in ["h200-staging-tune.samples.csv", "h200-staging-tune.json"] {
        let p = dir.join(companion);
        std::fs::remove_file(&p).expect("rm");
        fifo(companion);
        pinscope()
            .arg("report")
            .arg(&real)
            .arg("-o")
            .arg(&out)
            .timeout(HANG)
            .refused(2, format!("{companion} cannot be read: it is a FIFO"));
        std::fs::remove_file(&p).expect("rm");
        std::fs::copy(run_fixture(companion), &p).expect("copy");
    }
    let nvb = fifo("nvb.json");
    pinscope()
        .arg("report")
        .arg(&real)
        .arg("-o")
        .arg(&out)
        .arg("--nvbandwidth")
        .arg(&nvb)
        .timeout(HANG)
        .refused(2, "nvb.json cannot be read: it is a FIFO");
    assert!(!out.exists());
}

#[cfg(target_os = "linux")]
#[test]
fn devices_and_unreadable_files_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let never = dir.path().join("never-written.html");
    for dev in ["/dev/zero", "/dev/urandom"] {
        pinscope()
            .args(["plan", dev])
            .timeout(HANG)
            .refused(2, "it is a device, not a regular file");
        pinscope()
            .args(["report", dev, "-o"])
            .arg(&never)
            .timeout(HANG)
            .refused(2, "it is a device, not a regular file");
    }
    assert!(!never.exists(), "a refused report wrote its output");
    pinscope()
        .args(["plan", "/proc/self/mem"])
        .timeout(HANG)
        .refused(2, "/proc/self/mem cannot be read");
    pinscope()
        .args(["report", "/proc/self/mem", "-o"])
        .arg(dir.path().join("m.html"))
        .timeout(HANG)
        .refused(2, "/proc/self/mem cannot be read");
}

#[test]
fn a_results_csv_over_its_bound_is_refused_before_reading() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("big.csv");
    // Sparse: nothing is written, and pinscope must not read it.
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(pinscope::input::RESULTS_CSV.max_bytes + 1)
        .expect("set_len");
    pinscope()
        .arg("report")
        .arg(&big)
        .arg("-o")
        .arg(tmp.path().join("o.html"))
        .timeout(HANG)
        .refused(2, "pinscope reads results CSVs of at most 1 GiB");
}

// ---- companions of another run ---------------------------------------------------------------

/// The recorded h200-headline run copied into a fresh folder, its `ext` companion (`json`,
/// `samples.csv`) replaced by the staging-tune run's; the folder and the CSV's path.
fn headline_with_companion_of_another_run(ext: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let csv = copy_run(tmp.path(), "h200-headline");
    std::fs::copy(
        run_fixture(&format!("h200-staging-tune.{ext}")),
        tmp.path().join(format!("h200-headline.{ext}")),
    )
    .expect("copy");
    (tmp, csv)
}

#[test]
fn a_sidecar_of_another_run_is_refused() {
    let (_tmp, csv) = headline_with_companion_of_another_run("json");
    pinscope()
        .arg("compare")
        .arg(&csv)
        .arg(run_fixture("h200-headline.csv"))
        .refused(2, "it belongs to run 20261130-042524-461, but");
}

#[test]
fn a_samples_file_of_another_run_is_refused() {
    let (tmp, csv) = headline_with_companion_of_another_run("samples.csv");
    pinscope()
        .arg("report")
        .arg(&csv)
        .arg("-o")
        .arg(tmp.path().join("o.html"))
        .refused(2, "so it belongs to another run");
}

// ---- text from results CSVs ----------------------------------------------------------------

/// A results CSV whose labels carry ESC sequences, BEL, a newline and a bidi override: compare
/// prints them as visible escapes (no control byte reaches the terminal) and a Markdown row
/// stays one line.
#[test]
fn labels_from_a_csv_never_reach_the_terminal_raw() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let evil = tmp.path().join("evil.csv");
    let text = std::fs::read_to_string(run_fixture("h200-headline.csv")).expect("read");
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let label = header
        .split(',')
        .position(|c| c == "case_label")
        .expect("case_label");
    let mut out = vec![header.to_string()];
    for line in lines {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_bytes());
        let rec = rdr.records().next().expect("row").expect("record");
        let mut f: Vec<String> = rec.iter().map(str::to_string).collect();
        f[label] = format!("\u{1b}[31mRED\u{1b}]0;pwned\u{7}\n{}\u{202e}", f[label]);
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&f).expect("row");
        out.push(String::from_utf8(w.into_inner().expect("csv")).expect("utf8"));
    }
    std::fs::write(&evil, out.join("\n")).expect("write");
    let base = run_fixture("h200-headline.csv");
    for format in ["table", "markdown"] {
        let o = pinscope()
            .arg("compare")
            .arg(&evil)
            .arg(&base)
            .args(["--format", format])
            .output()
            .expect("run");
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            stdout.contains("\\u{1b}[31mRED"),
            "{format}: no label shown:\n{stdout}"
        );
        assert!(
            !stdout
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{format}: a control character reached stdout"
        );
        if format == "markdown" {
            // Every line naming the label is a whole table row or a whole list item.
            for row in stdout.lines().filter(|l| l.contains("RED")) {
                assert!(
                    (row.starts_with('|') && row.ends_with('|'))
                        || (row.starts_with("- ") && row.ends_with('.')),
                    "split row: {row}"
                );
            }
        }
    }
}

// ---- command line ----------------------------------------------------------------------------

/// A negative number is a value: it reaches the check, which refuses it in one sentence.
#[test]
fn a_negative_value_reaches_its_check() {
    pinscope()
        .arg("plan")
        .arg(quick())
        .args(["--allow-pinned", "-0.5"])
        .fails(
            2,
            "-0.5 is not a share of RAM a case may pin: give a fraction above 0 and at most 0.9",
        );
    let csv = run_fixture("h200-headline.csv");
    pinscope()
        .arg("compare")
        .arg(&csv)
        .arg(&csv)
        .args(["--noise", "-0.1"])
        .refused(2, "--noise -0.1 is outside 0..1");
}

#[test]
fn a_mistyped_command_is_answered_with_the_command_meant() {
    all_refused(
        2,
        &[
            (
                &["comapre", "a.csv", "b.csv"],
                "did you mean `pinscope compare`?",
            ),
            (
                &["-q", "repotr", "a.csv"],
                "did you mean `pinscope report`?",
            ),
        ],
    );
    // A file of that name is a scenario, as before.
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("plna"), "name = [").expect("write");
    pinscope()
        .current_dir(tmp.path())
        .arg("plna")
        .fails(2, "plna has 1 problem")
        .stderr(predicate::str::contains("did you mean").not());
}

#[test]
fn info_device_is_read_as_run_reads_it() {
    all_refused(
        2,
        &[
            (
                &["info", "--device", "all"],
                "--device all: info looks at one GPU at a time",
            ),
            (&["info", "--device", "x"], "--device x: `x` is not a GPU"),
        ],
    );
}

/// `run --out` naming a file, or a place where nothing can be created, is refused before the
/// driver is loaded (exit 2, not the missing driver's 3).
#[test]
fn run_out_is_checked_before_the_driver() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("file.csv");
    std::fs::write(&file, "x").expect("write");
    pinscope()
        .arg("run")
        .arg(quick())
        .arg("--out")
        .arg(&file)
        .refused(2, "is a file, not a folder");
    #[cfg(target_os = "linux")]
    pinscope()
        .arg("run")
        .arg(quick())
        .args(["--out", "/proc/x"])
        .refused(2, "/proc/x cannot hold the results files");
}
