//! `load-read`: the whole file `read` into fresh pageable memory, then one copy. `read_ms`
//! includes the first touch of the fresh buffer, which `read` itself makes; the buffer is freed
//! after the load's clock stops ([`LoadWay::release`]).

use super::file_load::{LoadWay, file_len, io_error, open};
use super::*;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::LoadSource;
use std::io::Read;

/// A fresh buffer per load, as a loader that reads the file once has; the last load's buffer
/// until it is released.
#[derive(Default)]
pub(crate) struct LoadRead {
    spent: Vec<u8>,
}

impl LoadWay for LoadRead {
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        _stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        let read = Stopwatch::start();
        let mut buf = Vec::with_capacity(file_len(file)?);
        open(file)?
            .read_to_end(&mut buf)
            .map_err(|e| io_error("read", &e))?;
        let read_ms = read.ms();
        let copy = Stopwatch::start();
        dev.write(0, &buf)?;
        let dma_ms = copy.ms();
        self.spent = buf;
        Ok(LoadStages {
            read_ms: Some(read_ms),
            dma_ms: Some(dma_ms),
            ..LoadStages::default()
        })
    }

    fn release(&mut self) {
        self.spent = Vec::new();
    }
}
