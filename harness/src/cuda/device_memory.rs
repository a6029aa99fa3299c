//! Device memory from `cuMemAlloc`, freed on drop.

use super::CudaError;
use super::ffi::{DeviceAccessible, check, ms_since, record_drop_error, written};
use cudarc::driver::sys;
use std::time::Instant;

/// Device memory from `cuMemAlloc`, freed on drop.
pub struct DeviceBuffer {
    pub(super) ptr: sys::CUdeviceptr,
    pub(super) len: usize,
    pub alloc_ms: f64,
}

impl DeviceBuffer {
    pub fn new(len: usize) -> Result<DeviceBuffer, CudaError> {
        #[cfg(feature = "fault-injection")]
        super::fault::check(super::fault::Call::DeviceAlloc, "cuMemAlloc")?;
        let t = Instant::now();
        // SAFETY: valid out-pointer.
        let ptr = written("cuMemAlloc", 0, |d| unsafe {
            sys::cuMemAlloc_v2(d, len.max(1))
        })?;
        Ok(DeviceBuffer {
            ptr,
            len,
            alloc_ms: ms_since(t),
        })
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }
    /// The address `off` bytes in, as an async copy takes its device end.
    pub(super) fn copy_end(&self, off: usize) -> sys::CUdeviceptr {
        self.ptr + off as u64
    }
    /// Copies `len` bytes at `offset` to `dst` synchronously (small read-backs).
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), CudaError> {
        if offset.checked_add(dst.len()).is_none_or(|e| e > self.len) {
            return Err(CudaError::new("cuMemcpyDtoH", "range outside the buffer"));
        }
        // SAFETY: source range inside the allocation, destination is a valid host slice.
        check("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), self.ptr + offset as u64, dst.len())
        })
    }
    /// Copies `src` to `offset` synchronously (small uploads).
    pub fn write(&self, offset: usize, src: &[u8]) -> Result<(), CudaError> {
        if offset.checked_add(src.len()).is_none_or(|e| e > self.len) {
            return Err(CudaError::new("cuMemcpyHtoD", "range outside the buffer"));
        }
        // SAFETY: destination range inside the allocation, source is a valid host slice.
        check("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(self.ptr + offset as u64, src.as_ptr().cast(), src.len())
        })
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        let r = unsafe { sys::cuMemFree_v2(self.ptr) };
        record_drop_error("freeing device memory", check("cuMemFree", r));
    }
}

/// Tries to allocate `len` device bytes and frees them at once: true when it succeeded.
pub fn try_device_alloc(len: usize) -> Result<bool, CudaError> {
    match DeviceBuffer::new(len) {
        Ok(b) => {
            drop(b);
            Ok(true)
        }
        Err(e) if e.is_out_of_memory() => Ok(false),
        Err(e) => Err(e),
    }
}

impl DeviceAccessible for DeviceBuffer {
    fn kernel_ptr(&self) -> Option<u64> {
        Some(self.ptr)
    }
    fn byte_len(&self) -> usize {
        self.len
    }
}
