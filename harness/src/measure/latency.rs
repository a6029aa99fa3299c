//! The clocks of one operation timed by itself (the latency modes and the enqueue cost):
//! [`WaitClock`], the host clock from the operation's call until the host sees it done (with the
//! event time of an identical operation right after), and [`call_alone`], the host clock around
//! the call alone with the stream held by the spin gate.

use super::clock::Stopwatch;
use super::sample::Gpu;
use crate::cuda::{CudaError, Event, Stream};
use crate::scenario::Wait;

/// Times one operation until the host sees it done, waiting as `wait` says: the host clock
/// around the operation and the wait, and the event pair around an identical operation queued
/// right after (so no event record sits inside the host interval).
pub(crate) struct WaitClock {
    wait: Wait,
    start: Event,
    end: Event,
    /// The event `event-blocking` waits on (sleeping, not timed).
    blocking: Option<Event>,
}

impl WaitClock {
    pub(crate) fn new(wait: Wait) -> Result<WaitClock, CudaError> {
        Ok(WaitClock {
            wait,
            start: Event::new()?,
            end: Event::new()?,
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

    /// Runs `op` on `s` three times: (host ms from just before the first until its wait
    /// returned, event ms of the second). The third, untimed, settles the stream so that the
    /// next sample's timed operation follows a plain one, as a program's back-to-back copies do:
    /// the driver-API probe measured a pageable device→host copy ~1 µs slower right after an
    /// event-bracketed one (`async-evt` against `async`).
    pub(crate) fn until_done(
        &self,
        s: &Stream,
        mut op: impl FnMut() -> Result<(), CudaError>,
    ) -> Result<(f64, f64), CudaError> {
        let host_clock = Stopwatch::start();
        op()?;
        self.wait_for(s)?;
        let host = host_clock.ms();
        self.start.record(s)?;
        op()?;
        self.end.record(s)?;
        self.wait_for(s)?;
        let event = self.start.elapsed_ms(&self.end)?;
        op()?;
        self.wait_for(s)?;
        Ok((host, event))
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
