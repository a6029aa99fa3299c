//! Safe RAII wrappers over the raw CUDA driver calls. Every `unsafe` block says why it is sound.
//!
//! Size: over 500 lines on purpose: every FFI call of the crate is in this one file, so the
//! `unsafe` blocks can be audited in one place.

use super::CudaError;
use super::HostFlags;
use cudarc::driver::sys;
use std::alloc::Layout;
use std::ffi::c_char;
use std::ptr::NonNull;
use std::sync::Mutex;
use std::time::Instant;

/// Host page size assumed for alignment (4 KiB on every platform CUDA supports for x86-64).
pub const PAGE: usize = 4096;

static DROP_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps the error of a release in `Drop` (which cannot return it) for [`take_drop_errors`].
fn record_drop_error(what: &str, released: Result<(), CudaError>) {
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

fn check(call: &'static str, r: sys::CUresult) -> Result<(), CudaError> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::driver(call, r))
    }
}

/// Calls a driver function that writes its result through an out-pointer to `start`; the value
/// it wrote, or the driver's error under `call`.
fn written<T>(
    call: &'static str,
    start: T,
    f: impl FnOnce(&mut T) -> sys::CUresult,
) -> Result<T, CudaError> {
    let mut v = start;
    check(call, f(&mut v))?;
    Ok(v)
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// True when the CUDA driver library (libcuda / nvcuda.dll) can be loaded. Must be checked before
/// any other CUDA call: cudarc panics when the library is missing.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library by name; no CUDA function is called.
    unsafe { sys::is_culib_present() }
}

/// Why a GPU could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    NoDriver,
    NoDevice(String),
    BadOrdinal { asked: u32, count: u32 },
    Cuda(CudaError),
}

impl OpenError {
    /// One sentence for the user.
    pub fn sentence(&self) -> String {
        match self {
            OpenError::NoDriver => "no NVIDIA driver found: the CUDA driver library (libcuda.so.1 on Linux and WSL2, nvcuda.dll on Windows) could not be loaded; pinscope needs an NVIDIA GPU with its driver installed (on Linux, put the driver's library folder in LD_LIBRARY_PATH)".into(),
            OpenError::NoDevice(code) => format!("the NVIDIA driver is installed but reports no usable CUDA device ({code}); check that the GPU is present and visible (CUDA_VISIBLE_DEVICES, the driver's state) and run `pinscope info`"),
            OpenError::BadOrdinal { asked, count } => format!("--device {asked} does not exist: this machine has {count} CUDA device{} (0..{})", if *count == 1 { "" } else { "s" }, count.saturating_sub(1)),
            OpenError::Cuda(e) => format!("the CUDA driver could not open the GPU: {e}"),
        }
    }
}

/// An opened GPU: its device handle and retained primary context, current on this thread.
pub struct Gpu {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    ordinal: u32,
}

/// Facts the CUDA driver gives about a device.
#[derive(Debug, Clone, Default)]
pub struct CudaDeviceFacts {
    pub name: String,
    pub uuid: String,
    pub compute_capability: String,
    /// Bytes of device memory; `None` when the driver did not say.
    pub total_memory: Option<u64>,
    pub cuda_driver_version: String,
    pub pci_bus_id: String,
    pub tcc: bool,
    pub integrated: bool,
    pub can_map_host_memory: bool,
    pub concurrent_managed_access: bool,
    pub multiprocessors: u32,
    pub async_engines: u32,
    pub luid: Option<[u8; 8]>,
}

/// What a fact of [`CudaDeviceFacts`] reads when the driver call that gives it failed.
pub const UNKNOWN: &str = "unknown";

