//! Kernels on host memory the GPU addresses directly: mapped pinned memory (zero-copy) or managed
//! memory. `kernel`: an SM copy (H2D: read host, write device; D2H the reverse). `kernel-read`:
//! only reads host memory; `kernel-write`: only writes it. Gated and timed with events.

use super::timing::{Streams, Timer};
use super::*;

pub struct ZeroCopy {
    io: OneWay,
    stream: Stream,
    access: Engine,
    sink: DeviceBuffer,
    managed: bool,
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
            io: OneWay::new(case, host)?,
            stream: Stream::new()?,
            access: case.engine,
            sink: DeviceBuffer::new(16)?,
        })
    }
}

impl Transfer for ZeroCopy {
    fn moves(&self) -> Moves {
        self.io.moves()
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        self.io.touch(gpu, &self.stream)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        if self.managed {
            // Managed pages migrate to the GPU when a kernel touches them: bring them back to
            // the host (untimed) so each sample measures host->device movement.
            self.io.reset_host();
        }
        let (host, dev) = (&self.io.host, &self.io.device);
        let streams = std::slice::from_ref(&self.stream);
        let timer = Timer::start(gpu, streams, Streams::Forked, true)?;
        for _ in 0..batch {
            match (self.access, self.io.h2d) {
                (Engine::KernelRead, _) => {
                    gpu.kernels
                        .read(&self.stream, host, self.io.size, &self.sink)?
                }
                (Engine::KernelWrite, _) => {
                    gpu.kernels
                        .write(&self.stream, host, self.io.size, self.io.seed)?
                }
                (_, true) => gpu
                    .kernels
                    .copy(&self.stream, host, 0, dev, 0, self.io.size)?,
                (_, false) => gpu
                    .kernels
                    .copy(&self.stream, dev, 0, host, 0, self.io.size)?,
            }
        }
        timer.finish(streams)?.one_lane(self.lanes()[0], true)
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        self.stream.synchronize()?;
        if self.access == Engine::KernelRead {
            Ok(Verified::NotApplicable)
        } else if self.access == Engine::KernelWrite {
            Ok(verify_host(&self.io.host, self.io.seed, Lane::D2h))
        } else {
            self.io.verify(gpu, std::slice::from_ref(&self.stream))
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        footprint_of(&self.io.host, &mut fp);
        fp.device = self.io.size as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let ZeroCopy { io, setup, .. } = *self;
        io.free([], setup)
    }
}
