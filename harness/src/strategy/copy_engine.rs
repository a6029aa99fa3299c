//! Copy-engine transfers (`cuMemcpyAsync`) straight from/to the host buffer, H2D or D2H, from
//! any host memory kind. With page-locked memory the batch is gated behind the spin kernel and
//! timed with events; pageable and managed copies involve the CPU and are timed by the wall clock.

use super::timing::{Streams, Timer};
use super::*;

pub struct CopyEngine {
    io: OneWay,
    streams: Vec<Stream>,
    managed: bool,
    setup: SetupTimes,
}

impl CopyEngine {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let host = host_buffer(case, size)?;
        let setup = SetupTimes::of(&host);
        let io = OneWay::new(case, host)?;
        let streams = (0..case.streams.max(1))
            .map(|_| Stream::new())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            setup,
            managed: case.host == HostKind::Managed,
            io,
            streams,
        })
    }

    fn parts(&self) -> Vec<(usize, usize)> {
        split(self.io.size, self.streams.len())
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
    fn moves(&self) -> Moves {
        self.io.moves()
    }

    fn touch(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        self.io.touch(gpu, &self.streams[0])
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let parts = self.parts();
        if self.managed {
            // Bring the pages back to the host, untimed, so every sample starts from host memory.
            self.io.reset_host();
        }
        let (host, dev) = (&self.io.host, &self.io.device);
        let gated = host.is_page_locked();
        let timer = Timer::start(gpu, &self.streams, Streams::Forked, gated)?;
        for _ in 0..batch {
            for (i, (off, len)) in parts.iter().enumerate() {
                let s = &self.streams[i % self.streams.len()];
                if self.io.h2d {
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
        self.io.verify(gpu, &self.streams)
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        footprint_of(&self.io.host, &mut fp);
        fp.device = self.io.device.len() as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let CopyEngine { io, setup, .. } = *self;
        io.free([], setup)
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
