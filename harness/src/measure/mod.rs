//! Sampling, and every clock a sample is timed with: warm-up, then samples until the spread
//! target, the sample cap or the time limit. Every raw sample is kept; nothing is dropped.
//!
//! The sampling loop drives a [`Measurable`] (every transfer strategy is one) and the strategies
//! time their work with the clocks declared here ([`Stopwatch`], [`Timer`] for a batch,
//! [`WaitClock`] and [`call_alone`] for one operation), so the layer
//! that decides how samples are taken also owns how they are timed, and imports no strategy.

mod clock;
mod latency;
mod lockstep;
mod sample;
pub use clock::Stopwatch;
pub(crate) use clock::{Streams, Timer};
pub(crate) use latency::{WaitClock, call_alone};
pub use lockstep::{Lockstep, Vote};
pub use sample::{Gpu, LoadStages, Measurable, Moves, SampleTimes};

use crate::cuda::CudaError;
use crate::results::StopReason;
use crate::scenario::Lane;
use crate::scenario::Measure;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// All samples of one case.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub batch: u32,
    pub samples: Vec<SampleTimes>,
    /// Why sampling stopped; `None` before the first sample.
    pub stopped_by: Option<StopReason>,
}

impl Measured {
    /// Bandwidth samples (GB/s) of a lane, in sample order.
    pub fn bandwidth(&self, lane: Lane, bytes_per_transfer: u64) -> Vec<f64> {
        let bytes = bytes_per_transfer as f64 * f64::from(self.batch);
        self.lane_ms(lane, |s| &s.lanes)
            .map(|ms| bytes / (ms / 1e3) / crate::units::GB)
            .collect()
    }
    /// Per-transfer times (ms) of a lane: the time bandwidth is computed from.
    pub fn times(&self, lane: Lane) -> Vec<f64> {
        self.per_transfer(self.lane_ms(lane, |s| &s.lanes))
    }
    pub fn event_times(&self, lane: Lane) -> Vec<f64> {
        self.per_transfer(self.lane_ms(lane, |s| &s.event_ms))
    }
    pub fn wall_times(&self) -> Vec<f64> {
        self.per_transfer(self.samples.iter().map(|s| s.wall_ms))
    }

    /// The sample times (ms) of `lane` in sample order, from the per-lane `series` of each sample.
    fn lane_ms(
        &self,
        lane: Lane,
        series: fn(&SampleTimes) -> &[(Lane, f64)],
    ) -> impl Iterator<Item = f64> {
        self.samples
            .iter()
            .filter_map(move |s| series(s).iter().find(|(l, _)| *l == lane))
            .map(|(_, ms)| *ms)
    }

    /// Sample times divided by the transfers each sample timed.
    fn per_transfer(&self, sample_ms: impl Iterator<Item = f64>) -> Vec<f64> {
        let per = f64::from(self.batch.max(1));
        sample_ms.map(|ms| ms / per).collect()
    }
}

/// Runs warm-up transfers, then samples `transfer` until the stopping rule says enough.
/// On an error the samples so far are returned with it.
pub fn run(
    transfer: &mut dyn Measurable,
    gpu: &Gpu,
    m: &Measure,
    batch: u32,
    stop: &AtomicBool,
) -> Result<Measured, (CudaError, Measured)> {
    drive(transfer, gpu, batch, |next, watched| {
        sample_until(next, Rule::new(m, batch, watched, stop))
    })
}

/// How one case is sampled: the scenario's rule, the transfers per sample, the lane and the bytes
/// per transfer the stopping rule watches, and the run's stop flag.
#[derive(Clone, Copy)]
struct Rule<'a> {
    measure: &'a Measure,
    batch: u32,
    watched: (Lane, u64),
    stop: &'a AtomicBool,
}

impl<'a> Rule<'a> {
    fn new(measure: &'a Measure, batch: u32, watched: (Lane, u64), stop: &'a AtomicBool) -> Self {
        Rule {
            measure,
            batch,
            watched,
            stop,
        }
    }
}

/// [`run`] with the sample taken by `next` (a batch of `batch` transfers each call) and the
/// stopping rule watching `(lane, bytes per transfer)`: the loop itself, which the tests drive
/// with made-up samples.
fn sample_until(
    mut next: impl FnMut() -> Result<SampleTimes, CudaError>,
    rule: Rule<'_>,
) -> Result<Measured, (CudaError, Measured)> {
    let Rule {
        measure: m,
        batch,
        watched: (lane, bytes),
        stop,
    } = rule;
    let mut out = Measured {
        batch,
        ..Default::default()
    };
    let warming = Instant::now();
    let mut warm = 0;
    while still_warming(m, warm, warming, stop) {
        if let Err(e) = next() {
            return Err((e, out));
        }
        warm += 1;
    }
    let started = Instant::now();
    loop {
        if stop.load(Ordering::SeqCst) {
            out.stopped_by = Some(StopReason::Interrupted);
            break;
        }
        match next() {
            Ok(s) => out.samples.push(s),
            Err(e) => return Err((e, out)),
        }
        let (vote, reason) = stopping_rule(&out, m, lane, bytes, started);
        if vote != Vote::More {
            out.stopped_by = reason;
            break;
        }
    }
    Ok(out)
}

