//! H2D and D2H at the same time on two streams (both copy engines busy). Reports each direction
//! and their sum over the common span.

use super::*;
use crate::cuda::Event;
use std::time::Instant;

pub struct Bidirectional {
    up_host: Option<HostBuffer>,
    down_host: Option<HostBuffer>,
    up_dev: Option<DeviceBuffer>,
    down_dev: Option<DeviceBuffer>,
    up: Stream,
    down: Stream,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl Bidirectional {
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
            up_host: Some(up_host),
            down_host: Some(down_host),
            up_dev: Some(DeviceBuffer::new(size)?),
            down_dev: Some(DeviceBuffer::new(size)?),
            up: Stream::new()?,
            down: Stream::new()?,
            seed: seed_for(case),
            size,
            setup,
        })
    }
}

impl Transfer for Bidirectional {
    fn lanes(&self) -> Vec<Lane> {
        vec![Lane::H2d, Lane::D2h, Lane::Sum]
    }
    fn bytes(&self, lane: Lane) -> u64 {
        match lane {
            Lane::Sum => 2 * self.size as u64,
            _ => self.size as u64,
        }
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        if let (Some(uh), Some(dh), Some(ud), Some(dd)) = (
            self.up_host.as_mut(),
            self.down_host.as_mut(),
            self.up_dev.as_ref(),
            self.down_dev.as_ref(),
        ) {
            crate::cuda::fill_pattern(uh.as_mut_slice(), 0, self.seed);
            crate::cuda::fill_zero(dh.as_mut_slice());
            ud.memset(&self.up, 0)?;
            gpu.kernels.write(&self.up, dd, self.size, self.seed)?;
            self.up.synchronize()?;
        }
        Ok(())
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let (Some(uh), Some(dh), Some(ud), Some(dd)) = (
            self.up_host.as_ref(),
            self.down_host.as_ref(),
            self.up_dev.as_ref(),
            self.down_dev.as_ref(),
        ) else {
            return Err(CudaError::new("sample", "buffers already freed"));
        };
        let gated = uh.is_page_locked();
        let (s_up, e_up, s_down, e_down) =
            (Event::new()?, Event::new()?, Event::new()?, Event::new()?);
        let t0 = Instant::now();
        if gated {
            gpu.gate.hold(gpu.kernels, &self.up)?;
            gpu.gate.hold(gpu.kernels, &self.down)?;
        }
        s_up.record(&self.up)?;
        s_down.record(&self.down)?;
        for _ in 0..batch {
            self.up.copy_h2d(ud, 0, uh, 0, self.size)?;
            self.down.copy_d2h(dh, 0, dd, 0, self.size)?;
        }
        e_up.record(&self.up)?;
        e_down.record(&self.down)?;
        if gated {
            gpu.gate.release();
        }
        e_up.synchronize()?;
        e_down.synchronize()?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        if gated && gpu.gate.timed_out() {
            return Err(CudaError::new(
                "spin gate",
                "timed out before the batch was queued",
            ));
        }
        let up_ms = s_up.elapsed_ms(&e_up)?;
        let down_ms = s_down.elapsed_ms(&e_down)?;
        // Common span: from the earlier start to the later end.
        let down_start = s_up.elapsed_ms(&s_down)?;
        let up_end = up_ms;
        let down_end = s_up.elapsed_ms(&e_down)?;
        let span = up_end.max(down_end) - down_start.min(0.0);
        let ev = vec![(Lane::H2d, up_ms), (Lane::D2h, down_ms), (Lane::Sum, span)];
        Ok(SampleTimes {
            lanes: if gated {
                ev.clone()
            } else {
                vec![
                    (Lane::H2d, up_ms),
                    (Lane::D2h, down_ms),
                    (Lane::Sum, wall_ms),
                ]
            },
            wall_ms,
            event_ms: ev,
            register_ms: None,
            unregister_ms: None,
        })
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let (Some(dh), Some(ud)) = (self.down_host.as_ref(), self.up_dev.as_ref()) else {
            return Err(CudaError::new("verify", "buffers already freed"));
        };
        self.down.synchronize()?;
        match verify_device(gpu, &self.up, ud, self.seed, Lane::H2d)? {
            Verified::Yes => Ok(verify_host(dh, self.seed, Lane::D2h)),
            bad => Ok(bad),
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        for h in [&self.up_host, &self.down_host].into_iter().flatten() {
            footprint_of(h, &mut fp);
        }
        fp.device = 2 * self.size as u64;
        fp
    }

    fn free(mut self: Box<Self>) -> Result<SetupTimes, CudaError> {
        self.up_dev = None;
        self.down_dev = None;
        let bufs = [self.up_host.take(), self.down_host.take()];
        free_all(bufs.into_iter().flatten(), self.setup.clone())
    }
}
