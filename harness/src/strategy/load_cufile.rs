//! `load-cufile`: the file read straight into device memory by cuFile (GPUDirect Storage,
//! `libcufile` loaded at run time), opened `O_DIRECT` where the file system allows it. Direct
//! where the `nvidia-fs` driver is loaded, else cuFile's compatibility mode (POSIX reads through
//! its own bounce buffers); the row says which (`cufile_mode`). Without `libcufile` the row fails
//! saying so. `read_ms` is the whole read, storage or page cache to the GPU.

use super::file_load::{LoadWay, file_len, io_error};
use super::*;
use crate::cuda::{CuFile, cufile_direct};
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::{CufileMode, LoadSource};

pub(crate) struct LoadCufile;

impl LoadCufile {
    fn open(file: &LoadSource) -> Result<std::fs::File, CudaError> {
        use std::os::unix::fs::OpenOptionsExt;
        let direct = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
            .open(&file.path);
        // A file system without O_DIRECT still reads in compatibility mode.
        direct
            .or_else(|_| std::fs::File::open(&file.path))
            .map_err(|e| io_error("open", &e))
    }
}

impl LoadWay for LoadCufile {
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        _stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        let len = file_len(file)?;
        let clock = Stopwatch::start();
        let cf = CuFile::register(Self::open(file)?)?;
        let got = cf.read_into(dev, 0, len)?;
        let read_ms = clock.ms();
        if got < len {
            return Err(CudaError::new(
                "cuFileRead",
                format!("read {got} of the file's {len} bytes"),
            ));
        }
        Ok(LoadStages {
            read_ms: Some(read_ms),
            cufile_mode: Some(if cufile_direct() {
                CufileMode::Direct
            } else {
                CufileMode::Compatibility
            }),
            ..LoadStages::default()
        })
    }
}
