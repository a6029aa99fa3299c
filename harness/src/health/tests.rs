use super::*;
use crate::platform::{
    NodeBytes, NodePlacement, PState, Setting, Source, ThrottleReason, ThrottleReasons,
};

fn nvml(call: &str) -> Source {
    Source::Nvml(call.into())
}

/// The settings of a healthy Gen5 x16 GPU on NUMA node 1 (values as NVML and sysfs give them).
fn healthy() -> Settings {
    let mut s = Settings::all_unavailable("not read in this test");
    s.pcie_gen_max = Setting::known(5, nvml("max gen"));
    s.pcie_width_max = Setting::known(16, nvml("max width"));
    s.pcie_gen_under_load = Setting::known(5, nvml("gen"));
    s.pcie_width_under_load = Setting::known(16, nvml("width"));
    s.pstate_under_load = Setting::known(PState(0), nvml("pstate"));
    s.throttle_under_load = Setting::known(ThrottleReasons(vec![]), nvml("throttle"));
    s.gpu_numa_node = Setting::known(NumaNode::Node(1), Source::File("numa_node".into()));
    s.pinned_pages_nodes = Setting::known(
        NodePlacement(vec![NodeBytes {
            node: 1,
            bytes: 64 << 20,
        }]),
        Source::File("numa_maps".into()),
    );
    s
}

fn copies(median_gbs: f64) -> Option<Copies> {
    Some(Ok(Bandwidth {
        median_gbs,
        samples_gbs: vec![median_gbs],
        copy_bytes: 256 << 20,
    }))
}

fn measured(h2d: f64, d2h: f64) -> Measured {
    Measured {
        pinned_h2d: copies(h2d),
        pinned_d2h: copies(d2h),
        mismatched_words: Some(0),
        copy_latency_us: Some(Ok(vec![8.0, 9.0, 10.0])),
        ..Measured::default()
    }
}

fn verdict(results: &[CheckResult], c: Check) -> Verdict {
    results
        .iter()
        .find(|r| r.check == c)
        .map(|r| r.verdict)
        .expect("every check has a result")
}

#[test]
fn link_rates_match_the_pcie_generations() {
    let gen5 = link_rate_gbs(5, 16).expect("gen5");
    assert!((gen5 - 63.015).abs() < 0.01, "{gen5}");
    let gen3 = link_rate_gbs(3, 16).expect("gen3");
    assert!((gen3 - 15.754).abs() < 0.01, "{gen3}");
    assert_eq!(link_rate_gbs(1, 1), Some(0.25));
    assert_eq!(link_rate_gbs(9, 16), None);
}

#[test]
fn a_healthy_h200_like_gpu_passes_every_check_that_applies() {
    let r = evaluate(
        &measured(55.0, 55.5),
        &healthy(),
        &Thresholds::default(),
        false,
    );
    assert_eq!(r.len(), Check::gpu_checks().count());
    // Every check but the WSL2 ceiling and the latency, which need their own results.
    for c in &Check::ALL[..6] {
        let c = *c;
        assert_eq!(verdict(&r, c), Verdict::Pass, "{c:?}: {r:?}");
    }
    assert_eq!(
        verdict(&r, Check::Wsl2PinnedCeiling),
        Verdict::NotApplicable
    );
    assert_eq!(verdict(&r, Check::CopyLatency), Verdict::Pass);
    assert_eq!(r[7].measured, Some(Amount::Micros(9.0)));
    assert_eq!(overall(&r), Verdict::Pass);
    let h2d = &r[1];
    assert_eq!(h2d.threshold, "≥ 37.8 GB/s (60% of gen5x16's 63.0 GB/s)");
}

#[test]
fn a_floor_above_the_link_fails_and_a_near_miss_warns() {
    let t = Thresholds {
        min_h2d_gbs: Some(70.0),
        ..Thresholds::default()
    };
    let r = evaluate(&measured(55.0, 55.0), &healthy(), &t, false);
    assert_eq!(verdict(&r, Check::PinnedH2d), Verdict::Fail);
    assert_eq!(r[1].threshold, "≥ 70.0 GB/s (given)");
    assert!(!r[1].advice.is_empty());
    assert_eq!(overall(&r), Verdict::Fail);
    let near = Thresholds {
        min_h2d_gbs: Some(53.0),
        ..Thresholds::default()
    };
    let r = evaluate(&measured(55.0, 55.0), &healthy(), &near, false);
    assert_eq!(
        verdict(&r, Check::PinnedH2d),
        Verdict::Warn,
        "55 is within 5% of 53"
    );
    assert_eq!(overall(&r), Verdict::Warn);
}

#[test]
fn a_link_trained_at_half_width_fails() {
    let mut s = healthy();
    s.pcie_width_under_load = Setting::known(8, nvml("width"));
    let r = evaluate(&measured(27.0, 27.0), &s, &Thresholds::default(), false);
    assert_eq!(verdict(&r, Check::LinkUnderLoad), Verdict::Fail);
    assert_eq!(
        r[0].measured,
        Some(Amount::Link {
            generation: 5,
            width: 8
        })
    );
    assert_eq!(
        verdict(&r, Check::PinnedH2d),
        Verdict::Fail,
        "27 < 37.8 GB/s"
    );
}

