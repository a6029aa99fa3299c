//! The measuring half of `pinscope check`: short pinned and pageable copies both ways (256 MiB
//! each, or 64 MiB with `--quick`, timed on the host from queueing to the stream's end), the data
//! of every round trip verified, and under WSL2 the pinned ceiling up to what common frameworks
//! pin. The verdicts are in [`crate::health`].

use super::Runner;
use crate::cuda::{self, CudaError, DeviceBuffer, HostBuffer, HostFlags, Stream};
use crate::health::{Bandwidth, Copies, FRAMEWORK_PINNED_BYTES, Measured};
use crate::units::MIB;
use std::time::Instant;

/// How much `check` copies: the full check, or the quick one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckPlan {
    /// Bytes of each copy.
    pub copy_bytes: usize,
    /// Timed copies per direction, after one untimed warm-up copy.
    pub pinned_copies: usize,
    pub pageable_copies: usize,
    /// Timed 4-byte copies, after untimed ones.
    pub latency_copies: usize,
    pub latency_warmup: usize,
}

impl CheckPlan {
    /// The full check: 256 MiB copies, 1 + 10 pinned and 1 + 4 pageable each way.
    pub const FULL: CheckPlan = CheckPlan {
        copy_bytes: (256 * MIB) as usize,
        pinned_copies: 10,
        pageable_copies: 4,
        latency_copies: 200,
        latency_warmup: 20,
    };
    /// `--quick`: 64 MiB copies, 1 + 3 pinned and 1 + 1 pageable each way, 50 latency copies.
    pub const QUICK: CheckPlan = CheckPlan {
        copy_bytes: (64 * MIB) as usize,
        pinned_copies: 3,
        pageable_copies: 1,
        latency_copies: 50,
        latency_warmup: 10,
    };
}

/// Step of the WSL2 pinned-ceiling probe.
const CEILING_CHUNK: u64 = 256 * MIB;
const SEED: u32 = 0x0c4e_c25a;

/// Host memory of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    Pinned,
    Pageable,
}

/// Both directions of one host-memory kind and the words that came back wrong.
struct RoundTrip {
    h2d: Bandwidth,
    d2h: Bandwidth,
    mismatched: u64,
}

/// Measures what the full `check` judges, on the runner's GPU.
pub fn measure_check(runner: &Runner, wsl2: bool) -> Measured {
    measure_check_with(runner, wsl2, &CheckPlan::FULL)
}

/// Measures what `check` judges, on the runner's GPU, copying as `plan` says.
pub fn measure_check_with(runner: &Runner, wsl2: bool, plan: &CheckPlan) -> Measured {
    let mut m = Measured::default();
    let mut mismatched = None;
    let mut split = |r: Result<RoundTrip, CudaError>| -> (Copies, Copies) {
        match r {
            Ok(rt) => {
                *mismatched.get_or_insert(0) += rt.mismatched;
                (Ok(rt.h2d), Ok(rt.d2h))
            }
            Err(e) => (Err(e.to_string()), Err(e.to_string())),
        }
    };
    let (h2d, d2h) = split(round_trip(
        Host::Pinned,
        plan.copy_bytes,
        plan.pinned_copies,
    ));
    (m.pinned_h2d, m.pinned_d2h) = (Some(h2d), Some(d2h));
    let (h2d, d2h) = split(round_trip(
        Host::Pageable,
        plan.copy_bytes,
        plan.pageable_copies,
    ));
    (m.pageable_h2d, m.pageable_d2h) = (Some(h2d), Some(d2h));
    m.mismatched_words = mismatched;
    m.copy_latency_us = Some(copy_latency(plan).map_err(|e| e.to_string()));
    if wsl2 {
        let c = super::pinned_ceiling(CEILING_CHUNK, FRAMEWORK_PINNED_BYTES, &runner.ledger);
        m.wsl2_pinned = Some((c.bytes, c.error.is_none()));
    }
    m
}

/// 4-byte pinned host→device copies, one at a time: the host time from the call to the end of
/// the stream's synchronisation, µs (the definition of `mode = "latency"`, docs/latency.md).
fn copy_latency(plan: &CheckPlan) -> Result<Vec<f64>, CudaError> {
    const BYTES: usize = 4;
    let src = HostBuffer::pinned(BYTES, HostFlags::default())?;
    let dev = DeviceBuffer::new(BYTES)?;
    let stream = Stream::new()?;
    for _ in 0..plan.latency_warmup {
        stream.copy_h2d(&dev, 0, &src, 0, BYTES)?;
        stream.synchronize()?;
    }
    let mut us = Vec::with_capacity(plan.latency_copies);
    for _ in 0..plan.latency_copies {
        let t = Instant::now();
        stream.copy_h2d(&dev, 0, &src, 0, BYTES)?;
        stream.synchronize()?;
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(us)
}

/// Host→device then device→host copies of a patterned buffer, timed, then the data checked.
fn round_trip(kind: Host, bytes: usize, copies: usize) -> Result<RoundTrip, CudaError> {
    let alloc = |len| match kind {
        Host::Pinned => HostBuffer::pinned(len, HostFlags::default()),
        Host::Pageable => HostBuffer::pageable(len),
    };
    let mut src = alloc(bytes)?;
    let mut dst = alloc(bytes)?;
    cuda::fill_pattern(src.as_mut_slice(), 0, SEED);
    cuda::fill_zero(dst.as_mut_slice());
    let dev = DeviceBuffer::new(bytes)?;
    let stream = Stream::new()?;
    let h2d = timed(copies, bytes, &stream, || {
        stream.copy_h2d(&dev, 0, &src, 0, bytes)
    })?;
    let d2h = timed(copies, bytes, &stream, || {
        stream.copy_d2h(&dst, 0, &dev, 0, bytes)
    })?;
    let (mismatched, _) = cuda::check_pattern(dst.as_slice(), 0, SEED);
    Ok(RoundTrip {
        h2d,
        d2h,
        mismatched,
    })
}

/// One untimed copy, then `copies` copies each timed from queueing to the stream's end.
fn timed(
    copies: usize,
    bytes: usize,
    stream: &Stream,
    copy: impl Fn() -> Result<(), CudaError>,
) -> Result<Bandwidth, CudaError> {
    copy()?;
    stream.synchronize()?;
    let mut samples = Vec::with_capacity(copies);
    for _ in 0..copies {
        let t = Instant::now();
        copy()?;
        stream.synchronize()?;
        samples.push(bytes as f64 / t.elapsed().as_secs_f64() / crate::units::GB);
    }
    let median = crate::stats::median(&samples).unwrap_or(0.0);
    Ok(Bandwidth {
        median_gbs: median,
        samples_gbs: samples,
        copy_bytes: bytes as u64,
    })
}
