//! One case, phase by phase, with a snapshot of every memory observer between them: `before` →
//! host memory allocated and first touched (`host`; the max-alloc probe runs here, with only the
//! host memory held) → device memory allocated and first touched (`device`) → transfer and
//! verify (`transfer`) → free (`free`) → hold after free → probes. Any CUDA error becomes the
//! case's status; nothing here panics.

use super::CaseOutcome;
use super::probes::{max_allocatable, pinned_ceiling};
use super::runner::Runner;
use crate::cuda::{CudaError, Gate, Gpu as CudaGpu, Kernels, OwnContext, Schedule};
use crate::measure::{self, Lockstep};
use crate::probe::{self, Ledger, LedgerCategory as Category, Moment, Observers};
use crate::results::{Cause, Failure, Phase, Status, StopReason, Verification};
use crate::scenario::{Case, Measure, Sampling, Wait};
use crate::strategy::{self, Footprint, Transfer, Verified};
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a case must not run here, decided before anything is allocated: the rule `plan` shows
/// ([`crate::scenario::refusal`]) against this machine's RAM and the GPU's free memory now.
pub fn guard(case: &Case, ram: u64, allow_pinned: f64, gpu: &CudaGpu) -> Option<String> {
    let free = if case.guard {
        gpu.mem_info().ok().map(|(free, _)| free)
    } else {
        None
    };
    crate::scenario::refusal(case, Some(ram), allow_pinned, free).map(|r| r.to_string())
}

/// The ledger categories a footprint books, with their bytes.
fn booked(f: &Footprint) -> [(Category, u64); 5] {
    [
        (Category::PinnedAlloc, f.pinned_alloc),
        (Category::Registered, f.registered),
        (Category::Managed, f.managed),
        (Category::Staging, f.staging),
        (Category::Device, f.device),
    ]
}

fn ledger_add(l: &Ledger, f: &Footprint) {
    for (c, n) in booked(f) {
        l.add(c, n);
    }
}

fn ledger_sub(l: &Ledger, f: &Footprint) {
    for (c, n) in booked(f) {
        l.sub(c, n);
    }
}

fn failed(e: &CudaError, phase: Phase) -> Status {
    Status::Failed(Failure::call(e, phase))
}

/// A context of a case's own, created with the scheduling flag its `wait` names, current while
/// the case runs, with the kernels and the spin gate loaded into it (fields drop in order: the
/// kernels and the gate before the context).
struct OwnGpu {
    kernels: Kernels,
    gate: Gate,
    _context: OwnContext,
}

impl OwnGpu {
    /// The case's own context, or `None` when it runs in the run's context.
    fn open(case: &Case, sms: u32) -> Result<Option<OwnGpu>, CudaError> {
        let schedule = match case.wait {
            Wait::Spin => Schedule::Spin,
            Wait::Yield => Schedule::Yield,
            Wait::Blocking => Schedule::BlockingSync,
            Wait::Stream | Wait::EventBlocking | Wait::Query => return Ok(None),
        };
        let context = OwnContext::create(schedule)?;
        Ok(Some(OwnGpu {
            kernels: Kernels::load_here(sms)?,
            gate: Gate::new()?,
            _context: context,
        }))
    }
}

/// How a case is sampled, as its mode declares: its `measure` and batch, except that a churn case
/// is `cycles` single copies with no warm-up (strategy/churn.rs) and a latency case
/// `measure.samples` single copies after its warm-up ([`crate::scenario::latency_counts`]) or
/// until `measure.time_limit`; neither stops on the spread target (0: none).
pub fn sampling(case: &Case) -> (Measure, u32) {
    let single = |warmup: u32, min: u32, max: u32, time_limit: std::time::Duration| Measure {
        warmup,
        min_samples: min,
        max_samples: max,
        time_limit,
        target_spread: 0.0,
        ..case.measure.clone()
    };
    match case.mode.declaration().sampling {
        Sampling::Cycles => {
            let cycles = case.vram.cycles;
            let m = single(0, cycles, cycles, std::time::Duration::MAX);
            let no_warmup = Measure {
                warmup_time: std::time::Duration::ZERO,
                ..m
            };
            (no_warmup, 1)
        }
        Sampling::PerOperation => {
            let (warmup, n) = crate::scenario::latency_counts(&case.measure);
            (single(warmup, 1, n, case.measure.time_limit), 1)
        }
        Sampling::Batched => (case.measure.clone(), case.batch()),
    }
}

