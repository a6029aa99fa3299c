//! Register on the fly: page-lock a slice of pageable memory, copy it, unregister it — the
//! alternative article 000 suggests to keeping memory pinned. Timed by the wall clock including
//! registration and unregistration, which are also reported on their own.

use super::timing::{Streams, Timer};
use super::*;

pub struct RegisterPerCopy {
    host: HostBuffer,
    device: DeviceBuffer,
    stream: Stream,
    h2d: bool,
    seed: u32,
    size: usize,
    chunk: usize,
    setup: SetupTimes,
}

impl RegisterPerCopy {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let host = HostBuffer::pageable(size)?;
        Ok(Self {
            setup: SetupTimes::of(&host),
            host,
            device: DeviceBuffer::new(size)?,
            stream: Stream::new()?,
            h2d: case.direction == Direction::H2d,
            seed: seed_for(case),
            size,
            chunk: case.chunk.unwrap_or(case.size).min(case.size) as usize,
        })
    }
}

impl Transfer for RegisterPerCopy {
    fn lanes(&self) -> Vec<Lane> {
        vec![if self.h2d { Lane::H2d } else { Lane::D2h }]
    }
    fn bytes(&self, _lane: Lane) -> u64 {
        self.size as u64
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        touch_one_way(
            gpu,
            &self.stream,
            self.h2d,
            &mut self.host,
            &self.device,
            self.seed,
        )
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (host, dev) = (&self.host, &self.device);
        let (mut reg_ms, mut unreg_ms) = (0.0, 0.0);
        let streams = std::slice::from_ref(&self.stream);
        let timer = Timer::start(gpu, streams, Streams::Forked, false)?;
        for _ in 0..batch {
            let mut off = 0;
            while off < self.size {
                let len = self.chunk.min(self.size - off);
                let reg = host.register_range(off, len)?;
                reg_ms += reg.register_ms;
                if self.h2d {
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
        verify_one_way(
            gpu,
            &self.stream,
            self.h2d,
            &self.host,
            &self.device,
            self.seed,
        )
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            pageable: self.size as u64,
            registered: self.chunk as u64,
            device: self.size as u64,
            ..Default::default()
        }
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let RegisterPerCopy {
            host,
            device,
            setup,
            ..
        } = *self;
        drop(device);
        free_all([host], setup)
    }
}
