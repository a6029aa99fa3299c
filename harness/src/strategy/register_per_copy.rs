//! Register on the fly: page-lock a slice of pageable memory, copy it, unregister it — the
//! alternative article 000 suggests to keeping memory pinned. Timed by the wall clock including
//! registration and unregistration, which are also reported on their own.

use super::timing::{Streams, Timer};
use super::*;

pub struct RegisterPerCopy {
    io: OneWay,
    stream: Stream,
    chunk: usize,
    setup: SetupTimes,
}

impl RegisterPerCopy {
    /// Pageable memory registered `slice` bytes at a time.
    pub fn allocate(case: &Case, slice: u64) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let host = HostBuffer::pageable(size)?;
        Ok(Self {
            setup: SetupTimes::of(&host),
            io: OneWay::new(case, host)?,
            stream: Stream::new()?,
            chunk: slice as usize,
        })
    }
}

impl Transfer for RegisterPerCopy {
    fn moves(&self) -> Moves {
        self.io.moves()
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        self.io.touch(gpu, &self.stream)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (host, dev) = (&self.io.host, &self.io.device);
        let (mut reg_ms, mut unreg_ms) = (0.0, 0.0);
        let streams = std::slice::from_ref(&self.stream);
        let timer = Timer::start(gpu, streams, Streams::Forked, false)?;
        for _ in 0..batch {
            let mut off = 0;
            while off < self.io.size {
                let len = self.chunk.min(self.io.size - off);
                let reg = host.register_range(off, len)?;
                reg_ms += reg.register_ms;
                if self.io.h2d {
                    self.stream.copy_h2d(dev, off, host, off, len)?;
                } else {
                    self.stream.copy_d2h(host, off, dev, off, len)?;
                }
                self.stream.synchronize()?;
                unreg_ms += reg.unregister()?;
                off += len;
            }
        }
        let per = f64::from(batch.max(1));
        let mut t = timer.finish(streams)?.one_lane(self.lanes()[0], false)?;
        t.register_ms = Some(reg_ms / per);
        t.unregister_ms = Some(unreg_ms / per);
        Ok(t)
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        self.io.verify(gpu, std::slice::from_ref(&self.stream))
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            pageable: self.io.size as u64,
            registered: self.chunk as u64,
            device: self.io.size as u64,
            ..Default::default()
        }
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let RegisterPerCopy { io, setup, .. } = *self;
        io.free([], setup)
    }
}