/// The C string a driver call writes into a buffer of `N` bytes (it is given the buffer and its
/// length), or `None` when the call failed.
fn driver_text<const N: usize>(
    call: impl FnOnce(*mut c_char, i32) -> sys::CUresult,
) -> Option<String> {
    let mut buf = [0 as c_char; N];
    if call(buf.as_mut_ptr(), N as i32) != sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as nvidia-smi and NVML write a UUID.
fn uuid_text(u: [u8; 16]) -> String {
    let hex =
        |r: std::ops::Range<usize>| -> String { u[r].iter().map(|b| format!("{b:02x}")).collect() };
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// The device attributes that decide which transfer strategies can work on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceAttribute {
    CanMapHostMemory,
    UnifiedAddressing,
    CanUseHostPointerForRegisteredMem,
    HostRegisterSupported,
    PageableMemoryAccess,
    ConcurrentManagedAccess,
    AsyncEngineCount,
}

impl DeviceAttribute {
    /// The driver's name of the attribute (`CU_DEVICE_ATTRIBUTE_…`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceAttribute::CanMapHostMemory => "CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY",
            DeviceAttribute::UnifiedAddressing => "CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING",
            DeviceAttribute::CanUseHostPointerForRegisteredMem => {
                "CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"
            }
            DeviceAttribute::HostRegisterSupported => "CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED",
            DeviceAttribute::PageableMemoryAccess => "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS",
            DeviceAttribute::ConcurrentManagedAccess => {
                "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS"
            }
            DeviceAttribute::AsyncEngineCount => "CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT",
        }
    }

    fn raw(self) -> sys::CUdevice_attribute {
        use sys::CUdevice_attribute as A;
        match self {
            DeviceAttribute::CanMapHostMemory => A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
            DeviceAttribute::UnifiedAddressing => A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
            DeviceAttribute::CanUseHostPointerForRegisteredMem => {
                A::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
            }
            DeviceAttribute::HostRegisterSupported => {
                A::CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED
            }
            DeviceAttribute::PageableMemoryAccess => A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
            DeviceAttribute::ConcurrentManagedAccess => {
                A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
            }
            DeviceAttribute::AsyncEngineCount => A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT,
        }
    }
}

/// How many CUDA devices the driver reports (loads the driver and initialises CUDA).
pub fn device_count() -> Result<u32, OpenError> {
    if !driver_present() {
        return Err(OpenError::NoDriver);
    }
    // SAFETY: the driver library is present (checked above); cuInit has no preconditions.
    let r = unsafe { sys::cuInit(0) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(OpenError::NoDevice(format!("{r:?}")));
    }
    let count = written("cuDeviceGetCount", 0i32, |count| {
        // SAFETY: `count` is a valid out-pointer.
        unsafe { sys::cuDeviceGetCount(count) }
    })
    .map_err(OpenError::Cuda)?;
    Ok(u32::try_from(count).unwrap_or(0))
}

impl Gpu {
    /// Loads the driver, initialises CUDA and makes device `ordinal`'s primary context current.
    pub fn open(ordinal: u32) -> Result<Gpu, OpenError> {
        let count = device_count()?;
        if count == 0 {
            return Err(OpenError::NoDevice("no devices".into()));
        }
        if ordinal >= count {
            return Err(OpenError::BadOrdinal {
                asked: ordinal,
                count,
            });
        }
        let dev = written("cuDeviceGet", 0, |dev| {
            // SAFETY: valid out-pointer; ordinal < count.
            unsafe { sys::cuDeviceGet(dev, ordinal as i32) }
        })
        .map_err(OpenError::Cuda)?;
        let ctx = written("cuDevicePrimaryCtxRetain", std::ptr::null_mut(), |ctx| {
            // SAFETY: valid out-pointer and device handle.
            unsafe { sys::cuDevicePrimaryCtxRetain(ctx, dev) }
        })
        .map_err(OpenError::Cuda)?;
        let gpu = Gpu { dev, ctx, ordinal };
        gpu.make_current().map_err(OpenError::Cuda)?;
        Ok(gpu)
    }

    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// Makes this GPU's context current on the calling thread.
    pub fn make_current(&self) -> Result<(), CudaError> {
        // SAFETY: `ctx` is a primary context retained by `open` and not yet released.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.ctx) })
    }

