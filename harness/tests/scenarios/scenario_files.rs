//! Scenario files end to end: fixtures under tests/fixtures/scenarios, the shipped scenarios, the
//! plan table and `pinscope plan` itself.

use pinscope::Error;
use pinscope::scenario::{self, Case, Direction, Engine, HostKind, Mode, Scenario};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scenarios")
        .join(name)
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

fn pinscope() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_pinscope"))
}

/// What `pinscope plan` prints, and its exit status, for `paths`.
fn plan(paths: &[PathBuf]) -> std::process::Output {
    let out = pinscope().arg("plan").args(paths).output().ok();
    let Some(out) = out else {
        panic!("could not run pinscope")
    };
    out
}

fn load_ok(path: &Path) -> Scenario {
    match scenario::load(path) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The cases of `s` that `keep` selects, in order.
fn cases_where(s: &Scenario, keep: impl Fn(&Case) -> bool) -> Vec<&Case> {
    s.cases.iter().filter(|c| keep(c)).collect()
}

/// The sizes (bytes) of the cases of `s` that `keep` selects, in order.
fn sizes_where(s: &Scenario, keep: impl Fn(&Case) -> bool) -> Vec<u64> {
    cases_where(s, keep).iter().map(|c| c.size).collect()
}

/// index, label, axes (as the results file writes them), key.
type Row = (usize, String, String, String);

#[test]
fn golden_sweep_expansion() {
    let s = load_ok(&fixture("golden-sweep.toml"));
    let got: Vec<Row> = s
        .cases
        .iter()
        .map(|c| (c.index, c.label.clone(), c.axes.to_string(), c.key()))
        .collect();
    let axes = |d: &str, size: &str| format!("direction={d};size={size}");
    let key = |d: &str, bytes: u64| {
        format!(
            "golden/grid/host=alloc,flags=none,engine=copy,direction={d},mode=direct,size={bytes},chunk=0,ring=3,streams=1,threads=auto"
        )
    };
    let grid = |i: usize, d: &str, size: &str, bytes: u64| {
        (i, "grid".to_string(), axes(d, size), key(d, bytes))
    };
    assert_eq!(
        got,
        vec![
            grid(0, "h2d", "64MiB", 64 << 20),
            grid(1, "h2d", "512MiB", 512 << 20),
            grid(2, "h2d", "4096", 4096),
            grid(3, "d2h", "64MiB", 64 << 20),
            grid(4, "d2h", "512MiB", 512 << 20),
            grid(5, "d2h", "4096", 4096),
            (
                6,
                "fixed".to_string(),
                String::new(),
                "golden/fixed/host=alloc,flags=none,engine=copy,direction=bidirectional,mode=direct,size=1073741824,chunk=0,ring=3,streams=1,threads=auto".to_string()
            ),
        ]
    );
    assert!(s.cases.iter().all(|c| c.scenario == "golden"
        && c.measure.min_samples == 3
        && c.measure.max_samples == 4
        && c.measure.batch == 0));
    assert!(s.text.contains("[[case]]"));
    assert!(s.path.ends_with("golden-sweep.toml"));
}

#[test]
fn every_problem_of_a_file_is_reported_at_once() {
    let path = fixture("invalid-many.toml");
    let err = match scenario::load(&path) {
        Err(e) => e,
        Ok(_) => panic!("invalid-many.toml parsed"),
    };
    assert_eq!(err.exit_code(), 2);
    let Error::Scenario(p) = &err else {
        panic!("{err}")
    };
    let got: Vec<String> = p
        .items
        .iter()
        .map(|p| format!("{}:{}: {}", p.line, p.column, p.message))
        .collect();
    assert_eq!(
        got,
        vec![
            "5:1: unknown sweep axis `sizes` in [sweep]; did you mean `size`?",
            "16:1: unknown key `chunks` in [[case]] #2; did you mean `chunk`?",
            "19:9: label `zero-copy` is already used by [[case]] #1 (line 7): labels must be unique",
            "20:11: `streams` must be a whole number from 1 to 16, not 32",
        ]
    );
    // [sweep] has a problem, so no combination is checked (the kernel/pageable case is not
    // reported until the sweep is fixed) and the message does not pile up.
    let text = err.to_string();
    assert!(text.starts_with(&format!("{} has 4 problems\n  ", path.display())));
}

#[test]
fn combinations_are_checked_once_values_are_valid() {
    let text = "name = \"x\"\ndescription = \"q\"\n[sweep]\nsize = [\"64MiB\"]\n[[case]]\nlabel = \"zero-copy\"\nhost = \"pageable\"\nengine = \"kernel\"\n";
    let err = scenario::parse("x.toml", text).err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "x.toml has 1 problem\n  x.toml:8:10: case `zero-copy`: zero-copy kernel access needs mapped memory: add \"mapped\" to flags (host = \"alloc\" or \"register\") or use host = \"managed\""
        )
    );
}

