//! Device-resident engines (`device-read`, `device-write`, `device-copy`): the pinscope kernels on
//! device memory only, no host buffer. They measure device memory bandwidth: HBM or GDDR when the
//! allocation lives on the card, PCIe speed when the driver placed it in shared (host) memory
//! (WDDM's sysmem fallback). Gated behind the spin kernel and timed with events, like zero-copy.
//! Bytes per transfer: `size` (a copy reads `size` and writes `size`, as nvbandwidth counts its
//! `device_local_copy`).

use super::*;
use crate::cuda::Event;
use std::time::Instant;

pub struct DeviceLocal {
    /// Read by `device-read` and `device-copy`.
    src: Option<DeviceBuffer>,
    /// Written by `device-write` and `device-copy`.
    dst: Option<DeviceBuffer>,
    sink: DeviceBuffer,
    stream: Stream,
    engine: Engine,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl DeviceLocal {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let reads = matches!(case.engine, Engine::DeviceRead | Engine::DeviceCopy);
        let writes = matches!(case.engine, Engine::DeviceWrite | Engine::DeviceCopy);
        let src = reads.then(|| DeviceBuffer::new(size)).transpose()?;
        // The last allocation is the one measured past the card in the overflow experiment.
        let dst = writes.then(|| DeviceBuffer::new(size)).transpose()?;
        let alloc_ms = src.iter().chain(dst.iter()).map(|b| b.alloc_ms).sum();
        Ok(Self {
            src,
            dst,
            sink: DeviceBuffer::new(16)?,
            stream: Stream::new()?,
            engine: case.engine,
            seed: seed_for(case),
            size,
            setup: SetupTimes {
                alloc_ms: Some(alloc_ms),
                ..Default::default()
            },
        })
    }
}

impl Transfer for DeviceLocal {
    fn lanes(&self) -> Vec<Lane> {
        vec![Lane::Device]
    }
    fn bytes(&self, _lane: Lane) -> u64 {
        self.size as u64
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        if let Some(src) = &self.src {
            gpu.kernels.write(&self.stream, src, self.size, self.seed)?;
        }
        if let Some(dst) = &self.dst {
            dst.memset(&self.stream, 0)?;
        }
        self.stream.synchronize()
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (start, end) = (Event::new()?, Event::new()?);
        let t0 = Instant::now();
        gpu.gate.hold(gpu.kernels, &self.stream)?;
        start.record(&self.stream)?;
        let queued = (|| {
            for _ in 0..batch {
                match (&self.src, &self.dst) {
                    (Some(s), Some(d)) => gpu.kernels.copy(&self.stream, s, 0, d, 0, self.size)?,
                    (Some(s), None) => gpu.kernels.read(&self.stream, s, self.size, &self.sink)?,
                    (None, Some(d)) => gpu.kernels.write(&self.stream, d, self.size, self.seed)?,
                    (None, None) => return Err(CudaError::new("sample", "buffers already freed")),
                }
            }
            end.record(&self.stream)
        })();
        // Always let the gate go, or the stream stays held until the spin kernel times out.
        gpu.gate.release();
        queued?;
        end.synchronize()?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        if gpu.gate.timed_out() {
            return Err(CudaError::new(
                "spin gate",
                "timed out before the batch was queued",
            ));
        }
        let ev = start.elapsed_ms(&end)?;
        Ok(SampleTimes {
            lanes: vec![(Lane::Device, ev)],
            wall_ms,
            event_ms: vec![(Lane::Device, ev)],
            register_ms: None,
            unregister_ms: None,
        })
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        self.stream.synchronize()?;
        match (&self.dst, self.engine) {
            (Some(d), _) => verify_device(gpu, &self.stream, d, self.seed, Lane::Device),
            (None, _) => Ok(Verified::NotApplicable),
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let n = self.src.iter().chain(self.dst.iter()).count() as u64;
        Footprint {
            device: n * self.size as u64,
            ..Default::default()
        }
    }

    fn free(mut self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let t = Instant::now();
        self.src = None;
        self.dst = None;
        let mut setup = self.setup.clone();
        setup.free_ms = Some(t.elapsed().as_secs_f64() * 1e3);
        Ok(setup)
    }
}
