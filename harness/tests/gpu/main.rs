//! GPU tests: need an NVIDIA GPU and driver, so they are ignored by default. Built with the
//! feature `fault-injection`, the binary also carries the fault-injection tests (`faults::`).
//! `scripts/build-dist.sh` builds it both ways and `scripts/publish.sh check` runs both on a
//! machine with a GPU, with `--ignored --test-threads=1`; with a Rust toolchain there:
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --test-threads=1
//! cargo test --release --features fault-injection --test gpu faults:: -- --ignored --test-threads=1
//! ```

mod budget;
mod check_node;
#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "fault-injection")]
mod faults;
#[cfg(target_os = "linux")]
mod file_load;

use common::{gpu_case as case, quiet_run, scenario_of};
use pinscope::cuda::{self, DeviceBuffer, Gpu, HostBuffer, Kernels, Stream};
use pinscope::results::{Lane, Row, Status, Verification};
use pinscope::run::{open_runner, run_scenario};
use pinscope::scenario::{Case, Direction, Engine, HostFlags, HostKind, Mode, Scenario};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const MAPPED: HostFlags = HostFlags {
    portable: false,
    mapped: true,
    write_combined: false,
};
const NONE: HostFlags = HostFlags {
    portable: false,
    mapped: false,
    write_combined: false,
};
const WC: HostFlags = HostFlags {
    portable: false,
    mapped: false,
    write_combined: true,
};

