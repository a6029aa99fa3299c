//! `load-mmap`: the file mapped, then one synchronous copy per tensor out of the mapping, as
//! llama.cpp loads by default and safetensors' `safe_open(device="cuda")` does. Each copy faults
//! the mapping's pages in (from the disk when the cache is cold) while the driver stages them:
//! one call does both, so the stage is `fault_ms`.

use super::file_load::{LoadWay, file_len, open};
use super::*;
use crate::cuda::MappedFile;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::LoadSource;

/// Maps the file afresh for each load (a loader maps it once per start); the last load's mapping
/// until it is released.
#[derive(Default)]
pub(crate) struct LoadMmap {
    spent: Option<MappedFile>,
}

impl LoadWay for LoadMmap {
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        _stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        let map = MappedFile::map(&open(file)?, file_len(file)?)?;
        let bytes = map.as_slice();
        let clock = Stopwatch::start();
        for r in &file.regions {
            let (at, n) = (r.offset as usize, r.bytes as usize);
            dev.write(at, &bytes[at..at + n])?;
        }
        let fault_ms = clock.ms();
        self.spent = Some(map);
        Ok(LoadStages {
            fault_ms: Some(fault_ms),
            ..LoadStages::default()
        })
    }

    fn release(&mut self) {
        self.spent = None;
    }
}