    /// One raw device attribute, or `None` when the driver did not give it.
    fn attr(&self, a: sys::CUdevice_attribute) -> Option<i32> {
        written("cuDeviceGetAttribute", 0i32, |v| {
            // SAFETY: valid out-pointer and device handle.
            unsafe { sys::cuDeviceGetAttribute(v, a, self.dev) }
        })
        .ok()
    }

    /// One device attribute, or the driver's error (unlike the facts, which read a failure as 0).
    pub fn attribute(&self, a: DeviceAttribute) -> Result<i32, CudaError> {
        written("cuDeviceGetAttribute", 0i32, |v| {
            // SAFETY: valid out-pointer and device handle.
            unsafe { sys::cuDeviceGetAttribute(v, a.raw(), self.dev) }
        })
    }

    /// Name, UUID, capability, driver version, PCIe bus id, TCC/WDDM, LUID … A fact whose
    /// driver call failed reads [`UNKNOWN`] (the UUID: empty, the total memory: `None`, a flag:
    /// false).
    pub fn facts(&self) -> CudaDeviceFacts {
        use sys::CUdevice_attribute as A;
        let name = driver_text::<256>(|p, n| {
            // SAFETY: a buffer of the stated length and a valid device handle.
            unsafe { sys::cuDeviceGetName(p, n, self.dev) }
        });
        let bus = driver_text::<64>(|p, n| {
            // SAFETY: a buffer of the stated length and a valid device handle.
            unsafe { sys::cuDeviceGetPCIBusId(p, n, self.dev) }
        });
        let total = written("cuDeviceTotalMem", 0usize, |v| {
            // SAFETY: valid out-pointer and device handle.
            unsafe { sys::cuDeviceTotalMem_v2(v, self.dev) }
        });
        let version = written("cuDriverGetVersion", 0i32, |v| {
            // SAFETY: valid out-pointer.
            unsafe { sys::cuDriverGetVersion(v) }
        });
        let uuid = written("cuDeviceGetUuid", sys::CUuuid { bytes: [0; 16] }, |u| {
            // SAFETY: valid out-pointer and device handle.
            unsafe { sys::cuDeviceGetUuid(u, self.dev) }
        });
        let capability = self
            .attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            .zip(self.attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
        let flag = |a| self.attr(a).is_some_and(|v| v != 0);
        let count = |a| self.attr(a).map_or(0, |v| u32::try_from(v).unwrap_or(0));
        let unknown = || UNKNOWN.to_string();
        CudaDeviceFacts {
            name: name.unwrap_or_else(unknown),
            uuid: uuid.map_or_else(|_| String::new(), |u| uuid_text(u.bytes.map(|b| b as u8))),
            compute_capability: capability.map_or_else(unknown, |(a, b)| format!("{a}.{b}")),
            total_memory: total.ok().map(|t| t as u64),
            cuda_driver_version: version.map_or_else(
                |_| unknown(),
                |v| format!("{}.{}", v / 1000, (v % 1000) / 10),
            ),
            pci_bus_id: bus.map_or_else(unknown, |b| b.to_lowercase()),
            tcc: flag(A::CU_DEVICE_ATTRIBUTE_TCC_DRIVER),
            integrated: flag(A::CU_DEVICE_ATTRIBUTE_INTEGRATED),
            can_map_host_memory: flag(A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY),
            concurrent_managed_access: flag(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS),
            multiprocessors: count(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).max(1),
            async_engines: count(A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT),
            luid: self.luid(),
        }
    }

    /// The Windows LUID of the adapter; `None` elsewhere (the call fails on other platforms).
    fn luid(&self) -> Option<[u8; 8]> {
        let mut luid = [0 as c_char; 8];
        let mut mask = 0u32;
        // SAFETY: 8-byte LUID buffer and a valid mask pointer; fails on non-Windows platforms.
        let ok = unsafe { sys::cuDeviceGetLuid(luid.as_mut_ptr(), &mut mask, self.dev) }
            == sys::CUresult::CUDA_SUCCESS
            && mask != 0;
        ok.then(|| luid.map(|b| b as u8))
    }

    /// `cuMemGetInfo`: (free, total) device bytes.
    pub fn mem_info(&self) -> Result<(u64, u64), CudaError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers; the context is current on this thread (set by `open`).
        check("cuMemGetInfo", unsafe {
            sys::cuMemGetInfo_v2(&mut free, &mut total)
        })?;
        Ok((free as u64, total as u64))
    }

