//! Copy-engine transfers (`cuMemcpyAsync`) straight from/to the host buffer, H2D or D2H, from
//! any host memory kind. With page-locked memory the batch is gated behind the spin kernel and
//! timed with events; pageable and managed copies involve the CPU and are timed by the wall clock.

use super::*;
use crate::cuda::Event;
use std::time::Instant;

pub struct CopyEngine {
    host: Option<HostBuffer>,
    device: Option<DeviceBuffer>,
    streams: Vec<Stream>,
    h2d: bool,
    managed: bool,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl CopyEngine {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let host = host_buffer(case, size)?;
        let device = DeviceBuffer::new(size)?;
        let streams = (0..case.streams.max(1))
            .map(|_| Stream::new())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            setup: SetupTimes::of(&host),
            managed: case.host == HostKind::Managed,
            host: Some(host),
            device: Some(device),
            streams,
            h2d: case.direction == Direction::H2d,
            seed: seed_for(case),
            size,
        })
    }

    fn parts(&self) -> Vec<(usize, usize)> {
        split(self.size, self.streams.len())
    }
}

/// Splits `size` into `n` contiguous parts, each a multiple of 16 bytes except possibly the last.
pub(crate) fn split(size: usize, n: usize) -> Vec<(usize, usize)> {
    let n = n.max(1);
    let part = (size / n).div_ceil(16) * 16;
    let mut v = Vec::new();
    let mut off = 0;
    while off < size {
        let len = part.max(16).min(size - off);
        v.push((off, len));
        off += len;
    }
    v
}

impl Transfer for CopyEngine {
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
        touch_one_way(gpu, &self.streams[0], self.h2d, host, dev, self.seed)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let parts = self.parts();
        let (Some(host), Some(dev)) = (self.host.as_mut(), self.device.as_ref()) else {
            return Err(CudaError::new("sample", "buffers already freed"));
        };
        if self.managed {
            // Bring the pages back to the host, untimed, so every sample starts from host memory.
            if self.h2d {
                crate::cuda::fill_pattern(host.as_mut_slice(), 0, self.seed);
            } else {
                crate::cuda::fill_zero(host.as_mut_slice());
            }
        }
        let host: &HostBuffer = host;
        let gated = host.is_page_locked();
        let start = Event::new()?;
        let end = Event::new()?;
        let first = &self.streams[0];
        let t0 = Instant::now();
        if gated {
            for s in &self.streams {
                gpu.gate.hold(gpu.kernels, s)?;
            }
        }
        start.record(first)?;
        for s in &self.streams[1..] {
            s.wait(&start)?;
        }
        for _ in 0..batch {
            for (i, (off, len)) in parts.iter().enumerate() {
                let s = &self.streams[i % self.streams.len()];
                if self.h2d {
                    s.copy_h2d(dev, *off, host, *off, *len)?;
                } else {
                    s.copy_d2h(host, *off, dev, *off, *len)?;
                }
            }
        }
        let ends: Vec<Event> = self.streams[1..]
            .iter()
            .map(|s| {
                let e = Event::new()?;
                e.record(s)?;
                Ok(e)
            })
            .collect::<Result<_, CudaError>>()?;
        for e in &ends {
            first.wait(e)?;
        }
        end.record(first)?;
        if gated {
            gpu.gate.release();
        }
        end.synchronize()?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        if gated && gpu.gate.timed_out() {
            return Err(CudaError::new(
                "spin gate",
                "timed out before the batch was queued",
            ));
        }
        let ev = start.elapsed_ms(&end)?;
        let lane = self.lanes()[0];
        Ok(SampleTimes {
            lanes: vec![(lane, if gated { ev } else { wall_ms })],
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
        for s in &self.streams[1..] {
            s.synchronize()?;
        }
        verify_one_way(gpu, &self.streams[0], self.h2d, host, dev, self.seed)
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        if let Some(h) = &self.host {
            footprint_of(h, &mut fp);
        }
        fp.device = self.device.as_ref().map_or(0, |d| d.len() as u64);
        fp
    }

    fn free(mut self: Box<Self>) -> Result<SetupTimes, CudaError> {
        self.device = None;
        free_all(self.host.take(), self.setup.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_covers_the_buffer_in_16_byte_parts() {
        assert_eq!(split(1024, 1), vec![(0, 1024)]);
        assert_eq!(
            split(1024, 4),
            vec![(0, 256), (256, 256), (512, 256), (768, 256)]
        );
        let p = split(1000 * 16, 3);
        assert_eq!(p.iter().map(|(_, l)| l).sum::<usize>(), 16000);
        assert!(p.iter().all(|(o, _)| o % 16 == 0));
    }
}
