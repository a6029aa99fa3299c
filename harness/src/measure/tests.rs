//! The sampling loops driven with made-up samples: warm-up, the stopping rule's four reasons, an
//! interruption, an error mid-way, and several GPUs in lockstep.

use super::*;
use std::sync::Arc;
use std::time::Duration;

/// The lane the loops watch in these tests, and the bytes one transfer moves on it.
const WATCHED: (Lane, u64) = (Lane::H2d, 1_000_000);

/// A sample of `ms` on the watched lane (wall and event time alike).
fn sample(ms: f64) -> SampleTimes {
    SampleTimes::host_timed(Lane::H2d, ms, Some(ms))
}

/// A sampling rule with no time limit to speak of.
fn rule(warmup: u32, min: u32, max: u32, target_spread: f64) -> Measure {
    Measure {
        warmup,
        min_samples: min,
        max_samples: max,
        target_spread,
        time_limit: Duration::from_secs(600),
        ..Measure::default()
    }
}

/// Samples of 1, 2, 3, … ms (the call count), and how many calls were made.
fn counting(calls: &mut u32) -> impl FnMut() -> Result<SampleTimes, CudaError> + '_ {
    move || {
        *calls += 1;
        Ok(sample(f64::from(*calls)))
    }
}

/// What [`sample_until`] keeps of [`counting`]'s samples under `m`, one transfer per sample, with
/// the run's stop flag already set when `stopped`.
fn counted(calls: &mut u32, m: &Measure, stopped: bool) -> Measured {
    let stop = AtomicBool::new(stopped);
    sample_until(counting(calls), Rule::new(m, 1, WATCHED, &stop)).unwrap()
}

fn lane_ms(m: &Measured) -> Vec<f64> {
    m.samples.iter().map(|s| s.lanes[0].1).collect()
}

#[test]
fn warm_up_samples_are_taken_and_not_kept() {
    let mut calls = 0;
    let m = counted(&mut calls, &rule(2, 5, 5, 0.0), false);
    assert_eq!(calls, 7);
    assert_eq!(lane_ms(&m), vec![3.0, 4.0, 5.0, 6.0, 7.0]);
    assert_eq!(m.stopped_by, Some(StopReason::MaxSamples));
}

#[test]
fn warm_up_goes_on_until_its_time_has_passed_when_that_is_longer_than_its_count() {
    let stop = AtomicBool::new(false);
    let mut called: Vec<std::time::Instant> = Vec::new();
    let slow = || {
        called.push(std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(2));
        Ok(sample(called.len() as f64))
    };
    let m = Measure {
        warmup_time: Duration::from_millis(30),
        ..rule(1, 3, 3, 0.0)
    };
    let got = sample_until(slow, Rule::new(&m, 1, WATCHED, &stop)).unwrap();
    let kept = lane_ms(&got);
    assert_eq!(kept.len(), 3);
    // More warm-up calls than the count of 1, and the first kept sample began once 30 ms had
    // passed since the warm-up began (sleeps last at least what they ask, so the number of
    // calls that fit depends on the platform's timer; the time does not).
    let first_kept = kept[0] as usize - 1;
    assert!(first_kept >= 2, "only {first_kept} warm-up calls");
    let warmed = called[first_kept] - called[0];
    assert!(
        warmed >= Duration::from_millis(29),
        "warm-up lasted {warmed:?}"
    );
}

#[test]
fn a_steady_transfer_stops_at_the_spread_target_or_at_the_cap_when_the_target_is_zero() {
    // (target spread, sample cap, samples taken, why sampling stopped)
    for (target, cap, taken, why) in [
        (0.01, 30, 5, StopReason::Spread),
        (0.0, 12, 12, StopReason::MaxSamples),
    ] {
        let stop = AtomicBool::new(false);
        let rule = rule(0, 5, cap, target);
        let m = sample_until(|| Ok(sample(2.0)), Rule::new(&rule, 1, WATCHED, &stop)).unwrap();
        assert_eq!(
            (m.samples.len(), m.stopped_by),
            (taken, Some(why)),
            "target {target}"
        );
    }
}

#[test]
fn the_time_limit_ends_sampling_once_min_samples_are_in() {
    let stop = AtomicBool::new(false);
    let mut calls = 0;
    let m = Measure {
        time_limit: Duration::ZERO,
        ..rule(1, 3, 100, 0.01)
    };
    let got = sample_until(counting(&mut calls), Rule::new(&m, 1, WATCHED, &stop)).unwrap();
    assert_eq!(got.samples.len(), 3);
    assert_eq!(got.stopped_by, Some(StopReason::TimeLimit));
}

#[test]
fn an_interruption_ends_sampling_before_the_next_sample() {
    let mut calls = 0;
    let m = counted(&mut calls, &rule(2, 5, 5, 0.0), true);
    assert_eq!(calls, 2, "the warm-up ran, no sample after it");
    assert!(m.samples.is_empty());
    assert_eq!(m.stopped_by, Some(StopReason::Interrupted));
}

#[test]
fn an_error_returns_the_samples_taken_before_it() {
    let stop = AtomicBool::new(false);
    let mut calls = 0;
    let failing = || {
        calls += 1;
        if calls == 5 {
            Err(CudaError::new("cuMemcpyAsync", "failed"))
        } else {
            Ok(sample(1.0))
        }
    };
    let (e, so_far) =
        sample_until(failing, Rule::new(&rule(2, 10, 10, 0.0), 4, WATCHED, &stop)).unwrap_err();
    assert_eq!(
        e.to_string(),
        CudaError::new("cuMemcpyAsync", "failed").to_string()
    );
    assert_eq!(so_far.samples.len(), 2);
    assert_eq!(so_far.batch, 4);
    assert_eq!(so_far.stopped_by, None);
}

#[test]
fn times_and_bandwidth_count_every_transfer_of_a_batch() {
    let stop = AtomicBool::new(false);
    let m = sample_until(
        || Ok(sample(8.0)),
        Rule::new(&rule(0, 1, 1, 0.0), 4, WATCHED, &stop),
    )
    .unwrap();
    assert_eq!(m.times(Lane::H2d), vec![2.0]);
    // 4 transfers of 1 MB in 8 ms: 0.5 GB/s.
    assert_eq!(m.bandwidth(Lane::H2d, WATCHED.1), vec![0.5]);
    assert!(
        m.times(Lane::D2h).is_empty(),
        "a lane never sampled has no times"
    );
}

#[test]
fn gpus_in_lockstep_take_as_many_samples_as_the_first_to_stop() {
    let step = Arc::new(Lockstep::new(2));
    let stop = Arc::new(AtomicBool::new(false));
    let members: Vec<_> = [3, 10]
        .into_iter()
        .map(|max| {
            let (step, stop) = (Arc::clone(&step), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut calls = 0;
                let m = rule(1, 1, max, 0.0);
                let got = sample_in_step(
                    counting(&mut calls),
                    Rule::new(&m, 1, WATCHED, &stop),
                    &step,
                );
                (calls, got.expect("no error"))
            })
        })
        .collect();
    let done: Vec<_> = members
        .into_iter()
        .map(|h| h.join().expect("member"))
        .collect();
    for (calls, got) in &done {
        assert_eq!(*calls, 4, "one warm-up and three samples each");
        assert_eq!(got.samples.len(), 3);
    }
    assert_eq!(done[0].1.stopped_by, Some(StopReason::MaxSamples));
    assert_eq!(done[1].1.stopped_by, Some(StopReason::AnotherGpuStopped));
}
