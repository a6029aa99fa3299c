//! The driver calls the library reports: their CUPTI callback ids (`cupti_driver_cbid.h`,
//! `CUPTI_DRIVER_TRACE_CBID_*`; the ids are fixed once assigned) and their parameter structs
//! (`generated_cuda_meta.h`, `<call>_params`), and how each becomes an event.

use super::call_code;
use std::ffi::c_void;

pub const MEM_FREE_HOST: u32 = 38;
pub const MEM_HOST_ALLOC: u32 = 39;
pub const MEM_ALLOC_V2: u32 = 243;
pub const MEM_ALLOC_PITCH_V2: u32 = 244;
pub const MEM_FREE_V2: u32 = 245;
pub const MEM_ALLOC_HOST_V2: u32 = 294;
pub const MEM_HOST_REGISTER: u32 = 301;
pub const MEM_HOST_UNREGISTER: u32 = 302;
pub const MEM_ALLOC_MANAGED: u32 = 371;
pub const MEM_HOST_REGISTER_V2: u32 = 379;
pub const MEM_CREATE: u32 = 549;
pub const MEM_RELEASE: u32 = 550;
pub const MEM_MAP: u32 = 551;
pub const MEM_ALLOC_ASYNC: u32 = 598;
pub const MEM_ALLOC_ASYNC_PTSZ: u32 = 599;
pub const MEM_FREE_ASYNC: u32 = 600;
pub const MEM_FREE_ASYNC_PTSZ: u32 = 601;
pub const MEM_ALLOC_FROM_POOL_ASYNC: u32 = 611;
pub const MEM_ALLOC_FROM_POOL_ASYNC_PTSZ: u32 = 612;

/// Every callback the library enables.
pub const ENABLED: &[u32] = &[
    MEM_FREE_HOST,
    MEM_HOST_ALLOC,
    MEM_ALLOC_V2,
    MEM_ALLOC_PITCH_V2,
    MEM_FREE_V2,
    MEM_ALLOC_HOST_V2,
    MEM_HOST_REGISTER,
    MEM_HOST_UNREGISTER,
    MEM_ALLOC_MANAGED,
    MEM_HOST_REGISTER_V2,
    MEM_CREATE,
    MEM_RELEASE,
    MEM_MAP,
    MEM_ALLOC_ASYNC,
    MEM_ALLOC_ASYNC_PTSZ,
    MEM_FREE_ASYNC,
    MEM_FREE_ASYNC_PTSZ,
    MEM_ALLOC_FROM_POOL_ASYNC,
    MEM_ALLOC_FROM_POOL_ASYNC_PTSZ,
];

/// `cuMemHostAlloc_params`, `cuMemAllocManaged_params` (an out-pointer, a size, flags).
#[repr(C)]
#[allow(dead_code)] // fields of the layout that are not read
pub struct OutSizeFlags {
    pub out: *const u64,
    pub bytesize: usize,
    pub flags: u32,
}

/// `cuMemAllocHost_v2_params`, `cuMemAlloc_v2_params`, and the first two fields of
/// `cuMemAllocAsync_params` and `cuMemAllocFromPoolAsync_params`.
#[repr(C)]
pub struct OutSize {
    pub out: *const u64,
    pub bytesize: usize,
}

/// `cuMemHostRegister(_v2)_params`.
#[repr(C)]
#[allow(dead_code)] // fields of the layout that are not read
pub struct PtrSizeFlags {
    pub p: u64,
    pub bytesize: usize,
    pub flags: u32,
}

/// `cuMemFreeHost_params`, `cuMemHostUnregister_params`, `cuMemFree_v2_params`,
/// `cuMemRelease_params` and the first field of `cuMemFreeAsync_params`: an address or handle.
#[repr(C)]
pub struct One {
    pub value: u64,
}

/// `cuMemAllocPitch_v2_params`.
#[repr(C)]
#[allow(dead_code)] // fields of the layout that are not read
pub struct AllocPitch {
    pub out: *const u64,
    pub pitch: *const usize,
    pub width_in_bytes: usize,
    pub height: usize,
    pub element_size_bytes: u32,
}

/// `cuMemCreate_params`.
#[repr(C)]
#[allow(dead_code)] // fields of the layout that are not read
pub struct Create {
    pub handle: *const u64,
    pub size: usize,
    pub prop: *const c_void,
    pub flags: u64,
}

