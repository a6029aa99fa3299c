//! H2D and D2H at the same time on two streams (both copy engines busy). Reports each direction
//! and their sum over the common span.

use super::timing::{Streams, Timer};
use super::*;

pub struct Bidirectional {
    up_host: HostBuffer,
    down_host: HostBuffer,
    up_dev: DeviceBuffer,
    down_dev: DeviceBuffer,
    /// `[up, down]`: H2D on the first, D2H on the second.
    streams: [Stream; 2],
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

/// The two host buffers, before the device buffers exist.
pub struct BidirectionalHost {
    up_host: HostBuffer,
    down_host: HostBuffer,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl BidirectionalHost {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let up_host = host_buffer(case, size)?;
        let down_host = host_buffer(case, size)?;
        let setup = SetupTimes {
            alloc_ms: Some(up_host.alloc_ms + down_host.alloc_ms),
            register_ms: match (up_host.register_ms, down_host.register_ms) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            },
            ..Default::default()
        };
        Ok(Self {
            up_host,
            down_host,
            seed: seed_for(case),
            size,
            setup,
        })
    }
}

impl HostSide for BidirectionalHost {
    fn touch(&mut self) {
        crate::cuda::fill_pattern(self.up_host.as_mut_slice(), 0, self.seed);
        crate::cuda::fill_zero(self.down_host.as_mut_slice());
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        for h in [&self.up_host, &self.down_host] {
            footprint_of(h, &mut fp);
        }
        fp
    }

    /// Both device buffers: the H2D destination zeroed, the D2H source given the pattern.
    fn add_device(self: Box<Self>, gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        let BidirectionalHost {
            up_host,
            down_host,
            seed,
            size,
            setup,
        } = *self;
        let t = Bidirectional {
            up_host,
            down_host,
            up_dev: DeviceBuffer::new(size)?,
            down_dev: DeviceBuffer::new(size)?,
            streams: [Stream::new()?, Stream::new()?],
            seed,
            size,
            setup,
        };
        let up = &t.streams[0];
        t.up_dev.memset(up, 0)?;
        gpu.kernels.write(up, &t.down_dev, size, seed)?;
        up.synchronize()?;
        Ok(Box::new(t))
    }
}

impl Transfer for Bidirectional {
    fn moves(&self) -> Moves {
        Moves::BothWays(self.size as u64)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let [up, down] = &self.streams;
        let gated = self.up_host.is_page_locked();
        let timer = Timer::start(gpu, &self.streams, Streams::Each, gated)?;
        for _ in 0..batch {
            up.copy_h2d(&self.up_dev, 0, &self.up_host, 0, self.size)?;
            down.copy_d2h(&self.down_host, 0, &self.down_dev, 0, self.size)?;
        }
        let span = timer.finish(&self.streams)?;
        let up_ms = span.event_ms(0)?;
        let down_ms = span.event_ms(1)?;
        // Common span: from the earlier start to the later end.
        let down_start = span.start_offset_ms(1)?;
        let up_end = up_ms;
        let down_end = span.end_offset_ms(1)?;
        let sum = up_end.max(down_end) - down_start.min(0.0);
        let ev = vec![(Lane::H2d, up_ms), (Lane::D2h, down_ms), (Lane::Sum, sum)];
        Ok(SampleTimes {
            lanes: if gated {
                ev.clone()
            } else {
                vec![
                    (Lane::H2d, up_ms),
                    (Lane::D2h, down_ms),
                    (Lane::Sum, span.wall_ms),
                ]
            },
            wall_ms: span.wall_ms,
            event_ms: ev,
            register_ms: None,
            unregister_ms: None,
        })
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let [up, down] = &self.streams;
        down.synchronize()?;
        match verify_device(gpu, up, &self.up_dev, self.seed, Lane::H2d)? {
            Verified::Yes => Ok(verify_host(&self.down_host, self.seed, Lane::D2h)),
            bad => Ok(bad),
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        for h in [&self.up_host, &self.down_host] {
            footprint_of(h, &mut fp);
        }
        fp.device = 2 * self.size as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let Bidirectional {
            up_host,
            down_host,
            up_dev,
            down_dev,
            setup,
            ..
        } = *self;
        drop((up_dev, down_dev));
        free_all([up_host, down_host], setup)
    }
}
