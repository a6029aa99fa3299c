//! Kernels on host memory the GPU addresses directly: mapped pinned memory (zero-copy) or managed
//! memory. `kernel`: an SM copy (H2D: read host, write device; D2H the reverse). `kernel-read`:
//! only reads host memory; `kernel-write`: only writes it. Gated and timed with events.

use super::*;
use crate::cuda::Event;
use std::time::Instant;

pub struct ZeroCopy {
    host: Option<HostBuffer>,
    device: Option<DeviceBuffer>,
    stream: Stream,
    h2d: bool,
    access: Engine,
    sink: DeviceBuffer,
    managed: bool,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl ZeroCopy {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let host = host_buffer(case, size)?;
        if host.device_ptr().is_none() {
            return Err(CudaError::new(
                "kernel copy",
                "host memory is not mapped (add \"mapped\" to flags)",
            ));
        }
        Ok(Self {
            setup: SetupTimes::of(&host),
            managed: case.host == HostKind::Managed,
            host: Some(host),
            device: Some(DeviceBuffer::new(size)?),
            stream: Stream::new()?,
            h2d: case.direction == Direction::H2d,
            access: case.engine,
            sink: DeviceBuffer::new(16)?,
            seed: seed_for(case),
            size,
        })
    }
}

impl Transfer for ZeroCopy {
    fn lanes(&self) -> Vec<Lane> {
        vec![if self.h2d { Lane::H2d } else { Lane::D2h }]
    }
    fn bytes(&self, _lane: Lane) -> u64 {
        self.size as u64
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        let (Some(host), Some(dev)) = (self.host.as_mut(), self.device.as_ref()) else {
            return Ok(());
        };
        touch_one_way(gpu, &self.stream, self.h2d, host, dev, self.seed)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (Some(host), Some(dev)) = (self.host.as_mut(), self.device.as_ref()) else {
            return Err(CudaError::new("sample", "buffers already freed"));
        };
        if self.managed {
            // Managed pages migrate to the GPU when a kernel touches them: bring them back to
            // the host (untimed) so each sample measures host->device movement.
            if self.h2d {
                crate::cuda::fill_pattern(host.as_mut_slice(), 0, self.seed);
            } else {
                crate::cuda::fill_zero(host.as_mut_slice());
            }
        }
        let host: &HostBuffer = host;
        let (start, end) = (Event::new()?, Event::new()?);
        let t0 = Instant::now();
        gpu.gate.hold(gpu.kernels, &self.stream)?;
        start.record(&self.stream)?;
        for _ in 0..batch {
            match (self.access, self.h2d) {
                (Engine::KernelRead, _) => {
                    gpu.kernels
                        .read(&self.stream, host, self.size, &self.sink)?
                }
                (Engine::KernelWrite, _) => {
                    gpu.kernels
                        .write(&self.stream, host, self.size, self.seed)?
                }
                (_, true) => gpu.kernels.copy(&self.stream, host, 0, dev, 0, self.size)?,
                (_, false) => gpu.kernels.copy(&self.stream, dev, 0, host, 0, self.size)?,
            }
        }
        end.record(&self.stream)?;
        gpu.gate.release();
        end.synchronize()?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        if gpu.gate.timed_out() {
            return Err(CudaError::new(
                "spin gate",
                "timed out before the batch was queued",
            ));
        }
        let ev = start.elapsed_ms(&end)?;
        let lane = self.lanes()[0];
        Ok(SampleTimes {
            lanes: vec![(lane, ev)],
            wall_ms,
            event_ms: vec![(lane, ev)],
            register_ms: None,
            unregister_ms: None,
        })
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let (Some(host), Some(dev)) = (self.host.as_ref(), self.device.as_ref()) else {
            return Err(CudaError::new("verify", "buffers already freed"));
        };
        self.stream.synchronize()?;
        if self.access == Engine::KernelRead {
            Ok(Verified::NotApplicable)
        } else if self.access == Engine::KernelWrite {
            Ok(verify_host(host, self.seed, Lane::D2h))
        } else {
            verify_one_way(gpu, &self.stream, self.h2d, host, dev, self.seed)
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        if let Some(h) = &self.host {
            footprint_of(h, &mut fp);
        }
        fp.device = self.size as u64;
        fp
    }

    fn free(mut self: Box<Self>) -> Result<SetupTimes, CudaError> {
        self.device = None;
        free_all(self.host.take(), self.setup.clone())
    }
}
