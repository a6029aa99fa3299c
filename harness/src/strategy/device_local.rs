//! Device-resident engines (`device-read`, `device-write`, `device-copy`, `device-copy-engine`):
//! the pinscope kernels (or, for `device-copy-engine`, the copy engines) on device memory only, no
//! host buffer. They measure device memory bandwidth: HBM or GDDR when the
//! allocation lives on the card, PCIe speed when the driver placed it in shared (host) memory
//! (WDDM's sysmem fallback). Gated behind the spin kernel and timed with events, like zero-copy.
//! Bytes per transfer: `size` (a copy reads `size` and writes `size`, as nvbandwidth counts its
//! `device_local_copy`).

use super::*;
use crate::measure::{Stopwatch, Streams, Timer};

/// The device buffers an engine works on (the engine decides which exist).
enum Buffers {
    /// `device-read`: read by the kernel.
    Read(DeviceBuffer),
    /// `device-write`: written by the kernel.
    Write(DeviceBuffer),
    /// `device-copy` (a kernel) and `device-copy-engine` (`copy_engine`): read `src`, write `dst`.
    Copy {
        src: DeviceBuffer,
        dst: DeviceBuffer,
        copy_engine: bool,
    },
}

impl Buffers {
    /// The buffer kernels read from, if any.
    fn src(&self) -> Option<&DeviceBuffer> {
        match self {
            Buffers::Read(s) | Buffers::Copy { src: s, .. } => Some(s),
            Buffers::Write(_) => None,
        }
    }
    /// The buffer kernels write to, if any (the one verified).
    fn dst(&self) -> Option<&DeviceBuffer> {
        match self {
            Buffers::Write(d) | Buffers::Copy { dst: d, .. } => Some(d),
            Buffers::Read(_) => None,
        }
    }
}

pub struct DeviceLocal {
    bufs: Buffers,
    sink: DeviceBuffer,
    stream: Stream,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl DeviceLocal {
    /// The device buffers, allocated and first touched.
    pub fn allocate(case: &Case, gpu: &Gpu) -> Result<Self, CudaError> {
        let size = case.size as usize;
        // The last allocation is the one measured past the card in the overflow experiment.
        let bufs = match case.engine {
            Engine::DeviceRead => Buffers::Read(DeviceBuffer::new(size)?),
            Engine::DeviceWrite => Buffers::Write(DeviceBuffer::new(size)?),
            _ => {
                let src = DeviceBuffer::new(size)?;
                Buffers::Copy {
                    src,
                    dst: DeviceBuffer::new(size)?,
                    copy_engine: case.engine == Engine::DeviceCopyEngine,
                }
            }
        };
        let alloc_ms = bufs
            .src()
            .iter()
            .chain(bufs.dst().iter())
            .map(|b| b.alloc_ms)
            .sum();
        let t = Self {
            bufs,
            sink: DeviceBuffer::new(16)?,
            stream: Stream::new()?,
            seed: seed_for(case),
            size,
            setup: SetupTimes {
                alloc_ms: Some(alloc_ms),
                ..Default::default()
            },
        };
        t.touch(gpu)?;
        Ok(t)
    }

    /// First touch: the source gets the pattern, the destination zeros.
    fn touch(&self, gpu: &Gpu) -> Result<(), CudaError> {
        if let Some(src) = self.bufs.src() {
            gpu.kernels.write(&self.stream, src, self.size, self.seed)?;
        }
        if let Some(dst) = self.bufs.dst() {
            dst.memset(&self.stream, 0)?;
        }
        self.stream.synchronize()
    }
}

impl Measurable for DeviceLocal {
    fn moves(&self) -> Moves {
        Moves::OneWay(Lane::Device, self.size as u64)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let streams = std::slice::from_ref(&self.stream);
        let timer = Timer::start(gpu, streams, Streams::Forked, true)?;
        let queued = (|| {
            for _ in 0..batch {
                match &self.bufs {
                    Buffers::Copy {
                        src,
                        dst,
                        copy_engine: true,
                    } => self.stream.copy_d2d(dst, 0, src, 0, self.size)?,
                    Buffers::Copy { src, dst, .. } => {
                        gpu.kernels.copy(&self.stream, src, 0, dst, 0, self.size)?
                    }
                    Buffers::Read(s) => gpu.kernels.read(&self.stream, s, self.size, &self.sink)?,
                    Buffers::Write(d) => {
                        gpu.kernels.write(&self.stream, d, self.size, self.seed)?
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = queued {
            // Let the gate go, or the stream stays held until the spin kernel times out.
            gpu.gate.release();
            return Err(e);
        }
        timer.finish(streams)?.one_lane(Lane::Device, true)
    }
}

impl Transfer for DeviceLocal {
    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        self.stream.synchronize()?;
        match self.bufs.dst() {
            Some(d) => verify_device(gpu, &self.stream, d, self.seed, Lane::Device),
            None => Ok(Verified::NotApplicable),
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let n = self.bufs.src().iter().chain(self.bufs.dst().iter()).count() as u64;
        Footprint {
            device: n * self.size as u64,
            ..Default::default()
        }
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let DeviceLocal {
            bufs, mut setup, ..
        } = *self;
        let free_clock = Stopwatch::start();
        drop(bufs);
        setup.free_ms = Some(free_clock.ms());
        Ok(setup)
    }
}