    /// Waits for all work on the device.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: no pointers; context is current.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: releases the reference `open` retained, exactly once.
        let r = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.dev) };
        record_drop_error(
            "releasing the GPU context",
            check("cuDevicePrimaryCtxRelease", r),
        );
    }
}

/// How a host buffer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMem {
    Pageable,
    Pinned(HostFlags),
    Registered(HostFlags),
    Managed,
}

/// Host-side memory of any kind pinscope measures, freed (unregistered) on drop.
pub struct HostBuffer {
    ptr: NonNull<u8>,
    len: usize,
    mem: HostMem,
    /// Device-side address (mapped pinned memory, managed memory).
    device_ptr: Option<u64>,
    registered: bool,
    /// Milliseconds the allocation took (and the registration, for `Registered`).
    pub alloc_ms: f64,
    pub register_ms: Option<f64>,
}

// SAFETY: the buffer owns its memory exclusively; CUDA host memory may be used from any thread.
unsafe impl Send for HostBuffer {}
// SAFETY: shared references only give `&[u8]` access.
unsafe impl Sync for HostBuffer {}

fn page_layout(len: usize) -> Result<Layout, CudaError> {
    Layout::from_size_align(len.max(1).div_ceil(PAGE) * PAGE, PAGE)
        .map_err(|_| CudaError::new("malloc", "size too large for the host"))
}

