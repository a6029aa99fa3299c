//! Driver objects owned by their Rust values: contexts of their own, streams with their async
//! copies, events, and loaded PTX modules with their launches.

use super::CudaError;
use super::device_memory::DeviceBuffer;
use super::ffi::{check, record_drop_error, written};
use super::host_memory::HostBuffer;
use cudarc::driver::sys;

/// A driver object that its Rust value owns: `new` creates it (`$create` with `$flags`), drop
/// destroys it (`$destroy`; an error there is kept for [`take_drop_errors`](super::take_drop_errors)).
macro_rules! driver_object {
    (
        $(#[$doc:meta])*
        $name:ident($raw:ty),
        $create_name:literal: $create:ident($flags:expr),
        $destroy_name:literal: $destroy:ident,
        $what:literal
    ) => {
        $(#[$doc])*
        pub struct $name {
            raw: $raw,
        }

        impl $name {
            pub fn new() -> Result<$name, CudaError> {
                let flags = $flags as u32;
                // SAFETY: valid out-pointer; `flags` are valid flags of this call.
                let raw = written($create_name, std::ptr::null_mut(), |r| unsafe {
                    sys::$create(r, flags)
                })?;
                Ok($name { raw })
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: created by `new`, destroyed once.
                let r = unsafe { sys::$destroy(self.raw) };
                record_drop_error($what, check($destroy_name, r));
            }
        }
    };
}

driver_object!(
    /// A non-blocking CUDA stream.
    Stream(sys::CUstream),
    "cuStreamCreate": cuStreamCreate(sys::CUstream_flags::CU_STREAM_NON_BLOCKING),
    "cuStreamDestroy": cuStreamDestroy_v2,
    "destroying a stream"
);

driver_object!(
    /// A timing event (created with default flags, so it can time).
    Event(sys::CUevent),
    "cuEventCreate": cuEventCreate(sys::CUevent_flags::CU_EVENT_DEFAULT),
    "cuEventDestroy": cuEventDestroy_v2,
    "destroying an event"
);

/// How a context's host threads wait for the GPU: the `CU_CTX_SCHED_*` flag it is created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Spin on the CPU until the GPU is done (lowest latency, one core busy).
    Spin,
    /// Spin, yielding the CPU to other threads between checks.
    Yield,
    /// Sleep on an OS primitive until the driver wakes the thread.
    BlockingSync,
}

/// A context of a case's own (`cuCtxCreate`) on the device of the context current on this
/// thread, created with a [`Schedule`] flag and pushed current over it; destroyed on drop, which
/// pops it so the context below is current again. Everything created while it is current
/// belongs to it and must be dropped first.
pub struct OwnContext {
    raw: sys::CUcontext,
}

impl OwnContext {
    pub fn create(schedule: Schedule) -> Result<OwnContext, CudaError> {
        use sys::CUctx_flags as F;
        let dev = written("cuCtxGetDevice", 0, |d| {
            // SAFETY: valid out-pointer; fails cleanly when no context is current.
            unsafe { sys::cuCtxGetDevice(d) }
        })?;
        let sched = match schedule {
            Schedule::Spin => F::CU_CTX_SCHED_SPIN,
            Schedule::Yield => F::CU_CTX_SCHED_YIELD,
            Schedule::BlockingSync => F::CU_CTX_SCHED_BLOCKING_SYNC,
        };
        let flags = sched as u32 | F::CU_CTX_MAP_HOST as u32;
        let raw = written("cuCtxCreate", std::ptr::null_mut(), |c| {
            // SAFETY: valid out-pointer, a device handle from the driver, valid flag bits.
            unsafe { sys::cuCtxCreate_v2(c, flags, dev) }
        })?;
        Ok(OwnContext { raw })
    }
}

impl Drop for OwnContext {
    fn drop(&mut self) {
        // SAFETY: created by `create`, destroyed once; destroying the current context pops it.
        let r = unsafe { sys::cuCtxDestroy_v2(self.raw) };
        record_drop_error("destroying a case's own context", check("cuCtxDestroy", r));
    }
}

/// Bounds check for an async copy.
fn in_bounds(off: usize, len: usize, total: usize) -> bool {
    off.checked_add(len).is_some_and(|e| e <= total)
}

/// An async copy method of [`Stream`] from `$src` memory to `$dst` memory: the injected fault (if
/// any), both ranges checked against their buffers, then the driver's `$driver` on the stream.
macro_rules! async_copy {
    ($(#[$doc:meta])* $method:ident($call:literal, $driver:ident): $src:ty => $dst:ty) => {
        $(#[$doc])*
        pub fn $method(
            &self,
            dst: &$dst,
            dst_off: usize,
            src: &$src,
            src_off: usize,
            len: usize,
        ) -> Result<(), CudaError> {
            #[cfg(feature = "fault-injection")]
            super::fault::check(super::fault::Call::Copy, $call)?;
            if !in_bounds(dst_off, len, dst.len) || !in_bounds(src_off, len, src.len) {
                return Err(CudaError::new($call, "range outside a buffer"));
            }
            // SAFETY: both ranges are inside live allocations (checked above); the caller keeps the
            // host buffer alive and does not touch its range until the stream has passed this copy
            // (it synchronises first).
            check($call, unsafe {
                sys::$driver(
                    dst.copy_end(dst_off),
                    src.copy_end(src_off),
                    len,
                    self.raw,
                )
            })
        }
    };
}

impl Stream {
    async_copy!(
        /// Queues a host→device copy (`cuMemcpyHtoDAsync`). From pageable memory the driver stages
        /// it and the call may return only after the data left the buffer.
        copy_h2d("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2): HostBuffer => DeviceBuffer
    );

    async_copy!(
        /// Queues a device→host copy (`cuMemcpyDtoHAsync`).
        copy_d2h("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2): DeviceBuffer => HostBuffer
    );

    async_copy!(
        /// Queues a device→device copy on the copy engines (`cuMemcpyDtoDAsync`).
        copy_d2d("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2): DeviceBuffer => DeviceBuffer
    );

    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: live stream.
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(self.raw)
        })
    }

    /// True once everything queued on the stream is done (`cuStreamQuery`, which also makes a
    /// driver that batches commands submit them).
    pub fn is_done(&self) -> Result<bool, CudaError> {
        // SAFETY: live stream.
        match unsafe { sys::cuStreamQuery(self.raw) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => check("cuStreamQuery", other).map(|_| false),
        }
    }

    /// Makes this stream wait for `event`.
    pub fn wait(&self, event: &Event) -> Result<(), CudaError> {
        // SAFETY: live stream and event.
        check("cuStreamWaitEvent", unsafe {
            sys::cuStreamWaitEvent(self.raw, event.raw, 0)
        })
    }
}

impl Event {
    /// An event to wait on, not to time: its synchronisation sleeps until the driver wakes the
    /// thread (`CU_EVENT_BLOCKING_SYNC`) instead of spinning as the context decides, and it
    /// records no timestamp (`CU_EVENT_DISABLE_TIMING`, the cheaper record).
    pub fn blocking() -> Result<Event, CudaError> {
        let flags = sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32
            | sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY: valid out-pointer; a valid flag of cuEventCreate.
        let raw = written("cuEventCreate", std::ptr::null_mut(), |r| unsafe {
            sys::cuEventCreate(r, flags)
        })?;
        Ok(Event { raw })
    }

    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: live event and stream.
        check("cuEventRecord", unsafe {
            sys::cuEventRecord(self.raw, stream.raw)
        })
    }
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: live event.
        check("cuEventSynchronize", unsafe {
            sys::cuEventSynchronize(self.raw)
        })
    }
    /// Waits for the event by polling it (`cuEventQuery` in a spin loop) instead of letting the
    /// driver decide how to wait: the staged ring's hand-off between DMA and copy threads is
    /// a fraction of a millisecond, and a sleeping wait can take longer than that to return.
    pub fn spin_wait(&self) -> Result<(), CudaError> {
        loop {
            // SAFETY: live event.
            let r = unsafe { sys::cuEventQuery(self.raw) };
            match r {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => std::hint::spin_loop(),
                other => return check("cuEventQuery", other),
            }
        }
    }
    /// Whether the work before the event has finished, without waiting (`cuEventQuery`).
    pub fn is_complete(&self) -> Result<bool, CudaError> {
        // SAFETY: live event.
        match unsafe { sys::cuEventQuery(self.raw) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => check("cuEventQuery", other).map(|()| false),
        }
    }
    /// Milliseconds from `self` to `end` (both recorded and complete).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64, CudaError> {
        // SAFETY: live events, valid out-pointer.
        let ms = written("cuEventElapsedTime", 0f32, |ms| unsafe {
            sys::cuEventElapsedTime(ms, self.raw, end.raw)
        })?;
        Ok(f64::from(ms))
    }
}