/// `cuMemMap_params`.
#[repr(C)]
#[allow(dead_code)] // fields of the layout that are not read
pub struct Map {
    pub ptr: u64,
    pub size: usize,
    pub offset: usize,
    pub handle: u64,
    pub flags: u64,
}

/// An event's call-specific fields.
pub struct Call {
    pub code: u16,
    pub bytes: u64,
    pub flags: u32,
    pub address: u64,
}

/// Reads `*p` when the call succeeded and `p` is not null (0 otherwise).
///
/// # Safety
/// `p` is null or points to a readable u64.
unsafe fn out(p: *const u64, ok: bool) -> u64 {
    if ok && !p.is_null() {
        // SAFETY: the caller's promise.
        unsafe { *p }
    } else {
        0
    }
}

/// The event of callback `id` from its parameter struct at `params`; `None` for a callback not
/// in [`ENABLED`]. `ok`: the call returned success, so its out-pointers hold results.
///
/// # Safety
/// `params` points to the parameter struct of driver call `id`, read after the call returned.
pub unsafe fn decode(id: u32, params: *const c_void, ok: bool) -> Option<Call> {
    let call = |code, bytes: usize, flags, address| Call {
        code,
        bytes: bytes as u64,
        flags,
        address,
    };
    // SAFETY: every read below is of call `id`'s struct `params`, of the layout named; its
    // out-pointers are the caller's and were written by a successful call.
    unsafe {
        Some(match id {
            MEM_HOST_ALLOC | MEM_ALLOC_MANAGED => {
                let p = &*params.cast::<OutSizeFlags>();
                let code = if id == MEM_HOST_ALLOC {
                    call_code::HOST_ALLOC
                } else {
                    call_code::MANAGED_ALLOC
                };
                call(code, p.bytesize, p.flags, out(p.out, ok))
            }
            MEM_ALLOC_HOST_V2
            | MEM_ALLOC_V2
            | MEM_ALLOC_ASYNC
            | MEM_ALLOC_ASYNC_PTSZ
            | MEM_ALLOC_FROM_POOL_ASYNC
            | MEM_ALLOC_FROM_POOL_ASYNC_PTSZ => {
                let p = &*params.cast::<OutSize>();
                let code = match id {
                    MEM_ALLOC_HOST_V2 => call_code::HOST_ALLOC,
                    MEM_ALLOC_V2 => call_code::DEVICE_ALLOC,
                    _ => call_code::ASYNC_ALLOC,
                };
                call(code, p.bytesize, 0, out(p.out, ok))
            }
            MEM_HOST_REGISTER | MEM_HOST_REGISTER_V2 => {
                let p = &*params.cast::<PtrSizeFlags>();
                call(call_code::HOST_REGISTER, p.bytesize, p.flags, p.p)
            }
            MEM_FREE_HOST | MEM_HOST_UNREGISTER | MEM_FREE_V2 | MEM_RELEASE | MEM_FREE_ASYNC
            | MEM_FREE_ASYNC_PTSZ => {
                let p = &*params.cast::<One>();
                let code = match id {
                    MEM_FREE_HOST => call_code::FREE_HOST,
                    MEM_HOST_UNREGISTER => call_code::HOST_UNREGISTER,
                    MEM_FREE_V2 => call_code::DEVICE_FREE,
                    MEM_RELEASE => call_code::VMM_RELEASE,
                    _ => call_code::ASYNC_FREE,
                };
                call(code, 0, 0, p.value)
            }
            MEM_ALLOC_PITCH_V2 => {
                let p = &*params.cast::<AllocPitch>();
                let pitch = if ok && !p.pitch.is_null() {
                    *p.pitch
                } else {
                    p.width_in_bytes
                };
                let bytes = pitch.saturating_mul(p.height);
                call(call_code::DEVICE_ALLOC, bytes, 0, out(p.out, ok))
            }
            MEM_CREATE => {
                let p = &*params.cast::<Create>();
                call(
                    call_code::VMM_CREATE,
                    p.size,
                    p.flags as u32,
                    out(p.handle, ok),
                )
            }
            MEM_MAP => {
                let p = &*params.cast::<Map>();
                call(call_code::VMM_MAP, p.size, p.flags as u32, p.ptr)
            }
            _ => return None,
        })
    }
}
