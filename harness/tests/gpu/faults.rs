//! Fault injection on the GPU: a CUDA call made to fail (feature `fault-injection`, see
//! `src/cuda/fault.rs`) must turn into that case's `failed: …` row, leave the next case
//! unharmed, and leave no page-locked memory behind in the ledger. Needs an NVIDIA GPU, so
//! ignored by default; built into the `gpu` test binary with that feature (see `main.rs`).

use crate::common;

use common::{gpu_case, quiet_run, scenario_of};
use pinscope::cuda::{self, ErrorCode, fault};
use pinscope::results::{Cause, Row, Status, Verification};
use pinscope::run::{open_runner, run_scenario};
use pinscope::scenario::{Case, Direction, Engine, HostFlags, HostKind, Mode};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const SIZE: u64 = 32 << 20;

fn case(label: &str, host: HostKind, dir: Direction, mode: Mode) -> Case {
    let mut c = gpu_case(
        label,
        host,
        HostFlags::default(),
        Engine::Copy,
        dir,
        mode,
        SIZE,
    );
    c.scenario = "gpu-faults".into();
    c.chunk = (mode != Mode::Direct).then_some(4 << 20);
    c.measure.max_samples = 3;
    c.probes.hold_after_free = Duration::ZERO;
    c
}

/// Runs `cases` with `spec` injected (counted from the first case on, not from opening the GPU)
/// and returns the rows; asserts the ledger holds no pinned bytes afterwards and no error was
/// lost in a `Drop`.
fn run_with_fault(spec: &str, cases: Vec<Case>) -> Vec<Row> {
    let mut runner = open_runner(0, true).expect("a GPU");
    let s = scenario_of(
        "gpu-faults",
        "injected CUDA failures",
        "tests/gpu/faults.rs",
        cases,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = quiet_run(0.5, Duration::from_secs(120));
    fault::set(Some(spec));
    let out = run_scenario(&mut runner, &s, dir.path(), &opts, &AtomicBool::new(false));
    fault::set(None);
    let out = out.expect("the run itself completes; failures are rows");
    println!("{spec}:\n{}", out.summary);
    assert_eq!(
        runner.ledger.total_pinned(),
        0,
        "{spec}: pinned bytes left in the ledger after the run"
    );
    assert_eq!(cuda::take_drop_errors(), Vec::<String>::new(), "{spec}");
    out.rows
}

fn assert_injected(r: &Row, call: &str) {
    match &r.status {
        Status::Failed(why) => {
            let injected = ErrorCode::Host("INJECTED_FAULT".into());
            assert_eq!(why.code(), Some(&injected), "{}: {why}", r.case_label);
            assert!(
                matches!(&why.cause, Cause::Call { call: c, .. } if c.starts_with(call)),
                "{}: `{why}` does not name {call}",
                r.case_label
            );
        }
        other => panic!(
            "{}: expected an injected failure, got {other:?}",
            r.case_label
        ),
    }
    assert!(
        r.bw_median_gbs.is_none(),
        "{}: a failed case has no bandwidth",
        r.case_label
    );
}

fn assert_ok(r: &Row) {
    assert_eq!(r.status, Status::Ok, "{}", r.case_label);
    assert_eq!(r.verified, Verification::Yes, "{}", r.case_label);
}

fn rows_of<'a>(rows: &'a [Row], label: &str) -> Vec<&'a Row> {
    let v: Vec<&Row> = rows.iter().filter(|r| r.case_label == label).collect();
    assert!(!v.is_empty(), "no row for {label}");
    v
}

use Direction::{D2h, H2d};
use HostKind::{Alloc, Pageable, Register};
use Mode::{Direct, Staged};

/// Runs a "victim" case and then a "next" one of the same kind with `spec` injected: the victim
/// must fail in `call`, the next one must be ok.
fn victim_fails_next_is_ok(spec: &str, host: HostKind, dir: Direction, mode: Mode, call: &str) {
    let rows = run_with_fault(
        spec,
        vec![
            case("victim", host, dir, mode),
            case("next", host, dir, mode),
        ],
    );
    assert_injected(rows_of(&rows, "victim")[0], call);
    assert_ok(rows_of(&rows, "next")[0]);
}

/// One GPU test per row: `name: spec, host, direction, mode, the CUDA call that must fail;`.
macro_rules! victim_then_next {
    ($($(#[$doc:meta])* $name:ident: $spec:literal, $host:ident, $dir:ident, $mode:ident, $call:literal;)*) => {$(
        $(#[$doc])*
        #[test]
        #[ignore = "needs an NVIDIA GPU"]
        fn $name() {
            victim_fails_next_is_ok($spec, $host, $dir, $mode, $call);
        }
    )*};
}

victim_then_next! {
    second_copy_fails_then_the_next_case_is_ok: "copy@2", Alloc, H2d, Direct, "cuMemcpyHtoDAsync";
    failed_d2h_copy_is_a_row: "copy@2", Alloc, D2h, Direct, "cuMemcpyDtoHAsync";
    failed_pinned_allocation_is_a_row: "alloc@1", Alloc, H2d, Direct, "cuMemHostAlloc";
    failed_registration_is_a_row_and_unpins_nothing_twice: "register@1", Register, H2d, Direct, "cuMemHostRegister";
    /// The host buffer is pinned before the device buffer is allocated: the ledger check in
    /// `run_with_fault` catches a pinned buffer leaked on this path.
    failed_device_allocation_frees_the_pinned_host_buffer: "device-alloc@1", Alloc, H2d, Direct, "cuMemAlloc";
    copy_failing_inside_a_staging_ring_releases_the_ring: "copy@3", Pageable, H2d, Staged, "cuMemcpy";
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_copy_failing_fails_every_case_and_the_run_still_ends() {
    let rows = run_with_fault(
        "copy",
        vec![
            case("a", Alloc, H2d, Direct),
            case("b", Pageable, D2h, Direct),
        ],
    );
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_injected(r, "cuMemcpy");
    }
}