/// Launches `f` with the given parameters.
pub(super) fn launch(
    f: sys::CUfunction,
    grid: u32,
    block: u32,
    stream: &Stream,
    params: &mut [*mut std::ffi::c_void],
) -> Result<(), CudaError> {
    // SAFETY: `f` comes from the loaded module; `params` points at values whose types match the
    // kernel's parameter list (each caller in kernels.rs builds them for one entry point), and the
    // pointers inside were bounds-checked against live allocations by the caller.
    check("cuLaunchKernel", unsafe {
        sys::cuLaunchKernel(
            f,
            grid,
            1,
            1,
            block,
            1,
            1,
            0,
            stream.raw,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })
}

/// A loaded PTX module.
pub(super) struct Module {
    raw: sys::CUmodule,
}

impl Module {
    pub(super) fn load(ptx: &str) -> Result<Module, CudaError> {
        let text = std::ffi::CString::new(ptx)
            .map_err(|_| CudaError::new("cuModuleLoadData", "PTX contains a NUL byte"))?;
        // SAFETY: NUL-terminated PTX text, valid out-pointer; the context is current.
        let raw = written("cuModuleLoadData", std::ptr::null_mut(), |m| unsafe {
            sys::cuModuleLoadData(m, text.as_ptr().cast())
        })?;
        Ok(Module { raw })
    }
    pub(super) fn function(&self, name: &str) -> Result<sys::CUfunction, CudaError> {
        let c = std::ffi::CString::new(name)
            .map_err(|_| CudaError::new("cuModuleGetFunction", "bad name"))?;
        // SAFETY: live module, NUL-terminated name, valid out-pointer.
        written("cuModuleGetFunction", std::ptr::null_mut(), |f| unsafe {
            sys::cuModuleGetFunction(f, self.raw, c.as_ptr())
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded by cuModuleLoadData, unloaded once.
        let r = unsafe { sys::cuModuleUnload(self.raw) };
        record_drop_error("unloading the PTX module", check("cuModuleUnload", r));
    }
}

/// What a stream queues on device memory besides copies.
impl DeviceBuffer {
    /// Sets every byte to `value` (asynchronously on `stream`).
    pub fn memset(&self, stream: &Stream, value: u8) -> Result<(), CudaError> {
        // SAFETY: ptr is valid for len bytes; stream is a live stream.
        check("cuMemsetD8Async", unsafe {
            sys::cuMemsetD8Async(self.ptr, value, self.len, stream.raw)
        })
    }
}
