//! What every safe wrapper over the raw CUDA driver calls shares: a call's result checked into a
//! [`CudaError`], text a call writes, errors kept from drops, and the calls that need no object.
//! The wrappers themselves, each `unsafe` block with why it is sound, are beside this file:
//! `device` (a GPU and its context), `host_memory`, `device_memory` and `streams` (contexts of
//! their own, streams, events, modules); `kernels` launches the PTX kernels through them.

use super::CudaError;
use cudarc::driver::sys;
use std::sync::Mutex;
use std::time::Instant;

/// Host page size assumed for alignment (4 KiB on every platform CUDA supports for x86-64).
pub const PAGE: usize = 4096;

static DROP_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps the error of a release in `Drop` (which cannot return it) for [`take_drop_errors`].
pub(super) fn record_drop_error(what: &str, released: Result<(), CudaError>) {
    if let Err(e) = released
        && let Ok(mut v) = DROP_ERRORS.lock()
    {
        v.push(format!("{what}: {e}"));
    }
}

/// Errors raised while freeing memory in `Drop`, collected since the last call.
pub fn take_drop_errors() -> Vec<String> {
    DROP_ERRORS
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default()
}

pub(super) fn check(call: &'static str, r: sys::CUresult) -> Result<(), CudaError> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::driver(call, r))
    }
}

/// Calls a driver function that writes its result through an out-pointer to `start`; the value
/// it wrote, or the driver's error under `call`.
pub(super) fn written<T>(
    call: &'static str,
    start: T,
    f: impl FnOnce(&mut T) -> sys::CUresult,
) -> Result<T, CudaError> {
    let mut v = start;
    check(call, f(&mut v))?;
    Ok(v)
}

pub(super) fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// True when the CUDA driver library (libcuda / nvcuda.dll) can be loaded. Must be checked before
/// any other CUDA call: cudarc panics when the library is missing.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library by name; no CUDA function is called.
    unsafe { sys::is_culib_present() }
}

/// Memory a kernel can address: a device buffer, or mapped / managed host memory.
pub trait DeviceAccessible {
    /// Device address, or `None` when the memory is not reachable from kernels.
    fn kernel_ptr(&self) -> Option<u64>;
    fn byte_len(&self) -> usize;
}

/// `cuMemGetInfo` for the context current on this thread: (free, total) bytes.
pub fn cuda_mem_info() -> Result<(u64, u64), CudaError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; fails cleanly with no current context.
    check("cuMemGetInfo", unsafe {
        sys::cuMemGetInfo_v2(&mut free, &mut total)
    })?;
    Ok((free as u64, total as u64))
}

/// The ordinal of the device whose context is current on this thread.
pub fn current_device() -> Result<u32, CudaError> {
    let dev = written("cuCtxGetDevice", 0, |d| {
        // SAFETY: valid out-pointer; fails cleanly with no current context.
        unsafe { sys::cuCtxGetDevice(d) }
    })?;
    u32::try_from(dev).map_err(|_| CudaError::new("cuCtxGetDevice", "a negative ordinal"))
}