/// The driver's bits for `f`, given the call's bits for portable, mapped and write-combined
/// memory (0 where the call has none).
fn flag_bits(f: HostFlags, [portable, mapped, write_combined]: [u32; 3]) -> u32 {
    [
        (f.portable, portable),
        (f.mapped, mapped),
        (f.write_combined, write_combined),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .fold(0, |v, (_, bit)| v | bit)
}

fn alloc_flags(f: HostFlags) -> u32 {
    use sys::{
        CU_MEMHOSTALLOC_DEVICEMAP as MAPPED, CU_MEMHOSTALLOC_PORTABLE as PORTABLE,
        CU_MEMHOSTALLOC_WRITECOMBINED as WC,
    };
    flag_bits(f, [PORTABLE, MAPPED, WC])
}

/// `cuMemHostRegister` has no write-combined flag.
fn register_flags(f: HostFlags) -> u32 {
    use sys::{CU_MEMHOSTREGISTER_DEVICEMAP as MAPPED, CU_MEMHOSTREGISTER_PORTABLE as PORTABLE};
    flag_bits(f, [PORTABLE, MAPPED, 0])
}

fn mapped_pointer(ptr: *mut u8) -> Result<u64, CudaError> {
    written("cuMemHostGetDevicePointer", 0, |d| {
        // SAFETY: `ptr` is page-locked host memory allocated/registered with DEVICEMAP; valid
        // out-pointer.
        unsafe { sys::cuMemHostGetDevicePointer_v2(d, ptr.cast(), 0) }
    })
}

impl HostBuffer {
    /// Page-aligned ordinary memory (not touched: call `as_mut_slice` and write to touch it).
    pub fn pageable(len: usize) -> Result<HostBuffer, CudaError> {
        let layout = page_layout(len)?;
        let t = Instant::now();
        // SAFETY: layout has non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        let ptr = NonNull::new(p).ok_or_else(|| CudaError::new("malloc", "out of host memory"))?;
        Ok(HostBuffer {
            ptr,
            len,
            mem: HostMem::Pageable,
            device_ptr: None,
            registered: false,
            alloc_ms: ms_since(t),
            register_ms: None,
        })
    }

    /// `cuMemHostAlloc` with exactly these flags.
    pub fn pinned(len: usize, flags: HostFlags) -> Result<HostBuffer, CudaError> {
        #[cfg(feature = "fault-injection")]
        super::fault::check(super::fault::Call::Alloc, "cuMemHostAlloc")?;
        let t = Instant::now();
        let p = written("cuMemHostAlloc", std::ptr::null_mut(), |p| {
            // SAFETY: valid out-pointer; the flags are CU_MEMHOSTALLOC_* bits.
            unsafe { sys::cuMemHostAlloc(p, len.max(1), alloc_flags(flags)) }
        })?;
        let alloc_ms = ms_since(t);
        let ptr = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| CudaError::new("cuMemHostAlloc", "returned a null pointer"))?;
        let mut b = HostBuffer {
            ptr,
            len,
            mem: HostMem::Pinned(flags),
            device_ptr: None,
            registered: false,
            alloc_ms,
            register_ms: None,
        };
        if flags.mapped {
            b.device_ptr = Some(mapped_pointer(b.ptr.as_ptr())?);
        }
        Ok(b)
    }

    /// Pageable memory, touched, then page-locked with `cuMemHostRegister`.
    pub fn registered(len: usize, flags: HostFlags) -> Result<HostBuffer, CudaError> {
        let mut b = HostBuffer::pageable(len)?;
        super::fill_zero(b.as_mut_slice());
        b.register(flags)?;
        Ok(b)
    }

    /// Registers this (pageable) buffer; records the time it took.
    pub fn register(&mut self, flags: HostFlags) -> Result<(), CudaError> {
        #[cfg(feature = "fault-injection")]
        super::fault::check(super::fault::Call::Register, "cuMemHostRegister")?;
        let t = Instant::now();
        // SAFETY: ptr/len describe memory this buffer owns; registration is undone in `unregister`/Drop.
        check("cuMemHostRegister", unsafe {
            sys::cuMemHostRegister_v2(
                self.ptr.as_ptr().cast(),
                self.len.max(1),
                register_flags(flags),
            )
        })?;
        self.register_ms = Some(ms_since(t));
        self.registered = true;
        self.mem = HostMem::Registered(flags);
        if flags.mapped {
            self.device_ptr = Some(mapped_pointer(self.ptr.as_ptr())?);
        }
        Ok(())
    }

    /// `cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL)`.
    pub fn managed(len: usize) -> Result<HostBuffer, CudaError> {
        #[cfg(feature = "fault-injection")]
        super::fault::check(super::fault::Call::Alloc, "cuMemAllocManaged")?;
        let t = Instant::now();
        let global = sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32;
        let d = written("cuMemAllocManaged", 0, |d| {
            // SAFETY: valid out-pointer; ATTACH_GLOBAL is a valid flag.
            unsafe { sys::cuMemAllocManaged(d, len.max(1), global) }
        })?;
        let ptr = NonNull::new(d as usize as *mut u8)
            .ok_or_else(|| CudaError::new("cuMemAllocManaged", "returned a null pointer"))?;
        Ok(HostBuffer {
            ptr,
            len,
            mem: HostMem::Managed,
            device_ptr: Some(d),
            registered: false,
            alloc_ms: ms_since(t),
            register_ms: None,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn mem(&self) -> HostMem {
        self.mem
    }
    /// The address kernels use to reach this memory (mapped or managed), if any.
    pub fn device_ptr(&self) -> Option<u64> {
        self.device_ptr
    }
    /// True when DMA engines can read it asynchronously (page-locked).
    pub fn is_page_locked(&self) -> bool {
        matches!(self.mem, HostMem::Pinned(_) | HostMem::Registered(_))
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the buffer's lifetime; every kind of memory here
        // is host-accessible. Callers synchronise with the GPU before reading.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` gives exclusive access on the host side.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    fn raw_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The buffer's host address (to find its mapping in `/proc/self/numa_maps`).
    pub fn address(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// The address `off` bytes in, as an async copy takes its host end (bounds checked by the
    /// caller before the driver uses it).
    fn copy_end(&self, off: usize) -> *mut std::ffi::c_void {
        self.raw_ptr().wrapping_add(off).cast()
    }

    /// Unregisters (if registered) and frees, returning (unregister ms, free ms).
    pub fn free(self) -> Result<(Option<f64>, f64), CudaError> {
        let mut me = std::mem::ManuallyDrop::new(self);
        me.release()
    }

    fn release(&mut self) -> Result<(Option<f64>, f64), CudaError> {
        let mut unregister_ms = None;
        let mut first_err = None;
        if self.registered {
            let t = Instant::now();
            // SAFETY: the range was registered by `register` and not yet unregistered.
            let r = check("cuMemHostUnregister", unsafe {
                sys::cuMemHostUnregister(self.ptr.as_ptr().cast())
            });
            unregister_ms = Some(ms_since(t));
            self.registered = false;
            if let Err(e) = r {
                first_err = Some(e);
            }
        }
        let t = Instant::now();
        let r = match self.mem {
            HostMem::Pageable | HostMem::Registered(_) => {
                match page_layout(self.len) {
                    // SAFETY: allocated by `pageable` with this same layout.
                    Ok(layout) => {
                        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            // SAFETY: allocated by cuMemHostAlloc, freed once.
            HostMem::Pinned(_) => check("cuMemFreeHost", unsafe {
                sys::cuMemFreeHost(self.ptr.as_ptr().cast())
            }),
            // SAFETY: allocated by cuMemAllocManaged, freed once.
            HostMem::Managed => check("cuMemFree", unsafe {
                sys::cuMemFree_v2(self.ptr.as_ptr() as usize as sys::CUdeviceptr)
            }),
        };
        let free_ms = ms_since(t);
        match (first_err, r) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(())) => Ok((unregister_ms, free_ms)),
        }
    }

    /// Page-locks `len` bytes at `offset` until the returned guard is dropped or unregistered.
    pub fn register_range(&self, offset: usize, len: usize) -> Result<Registration<'_>, CudaError> {
        #[cfg(feature = "fault-injection")]
        super::fault::check(super::fault::Call::Register, "cuMemHostRegister")?;
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(CudaError::new(
                "cuMemHostRegister",
                "range outside the buffer",
            ));
        }
        // SAFETY: offset+len is within the buffer (checked above).
        let p = unsafe { self.ptr.as_ptr().add(offset) };
        let t = Instant::now();
        // SAFETY: [p, p+len) is memory this buffer owns; the guard unregisters it.
        check("cuMemHostRegister", unsafe {
            sys::cuMemHostRegister_v2(p.cast(), len.max(1), 0)
        })?;
        Ok(Registration {
            ptr: p,
            len,
            register_ms: ms_since(t),
            active: true,
            _buf: std::marker::PhantomData,
        })
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        record_drop_error("freeing host memory", self.release().map(|_| ()));
    }
}

/// A slice of a pageable buffer, registered for the duration of one copy.
pub struct Registration<'a> {
    ptr: *mut u8,
    len: usize,
    pub register_ms: f64,
    active: bool,
    _buf: std::marker::PhantomData<&'a HostBuffer>,
}

impl Registration<'_> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Unregisters now and returns how long it took (ms).
    pub fn unregister(mut self) -> Result<f64, CudaError> {
        self.active = false;
        let t = Instant::now();
        // SAFETY: registered in `register_range`, unregistered once (active is now false).
        check("cuMemHostUnregister", unsafe {
            sys::cuMemHostUnregister(self.ptr.cast())
        })?;
        Ok(ms_since(t))
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if self.active {
            // SAFETY: still registered (active), unregistered once.
            let r = unsafe { sys::cuMemHostUnregister(self.ptr.cast()) };
            record_drop_error("unregistering host memory", check("cuMemHostUnregister", r));
        }
    }
}

/// Device memory from `cuMemAlloc`, freed on drop.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    len: usize,
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
    fn copy_end(&self, off: usize) -> sys::CUdeviceptr {
        self.ptr + off as u64
    }
    /// Sets every byte to `value` (asynchronously on `stream`).
    pub fn memset(&self, stream: &Stream, value: u8) -> Result<(), CudaError> {
        // SAFETY: ptr is valid for len bytes; stream is a live stream.
        check("cuMemsetD8Async", unsafe {
            sys::cuMemsetD8Async(self.ptr, value, self.len, stream.raw)
        })
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

/// A driver object that its Rust value owns: `new` creates it (`$create` with `$flags`), drop
/// destroys it (`$destroy`; an error there is kept for [`take_drop_errors`]).
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

/// Memory a kernel can address: a device buffer, or mapped / managed host memory.
pub trait DeviceAccessible {
    /// Device address, or `None` when the memory is not reachable from kernels.
    fn kernel_ptr(&self) -> Option<u64>;
    fn byte_len(&self) -> usize;
}

impl DeviceAccessible for DeviceBuffer {
    fn kernel_ptr(&self) -> Option<u64> {
        Some(self.ptr)
    }
    fn byte_len(&self) -> usize {
        self.len
    }
}

impl DeviceAccessible for HostBuffer {
    fn kernel_ptr(&self) -> Option<u64> {
        self.device_ptr
    }
    fn byte_len(&self) -> usize {
        self.len
    }
}

/// Volatile access to a word of host memory shared with a running kernel (the spin gate).
pub(super) fn volatile_store(buf: &HostBuffer, word: usize, value: u32) {
    if (word + 1) * 4 <= buf.len {
        // SAFETY: in bounds (checked); page-aligned buffer so the word is 4-byte aligned; volatile
        // because a kernel reads it concurrently through the mapped pointer.
        unsafe { std::ptr::write_volatile(buf.raw_ptr().cast::<u32>().add(word), value) }
    }
}

pub(super) fn volatile_load(buf: &HostBuffer, word: usize) -> u32 {
    if (word + 1) * 4 <= buf.len {
        // SAFETY: as for `volatile_store`.
        unsafe { std::ptr::read_volatile(buf.raw_ptr().cast::<u32>().add(word)) }
    } else {
        0
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

/// `cuMemGetInfo` for the context current on this thread: (free, total) bytes.
pub fn cuda_mem_info() -> Result<(u64, u64), CudaError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; fails cleanly with no current context.
    check("cuMemGetInfo", unsafe {
        sys::cuMemGetInfo_v2(&mut free, &mut total)
    })?;
    Ok((free as u64, total as u64))
}

/// Tries to page-lock memory the process may only read (`bytes` should live in a read-only
/// mapping, such as a non-zero `static`) and unregisters it again if the driver accepted it.
/// Used to check that such a failure is reported, not crashed on.
pub fn try_register_readonly(bytes: &'static [u8]) -> Result<(), CudaError> {
    // SAFETY: registration does not write to the memory; the range is a valid 'static slice.
    check("cuMemHostRegister", unsafe {
        sys::cuMemHostRegister_v2(bytes.as_ptr() as *mut std::ffi::c_void, bytes.len(), 0)
    })?;
    // SAFETY: registered just above, unregistered once.
    check("cuMemHostUnregister", unsafe {
        sys::cuMemHostUnregister(bytes.as_ptr() as *mut std::ffi::c_void)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_is_written_as_nvidia_smi_writes_it() {
        let u: [u8; 16] = std::array::from_fn(|i| (i as u8) * 17);
        assert_eq!(uuid_text(u), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn a_failed_driver_text_call_is_unknown_not_an_empty_name() {
        let failed = driver_text::<8>(|_, _| sys::CUresult::CUDA_ERROR_NOT_INITIALIZED);
        assert_eq!(failed, None);
        let written = driver_text::<8>(|p, n| {
            assert_eq!(n, 8);
            // SAFETY: the buffer has 8 bytes; three are written.
            unsafe {
                *p = b'H' as c_char;
                *p.add(1) = b'2' as c_char;
                *p.add(2) = 0;
            }
            sys::CUresult::CUDA_SUCCESS
        });
        assert_eq!(written.as_deref(), Some("H2"));
    }
}
