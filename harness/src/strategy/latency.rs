//! Latency strategies: one copy per sample, timed by itself (`mode = "latency"`,
//! `"latency-sync"`, `"enqueue"`). Three quantities, kept apart:
//!
//! - **host-observed latency** (`latency`): the host clock from just before the asynchronous
//!   copy call until the stream synchronisation returns — what a program waiting for one small
//!   copy waits. The end event is recorded between the two calls, so the host interval includes
//!   one `cuEventRecord`; the event pair gives the device's view of the same copy.
//! - **synchronous-call latency** (`latency-sync`): the host clock around one `cuMemcpyHtoD` /
//!   `cuMemcpyDtoH` (the legacy default stream; no events).
//! - **enqueue cost** (`enqueue`): the host clock around the asynchronous copy call alone. For
//!   page-locked memory the stream is held by the spin gate first, so the queue holds one kernel
//!   and one copy and the call never waits for the copy; pageable memory is not gated (the call
//!   itself stages the data, and a device-to-host call returns only once the data has arrived).

use super::*;
use crate::cuda::Event;
use crate::scenario::LatencyCall;
use std::time::Instant;

/// One timed copy per sample, through `call`.
pub struct Latency {
    call: LatencyCall,
    start: Event,
    end: Event,
}

impl Latency {
    pub fn allocate(case: &Case, call: LatencyCall) -> Result<OneWayTransfer<Self>, CudaError> {
        let host = host_buffer(case, case.size as usize)?;
        let setup = SetupTimes::of(&host);
        let how = Latency {
            call,
            start: Event::new()?,
            end: Event::new()?,
        };
        OneWayTransfer::new(case, host, 1, setup, how)
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Queues the one copy of the ends on `stream`.
fn copy_async(io: &OneWay, stream: &Stream) -> Result<(), CudaError> {
    if io.h2d {
        stream.copy_h2d(&io.device, 0, &io.host, 0, io.size)
    } else {
        stream.copy_d2h(&io.host, 0, &io.device, 0, io.size)
    }
}

impl Latency {
    /// Async copy + stream synchronisation: (host ms, event ms).
    fn async_and_sync(&self, io: &OneWay, s: &Stream) -> Result<(f64, Option<f64>), CudaError> {
        self.start.record(s)?;
        let t0 = Instant::now();
        copy_async(io, s)?;
        self.end.record(s)?;
        s.synchronize()?;
        let host = ms_since(t0);
        Ok((host, Some(self.start.elapsed_ms(&self.end)?)))
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

    /// The async copy call alone, the stream of page-locked memory held by the gate: host ms.
    fn enqueue(io: &OneWay, s: &Stream, gpu: &Gpu) -> Result<f64, CudaError> {
        let gated = io.host.is_page_locked();
        if gated {
            gpu.gate.hold(gpu.kernels, s)?;
        }
        let t0 = Instant::now();
        let queued = copy_async(io, s);
        let host = ms_since(t0);
        if gated {
            gpu.gate.release();
        }
        queued?;
        s.synchronize()?;
        if gated && gpu.gate.timed_out() {
            return Err(CudaError::new(
                "spin gate",
                "timed out before the copy was queued",
            ));
        }
        Ok(host)
    }
}

impl Enqueue for Latency {
    /// One copy, whatever `batch` says (the runner asks for 1).
    fn sample(&mut self, rig: Rig<'_, '_>, _batch: u32) -> Result<SampleTimes, CudaError> {
        let Rig { io, streams, gpu } = rig;
        let s = &streams[0];
        let (host_ms, event_ms) = match self.call {
            LatencyCall::AsyncAndSync => self.async_and_sync(io, s)?,
            LatencyCall::Sync => (Self::sync_call(io)?, None),
            LatencyCall::Enqueue => (Self::enqueue(io, s, gpu)?, None),
        };
        let lane = io.lane();
        Ok(SampleTimes {
            lanes: vec![(lane, host_ms)],
            wall_ms: host_ms,
            event_ms: event_ms.map(|e| (lane, e)).into_iter().collect(),
            register_ms: None,
            unregister_ms: None,
        })
    }
}
