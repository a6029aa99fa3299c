//! The clocks of one operation timed by itself (the latency modes and the enqueue cost):
//! [`WaitClock`], the host clock from the operation's call until the host sees it done (with the
//! event time of an identical operation right after), and [`call_alone`], the host clock around
//! the call alone with the stream held by the spin gate.

use super::clock::Stopwatch;
use super::sample::{Gpu, SampleTimes};
use crate::cuda::{CudaError, Event, Stream};
use crate::scenario::Wait;

/// Times one operation until the host sees it done, waiting as `wait` says: the host clock
/// around the operation and the wait, and the event pair around an identical operation queued
/// right after (so no event record sits inside the host interval). The pairs are read only after
/// sampling ([`WaitClock::complete`]): the driver-API probe measured the next pageable
/// device→host copies ~1.1 µs slower when each sample read its pair (`async-elapsed` against
/// `async-settle`), even with a plain copy in between.
pub(crate) struct WaitClock {
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
    /// A clock for `samples` samples (warm-up included): their event pairs are created here, up
    /// to [`EVENT_PAIRS`], so that the sampling loop makes only the calls of the operation,
    /// its wait and its events, as a program timing its copies would.
    pub(crate) fn new(wait: Wait, samples: u32) -> Result<WaitClock, CudaError> {
        let pairs = (0..(samples as usize).min(EVENT_PAIRS))
            .map(|_| Ok([Event::new()?, Event::new()?]))
            .collect::<Result<Vec<_>, CudaError>>()?;
        Ok(WaitClock {
            wait,
            pairs,
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

    /// The ring slot of the next sample's event pair (created here only when more samples come
    /// than the clock was made for).
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
    pub(crate) fn until_done(
        &mut self,
        s: &Stream,
        mut op: impl FnMut() -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        let host_clock = Stopwatch::start();
        op()?;
        self.wait_for(s)?;
        let host = host_clock.ms();
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
    pub(crate) fn complete(&self, samples: &mut [SampleTimes]) -> Result<(), CudaError> {
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
pub(crate) fn call_alone(
    s: &Stream,
    gpu: &Gpu,
    gated: bool,
    op: impl FnOnce() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    if gated {
        gpu.gate.hold(gpu.kernels, s)?;
    }
    let host_clock = Stopwatch::start();
    let queued = op();
    let host = host_clock.ms();
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
