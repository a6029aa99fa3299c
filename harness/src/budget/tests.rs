use super::*;
use crate::units::GIB;

fn case(extra: &str) -> Case {
    let size = if extra.contains("size") {
        ""
    } else {
        "size = \"1GiB\"\n"
    };
    let text = format!(
        "name = \"t\"\ndescription = \"d\"\n[[case]]\nlabel = \"c\"\nengine = \"device-read\"\n{size}{extra}\n"
    );
    crate::scenario::parse("t.toml", &text)
        .expect("valid scenario")
        .cases
        .remove(0)
}

fn row(label: &str, axes: &str, lane: Lane, status: Status, bw: Option<f64>) -> Row {
    Row {
        machine: Default::default(),
        scenario: "s".into(),
        case_label: label.into(),
        case_key: "k".into(),
        lane,
        host: "device".into(),
        flags: "none".into(),
        engine: "device-read".into(),
        direction: "h2d".into(),
        mode: "direct".into(),
        size_bytes: 1 << 30,
        ring: 3,
        streams: 1,
        threads: 8,
        batch: 1,
        axes: axes.into(),
        status,
        samples: 20,
        bw_median_gbs: bw,
        device: "0".into(),
        gpus_at_once: 1,
        ..Row::default()
    }
}

#[test]
fn past_the_card_is_refused_without_both_opt_ins() {
    let free = 100 * GIB;
    // Scenario opt-in only (guard = false), no command-line flag: refused.
    let c = case("device_hold = \"free+5%\"\nguard = false");
    let hold = c.vram.device_hold.resolve(free);
    assert_eq!(
        overflow_refusal(&c, free, hold, false).as_deref(),
        Some(
            "it would allocate 106 GiB of device memory (105 GiB held by device_hold = \"free+5%\" and 1 GiB of its own), 6 GiB past the 100 GiB free: the scenario allows it (guard = false), and the command line must too: pass --allow-vram-overflow"
        )
    );
    // Both opt-ins: tried.
    assert_eq!(overflow_refusal(&c, free, hold, true), None);
    // The command-line flag alone: a scenario cannot even say free+5% with guard on (see the
    // scenario tests); an absolute hold past the card is refused at run time.
    let c = case("device_hold = \"120GiB\"");
    assert_eq!(
        overflow_refusal(&c, free, 120 * GIB, true).as_deref(),
        Some(
            "it needs 121 GiB of device memory (120 GiB held by device_hold = \"120GiB\" and 1 GiB of its own) and only 100 GiB is free: set guard = false in the case and pass --allow-vram-overflow to try it"
        )
    );
    // A plain case past the card with guard = false but no flag: refused too.
    let c = case("size = \"128GiB\"\nguard = false");
    assert_eq!(
        overflow_refusal(&c, free, 0, false).as_deref(),
        Some(
            "it would allocate 128 GiB of device memory, 28 GiB past the 100 GiB free: the scenario allows it (guard = false), and the command line must too: pass --allow-vram-overflow"
        )
    );
    // Guard on, no hold: the runner's usual guard speaks.
    let c = case("size = \"128GiB\"");
    assert_eq!(overflow_refusal(&c, free, 0, true), None);
}

#[test]
fn within_the_card_needs_no_opt_in() {
    let free = 100 * GIB;
    for hold in ["free-50%", "free-10%", "free-2GiB", "8GiB"] {
        let c = case(&format!("device_hold = \"{hold}\""));
        let h = c.vram.device_hold.resolve(free);
        assert_eq!(overflow_refusal(&c, free, h, false), None, "{hold}");
    }
    // free-1% with 1 GiB of its own goes 0 bytes past... 99 + 1 = 100: still within.
    let c = case("device_hold = \"free-1%\"");
    assert_eq!(
        overflow_refusal(&c, free, c.vram.device_hold.resolve(free), false),
        None
    );
    // free-0.5% + 1 GiB goes past: refused with the guard on.
    let c = case("device_hold = \"free-0.5%\"");
    let h = c.vram.device_hold.resolve(free);
    assert!(
        overflow_refusal(&c, free, h, true)
            .unwrap()
            .ends_with("set guard = false in the case and pass --allow-vram-overflow to try it")
    );
}

