//! Register on the fly: page-lock a slice of pageable memory, copy it, unregister it — the
//! alternative article 000 suggests to keeping memory pinned. Timed by the wall clock including
//! registration and unregistration, which are also reported on their own.

use super::*;
use crate::measure::{Streams, Timer};

/// Registers, copies and unregisters `chunk` bytes at a time on one stream.
pub struct RegisterPerCopy {
    chunk: usize,
}

impl RegisterPerCopy {
    /// Pageable memory registered `slice` bytes at a time.
    pub fn allocate(case: &Case, slice: u64) -> Result<OneWayHost<Self>, CudaError> {
        let host = HostBuffer::pageable(case.size as usize)?;
        let setup = SetupTimes::of(&host);
        let how = RegisterPerCopy {
            chunk: slice as usize,
        };
        Ok(OneWayHost::new(case, host, 1, setup, how))
    }
}

impl Enqueue for RegisterPerCopy {
    fn sample(&mut self, rig: Rig<'_, '_>, batch: u32) -> Result<SampleTimes, CudaError> {
        let Rig { io, streams, gpu } = rig;
        let (host, dev, stream) = (&io.host, &io.device, &streams[0]);
        let (mut reg_ms, mut unreg_ms) = (0.0, 0.0);
        let timer = Timer::start(gpu, streams, Streams::Forked, false)?;
        for _ in 0..batch {
            let mut off = 0;
            while off < io.size {
                let len = self.chunk.min(io.size - off);
                let reg = host.register_range(off, len)?;
                reg_ms += reg.register_ms;
                if io.h2d {
                    stream.copy_h2d(dev, off, host, off, len)?;
                } else {
                    stream.copy_d2h(host, off, dev, off, len)?;
                }
                stream.synchronize()?;
                unreg_ms += reg.unregister()?;
                off += len;
            }
        }
        let per = f64::from(batch.max(1));
        let mut t = timer.finish(streams)?.one_lane(io.lane(), false)?;
        t.register_ms = Some(reg_ms / per);
        t.unregister_ms = Some(unreg_ms / per);
        Ok(t)
    }

    fn footprint(&self, fp: &mut Footprint) {
        fp.registered += self.chunk as u64;
    }
}
