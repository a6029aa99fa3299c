//! Latency strategies: one copy per sample, timed by itself (`mode = "latency"`,
//! `"latency-sync"`, `"enqueue"`). Three quantities, kept apart:
//!
//! - **host-observed latency** (`latency`): the host clock from just before the asynchronous
//!   copy call until the wait returns — what a program waiting for one small copy waits. No
//!   event is recorded inside that interval (a `cuEventRecord` costs about a microsecond, a
//!   seventh of a small copy); the device's view comes from an identical copy right after it,
//!   bracketed by an event pair, so each sample holds both.
//! - **synchronous-call latency** (`latency-sync`): the host clock around one `cuMemcpyHtoD` /
//!   `cuMemcpyDtoH` (the legacy default stream; no events).
//! - **enqueue cost** (`enqueue`): the host clock around the asynchronous copy call alone. For
//!   page-locked memory the stream is held by the spin gate first, so the queue holds one kernel
//!   and one copy and the call never waits for the copy; pageable memory is not gated (the call
//!   itself stages the data, and a device-to-host call returns only once the data has arrived).
//!
//! `wait` says how the host waits in `latency` mode: a stream synchronisation (in the run's
//! context, or in a context of the case's own created with a scheduling flag, which the runner
//! makes current), an event synchronisation that sleeps, or polling the stream.

use super::*;
use crate::cuda::Event;
use crate::scenario::{LatencyCall, Wait};
use std::time::Instant;

/// One timed copy per sample, through `call`, its end awaited as `wait` says.
pub struct Latency {
    call: LatencyCall,
    clock: WaitClock,
}