/// Takes a snapshot of every observer at `phase` when the case asks for accounting.
fn snap(obs: &mut Observers, case: &Case, out: &mut CaseOutcome, phase: Moment) {
    if case.probes.accounting {
        out.snapshots.push(obs.snapshot(phase));
    }
}

/// The case's memory in two phases: the host memory allocated and first touched (`host`
/// snapshot; the max-alloc probe runs here, so it holds only the host memory), then the device
/// memory allocated and first touched (`device` snapshot). On an error, the case's status; what
/// was allocated is released.
fn allocate_in_phases(
    obs: &mut Observers,
    ledger: &Ledger,
    cuda: &CudaGpu,
    case: &Case,
    gpu: &measure::Gpu,
    out: &mut CaseOutcome,
) -> Result<Box<dyn Transfer>, Status> {
    let mut host = strategy::allocate(case).map_err(|e| failed(&e, Phase::HostAllocation))?;
    let host_fp = host.footprint();
    ledger_add(ledger, &host_fp);
    host.touch();
    snap(obs, case, out, Moment::Host);
    let probed = if case.probes.max_alloc {
        max_allocatable(cuda).map(|v| out.max_alloc.host = Some(v))
    } else {
        Ok(())
    };
    ledger_sub(ledger, &host_fp);
    probed.map_err(|e| failed(&e, Phase::MaxAllocProbe))?;
    let transfer = host
        .add_device(gpu)
        .map_err(|e| failed(&e, Phase::DeviceAllocation))?;
    out.footprint = transfer.footprint();
    ledger_add(ledger, &out.footprint);
    snap(obs, case, out, Moment::Device);
    Ok(transfer)
}

/// Samples the transfer as [`sampling`] says, in lockstep with the other GPUs when `step` is
/// given. What was measured is kept on an error.
fn measure_case(
    transfer: &mut dyn Transfer,
    gpu: &measure::Gpu,
    case: &Case,
    stop: &AtomicBool,
    step: Option<&Lockstep>,
    out: &mut CaseOutcome,
) -> Result<(), CudaError> {
    let (measure, batch) = sampling(case);
    let measured = match step {
        Some(s) => crate::measure::run_in_step(transfer, gpu, &measure, batch, stop, s),
        None => crate::measure::run(transfer, gpu, &measure, batch, stop),
    };
    match measured {
        Ok(m) => {
            out.measured = m;
            Ok(())
        }
        Err((e, m)) => {
            out.measured = m;
            Err(e)
        }
    }
}

/// Runs one case that passed its guard.
pub fn run_case(runner: &mut Runner, case: &Case, stop: &AtomicBool) -> CaseOutcome {
    run_case_in_step(runner, case, stop, None)
}

/// Leaves the lockstep when dropped: a GPU whose case failed before or after measuring is no
/// longer waited for.
struct Member<'a>(Option<&'a Lockstep>);

impl Drop for Member<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.0 {
            s.leave();
        }
    }
}

