//! The empty kernel (`engine = "empty"`): nothing moves, so what is timed is the launch and the
//! synchronisation themselves. `latency`: one launch + the wait `wait` names per sample (host
//! clock; after sampling, one identical launch per sample between an event pair); `enqueue`: the launch call alone, the stream held
//! by the spin gate; `direct`: `batch` launches back to back and one synchronisation, so the
//! time per launch is the inverse of the launch rate.

use super::*;
use crate::cuda::Event;
use crate::measure::{Stopwatch, WaitClock, call_alone};
use crate::scenario::{LatencyCall, Wait};

/// An empty kernel on one stream, timed per `route`.
pub struct EmptyKernel {
    route: Route,
    stream: Stream,
    start: Event,
    end: Event,
    clock: WaitClock,
}

impl EmptyKernel {
    pub fn allocate(case: &Case) -> Result<EmptyKernel, CudaError> {
        let route = case.route();
        let wait = match route {
            Route::Latency { wait, .. } => wait,
            _ => Wait::Stream,
        };
        Ok(EmptyKernel {
            route,
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
            clock: WaitClock::new(wait)?,
        })
    }

    /// `batch` launches back to back, then one synchronisation: (host ms, event ms).
    fn launches(&self, gpu: &Gpu, batch: u32) -> Result<(f64, f64), CudaError> {
        let s = &self.stream;
        self.start.record(s)?;
        let host_clock = Stopwatch::start();
        for _ in 0..batch {
            gpu.kernels.empty(s)?;
        }
        self.end.record(s)?;
        s.synchronize()?;
        let host = host_clock.ms();
        Ok((host, self.start.elapsed_ms(&self.end)?))
    }
}

impl Measurable for EmptyKernel {
    fn moves(&self) -> Moves {
        Moves::OneWay(Lane::Device, 0)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let s = &self.stream;
        let (host, event) = match self.route {
            Route::Latency {
                call: LatencyCall::Enqueue,
                ..
            } => (call_alone(s, gpu, true, || gpu.kernels.empty(s))?, None),
            Route::Latency { .. } => (self.clock.until_done(s, || gpu.kernels.empty(s))?, None),
            _ => {
                let (h, e) = self.launches(gpu, batch)?;
                (h, Some(e))
            }
        };
        Ok(SampleTimes::host_timed(Lane::Device, host, event))
    }

    /// The device view of the launches waited for one at a time, taken once sampling is over.
    fn complete(&mut self, gpu: &Gpu, samples: &mut [SampleTimes]) -> Result<(), CudaError> {
        let s = &self.stream;
        match self.route {
            Route::Latency {
                call: LatencyCall::AsyncAndSync,
                ..
            } => self.clock.device_view(s, samples, || gpu.kernels.empty(s)),
            _ => Ok(()),
        }
    }
}

impl Transfer for EmptyKernel {
    /// Nothing lands anywhere: there is nothing to check.
    fn verify(&mut self, _gpu: &Gpu) -> Result<Verified, CudaError> {
        Ok(Verified::NotApplicable)
    }

    fn setup(&self) -> SetupTimes {
        SetupTimes::default()
    }

    fn footprint(&self) -> Footprint {
        Footprint::default()
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        Ok(SetupTimes::default())
    }
}
