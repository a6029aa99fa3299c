//! The clocks of one operation timed by itself (the latency modes and the enqueue cost):
//! [`WaitClock`], the host clock from the operation's call until the host sees it done (and,
//! after sampling, the event time of an identical operation per sample), and [`call_alone`], the host clock around
//! the call alone with the stream held by the spin gate.

use super::clock::Stopwatch;
use super::sample::{Gpu, SampleTimes};
use crate::cuda::{CudaError, Event, Stream};
use crate::scenario::Wait;

/// Times one operation until the host sees it done, waiting as `wait` says. Two passes:
/// during sampling each sample is the operation and its wait alone under the host clock, so
/// consecutive samples are back-to-back operations, as a program's loop of small copies is
/// (nothing recorded or read between them: the driver-API probe measured pageable device→host
/// copies ~1 µs slower right after an event-bracketed copy, `async-evt` against `async`, and
/// ~1.1 µs slower when an event pair was read between samples, `async-elapsed`). Once sampling
/// is over, [`WaitClock::device_view`] runs one identical operation per sample between an event
/// pair: the device's view of the same operation.
pub(crate) struct WaitClock {
    wait: Wait,
    /// The device view's event pair.
    pair: [Event; 2],
    /// The event `event-blocking` waits on (sleeping, not timed).
    blocking: Option<Event>,
}

impl WaitClock {
    pub(crate) fn new(wait: Wait) -> Result<WaitClock, CudaError> {
        Ok(WaitClock {
            wait,
            pair: [Event::new()?, Event::new()?],
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

    /// Host ms from just before `op` is called on `s` until the wait for it returned.
    pub(crate) fn until_done(
        &self,
        s: &Stream,
        op: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        let host_clock = Stopwatch::start();
        op()?;
        self.wait_for(s)?;
        Ok(host_clock.ms())
    }

    /// The device view of `samples` (host-timed by [`WaitClock::until_done`]): for each, `op`
    /// once more between the event pair, waited for, and the pair's time put on the lane of the
    /// sample's host time.
    pub(crate) fn device_view(
        &self,
        s: &Stream,
        samples: &mut [SampleTimes],
        mut op: impl FnMut() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let [start, end] = &self.pair;
        for sample in samples {
            let Some(&(lane, _)) = sample.lanes.first() else {
                continue;
            };
            start.record(s)?;
            op()?;
            end.record(s)?;
            self.wait_for(s)?;
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