#[test]
fn plan_table_for_a_small_scenario() {
    let s = load_ok(&fixture("plan-small.toml"));
    let table = scenario::plan_table(&s, Some(8 << 30), 0.25);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "plan-small: What does the plan table show?");
    assert!(lines.contains(&"axes:"));
    assert!(
        lines.contains(&"  size: 2 values (256MiB, 4GiB)"),
        "{table}"
    );
    let header = lines
        .iter()
        .find(|l| l.trim_start().starts_with("#  label"))
        .copied();
    assert_eq!(
        header,
        Some(
            "#  label   host      flags  engine  dir  mode    size     chunk×ring  pinned   device   est. time  note"
        ),
        "{table}"
    );
    let row = |i: usize| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{i}  ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        row(0).as_deref(),
        Some("0 pinned alloc none copy h2d direct 256 MiB - 256 MiB 256 MiB 0.6 s")
    );
    assert_eq!(
        row(1).as_deref(),
        Some(
            "1 pinned alloc none copy h2d direct 4 GiB - 4 GiB 4 GiB 2.2 s refused: pins 4 GiB, over the cap of 2 GiB (0.25 × RAM; raise it with --allow-pinned)"
        )
    );
    assert_eq!(
        row(2).as_deref(),
        Some("2 ring pageable none copy d2h staged 1 GiB 16 MiB×3 48 MiB 1 GiB 2.3 s")
    );
    assert!(
        lines.contains(&"3 cases (1 refused), estimated 2.9 s in total"),
        "{table}"
    );
    assert!(
        lines.contains(&"pinned cap 2 GiB = 0.25 × RAM 8 GiB"),
        "{table}"
    );
    assert!(lines.contains(
        &"estimates assume 25 GB/s pinned, 6 GB/s pageable/managed/staged, plus hold-after-free and 0.5 s setup per case"
    ));
    // Without knowing the RAM nothing is refused.
    let table = scenario::plan_table(&s, None, 0.25);
    assert!(
        table.contains("3 cases, estimated 5.1 s in total"),
        "{table}"
    );
    assert!(table.contains("RAM unknown: the pinned cap was not checked"));
    assert!(!table.contains("refused"));
}

#[test]
fn quick_scenario_is_valid_and_about_a_minute() {
    let s = load_ok(&shipped("quick.toml"));
    assert_eq!(s.name, "quick");
    let labels: Vec<(&str, Direction)> = s
        .cases
        .iter()
        .map(|c| (c.label.as_str(), c.direction))
        .collect();
    assert_eq!(labels.len(), 11);
    assert!(labels.contains(&("alloc-bidirectional", Direction::Bidirectional)));
    let staged = cases_where(&s, |c| c.mode == Mode::Staged);
    assert_eq!(staged.len(), 2);
    assert!(staged.iter().all(|c| c.host == HostKind::Pageable
        && c.chunk == Some(16 << 20)
        && c.ring == 3
        && c.size == 1 << 30));
    for c in &s.cases {
        assert_eq!(
            (
                c.measure.min_samples,
                c.measure.max_samples,
                c.measure.time_limit.as_secs()
            ),
            (3, 10, 3)
        );
        assert_eq!(c.probes.hold_after_free.as_secs(), 1);
    }
    let total: f64 = s.cases.iter().map(scenario::estimate_seconds).sum();
    assert!(total < 60.0, "quick.toml is estimated at {total} s");
}

