//! Register on the fly: page-lock a slice of pageable memory, copy it, unregister it — the
//! alternative article 000 suggests to keeping memory pinned. Timed by the wall clock including
//! registration and unregistration, which are also reported on their own.

use super::*;
use crate::cuda::Event;
use std::time::Instant;

pub struct RegisterPerCopy {
    host: Option<HostBuffer>,
    device: Option<DeviceBuffer>,
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
            host: Some(host),
            device: Some(DeviceBuffer::new(size)?),
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
        let (Some(host), Some(dev)) = (self.host.as_mut(), self.device.as_ref()) else {
            return Ok(());
        };
        touch_one_way(gpu, &self.stream, self.h2d, host, dev, self.seed)
    }

    fn sample(&mut self, _gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (Some(host), Some(dev)) = (self.host.as_ref(), self.device.as_ref()) else {
            return Err(CudaError::new("sample", "buffers already freed"));
        };
        let (start, end) = (Event::new()?, Event::new()?);
        let (mut reg_ms, mut unreg_ms) = (0.0, 0.0);
        let t0 = Instant::now();
        start.record(&self.stream)?;
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
        end.record(&self.stream)?;
        end.synchronize()?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        let ev = start.elapsed_ms(&end)?;
        let lane = self.lanes()[0];
        let per = f64::from(batch.max(1));
        Ok(SampleTimes {
            lanes: vec![(lane, wall_ms)],
            wall_ms,
            event_ms: vec![(lane, ev)],
            register_ms: Some(reg_ms / per),
            unregister_ms: Some(unreg_ms / per),
        })
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let (Some(host), Some(dev)) = (self.host.as_ref(), self.device.as_ref()) else {
            return Err(CudaError::new("verify", "buffers already freed"));
        };
        verify_one_way(gpu, &self.stream, self.h2d, host, dev, self.seed)
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

    fn free(mut self: Box<Self>) -> Result<SetupTimes, CudaError> {
        self.device = None;
        free_all(self.host.take(), self.setup.clone())
    }
}