/// [`run_case`] for one GPU of a case measured on several GPUs at once (`step`: their lockstep).
pub fn run_case_in_step(
    runner: &mut Runner,
    case: &Case,
    stop: &AtomicBool,
    step: Option<&Lockstep>,
) -> CaseOutcome {
    let member = Member(step);
    let mut out = CaseOutcome::empty(case, Status::Ok);
    // A case that waits in a context of its own runs entirely in it (created before the first
    // snapshot, so its memory is not booked to the case's allocation).
    let own = match OwnGpu::open(case, runner.gpu.facts().multiprocessors) {
        Ok(o) => o,
        Err(e) => {
            out.status = failed(&e, Phase::OwnContext);
            return out;
        }
    };
    let gpu = match &own {
        Some(o) => measure::Gpu {
            kernels: &o.kernels,
            gate: &o.gate,
        },
        None => measure::Gpu {
            kernels: &runner.kernels,
            gate: &runner.gate,
        },
    };
    let obs = &mut runner.observers;
    snap(obs, case, &mut out, Moment::Before);
    let mut transfer =
        match allocate_in_phases(obs, &runner.ledger, &runner.gpu, case, &gpu, &mut out) {
            Ok(t) => t,
            Err(s) => {
                out.status = s;
                return out;
            }
        };
    let mut status = None;
    if let Err(e) = measure_case(transfer.as_mut(), &gpu, case, stop, member.0, &mut out) {
        status = Some(failed(&e, Phase::Transfer));
    }
    // Measuring is over for this GPU (or never started): the others stop waiting for it.
    drop(member);
    snap(obs, case, &mut out, Moment::Transfer);
    if status.is_none() && case.measure.verify {
        status = verify_transfer(transfer.as_mut(), &gpu, case, &mut out);
    }
    out.setup = transfer.setup();
    match transfer.free() {
        Ok(t) => out.setup = t,
        Err(e) => {
            status.get_or_insert(failed(&e, Phase::Free));
        }
    }
    ledger_sub(&runner.ledger, &out.footprint);
    snap(obs, case, &mut out, Moment::Free);
    probe_after_free(runner, case, stop, &mut out);
    if let Some(s) = status {
        out.status = s;
    } else if out.measured.stopped_by == Some(StopReason::Interrupted)
        && out.measured.samples.is_empty()
    {
        out.status = Status::Skipped("interrupted".into());
    }
    out
}

/// Checks the data the transfer moved: records whether it was right, and the failure when not.
fn verify_transfer(
    transfer: &mut dyn Transfer,
    gpu: &measure::Gpu,
    case: &Case,
    out: &mut CaseOutcome,
) -> Option<Status> {
    match transfer.verify(gpu) {
        Ok(Verified::Yes) => {
            out.verified = Verification::Yes;
            None
        }
        Ok(Verified::NotApplicable) => {
            out.verified = Verification::NotApplicable;
            None
        }
        Ok(Verified::Mismatch {
            lane,
            bad_words,
            first,
        }) => {
            out.verified = Verification::No;
            Some(Status::Failed(Failure::new(Cause::WrongWords {
                bad_words,
                words: case.size / 4,
                lane,
                first,
            })))
        }
        Ok(Verified::Copies {
            bad_copies, copies, ..
        }) => {
            out.verified = Verification::No;
            Some(Status::Failed(Failure::new(Cause::WrongCopies {
                bad: bad_copies,
                copies,
            })))
        }
        Err(e) => Some(failed(&e, Phase::Verification)),
    }
}

/// After the case's memory is freed: the hold-after-free timeline, the max-alloc probe and the
/// pinned-ceiling probe, as the case asks.
fn probe_after_free(runner: &mut Runner, case: &Case, stop: &AtomicBool, out: &mut CaseOutcome) {
    if case.probes.accounting && !case.probes.hold_after_free.is_zero() {
        out.timeline = probe::timeline(
            &mut runner.observers,
            case.probes.hold_after_free,
            case.probes.hold_interval,
            stop,
        );
    }
    if case.probes.max_alloc
        && let Ok(v) = max_allocatable(&runner.gpu)
    {
        out.max_alloc.free = Some(v);
    }
    if case.probes.pinned_ceiling && !stop.load(Ordering::SeqCst) {
        out.pinned_ceiling = Some(pinned_ceiling(
            case.probes.ceiling_chunk,
            runner.pinned_cap,
            &runner.ledger,
        ));
    }
}