#[test]
fn ollama_like_scenario_is_valid() {
    let s = load_ok(&shipped("ollama-like.toml"));
    let size = |label: &str| sizes_where(&s, |c| c.label == label);
    let mib = |layers: u64| (layers * 135) << 20;
    for strategy in ["pageable", "staged", "pinned"] {
        for layers in [33, 25, 20] {
            let label = format!("load-{strategy}-{layers}");
            assert_eq!(size(&label), vec![mib(layers)], "{label}");
        }
    }
    assert_eq!(size("pp-stream-25"), vec![mib(8)]);
    assert_eq!(size("pp-stream-20"), vec![mib(13)]);
    assert_eq!(size("pp-stream-0"), vec![mib(33)]);
    assert_eq!(size("decode-logits-32k"), vec![128_000]);
    assert_eq!(size("decode-logits-128k"), vec![513_024]);
    assert_eq!(size("decode-hidden"), vec![16 << 10]);
    assert!(
        s.cases
            .iter()
            .filter(|c| c.label.starts_with("decode"))
            .all(|c| c.measure.batch == 100 && c.host == HostKind::Alloc)
    );
    assert!(
        s.cases
            .iter()
            .filter(|c| c.label.starts_with("load-staged"))
            .all(|c| c.mode == Mode::Staged && c.chunk == Some(16 << 20) && c.ring == 3)
    );
    // Pinned memory per case stays within ~5 GiB, so a consumer machine can run it.
    assert!(s.cases.iter().all(|c| c.pinned_bytes() <= 5 << 30));
    let max_alloc: Vec<&str> = cases_where(&s, |c| c.probes.max_alloc)
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(max_alloc, vec!["load-pinned-33"]);
    assert_eq!(s.claims.len(), 5);
    for (label, size, dir) in [
        ("token-latency-logits-32k", 128_000, Direction::D2h),
        ("token-latency-logits-128k", 513_024, Direction::D2h),
        ("token-latency-hidden", 16 << 10, Direction::H2d),
    ] {
        let c = s.cases.iter().find(|c| c.label == label).expect(label);
        assert_eq!(
            (c.mode, c.size, c.direction),
            (Mode::Latency, size, dir),
            "{label}"
        );
        assert_eq!(c.measure.samples, 1000, "{label}");
    }
    assert_eq!(s.derived.len(), 18);
    let per_token: Vec<&str> = s
        .derived
        .iter()
        .filter(|d| d.metric == scenario::ClaimMetric::Row(scenario::RowMetric::LatP50Us))
        .map(|d| d.unit.as_str())
        .collect();
    assert_eq!(per_token, vec!["µs", "µs"]);
    let tokens = s.derived.iter().filter(|d| d.invert).count();
    assert_eq!(tokens, 2);
    let total: f64 = s.cases.iter().map(scenario::estimate_seconds).sum();
    assert!(total < 180.0, "ollama-like.toml is estimated at {total} s");
}

#[test]
fn latency_scenario_asks_each_question_and_stays_short() {
    let s = load_ok(&shipped("latency.toml"));
    let copies = cases_where(&s, |c| c.engine == Engine::Copy);
    assert!(copies.iter().all(|c| c.mode.is_latency()));
    // Every way of waiting, each once, on an empty kernel; a launch call and the launch rate.
    let waits: Vec<String> = s
        .cases
        .iter()
        .filter(|c| c.engine == Engine::Empty && c.mode == Mode::Latency)
        .map(|c| c.wait.to_string())
        .collect();
    assert_eq!(
        waits,
        [
            "stream",
            "spin",
            "yield",
            "blocking",
            "event-blocking",
            "query"
        ]
    );
    assert!(
        s.cases
            .iter()
            .any(|c| c.engine == Engine::Empty && c.mode == Mode::Enqueue)
    );
    assert!(
        s.cases
            .iter()
            .any(|c| c.engine == Engine::Empty && c.mode == Mode::Direct)
    );
    // The pointer chase, in order and at random, at nvbandwidth's 2 MiB and past the L2.
    for engine in [Engine::Chase, Engine::ChaseRandom] {
        let sizes = sizes_where(&s, |c| c.engine == engine);
        assert_eq!(sizes, [2 << 20, 256 << 20], "{engine}");
    }
    for mode in [Mode::Latency, Mode::LatencySync, Mode::Enqueue] {
        assert!(s.cases.iter().any(|c| c.mode == mode), "{mode}");
    }
    for host in [HostKind::Alloc, HostKind::Register, HostKind::Pageable] {
        for dir in [Direction::H2d, Direction::D2h] {
            let sizes = sizes_where(&s, |c| {
                c.host == host && c.direction == dir && c.mode == Mode::Latency
            });
            assert!(
                sizes.contains(&4) && sizes.contains(&(64 << 10)),
                "{host} {dir}"
            );
        }
    }
    assert!(s.cases.iter().any(|c| c.flags.mapped));
    assert!(copies.iter().all(|c| c.measure.samples >= 1000));
    // The whole GPU check has a few minutes: the latency scenario must stay well under one.
    let total: f64 = s.cases.iter().map(scenario::estimate_seconds).sum();
    assert!(total < 40.0, "latency.toml is estimated at {total} s");
}

