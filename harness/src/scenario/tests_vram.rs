//! Unit tests of the device-memory keys and engines: `device_hold`, `cycles`, `pause`, the
//! `device-read` / `device-write` / `device-copy` engines and `mode = "churn"`, each rule with its
//! exact message and position, and what `plan` shows for them.

use super::plan::DeviceFree;
use super::tests::{assert_problems, ok, problems};
use super::vram::{CHURN_NEEDS_COPY, HOLD_FORMS, HOLD_WITH_MANAGED};
use super::*;
use crate::units::GIB;

// ---- device engines -----------------------------------------------------------------------------

#[test]
fn device_engines_have_no_host_buffer() {
    let s = ok(
        "[[case]]\nlabel = \"r\"\nengine = \"device-read\"\nsize = \"1GiB\"\n[[case]]\nlabel = \"c\"\nengine = \"device-copy\"\nsize = \"1GiB\"\n",
    );
    let (r, c) = (&s.cases[0], &s.cases[1]);
    assert_eq!(
        (r.pinned_bytes(), r.host_bytes(), r.device_bytes()),
        (0, 0, GIB)
    );
    assert_eq!(
        (c.pinned_bytes(), c.host_bytes(), c.device_bytes()),
        (0, 0, 2 * GIB)
    );
}

#[test]
fn device_engines_refuse_host_flags_and_direction() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"d\"\nengine = \"device-write\"\nhost = \"pageable\"\ndirection = \"d2h\"\n",
            &[
                "5:10: case `d`: engine = \"device-write\" works on device memory only (no host buffer, no direction): remove `host`, `direction`",
            ],
        ),
        // From [defaults] too: the case says what it is.
        (
            "[defaults]\nflags = [\"mapped\"]\nhost = \"alloc\"\n[[case]]\nlabel = \"d\"\nengine = \"device-copy\"\n",
            &[
                "8:10: case `d`: engine = \"device-copy\" works on device memory only (no host buffer, no direction): remove `host`, `flags`",
            ],
        ),
    ]);
}

#[test]
fn device_engines_need_mode_direct() {
    assert_problems(&[(
        "[[case]]\nlabel = \"d\"\nengine = \"device-read\"\nmode = \"churn\"\n",
        &[&format!("6:8: case `d`: {CHURN_NEEDS_COPY}")],
    )]);
}

// ---- device_hold --------------------------------------------------------------------------------

#[test]
fn device_hold_takes_sizes_and_parts_of_free_memory() {
    let s = ok(
        "[[case]]\nlabel = \"h\"\nengine = \"device-read\"\nsweep = { device_hold = [\"0\", \"8GiB\", \"free-50%\", \"free-10%\", \"free-2GiB\"] }\n",
    );
    let holds: Vec<String> = s
        .cases
        .iter()
        .map(|c| c.vram.device_hold.to_string())
        .collect();
    assert_eq!(holds, ["0", "8 GiB", "free-50%", "free-10%", "free-2 GiB"]);
    assert_eq!(s.cases[2].vram.device_hold_written, "free-50%");
    assert!(
        s.cases[0].key().ends_with("threads=auto"),
        "no hold, same key as before"
    );
    assert!(s.cases[2].key().ends_with(",device_hold=free-50%"));
}

#[test]
fn bad_device_holds_are_named() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"h\"\ndevice_hold = \"half\"\n",
            &[&format!(
                "5:15: `device_hold` must be {HOLD_FORMS}, not \"half\""
            )],
        ),
        (
            "[[case]]\nlabel = \"h\"\ndevice_hold = \"free-150%\"\n",
            &[
                "5:15: `device_hold` \"free-150%\" takes away more than all free device memory: use at most free-100%",
            ],
        ),
        (
            "[[case]]\nlabel = \"h\"\ndevice_hold = true\n",
            &[&format!(
                "5:15: `device_hold` must be {HOLD_FORMS}, not a boolean"
            )],
        ),
    ]);
}

#[test]
fn a_hold_past_free_memory_needs_guard_false() {
    assert_problems(&[(
        "[[case]]\nlabel = \"o\"\nengine = \"device-read\"\nsweep = { device_hold = [\"free-10%\", \"free+5%\"] }\n",
        &[
            "6:38: case `o` with device_hold=free+5%: device_hold = \"free+5%\" holds all free device memory or more, so the case's memory goes past the card: set guard = false in this case to try it (`pinscope run` also needs --allow-vram-overflow)",
        ],
    )]);
    // "free" is 100%: the case's own buffer can only go past the card.
    let got =
        problems("[[case]]\nlabel = \"o\"\nengine = \"device-read\"\ndevice_hold = \"free\"\n");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0]
            .2
            .starts_with("case `o`: device_hold = \"free\" holds all free")
    );
    // With guard = false the scenario has opted in (the command line must too, see run/device_memory.rs).
    ok(
        "[[case]]\nlabel = \"o\"\nengine = \"device-read\"\nguard = false\nsweep = { device_hold = [\"free\", \"free+5%\", \"free+20%\"] }\n",
    );
}

#[test]
fn device_hold_is_refused_with_managed_memory() {
    assert_problems(&[(
        "[[case]]\nlabel = \"m\"\nhost = \"managed\"\nengine = \"kernel-read\"\ndevice_hold = \"free-50%\"\n",
        &[&format!("7:15: case `m`: {HOLD_WITH_MANAGED}")],
    )]);
}

// ---- churn --------------------------------------------------------------------------------------

