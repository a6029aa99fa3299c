//! Kernels on host memory the GPU addresses directly: mapped pinned memory (zero-copy) or managed
//! memory. `kernel`: an SM copy (H2D: read host, write device; D2H the reverse). `kernel-read`:
//! only reads host memory; `kernel-write`: only writes it. Gated and timed with events.

use super::timing::{Streams, Timer};
use super::*;

pub struct ZeroCopy {
    host: HostBuffer,
    device: DeviceBuffer,
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
            host,
            device: DeviceBuffer::new(size)?,
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
        let (host, dev) = (&mut self.host, &self.device);
        touch_one_way(gpu, &self.stream, self.h2d, host, dev, self.seed)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (host, dev) = (&mut self.host, &self.device);
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
        let streams = std::slice::from_ref(&self.stream);
        let timer = Timer::start(gpu, streams, Streams::Forked, true)?;
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
        timer.finish(streams)?.one_lane(self.lanes()[0], true)
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let (host, dev) = (&self.host, &self.device);
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
        footprint_of(&self.host, &mut fp);
        fp.device = self.size as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let ZeroCopy {
            host,
            device,
            setup,
            ..
        } = *self;
        drop(device);
        free_all([host], setup)
    }
}
