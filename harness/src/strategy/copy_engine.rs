//! Copy-engine transfers (`cuMemcpyAsync`) straight from/to the host buffer, H2D or D2H, from
//! any host memory kind. With page-locked memory the batch is gated behind the spin kernel and
//! timed with events; pageable and managed copies involve the CPU and are timed by the wall clock.

use super::timing::{Streams, Timer};
use super::*;

pub struct CopyEngine {
    host: HostBuffer,
    device: DeviceBuffer,
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
            host,
            device,
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
        touch_one_way(
            gpu,
            &self.streams[0],
            self.h2d,
            &mut self.host,
            &self.device,
            self.seed,
        )
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let parts = self.parts();
        let (host, dev) = (&mut self.host, &self.device);
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
        let timer = Timer::start(gpu, &self.streams, Streams::Forked, gated)?;
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
        timer
            .finish(&self.streams)?
            .one_lane(self.lanes()[0], gated)
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        for s in &self.streams[1..] {
            s.synchronize()?;
        }
        verify_one_way(
            gpu,
            &self.streams[0],
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
        let mut fp = Footprint::default();
        footprint_of(&self.host, &mut fp);
        fp.device = self.device.len() as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let CopyEngine {
            host,
            device,
            setup,
            ..
        } = *self;
        drop(device);
        free_all([host], setup)
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
