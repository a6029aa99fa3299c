//! Kernels on host memory the GPU addresses directly: mapped pinned memory (zero-copy) or managed
//! memory. `kernel`: an SM copy (H2D: read host, write device; D2H the reverse). `kernel-read`:
//! only reads host memory; `kernel-write`: only writes it. Gated and timed with events.

use super::*;
use crate::measure::{Streams, Timer};

/// Kernels on mapped or managed host memory: `access` says which kernel; `sink` (16 bytes where
/// `kernel-read` leaves its sum) is allocated with the device memory.
pub struct ZeroCopy {
    access: Engine,
    sink: Option<DeviceBuffer>,
    managed: bool,
}

impl ZeroCopy {
    pub fn allocate(case: &Case) -> Result<OneWayHost<Self>, CudaError> {
        let host = host_buffer(case, case.size as usize)?;
        if host.device_ptr().is_none() {
            return Err(CudaError::new(
                "kernel copy",
                "host memory is not mapped (add \"mapped\" to flags)",
            ));
        }
        let setup = SetupTimes::of(&host);
        let how = ZeroCopy {
            managed: case.host == HostKind::Managed,
            access: case.engine,
            sink: None,
        };
        // One stream: a kernel spans the whole buffer.
        Ok(OneWayHost::new(case, host, 1, setup, how))
    }
}

impl Enqueue for ZeroCopy {
    fn add_device(&mut self) -> Result<(), CudaError> {
        self.sink = Some(DeviceBuffer::new(16)?);
        Ok(())
    }

    fn sample(&mut self, rig: Rig<'_, '_>, batch: u32) -> Result<SampleTimes, CudaError> {
        let Rig { io, streams, gpu } = rig;
        if self.managed {
            // Managed pages migrate to the GPU when a kernel touches them: bring them back to
            // the host (untimed) so each sample measures host->device movement.
            io.reset_host();
        }
        let (host, dev) = (&io.host, &io.device);
        let stream = &streams[0];
        let timer = Timer::start(gpu, streams, Streams::Forked, true)?;
        for _ in 0..batch {
            match (self.access, io.h2d) {
                (Engine::KernelRead, _) => {
                    let sink = self.sink.as_ref().ok_or_else(|| {
                        CudaError::new("kernel-read", "the sink buffer was never allocated")
                    })?;
                    gpu.kernels.read(stream, host, io.size, sink)?
                }
                (Engine::KernelWrite, _) => gpu.kernels.write(stream, host, io.size, io.seed)?,
                (_, true) => gpu.kernels.copy(stream, host, 0, dev, 0, io.size)?,
                (_, false) => gpu.kernels.copy(stream, dev, 0, host, 0, io.size)?,
            }
        }
        timer.finish(streams)?.one_lane(io.lane(), true)
    }

    fn verify(&mut self, rig: Rig<'_, '_>) -> Result<Verified, CudaError> {
        let Rig { io, streams, gpu } = rig;
        match self.access {
            Engine::KernelRead => {
                streams[0].synchronize()?;
                Ok(Verified::NotApplicable)
            }
            Engine::KernelWrite => {
                streams[0].synchronize()?;
                Ok(verify_host(&io.host, io.seed, Lane::D2h))
            }
            _ => io.verify(gpu, streams),
        }
    }
}
