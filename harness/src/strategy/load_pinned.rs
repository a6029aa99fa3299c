//! `load-pinned`: the whole file read into one page-locked buffer (allocated once, before the
//! samples), then one copy at the pinned speed.

use super::file_load::{LoadWay, file_len, open, pread_full};
use super::*;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::{HostFlags, LoadSource};

/// The pinned buffer the size of the file.
pub(crate) struct LoadPinned {
    buf: HostBuffer,
}

impl LoadPinned {
    pub(crate) fn allocate(file: &LoadSource) -> Result<(LoadPinned, SetupTimes), CudaError> {
        let buf = HostBuffer::pinned(file_len(file)?, HostFlags::default())?;
        let setup = SetupTimes::of(&buf);
        Ok((LoadPinned { buf }, setup))
    }
}

impl LoadWay for LoadPinned {
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        let read = Stopwatch::start();
        let got = pread_full(&open(file)?, self.buf.as_mut_slice(), 0, file.file_bytes)?;
        if got < self.buf.len() {
            return Err(CudaError::new("pread", "the file ended before its size"));
        }
        let read_ms = read.ms();
        let copy = Stopwatch::start();
        stream.copy_h2d(dev, 0, &self.buf, 0, self.buf.len())?;
        stream.synchronize()?;
        Ok(LoadStages {
            read_ms: Some(read_ms),
            dma_ms: Some(copy.ms()),
            ..LoadStages::default()
        })
    }

    fn footprint(&self, fp: &mut Footprint) {
        fp.pinned_alloc += self.buf.len() as u64;
    }

    fn into_buffers(self: Box<Self>) -> Vec<HostBuffer> {
        vec![self.buf]
    }
}