#[test]
fn churn_keys_and_defaults() {
    let s = ok("[[case]]\nlabel = \"c\"\nmode = \"churn\"\nsize = \"64MiB\"\n");
    let c = &s.cases[0];
    assert_eq!(
        (c.vram.cycles, c.vram.pause),
        (DEFAULT_CYCLES, DEFAULT_PAUSE)
    );
    assert_eq!(c.pinned_bytes(), 64 << 20);
    assert!(c.key().ends_with(",cycles=20,pause=5ms"));
    let s = ok(
        "[[case]]\nlabel = \"c\"\nhost = \"register\"\nmode = \"churn\"\ncycles = 200\npause = \"0ms\"\ndirection = \"d2h\"\n",
    );
    assert_eq!(s.cases[0].vram.cycles, 200);
    assert!(s.cases[0].vram.pause.is_zero());
}

#[test]
fn churn_needs_page_locked_memory_and_the_copy_engine() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"c\"\nhost = \"pageable\"\nmode = \"churn\"\n",
            &[
                "6:8: case `c`: mode = \"churn\" allocates, copies from and frees page-locked memory each cycle: it needs host = \"alloc\" or \"register\", not \"pageable\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"c\"\nflags = [\"mapped\"]\nengine = \"kernel\"\nmode = \"churn\"\n",
            &[&format!("7:8: case `c`: {CHURN_NEEDS_COPY}")],
        ),
    ]);
}

#[test]
fn cycles_and_pause_only_with_churn() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"c\"\ncycles = 5\npause = \"1ms\"\n",
            &[
                "5:10: case `c`: `cycles` applies only to mode = \"churn\": remove it or set mode = \"churn\"",
                "6:9: case `c`: `pause` applies only to mode = \"churn\": remove it or set mode = \"churn\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"c\"\nmode = \"churn\"\ncycles = 0\n",
            &["6:10: `cycles` must be a whole number from 1 to 100000, not 0"],
        ),
        (
            "[[case]]\nlabel = \"c\"\nmode = \"churn\"\npause = 5\n",
            &["6:9: `pause` must be a duration like \"2s\" or \"100ms\", not an integer"],
        ),
    ]);
}

#[test]
fn mode_names_include_churn() {
    assert_problems(&[(
        "[[case]]\nlabel = \"c\"\nmode = \"chrun\"\n",
        &[
            "5:8: `mode` must be one of \"direct\", \"staged\", \"register-per-copy\", \"churn\", \"latency\", \"latency-sync\", \"enqueue\", \"load-mmap\", \"load-read\", \"load-pread\", \"load-direct\", \"load-register\", \"load-pinned\", \"load-cufile\", not \"chrun\"; did you mean \"churn\"?",
        ],
    )]);
}

#[test]
fn new_claim_metrics_are_known() {
    ok(
        "[[case]]\nlabel = \"c\"\nmode = \"churn\"\n[[claim]]\ntext = \"no silent zeros\"\ncase = \"c\"\nmetric = \"mismatched_copies\"\nop = \"<=\"\nvalue = 0\n[[claim]]\ntext = \"Linux does not spill\"\ncase = \"c\"\nmetric = \"out_of_memory\"\nop = \">=\"\nvalue = 1\nplatforms = [\"linux\"]\n",
    );
}

// ---- plan ---------------------------------------------------------------------------------------

const OVERFLOW: &str = "[[case]]\nlabel = \"read\"\nengine = \"device-read\"\nsize = \"1GiB\"\nguard = false\nsweep = { device_hold = [\"free-50%\", \"free-10%\", \"free\", \"free+5%\"] }\n[[case]]\nlabel = \"churn\"\nmode = \"churn\"\nsize = \"64MiB\"\n";

fn plan_lines(free: Option<DeviceFree>) -> Vec<String> {
    let s = ok(OVERFLOW);
    plan_table_for(&s, Some(64 * GIB), 0.5, free)
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn plan_shows_each_step_against_free_device_memory() {
    let lines = plan_lines(Some(DeviceFree {
        bytes: 100 * GIB,
        source: "given with --device-free".into(),
    }));
    let row = |i: usize| {
        lines
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{i}  ")))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        row(0).contains("  -  "),
        "no host for device engines: {}",
        row(0)
    );
    assert!(row(0).contains("51 GiB"), "{}", row(0));
    let past = "; tried only with --allow-vram-overflow";
    for (i, end) in [
        (0, "needs 51 GiB of 100 GiB free (51%)".to_string()),
        (1, "needs 91 GiB of 100 GiB free (91%)".to_string()),
        (
            2,
            format!("past the card: needs 101 GiB of 100 GiB free (101%){past}"),
        ),
        (
            3,
            format!("past the card: needs 106 GiB of 100 GiB free (106%){past}"),
        ),
    ] {
        assert!(row(i).ends_with(&end), "row {i}: {}", row(i));
    }
    assert!(
        row(4).contains("64 MiB"),
        "churn pins one buffer at a time: {}",
        row(4)
    );
    assert!(
        lines.contains(
            &"device memory: 100 GiB given with --device-free; \"past the card\" steps need guard = false and --allow-vram-overflow".to_string()
        ),
        "{lines:#?}"
    );
}

#[test]
fn plan_without_device_memory_shows_holds_as_written() {
    let lines = plan_lines(None);
    let text = lines.join("\n");
    assert!(text.contains("free-50% + 1 GiB"), "{text}");
    assert!(
        text.contains(
            "past the card (device_hold = \"free+5%\"); tried only with --allow-vram-overflow"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "device memory: unknown here (no NVML): device_hold shown as written; plan for a card with --device-free SIZE"
        ),
        "{text}"
    );
}

#[test]
fn device_free_option_is_checked() {
    assert_eq!(
        DeviceFree::given("24GiB").unwrap(),
        DeviceFree {
            bytes: 24 * GIB,
            source: "given with --device-free".into()
        }
    );
    let e = DeviceFree::given("lots").unwrap_err();
    assert!(e.to_string().starts_with("--device-free: "), "{e}");
}
