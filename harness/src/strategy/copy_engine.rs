//! Copy-engine transfers (`cuMemcpyAsync`) straight from/to the host buffer, H2D or D2H, from
//! any host memory kind. With page-locked memory the batch is gated behind the spin kernel and
//! timed with events; pageable and managed copies involve the CPU and are timed by the wall clock.

use super::*;
use crate::measure::{Streams, Timer};

/// Copy-engine copies split over the streams; `managed`: the host pages are brought back to the
/// host before each sample.
pub struct CopyEngine {
    managed: bool,
}

impl CopyEngine {
    pub fn allocate(case: &Case) -> Result<OneWayHost<Self>, CudaError> {
        let host = host_buffer(case, case.size as usize)?;
        let setup = SetupTimes::of(&host);
        let managed = case.host == HostKind::Managed;
        Ok(OneWayHost::new(
            case,
            host,
            case.streams,
            setup,
            CopyEngine { managed },
        ))
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

impl Enqueue for CopyEngine {
    fn sample(&mut self, rig: Rig<'_, '_>, batch: u32) -> Result<SampleTimes, CudaError> {
        let Rig { io, streams, gpu } = rig;
        let parts = split(io.size, streams.len());
        if self.managed {
            // Bring the pages back to the host, untimed, so every sample starts from host memory.
            io.reset_host();
        }
        let (host, dev) = (&io.host, &io.device);
        let gated = host.is_page_locked();
        let timer = Timer::start(gpu, streams, Streams::Forked, gated)?;
        for _ in 0..batch {
            for (i, (off, len)) in parts.iter().enumerate() {
                let s = &streams[i % streams.len()];
                if io.h2d {
                    s.copy_h2d(dev, *off, host, *off, *len)?;
                } else {
                    s.copy_d2h(host, *off, dev, *off, *len)?;
                }
            }
        }
        timer.finish(streams)?.one_lane(io.lane(), gated)
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
