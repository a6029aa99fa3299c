//! Host memory: pageable, page-locked (`cuMemHostAlloc`), registered (`cuMemHostRegister`) and
//! managed buffers, each freed or unregistered on drop, and volatile access to a word a running
//! kernel shares.

use super::ffi::{DeviceAccessible, PAGE, check, ms_since, record_drop_error, written};
use super::{CudaError, HostFlags};
use cudarc::driver::sys;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::time::Instant;

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
    pub(super) len: usize,
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
    pub(super) fn copy_end(&self, off: usize) -> *mut std::ffi::c_void {
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