impl Latency {
    pub fn allocate(
        case: &Case,
        call: LatencyCall,
        wait: Wait,
    ) -> Result<OneWayHost<Self>, CudaError> {
        let host = host_buffer(case, case.size as usize)?;
        let setup = SetupTimes::of(&host);
        let how = Latency {
            call,
            clock: WaitClock::new(wait)?,
        };
        Ok(OneWayHost::new(case, host, 1, setup, how))
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Times one operation until the host sees it done, waiting as `wait` says: the host clock
/// around the operation and the wait, and the event pair around an identical operation queued
/// right after (so no event record sits inside the host interval). The pairs are read only after
/// sampling ([`WaitClock::complete`]): the driver-API probe measured the next pageable
/// device→host copies ~1.1 µs slower when each sample read its pair (`async-elapsed` against
/// `async-settle`), even with a plain copy in between.
pub(super) struct WaitClock {
    wait: Wait,
    /// One event pair per sample, reused as a ring of [`EVENT_PAIRS`]: the device view of the
    /// latest that many samples.
    pairs: Vec<[Event; 2]>,
    /// Pairs recorded so far (warm-up included).
    recorded: usize,
    /// The event `event-blocking` waits on (sleeping, not timed).
    blocking: Option<Event>,
}

/// How many samples' event pairs are kept for reading after sampling: the device view of a case
/// that takes more samples is that of its latest this many.
const EVENT_PAIRS: usize = 4096;

/// The ring slot of the event pair of sample `i` of the latest `n` samples (oldest first) when
/// `recorded` pairs have been recorded; `None` when the ring has been round past it.
fn slot_of(recorded: usize, n: usize, i: usize) -> Option<usize> {
    let age = n.checked_sub(i)?;
    (1..=recorded.min(EVENT_PAIRS))
        .contains(&age)
        .then(|| (recorded - age) % EVENT_PAIRS)
}

impl WaitClock {
    pub(super) fn new(wait: Wait) -> Result<WaitClock, CudaError> {
        Ok(WaitClock {
            wait,
            pairs: Vec::new(),
            recorded: 0,
            blocking: match wait {
                Wait::EventBlocking => Some(Event::blocking()?),
                _ => None,
            },
        })
    }

    /// Waits as `wait` says for everything queued on `s`.
    fn wait_for(&self, s: &Stream) -> Result<(), CudaError> {
        match (self.wait, &self.blocking) {
            (Wait::EventBlocking, Some(ev)) => {
                ev.record(s)?;
                ev.synchronize()
            }
            // The context's scheduling flag decides how the stream synchronisation waits.
            (Wait::Query, _) => {
                while !s.is_done()? {
                    std::hint::spin_loop();
                }
                Ok(())
            }
            _ => s.synchronize(),
        }
    }

    /// The event pair of the next sample (created the first time round the ring).
    fn next_pair(&mut self) -> Result<usize, CudaError> {
        let i = self.recorded % EVENT_PAIRS;
        if i == self.pairs.len() {
            self.pairs.push([Event::new()?, Event::new()?]);
        }
        self.recorded += 1;
        Ok(i)
    }

    /// Runs `op` on `s` three times: the host ms from just before the first until its wait
    /// returned; the second between the sample's event pair; the third, untimed, settles the
    /// stream so that the next sample's timed operation follows a plain one, as a program's
    /// back-to-back copies do (the probe measured a pageable device→host copy ~1 µs slower right
    /// after an event-bracketed one: `async-evt` against `async`).
    pub(super) fn until_done(
        &mut self,
        s: &Stream,
        mut op: impl FnMut() -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        let t0 = Instant::now();
        op()?;
        self.wait_for(s)?;
        let host = ms_since(t0);
        let pair = self.next_pair()?;
        let [start, end] = &self.pairs[pair];
        start.record(s)?;
        op()?;
        end.record(s)?;
        self.wait_for(s)?;
        op()?;
        self.wait_for(s)?;
        Ok(host)
    }

    /// Gives each of `samples` (the latest taken, oldest first) the event time of its pair, on
    /// the lane of its host time; samples older than the ring keep none.
    pub(super) fn complete(&self, samples: &mut [SampleTimes]) -> Result<(), CudaError> {
        let n = samples.len();
        for (i, sample) in samples.iter_mut().enumerate() {
            let slot = slot_of(self.recorded, n, i);
            let (Some(&(lane, _)), Some([start, end])) =
                (sample.lanes.first(), slot.and_then(|k| self.pairs.get(k)))
            else {
                continue;
            };
            sample.event_ms = vec![(lane, start.elapsed_ms(end)?)];
        }
        Ok(())
    }
}

/// Host ms of the call `op` alone. When `gated` the stream is held by the spin gate first, so
/// the queue holds one kernel and `op`'s work and the call never waits for the GPU; the stream
/// is synchronised after.
pub(super) fn call_alone(
    s: &Stream,
    gpu: &Gpu,
    gated: bool,
    op: impl FnOnce() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    if gated {
        gpu.gate.hold(gpu.kernels, s)?;
    }
    let t0 = Instant::now();
    let queued = op();
    let host = ms_since(t0);
    if gated {
        gpu.gate.release();
    }
    queued?;
    s.synchronize()?;
    if gated && gpu.gate.timed_out() {
        return Err(CudaError::new(
            "spin gate",
            "timed out before the call was queued",
        ));
    }
    Ok(host)
}

/// Queues the one copy of the ends on `stream`.
fn copy_async(io: &OneWay, stream: &Stream) -> Result<(), CudaError> {
    if io.h2d {
        stream.copy_h2d(&io.device, 0, &io.host, 0, io.size)
    } else {
        stream.copy_d2h(&io.host, 0, &io.device, 0, io.size)
    }
}

/// The synchronous copy call: host ms.
fn sync_call(io: &mut OneWay) -> Result<f64, CudaError> {
    let t0 = Instant::now();
    if io.h2d {
        io.device.write(0, io.host.as_slice())?;
    } else {
        io.device.read(0, io.host.as_mut_slice())?;
    }
    Ok(ms_since(t0))
}

/// The one-lane sample of a host time and, when recorded, an event time (ms).
pub(super) fn one_sample(lane: Lane, host_ms: f64, event_ms: Option<f64>) -> SampleTimes {
    SampleTimes {
        lanes: vec![(lane, host_ms)],
        wall_ms: host_ms,
        event_ms: event_ms.map(|e| (lane, e)).into_iter().collect(),
        register_ms: None,
        unregister_ms: None,
    }
}

impl Enqueue for Latency {
    /// One copy, whatever `batch` says (the runner asks for 1).
    fn sample(&mut self, rig: Rig<'_, '_>, _batch: u32) -> Result<SampleTimes, CudaError> {
        let Rig { io, streams, gpu } = rig;
        let s = &streams[0];
        let host_ms = match self.call {
            LatencyCall::AsyncAndSync => self.clock.until_done(s, || copy_async(io, s))?,
            LatencyCall::Sync => sync_call(io)?,
            LatencyCall::Enqueue => {
                let gated = io.host.is_page_locked();
                call_alone(s, gpu, gated, || copy_async(io, s))?
            }
        };
        Ok(one_sample(io.lane(), host_ms, None))
    }

    /// The device view of the asynchronous copies, read once sampling is over.
    fn complete(&mut self, samples: &mut [SampleTimes]) -> Result<(), CudaError> {
        match self.call {
            LatencyCall::AsyncAndSync => self.clock.complete(samples),
            LatencyCall::Sync | LatencyCall::Enqueue => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EVENT_PAIRS, slot_of};

    #[test]
    fn samples_find_their_pairs_after_the_warm_up() {
        // 100 warm-up samples, then 1000 kept: the kept ones used pairs 100..1100.
        assert_eq!(slot_of(1100, 1000, 0), Some(100));
        assert_eq!(slot_of(1100, 1000, 999), Some(1099));
        assert_eq!(slot_of(1100, 1000, 1000), None);
    }

    #[test]
    fn samples_older_than_the_ring_have_no_pair() {
        let n = EVENT_PAIRS + 904;
        assert_eq!(slot_of(n, n, 0), None);
        assert_eq!(slot_of(n, n, 903), None);
        assert_eq!(slot_of(n, n, 904), Some(904));
        assert_eq!(slot_of(n, n, n - 1), Some(903));
        assert_eq!(slot_of(0, 0, 0), None);
    }
}
