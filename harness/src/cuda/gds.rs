//! GPUDirect Storage: a file read straight into device memory by cuFile (`libcufile`, loaded at
//! run time). Where the `nvidia-fs` kernel module is loaded cuFile can DMA from the storage to the
//! GPU ("direct"); without it cuFile runs in compatibility mode, POSIX reads through bounce
//! buffers of its own. The handle is deregistered on drop.

use super::{CudaError, DeviceBuffer};
use cudarc::cufile::{result, sys};

/// Whether `libcufile` can be loaded here. Must be checked before any other cuFile call: cudarc
/// panics when the library is missing.
pub fn cufile_present() -> bool {
    // SAFETY: only tries to dlopen the library by name; no cuFile function is called.
    unsafe { sys::is_culib_present() }
}

/// Whether cuFile can move data directly: the `nvidia-fs` driver is loaded (`/proc/driver/nvidia-fs`
/// exists, and the properties cuFile reports name its version). Otherwise it runs in
/// compatibility mode.
pub fn cufile_direct() -> bool {
    if !cufile_present() {
        return false;
    }
    let module = std::path::Path::new("/proc/driver/nvidia-fs").exists();
    let props = result::driver_get_properties().ok();
    module && props.is_some_and(|p| p.nvfs.major_version > 0)
}

fn failed(call: &'static str, e: result::CufileError) -> CudaError {
    CudaError::new(call, e.to_string())
}

/// A refused registration, with where cuFile says why: it identifies the file's volume (udev
/// properties of the block device, the file system) even in compatibility mode, and a disk
/// without udev data (many VMs and containers) is refused.
fn refused_file(e: result::CufileError) -> CudaError {
    let mode = if cufile_direct() {
        "with nvidia-fs loaded"
    } else {
        "in compatibility mode (nvidia-fs is not loaded)"
    };
    CudaError::new(
        "cuFileHandleRegister",
        format!(
            "{e}: cuFile refused the file {mode}; cufile.log in the working folder says why (a disk without udev properties, as in many VMs and containers, is refused)"
        ),
    )
}

/// A file registered with cuFile.
pub struct CuFile {
    handle: sys::CUfileHandle_t,
    _file: std::fs::File,
}

impl CuFile {
    /// Opens the cuFile driver (once per process; later calls are no-ops) and registers `file`.
    pub fn register(file: std::fs::File) -> Result<CuFile, CudaError> {
        if !cufile_present() {
            return Err(CudaError::new(
                "loading libcufile",
                "libcufile.so could not be loaded: GPUDirect Storage is not installed here (or put the CUDA toolkit's lib64 in LD_LIBRARY_PATH)",
            ));
        }
        result::driver_open().map_err(|e| failed("cuFileDriverOpen", e))?;
        use std::os::unix::io::AsRawFd;
        let descr = sys::CUfileDescr_t {
            type_: sys::CUfileFileHandleType::CU_FILE_HANDLE_TYPE_OPAQUE_FD,
            handle: sys::CUfileDescr_t__bindgen_ty_1 {
                fd: file.as_raw_fd(),
            },
            fs_ops: std::ptr::null(),
        };
        let handle = result::handle_register(&descr).map_err(refused_file)?;
        Ok(CuFile {
            handle,
            _file: file,
        })
    }

    /// Reads `len` bytes of the file at `offset` into `dev` at the same offset, in calls of at
    /// most 1 GiB; the bytes read (fewer at the end of the file).
    pub fn read_into(
        &self,
        dev: &DeviceBuffer,
        offset: u64,
        len: usize,
    ) -> Result<usize, CudaError> {
        const CALL: usize = 1 << 30;
        let start = usize::try_from(offset).map_err(|_| CudaError::new("cuFileRead", "offset"))?;
        if start.checked_add(len).is_none_or(|e| e > dev.len) {
            return Err(CudaError::new("cuFileRead", "range outside the buffer"));
        }
        let mut done = 0usize;
        while done < len {
            let n = CALL.min(len - done);
            let at = i64::try_from(start + done)
                .map_err(|_| CudaError::new("cuFileRead", "offset past i64"))?;
            // SAFETY: the device range [ptr + at, ptr + at + n) lies inside `dev` (checked above),
            // which outlives the call; the handle is registered and not yet deregistered.
            let got =
                unsafe { result::read(self.handle, dev.ptr as *mut std::ffi::c_void, n, at, at) }
                    .map_err(|e| failed("cuFileRead", e))?;
            let got = usize::try_from(got).unwrap_or(0);
            done += got;
            if got < n {
                break;
            }
        }
        Ok(done)
    }
}

impl Drop for CuFile {
    fn drop(&mut self) {
        // SAFETY: registered by `register`, deregistered once.
        if let Err(e) = unsafe { result::handle_deregister(self.handle) } {
            super::ffi::record_drop_error(
                "deregistering a cuFile handle",
                Err(failed("cuFileHandleDeregister", e)),
            );
        }
    }
}
