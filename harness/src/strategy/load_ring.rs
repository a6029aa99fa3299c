//! `load-pread` and `load-direct`: the file `pread` chunk by chunk into a ring of pinned buffers,
//! each chunk copied asynchronously while the next is read, an event per slot saying when it may
//! be refilled (llama.cpp `--no-mmap`). `load-direct` opens the file `O_DIRECT`: the reads bypass
//! the page cache, into page-aligned buffers of whole pages; a file system that refuses
//! `O_DIRECT` fails the case with the reason. `read_ms` is the time inside `pread`, `dma_ms` the
//! time the reader waited for a slot's copy and for the last copies.

use super::file_load::{LoadWay, io_error, pread_full};
use super::*;
use crate::cuda::Event;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::{HostFlags, LoadSource};

/// The ring: `chunk`-byte pinned buffers and an event per slot.
pub(crate) struct LoadRing {
    ring: Vec<HostBuffer>,
    events: Vec<Event>,
    chunk: usize,
    direct: bool,
}

impl LoadRing {
    pub(crate) fn allocate(
        chunk: u64,
        slots: u32,
        direct: bool,
    ) -> Result<(LoadRing, SetupTimes), CudaError> {
        let chunk = usize::try_from(chunk).map_err(|_| CudaError::new("chunk", "too large"))?;
        let ring = (0..slots.max(1))
            .map(|_| HostBuffer::pinned(chunk, HostFlags::default()))
            .collect::<Result<Vec<_>, _>>()?;
        let events = ring
            .iter()
            .map(|_| Event::new())
            .collect::<Result<Vec<_>, _>>()?;
        let setup = SetupTimes::of_all(&ring.iter().collect::<Vec<_>>());
        Ok((
            LoadRing {
                ring,
                events,
                chunk,
                direct,
            },
            setup,
        ))
    }

    fn open(&self, file: &LoadSource) -> Result<std::fs::File, CudaError> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        o.read(true);
        if self.direct {
            o.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
        }
        o.open(&file.path).map_err(|e| {
            let call = if self.direct {
                "open(O_DIRECT) (the file system may not allow direct I/O)"
            } else {
                "open"
            };
            io_error(call, &e)
        })
    }
}

impl LoadWay for LoadRing {
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        let f = self.open(file)?;
        let (mut read_ms, mut wait_ms) = (0.0, 0.0);
        let n = self.ring.len();
        let total = dev.len();
        let mut at = 0usize;
        let mut k = 0usize;
        while at < total {
            let slot = k % n;
            if k >= n {
                let wait = Stopwatch::start();
                self.events[slot].synchronize()?;
                wait_ms += wait.ms();
            }
            let read = Stopwatch::start();
            // O_DIRECT reads whole pages: the buffer is a whole number of them, and the last
            // read may return fewer bytes than it asked.
            let got = pread_full(&f, self.ring[slot].as_mut_slice(), at as u64)?;
            read_ms += read.ms();
            let len = got.min(total - at);
            if len == 0 {
                return Err(CudaError::new("pread", "the file ended before its size"));
            }
            stream.copy_h2d(dev, at, &self.ring[slot], 0, len)?;
            self.events[slot].record(stream)?;
            at += len;
            k += 1;
        }
        let wait = Stopwatch::start();
        stream.synchronize()?;
        wait_ms += wait.ms();
        Ok(LoadStages {
            read_ms: Some(read_ms),
            dma_ms: Some(wait_ms),
            ..LoadStages::default()
        })
    }

    fn footprint(&self, fp: &mut Footprint) {
        fp.staging += (self.chunk * self.ring.len()) as u64;
    }

    fn into_buffers(self: Box<Self>) -> Vec<HostBuffer> {
        self.ring
    }
}
