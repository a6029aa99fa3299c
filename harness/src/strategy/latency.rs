//! Latency strategies: one copy per sample, timed by itself (`mode = "latency"`,
//! `"latency-sync"`, `"enqueue"`). Three quantities, kept apart:
//!
//! - **host-observed latency** (`latency`): the host clock from just before the asynchronous
//!   copy call until the wait returns — what a program waiting for one small copy waits. No
//!   event is recorded inside that interval (a `cuEventRecord` costs about a microsecond, a
//!   seventh of a small copy), and samples are back-to-back copies; once sampling is over, one
//!   identical copy per sample runs between an event pair, the device's view, so each sample
//!   holds both.
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
//!
//! The clocks are measure's ([`WaitClock`], [`call_alone`], [`Stopwatch`]); this file says which
//! copy call is timed with which.

use super::*;
use crate::measure::{Stopwatch, WaitClock, call_alone};
use crate::scenario::{LatencyCall, Wait};

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
    let host_clock = Stopwatch::start();
    if io.h2d {
        io.device.write(0, io.host.as_slice())?;
    } else {
        io.device.read(0, io.host.as_mut_slice())?;
    }
    Ok(host_clock.ms())
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
        Ok(SampleTimes::host_timed(io.lane(), host_ms, None))
    }

    /// The device view of the asynchronous copies, taken once sampling is over.
    fn complete(&mut self, rig: Rig<'_, '_>, samples: &mut [SampleTimes]) -> Result<(), CudaError> {
        let Rig { io, streams, .. } = rig;
        let s = &streams[0];
        match self.call {
            LatencyCall::AsyncAndSync => self.clock.device_view(s, samples, || copy_async(io, s)),
            LatencyCall::Sync | LatencyCall::Enqueue => Ok(()),
        }
    }
}