#[test]
fn status_metrics_judge_failed_rows() {
    let oom = row(
        "over",
        "device_hold=free+5%",
        Lane::Device,
        Status::Failed("cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (allocation)".into()),
        None,
    );
    assert_eq!(status_metric(&oom, "out_of_memory"), Some(1.0));
    let ok = row(
        "in",
        "device_hold=free-50%",
        Lane::Device,
        Status::Ok,
        Some(3000.0),
    );
    assert_eq!(status_metric(&ok, "out_of_memory"), Some(0.0));
    assert_eq!(
        status_metric(&ok, "mismatched_copies"),
        None,
        "not a churn row"
    );
    let mut churn = row("churn", "", Lane::H2d, Status::Ok, Some(20.0));
    churn.mode = "churn".into();
    assert_eq!(status_metric(&churn, "mismatched_copies"), Some(0.0));
    churn.status = Status::Failed("data mismatch in 19 of 20 copies".into());
    assert_eq!(status_metric(&churn, "mismatched_copies"), Some(19.0));
    assert!(judged_on_failure("mismatched_copies") && judged_on_failure("out_of_memory"));
    assert!(!judged_on_failure("bw_median_gbs"));
}

#[test]
fn plain_words_name_the_oom_row_and_the_spill() {
    let rows = vec![
        row("read", "device_hold=free-50%", Lane::Device, Status::Ok, Some(3000.0)),
        row(
            "read",
            "device_hold=free+5%",
            Lane::Device,
            Status::Failed("cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (device_hold: 80 GiB of 147 GiB allocated, 140 GiB was free)".into()),
            None,
        ),
        row("read", "device_hold=free+20%", Lane::Device, Status::Ok, Some(25.0)),
    ];
    let lines = answer_lines(&rows);
    assert_eq!(
        lines,
        vec![
            "device memory: read (device_hold=free-50%) at 3000 GB/s.".to_string(),
            "past the card: read (device_hold=free+5%) failed with CUDA_ERROR_OUT_OF_MEMORY: CUDA did not spill device memory into host memory here.".into(),
            "past the card: read (device_hold=free+20%) succeeded and ran at 25.0 GB/s, 120x slower than within the card (3000 GB/s): the allocation spilled into shared (host) memory.".into(),
        ]
    );
}

#[test]
fn plain_words_count_churn_copies() {
    let mut ok = row("churn", "", Lane::H2d, Status::Ok, Some(20.0));
    ok.mode = "churn".into();
    let mut bad = ok.clone();
    bad.case_label = "churn-register".into();
    bad.status = Status::Failed("data mismatch in 19 of 20 copies".into());
    assert_eq!(
        answer_lines(&[ok, bad]),
        vec![
            "pinned churn: churn: all 20 copies verified.".to_string(),
            "pinned churn: churn-register: data mismatch in 19 of 20 copies: copies returned success and left wrong data.".into(),
        ]
    );
}

#[test]
fn the_report_says_it_in_plain_words_too() {
    let rows = [
        row(
            "read",
            "device_hold=free-50%",
            Lane::Device,
            Status::Ok,
            Some(3000.0),
        ),
        row(
            "read",
            "device_hold=free+5%",
            Lane::Device,
            Status::Failed("cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (allocation)".into()),
            None,
        ),
    ];
    let refs: Vec<&Row> = rows.iter().collect();
    let said = crate::report::answer::answer(&refs, None, "s");
    assert!(
        said.iter().any(|s| s.topic == "Past the card"
            && s.text
                .starts_with("read (device_hold=free+5%) failed with CUDA_ERROR_OUT_OF_MEMORY")),
        "{said:#?}"
    );
    assert!(said.iter().any(|s| s.topic == "Device memory"), "{said:#?}");
}