#[test]
fn size_curve_sweeps_from_4_bytes_to_1_gib() {
    let s = load_ok(&shipped("size-curve.toml"));
    let mut sizes: Vec<u64> = s.cases.iter().map(|c| c.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert_eq!(sizes.first(), Some(&4));
    assert_eq!(sizes.last(), Some(&(1 << 30)));
    assert!(sizes.windows(2).all(|w| w[1] == 4 * w[0]), "{sizes:?}");
    assert!(s.cases.iter().all(|c| c.mode == Mode::Latency));
    for path in ["latency.toml", "size-curve.toml"] {
        let out = plan(&[shipped(path)]);
        assert_eq!(out.status.code(), Some(0), "{path}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("latency modes:"), "{text}");
    }
}

/// Every shipped scenario: parses, `name` is the file stem, the file opens with a comment block
/// (the question, the workload and how to read the result), `plan` renders it, and nothing in it
/// can oversubscribe managed memory or skip the device guard unless the file says so.
#[test]
fn every_shipped_scenario_parses_and_opens_with_its_question() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    paths.sort();
    assert!(paths.len() >= 12, "{paths:?}");
    for path in &paths {
        let s = load_ok(path);
        let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
        assert_eq!(Some(s.name.clone()), stem, "{}", path.display());
        let comment: Vec<&str> = s.text.lines().take_while(|l| l.starts_with('#')).collect();
        // The two tuning scenarios of the H200 runs say their question in one line.
        let least = if ["h200-headline", "staging-tune"].contains(&s.name.as_str()) {
            1
        } else {
            8
        };
        assert!(
            comment.len() >= least,
            "{} must open with a comment block: the question, the workload it mirrors, how to read the result",
            path.display()
        );
        let table = scenario::plan_table(&s, Some(64 << 30), 0.5);
        assert!(table.starts_with(&format!("{}: ", s.name)), "{table}");
        assert!(!table.contains("refused"), "{table}");
        for c in &s.cases {
            // Only the overflow experiment goes past the card, with plain device memory, and
            // only when `pinscope run` is also given --allow-vram-overflow.
            let opted_in = s.name == "vram-overflow" && c.engine.is_device();
            assert!(
                c.guard || opted_in,
                "{}: {} runs unguarded",
                path.display(),
                c.label
            );
        }
        for d in &s.derived {
            for label in &d.cases {
                let n = s.cases.iter().filter(|c| &c.label == label).count();
                assert_eq!(n, 1, "{}: {label}", path.display());
            }
        }
    }
    // The plan command accepts them all at once.
    let out = plan(&paths);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn shipped_scenarios_mirror_their_workloads() {
    let wddm = load_ok(&shipped("wddm-pinned-4g.toml"));
    let hosts: Vec<(&str, HostKind, String)> = wddm
        .cases
        .iter()
        .map(|c| (c.label.as_str(), c.host, c.flags.label()))
        .collect();
    assert_eq!(
        hosts,
        vec![
            ("alloc", HostKind::Alloc, "none".into()),
            ("alloc-mapped", HostKind::Alloc, "mapped".into()),
            ("alloc-wc", HostKind::Alloc, "write-combined".into()),
            ("register", HostKind::Register, "none".into()),
            ("managed", HostKind::Managed, "none".into()),
            ("pageable", HostKind::Pageable, "none".into()),
            ("alloc-h2d", HostKind::Alloc, "none".into()),
        ]
    );
    for c in &wddm.cases {
        assert_eq!(c.size, 4 << 30);
        assert!(c.probes.accounting);
        if c.label != "alloc-h2d" {
            // The article's program: allocate, touch every page, no device memory.
            assert_eq!(c.engine, Engine::CpuWrite, "{}", c.label);
            assert_eq!(c.device_bytes(), 0);
            assert!(c.probes.max_alloc);
            assert_eq!(c.probes.hold_after_free.as_secs(), 10);
        }
    }

    let dl = load_ok(&shipped("dataloader-pin-memory.toml"));
    let pool = &dl.cases[0];
    assert_eq!(
        (pool.mode, pool.chunk, pool.ring, pool.size),
        (Mode::Staged, Some(38_535_168), 8, 64 * 38_535_168)
    );
    assert_eq!(38_535_168, 64 * 3 * 224 * 224 * 4);

    let cvm = load_ok(&shipped("chunked-vs-monolithic.toml"));
    let ring: Vec<_> = cvm.cases.iter().filter(|c| c.label == "ring").collect();
    assert_eq!(ring.len(), 18);
    assert!(
        ring.iter()
            .all(|c| c.threads == pinscope::scenario::Threads::Auto && c.size == 4 << 30)
    );

    let flags = load_ok(&shipped("host-alloc-flags.toml"));
    let engines: Vec<Engine> = flags.cases.iter().map(|c| c.engine).collect();
    for e in [Engine::Copy, Engine::CpuRead, Engine::CpuWrite] {
        assert!(engines.contains(&e), "{e}");
    }

    let zc = load_ok(&shipped("zero-copy.toml"));
    for e in [Engine::KernelRead, Engine::KernelWrite, Engine::Kernel] {
        let hosts: Vec<HostKind> = zc
            .cases
            .iter()
            .filter(|c| c.engine == e)
            .map(|c| c.host)
            .collect();
        assert!(hosts.contains(&HostKind::Alloc) && hosts.contains(&HostKind::Register));
    }

    let ceiling = load_ok(&shipped("pinned-ceiling.toml"));
    assert_eq!(ceiling.cases.len(), 1);
    assert!(ceiling.cases[0].probes.pinned_ceiling);
    assert_eq!(
        ceiling.claims[0].platforms,
        vec![pinscope::scenario::PlatformTag::Wsl2]
    );

    // No shipped scenario runs managed memory larger than a small card holds.
    let vram = load_ok(&shipped("when-vram-runs-out.toml"));
    assert!(
        vram.cases
            .iter()
            .filter(|c| c.host == HostKind::Managed)
            .all(|c| c.size <= 1 << 30 && c.guard)
    );
}

#[test]
fn unreadable_and_non_utf8_files_get_one_clear_error() {
    let missing = fixture("does-not-exist.toml");
    let err = scenario::load(&missing).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.ends_with("does not exist: check the path")
                && e.contains("does-not-exist.toml")),
        "{err:?}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("latin1.toml");
    std::fs::write(&path, b"name = \"x\"\ndescription = \"caf\xe9\"\n").expect("write");
    let err = scenario::load(&path).err().map(|e| e.to_string());
    assert_eq!(
        err,
        Some(format!(
            "{p} has 1 problem\n  {p}:2:19: the file is not UTF-8 text (the first bad byte is here): save it as UTF-8",
            p = path.display()
        ))
    );
}

#[test]
fn parse_never_panics_on_damaged_scenarios() {
    for (name, step) in [("quick.toml", 1), ("ollama-like.toml", 8)] {
        let path = shipped(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.contains("[[case]]"),
            "{}: not a scenario with cases",
            path.display()
        );
        for (i, c) in text.char_indices().step_by(step) {
            // Single-character deletions, and the text cut short.
            let mut cut = text.clone();
            cut.replace_range(i..i + c.len_utf8(), "");
            let _ = scenario::parse("damaged.toml", &cut);
            let _ = scenario::parse("damaged.toml", text.get(..i).unwrap_or_default());
        }
    }
}

#[test]
fn plan_command_prints_tables_and_exits_2_on_invalid_input() {
    let out = plan(&[fixture("plan-small.toml"), fixture("golden-sweep.toml")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("plan-small: What does the plan table show?"));
    assert!(stdout.contains("golden: Does expansion follow"));

    let out = plan(&[fixture("invalid-many.toml"), fixture("plan-small.toml")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "invalid-many.toml:16:1: unknown key `chunks` in [[case]] #2; did you mean `chunk`?"
        ),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("plan-small:"));
}