fn scenario(cases: Vec<Case>) -> Scenario {
    scenario_of(
        "gpu-test",
        "every strategy once, small",
        "tests/gpu/main.rs",
        cases,
    )
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn kernels_load_and_verify_detects_corruption() {
    let gpu = Gpu::open(0).expect("a GPU");
    let k = Kernels::load(&gpu).expect("PTX loads");
    let s = Stream::new().unwrap();
    let n = 64 << 20;
    let dev = DeviceBuffer::new(n).unwrap();
    let result = DeviceBuffer::new(16).unwrap();
    k.write(&s, &dev, n, 42).unwrap();
    assert_eq!(k.verify(&s, &dev, n, 42, &result).unwrap(), (0, None));
    assert_eq!(
        k.verify(&s, &dev, n, 43, &result).unwrap().0,
        (n / 4) as u64
    );
    dev.write(4 * 1000, &[0xde, 0xad, 0xbe, 0xef]).unwrap();
    assert_eq!(k.verify(&s, &dev, n, 42, &result).unwrap(), (1, Some(1000)));
    // SM copy through mapped host memory, then check on the host.
    let host = HostBuffer::pinned(n, MAPPED).unwrap();
    let dev2 = DeviceBuffer::new(n).unwrap();
    k.write(&s, &dev2, n, 9).unwrap();
    k.copy(&s, &dev2, 0, &host, 0, n).unwrap();
    s.synchronize().unwrap();
    assert_eq!(cuda::check_pattern(host.as_slice(), 0, 9), (0, None));
    assert_eq!(cuda::take_drop_errors(), Vec::<String>::new());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_strategy_produces_verified_rows() {
    use Direction::*;
    use Engine::*;
    use HostKind::*;
    use Mode::*;
    // How each case moves its bytes: (engine, mode).
    let copy = (Copy, Direct);
    let kernel = (Kernel, Direct);
    let staged = (Copy, Staged);
    let per_copy = (Copy, RegisterPerCopy);
    // (label, host, flags, how, direction), 64 MiB each.
    let table = [
        ("pinned", Alloc, NONE, copy, H2d),
        ("pinned", Alloc, NONE, copy, D2h),
        ("pinned-bidir", Alloc, NONE, copy, Bidirectional),
        ("pageable", Pageable, NONE, copy, H2d),
        ("pageable", Pageable, NONE, copy, D2h),
        ("registered", Register, NONE, copy, H2d),
        ("write-combined", Alloc, WC, copy, H2d),
        ("mapped", Alloc, MAPPED, copy, D2h),
        ("zero-copy", Alloc, MAPPED, kernel, H2d),
        ("zero-copy", Alloc, MAPPED, kernel, D2h),
        ("zero-copy-registered", Register, MAPPED, kernel, H2d),
        ("managed", Managed, NONE, copy, H2d),
        ("managed-kernel", Managed, NONE, kernel, D2h),
        ("staged", Pageable, NONE, staged, H2d),
        ("staged", Pageable, NONE, staged, D2h),
        ("register-per-copy", Register, NONE, per_copy, H2d),
        ("register-per-copy", Register, NONE, per_copy, D2h),
    ];
    let cases: Vec<Case> = table
        .into_iter()
        .map(|(label, host, flags, (engine, mode), dir)| {
            case(label, host, flags, engine, dir, mode, 64 << 20)
        })
        .collect();
    let n = cases.len();
    let s = scenario(cases);
    let mut runner = open_runner(0, false).expect("a GPU");
    let dir = tempfile::tempdir().unwrap();
    let opts = quiet_run(0.5, Duration::from_secs(600));
    let out = run_scenario(&mut runner, &s, dir.path(), &opts, &AtomicBool::new(false)).unwrap();
    println!("{}", out.summary);
    assert!(!out.partial);
    let keys: std::collections::BTreeSet<_> = out.rows.iter().map(|r| r.case_key.clone()).collect();
    assert_eq!(keys.len(), n, "one case key per case");
    for r in &out.rows {
        assert_eq!(
            r.status,
            Status::Ok,
            "{} {}: {:?}",
            r.case_label,
            r.lane.name(),
            r.status
        );
        assert_eq!(r.verified, Verification::Yes, "{}", r.case_label);
        assert!(
            r.bw_median_gbs.unwrap() > 0.1,
            "{} {:?}",
            r.case_label,
            r.bw_median_gbs
        );
    }
    assert!(out.rows.iter().any(|r| r.lane == Lane::Sum));
    // The ledger is back to zero and the files read back.
    assert_eq!(runner.ledger.total_pinned(), 0);
    let back = pinscope::results::read_rows(&out.csv).unwrap();
    assert_eq!(back.len(), out.rows.len());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn failures_are_rows_and_the_run_goes_on() {
    let mut runner = open_runner(0, false).expect("a GPU");
    let total = runner.machine.gpu.as_ref().unwrap().total_memory_bytes;
    let mut too_big = case(
        "too-big",
        HostKind::Alloc,
        NONE,
        Engine::Copy,
        Direction::H2d,
        Mode::Direct,
        1 << 20,
    );
    too_big.size = (total + (64 << 30)) / 16 * 16; // more than the card: the guard skips it
    let ok = case(
        "fine",
        HostKind::Alloc,
        NONE,
        Engine::Copy,
        Direction::H2d,
        Mode::Direct,
        16 << 20,
    );
    let s = scenario(vec![too_big, ok]);
    let dir = tempfile::tempdir().unwrap();
    let opts = quiet_run(0.9, Duration::from_secs(600));
    let out = run_scenario(&mut runner, &s, dir.path(), &opts, &AtomicBool::new(false)).unwrap();
    println!("{}", out.summary);
    assert!(
        matches!(out.rows[0].status, Status::Skipped(_) | Status::Failed(_)),
        "{:?}",
        out.rows[0].status
    );
    assert_eq!(out.rows[1].status, Status::Ok);
    // Page-locking a read-only mapping is refused with an error, not a crash.
    static READ_ONLY: [u8; 1 << 20] = [1; 1 << 20];
    let e = cuda::try_register_readonly(&READ_ONLY)
        .expect_err("read-only memory cannot be pinned for writing");
    println!("register of a read-only mapping: {e}");
    // An allocation the driver refuses becomes a CudaError, not a crash.
    let e = DeviceBuffer::new((total * 2) as usize)
        .err()
        .expect("allocation must fail");
    assert!(e.is_out_of_memory(), "{e}");
}

// ---- device-resident engines, device_hold, pinned ceiling with VRAM held, churn -------

fn run_text(text: &str, allow_vram_overflow: bool, pinned_cap: Option<u64>) -> Vec<Row> {
    let s = pinscope::scenario::parse("gpu-test.toml", text).expect("valid scenario");
    let mut runner = open_runner(0, false).expect("a GPU");
    if let Some(cap) = pinned_cap {
        runner.pinned_cap = cap;
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let opts = pinscope::run::RunOptions {
        allow_vram_overflow,
        ..quiet_run(0.5, Duration::from_secs(600))
    };
    let out = run_scenario(&mut runner, &s, dir.path(), &opts, &AtomicBool::new(false))
        .expect("the run writes its files");
    println!("{}", out.summary);
    assert_eq!(
        runner.ledger.total_pinned(),
        0,
        "the ledger is back to zero"
    );
    assert_eq!(cuda::take_drop_errors(), Vec::<String>::new());
    out.rows
}

/// Runs `text` (no overflow, no pinned cap), expects `n` rows, prints each with `show` and
/// asserts it is ok.
fn run_all_ok(text: &str, n: usize, show: impl Fn(&Row) -> String) -> Vec<Row> {
    let rows = run_text(text, false, None);
    assert_eq!(rows.len(), n);
    for r in &rows {
        println!("{}", show(r));
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.case_label, r.status);
    }
    rows
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_engines_measure_device_memory() {
    let rows = run_all_ok(
        "name = \"t\"\ndescription = \"d\"\n[defaults]\nsize = \"256MiB\"\nmeasure = { min_samples = 3, max_samples = 10 }\nprobes = { hold_after_free = \"0s\" }\n[[case]]\nlabel = \"read\"\nengine = \"device-read\"\n[[case]]\nlabel = \"write\"\nengine = \"device-write\"\n[[case]]\nlabel = \"copy\"\nengine = \"device-copy\"\n[[case]]\nlabel = \"read-held\"\nengine = \"device-read\"\ndevice_hold = \"free-50%\"\n",
        4,
        |r| {
            format!(
                "{} {:?} GB/s device_bytes {}",
                r.case_label, r.bw_median_gbs, r.device_bytes
            )
        },
    );
    for r in &rows {
        assert_eq!(r.lane, Lane::Device);
        assert_eq!(r.host, None, "device engines have no host buffer");
        assert_eq!(r.pinned_bytes, 0);
        let want = if r.case_label == "read" || r.case_label == "read-held" {
            Verification::NotApplicable
        } else {
            Verification::Yes
        };
        assert_eq!(r.verified, want, "{}", r.case_label);
        // Device memory, not PCIe: far above any host link.
        assert!(
            r.bw_median_gbs.unwrap() > 100.0,
            "{} {:?}",
            r.case_label,
            r.bw_median_gbs
        );
    }
    // The hold is counted in device_bytes.
    assert!(rows[3].device_bytes > rows[0].device_bytes * 4);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn past_the_card_needs_the_flag_and_then_fails_on_linux() {
    let text = "name = \"t\"\ndescription = \"d\"\n[defaults]\nsize = \"1GiB\"\nmeasure = { warmup = 1, min_samples = 2, max_samples = 3 }\nprobes = { hold_after_free = \"0s\" }\n[[case]]\nlabel = \"over\"\nengine = \"device-read\"\nguard = false\nsweep = { device_hold = [\"free\", \"free+5%\"] }\n[[case]]\nlabel = \"after\"\nengine = \"device-read\"\n";
    // Without --allow-vram-overflow: skipped, saying which flag is missing.
    let rows = run_text(text, false, None);
    for r in rows.iter().filter(|r| r.case_label == "over") {
        match &r.status {
            Status::Skipped(why) => assert!(why.contains("--allow-vram-overflow"), "{why}"),
            other => panic!("expected a skipped row, got {other:?}"),
        }
    }
    assert_eq!(rows.last().unwrap().status, Status::Ok, "the run goes on");
    // With it: tried. Linux does not spill: CUDA_ERROR_OUT_OF_MEMORY, and the next case runs.
    let rows = run_text(text, true, None);
    let linux = pinscope::platform::this_machine(false)
        .platform
        .is(pinscope::platform::Platform::Linux);
    for r in rows.iter().filter(|r| r.case_label == "over") {
        println!("{} {}: {:?}", r.case_label, r.axes, r.status);
        if linux {
            match &r.status {
                Status::Failed(why) => assert!(why.is_out_of_memory(), "{why}"),
                other => panic!("expected OUT_OF_MEMORY on Linux, got {other:?}"),
            }
        }
    }
    assert_eq!(
        rows.last().unwrap().status,
        Status::Ok,
        "the hold was freed"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pinned_ceiling_with_device_memory_held() {
    let cap = 2u64 << 30;
    let rows = run_text(
        "name = \"t\"\ndescription = \"d\"\n[defaults]\nengine = \"device-write\"\nsize = \"64MiB\"\nmeasure = { warmup = 0, min_samples = 1, max_samples = 1 }\nprobes = { pinned_ceiling = true, hold_after_free = \"0s\" }\n[[case]]\nlabel = \"ceiling\"\nsweep = { device_hold = [\"0\", \"free-50%\", \"free-10%\"] }\n",
        false,
        Some(cap),
    );
    for r in &rows {
        println!(
            "{} {}: {:?} MiB",
            r.case_label, r.axes, r.pinned_ceiling_mib
        );
        assert_eq!(r.status, Status::Ok, "{:?}", r.status);
        assert!(r.pinned_ceiling_mib.is_some());
    }
    let gpu = Gpu::open(0).expect("a GPU");
    let line = pinscope::run::ceiling_with_device_held(&gpu, cap, &pinscope::probe::Ledger::new());
    println!("pinned ceiling, 90% of free device memory held: {line}");
    assert!(!line.starts_with("not measured"), "{line}");
    // The probe goes on after the first failure and says which error ended it.
    let c = pinscope::run::pinned_ceiling(256 << 20, cap, &pinscope::probe::Ledger::new());
    println!("stepped ceiling: {} bytes, {:?}", c.bytes, c.error);
    assert!(c.bytes <= cap);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn churn_verifies_every_copy() {
    let rows = run_all_ok(
        "name = \"t\"\ndescription = \"d\"\n[defaults]\nmode = \"churn\"\nsize = \"16MiB\"\ncycles = 10\npause = \"5ms\"\nprobes = { hold_after_free = \"0s\" }\n[[case]]\nlabel = \"alloc-h2d\"\n[[case]]\nlabel = \"register-h2d\"\nhost = \"register\"\n[[case]]\nlabel = \"alloc-d2h\"\ndirection = \"d2h\"\n",
        3,
        |r| {
            format!(
                "{}: {:?} GB/s, {} copies, {:?}",
                r.case_label, r.bw_median_gbs, r.samples, r.status
            )
        },
    );
    for r in &rows {
        assert_eq!(r.samples, 10, "one sample per cycle");
        assert_eq!(r.verified, Verification::Yes);
        assert_eq!(r.mode, Mode::Churn);
    }
}

// ---- latency modes: one copy per sample, 4 B and 64 KiB, every call -----------------------------

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn latency_modes_time_single_copies_and_verify_them() {
    let text = "name = \"t\"\ndescription = \"d\"\n[defaults]\nmeasure = { samples = 200, warmup = 20 }\nprobes = { hold_after_free = \"0s\" }\n[sweep]\ndirection = [\"h2d\", \"d2h\"]\nsize = [\"4\", \"20\", \"64KiB\"]\nmode = [\"latency\", \"latency-sync\", \"enqueue\"]\n[[case]]\nlabel = \"pinned\"\nhost = \"alloc\"\n[[case]]\nlabel = \"registered\"\nhost = \"register\"\n[[case]]\nlabel = \"pageable\"\nhost = \"pageable\"\n";
    let rows = run_all_ok(text, 3 * 2 * 3 * 3, |r| {
        format!(
            "{} {} {} {} B: p50 {:?} p99 {:?} event {:?} µs, {} samples, verified {}",
            r.case_label,
            r.mode,
            r.lane.name(),
            r.size_bytes,
            r.lat_p50_us,
            r.lat_p99_us,
            r.lat_event_p50_us,
            r.samples,
            r.verified
        )
    });
    for r in &rows {
        assert_eq!(r.verified, Verification::Yes, "{}", r.title());
        assert_eq!(r.samples, 200, "{}", r.title());
        let (min, p50, p99) = (
            r.lat_min_us.expect("min"),
            r.lat_p50_us.expect("p50"),
            r.lat_p99_us.expect("p99"),
        );
        assert!(0.0 < min && min <= p50 && p50 <= p99, "{}", r.title());
        // Events exist only around the async copy + synchronisation.
        assert_eq!(
            r.lat_event_p50_us.is_some(),
            r.mode == Mode::Latency,
            "{}",
            r.title()
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn empty_kernels_time_each_wait_and_chases_verify_their_last_pointer() {
    let text = "name = \"t\"\ndescription = \"d\"\n[defaults]\nmeasure = { samples = 100, warmup = 10, min_samples = 2, max_samples = 3 }\nprobes = { hold_after_free = \"0s\" }\n[[case]]\nlabel = \"sync\"\nengine = \"empty\"\nmode = \"latency\"\nsweep = { wait = [\"stream\", \"spin\", \"yield\", \"blocking\", \"event-blocking\", \"query\"] }\n[[case]]\nlabel = \"launch-call\"\nengine = \"empty\"\nmode = \"enqueue\"\n[[case]]\nlabel = \"launch-rate\"\nengine = \"empty\"\n[[case]]\nlabel = \"chase\"\nengine = \"chase\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nsize = \"2MiB\"\n[[case]]\nlabel = \"chase-random\"\nengine = \"chase-random\"\nhost = \"register\"\nflags = [\"mapped\"]\nsize = \"2MiB\"\n";
    let rows = run_all_ok(text, 10, |r| {
        format!(
            "{}: p50 {:?} p99 {:?} event {:?} µs, time {:?} ms, {} samples, verified {}",
            r.title(),
            r.lat_p50_us,
            r.lat_p99_us,
            r.lat_event_p50_us,
            r.time_median_ms,
            r.samples,
            r.verified
        )
    });
    for r in &rows {
        let chase = r.engine.is_chase();
        assert_eq!(
            r.verified,
            if chase {
                Verification::Yes
            } else {
                Verification::NotApplicable
            },
            "{}",
            r.title()
        );
        if r.mode == Mode::Latency || chase {
            let p50 = r.lat_p50_us.expect("p50");
            assert!(p50 > 0.0, "{}", r.title());
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_settings_and_the_check_on_a_real_gpu() {
    use pinscope::health::{self, Check, Thresholds, Verdict};
    let mut runner = open_runner(0, true).expect("GPU 0");
    // The sampling transfer is not made when the runner opens (it would change what the
    // cases measure): its fields say when they are read until the runner reads them.
    let opened = runner.machine.settings.clone().expect("settings recorded");
    assert_eq!(
        opened.pcie_gen_under_load.unavailable_reason(),
        Some(pinscope::run::settings::UNDER_LOAD_PENDING)
    );
    runner.read_settings_under_load();
    let s = runner.machine.settings.clone().expect("settings recorded");
    for row in s.rows() {
        println!("setting {}: {}  [{}]", row.label, row.value, row.source);
    }
    assert_eq!(s.can_map_host_memory.value(), Some(&true));
    assert!(s.async_engine_count.value().is_some_and(|n| *n >= 1));
    if s.pcie_gen_max.value().is_some() {
        // NVML answers: the reading during a transfer must exist and not exceed the maximum.
        let now = s
            .pcie_gen_under_load
            .value()
            .expect("link during a transfer");
        assert!(now <= s.pcie_gen_max.value().expect("max"));
    }
    let wsl2 = runner
        .machine
        .platform
        .is(pinscope::platform::Platform::Wsl2);
    let m = pinscope::run::measure_check(&runner, wsl2);
    let r = health::evaluate(&m, &s, &Thresholds::default(), wsl2);
    for c in &r {
        println!(
            "check {:?}: {:?} measured {:?} threshold {} {}",
            c.check, c.verdict, c.measured, c.threshold, c.advice
        );
    }
    let verdict = |c: Check| r.iter().find(|x| x.check == c).map(|x| x.verdict);
    assert_eq!(verdict(Check::DataVerification), Some(Verdict::Pass));
    let h2d = m.pinned_h2d.expect("measured").expect("copies ran");
    assert!(h2d.median_gbs > 1.0, "{h2d:?}");
    let strict = Thresholds {
        min_h2d_gbs: Some(h2d.median_gbs * 2.0),
        ..Thresholds::default()
    };
    let m = pinscope::run::measure_check(&runner, false);
    let r = health::evaluate(&m, &s, &strict, false);
    assert_eq!(
        health::overall(&r),
        Verdict::Fail,
        "a floor at twice the measured rate fails"
    );
}