/// True while warm-up goes on: fewer than `measure.warmup` transfers so far, or less than
/// `measure.warmup_time` since it began and the run not interrupted.
fn still_warming(m: &Measure, done: u32, since: Instant, stop: &AtomicBool) -> bool {
    done < m.warmup || (since.elapsed() < m.warmup_time && !stop.load(Ordering::SeqCst))
}

/// One sampling loop (`sampling`, given the sample to take and the watched lane) over
/// `transfer`, then the samples completed.
fn drive(
    transfer: &mut dyn Measurable,
    gpu: &Gpu,
    batch: u32,
    sampling: impl FnOnce(
        &mut dyn FnMut() -> Result<SampleTimes, CudaError>,
        (Lane, u64),
    ) -> Result<Measured, (CudaError, Measured)>,
) -> Result<Measured, (CudaError, Measured)> {
    let watched = watched(transfer);
    let measured = sampling(&mut || transfer.sample(gpu, batch), watched)?;
    completed(transfer, gpu, measured)
}

/// The samples with what they left to be taken after sampling filled in
/// ([`Measurable::complete`]); on an error, the samples as they are.
fn completed(
    transfer: &mut dyn Measurable,
    gpu: &Gpu,
    mut out: Measured,
) -> Result<Measured, (CudaError, Measured)> {
    match transfer.complete(gpu, &mut out.samples) {
        Ok(()) => Ok(out),
        Err(e) => Err((e, out)),
    }
}

/// The lane the stopping rule watches (the first one reported) and the bytes one transfer moves
/// on it.
fn watched(transfer: &dyn Measurable) -> (Lane, u64) {
    let moves = transfer.moves();
    let lane = moves.lanes()[0];
    (lane, moves.bytes(lane))
}

/// The stopping rule after a sample: more samples below `min_samples`; stop at `max_samples`;
/// enough once the spread target is met (a target of 0 is none: fixed-count sampling); stop at
/// the time limit. Returns the vote and, when it ends sampling, why.
fn stopping_rule(
    out: &Measured,
    m: &Measure,
    lane: Lane,
    bytes: u64,
    started: Instant,
) -> (Vote, Option<StopReason>) {
    let n = out.samples.len() as u32;
    if n < m.min_samples {
        (Vote::More, None)
    } else if n >= m.max_samples {
        (Vote::Stop, Some(StopReason::MaxSamples))
    } else if m.target_spread > 0.0
        && crate::stats::relative_spread(&out.bandwidth(lane, bytes))
            .is_some_and(|s| s <= m.target_spread)
    {
        (Vote::Enough, Some(StopReason::Spread))
    } else if started.elapsed() >= m.time_limit {
        (Vote::Stop, Some(StopReason::TimeLimit))
    } else {
        (Vote::More, None)
    }
}

/// [`run`] for one GPU of several measured at the same time: every member of `step` starts each
/// sample (warm-up included) together, and all stop after the same sample — when every GPU's
/// stopping rule is satisfied, or as soon as one hits its sample cap, its time limit, an error or
/// an interruption. On an error this GPU votes stop (so the others end too) and returns it.
pub fn run_in_step(
    transfer: &mut dyn Measurable,
    gpu: &Gpu,
    m: &Measure,
    batch: u32,
    stop: &AtomicBool,
    step: &Lockstep,
) -> Result<Measured, (CudaError, Measured)> {
    drive(transfer, gpu, batch, |next, watched| {
        sample_in_step(next, Rule::new(m, batch, watched, stop), step)
    })
}

/// [`run_in_step`] with the sample taken by `next`, as [`sample_until`] is to [`run`].
fn sample_in_step(
    mut next: impl FnMut() -> Result<SampleTimes, CudaError>,
    rule: Rule<'_>,
    step: &Lockstep,
) -> Result<Measured, (CudaError, Measured)> {
    let (lane, bytes) = rule.watched;
    let mut out = Measured {
        batch: rule.batch,
        ..Default::default()
    };
    let mut warm = 0;
    let mut warming: Option<Instant> = None;
    let mut started: Option<Instant> = None;
    let mut vote = Vote::More;
    let mut reason = None;
    loop {
        if rule.stop.load(Ordering::SeqCst) {
            vote = Vote::Stop;
            reason = Some(StopReason::Interrupted);
        }
        if !step.round(vote) {
            out.stopped_by = reason.or(Some(StopReason::AnotherGpuStopped));
            break;
        }
        let s = match next() {
            Ok(s) => s,
            Err(e) => {
                step.round(Vote::Stop);
                return Err((e, out));
            }
        };
        let since = *warming.get_or_insert_with(Instant::now);
        if started.is_none() && still_warming(rule.measure, warm, since, rule.stop) {
            warm += 1;
            continue;
        }
        let t0 = *started.get_or_insert_with(Instant::now);
        out.samples.push(s);
        (vote, reason) = stopping_rule(&out, rule.measure, lane, bytes, t0);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