#[test]
fn mismatched_words_fail_and_remote_pages_warn() {
    let mut s = healthy();
    s.pinned_pages_nodes = Setting::known(
        NodePlacement(vec![NodeBytes {
            node: 0,
            bytes: 64 << 20,
        }]),
        Source::File("numa_maps".into()),
    );
    let mut m = measured(55.0, 55.0);
    m.mismatched_words = Some(3);
    let r = evaluate(&m, &s, &Thresholds::default(), false);
    assert_eq!(verdict(&r, Check::DataVerification), Verdict::Fail);
    assert_eq!(verdict(&r, Check::PinnedNuma), Verdict::Warn);
    assert!(r[4].advice.contains("--membind=1"), "{}", r[4].advice);
}

#[test]
fn p2_or_a_thermal_slowdown_while_copying_warns() {
    let mut s = healthy();
    s.pstate_under_load = Setting::known(PState(2), nvml("pstate"));
    let r = evaluate(&measured(55.0, 55.0), &s, &Thresholds::default(), false);
    assert_eq!(verdict(&r, Check::ClocksUnderLoad), Verdict::Warn);
    let mut s = healthy();
    s.throttle_under_load = Setting::known(
        ThrottleReasons(vec![
            ThrottleReason::GpuIdle,
            ThrottleReason::HwThermalSlowdown,
        ]),
        nvml("throttle"),
    );
    let r = evaluate(&measured(55.0, 55.0), &s, &Thresholds::default(), false);
    assert_eq!(verdict(&r, Check::ClocksUnderLoad), Verdict::Warn);
    assert!(r[5].advice.contains("HW_THERMAL_SLOWDOWN"));
}

#[test]
fn without_nvml_link_checks_do_not_run_and_say_why() {
    let mut s = Settings::all_unavailable("NVML not loaded");
    s.gpu_numa_node = Setting::known(NumaNode::NoAffinity, Source::File("numa_node".into()));
    let r = evaluate(&measured(20.0, 20.0), &s, &Thresholds::default(), false);
    assert_eq!(verdict(&r, Check::LinkUnderLoad), Verdict::NotRun);
    assert!(r[0].advice.contains("NVML not loaded"), "{}", r[0].advice);
    assert_eq!(verdict(&r, Check::PinnedH2d), Verdict::NotRun);
    assert!(r[1].advice.contains("--min-h2d"), "{}", r[1].advice);
    assert_eq!(
        r[1].measured,
        Some(Amount::GbPerS(20.0)),
        "still shows what it measured"
    );
    assert_eq!(verdict(&r, Check::PinnedNuma), Verdict::NotApplicable);
    assert_eq!(
        overall(&r),
        Verdict::Pass,
        "verification passed, nothing failed"
    );
}

#[test]
fn a_small_wsl2_pinned_ceiling_warns() {
    let mut m = measured(20.0, 20.0);
    m.wsl2_pinned = Some((768 << 20, false));
    let r = evaluate(&m, &healthy(), &Thresholds::default(), true);
    assert_eq!(verdict(&r, Check::Wsl2PinnedCeiling), Verdict::Warn);
    m.wsl2_pinned = Some((4 << 30, true));
    let r = evaluate(&m, &healthy(), &Thresholds::default(), true);
    assert_eq!(verdict(&r, Check::Wsl2PinnedCeiling), Verdict::Pass);
}

#[test]
fn with_no_gpu_every_check_is_not_run() {
    let r = all_not_run("no GPU");
    assert_eq!(r.len(), Check::gpu_checks().count());
    assert!(r.iter().all(|c| c.verdict == Verdict::NotRun));
    assert_eq!(overall(&r), Verdict::NotRun);
}

#[test]
fn a_slow_small_copy_warns() {
    let mut m = measured(55.0, 55.0);
    m.copy_latency_us = Some(Ok(vec![150.0, 160.0, 170.0]));
    let r = evaluate(&m, &healthy(), &Thresholds::default(), false);
    assert_eq!(verdict(&r, Check::CopyLatency), Verdict::Warn);
    assert_eq!(r[7].threshold, "≤ 100 µs (median)");
}

/// Only heat, power or hardware slowdowns warn: an idle GPU, a clock setting or a sync boost
/// group at P0 passes, and a warning names each slowdown by NVML's name.
#[test]
fn throttle_verdict_reads_the_typed_reasons() {
    let at_p0 = |reasons: Vec<ThrottleReason>| {
        let mut s = healthy();
        s.pstate_under_load = Setting::known(PState(0), nvml("pstate"));
        s.throttle_under_load = Setting::known(ThrottleReasons(reasons), nvml("throttle"));
        evaluate(&measured(55.0, 55.0), &s, &Thresholds::default(), false)
    };
    let harmless = vec![
        ThrottleReason::GpuIdle,
        ThrottleReason::ApplicationsClocksSetting,
        ThrottleReason::SyncBoost,
        ThrottleReason::DisplayClockSetting,
    ];
    assert_eq!(
        verdict(&at_p0(harmless), Check::ClocksUnderLoad),
        Verdict::Pass
    );
    for r in ThrottleReason::ALL.into_iter().filter(|r| r.is_slowdown()) {
        let checks = at_p0(vec![ThrottleReason::GpuIdle, r]);
        assert_eq!(
            verdict(&checks, Check::ClocksUnderLoad),
            Verdict::Warn,
            "{r}"
        );
        let clocks = checks
            .iter()
            .find(|c| c.check == Check::ClocksUnderLoad)
            .expect("the clocks check");
        assert!(clocks.advice.contains(r.name()), "{}", clocks.advice);
        assert!(!clocks.advice.contains("GPU_IDLE"), "{}", clocks.advice);
    }
}
