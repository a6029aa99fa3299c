//! Opening a GPU: the driver's device count, the device's facts and attributes, and the primary
//! context a [`Gpu`] holds and releases on drop.

use super::CudaError;
use super::ffi::{check, driver_present, record_drop_error, written};
use cudarc::driver::sys;
use std::ffi::c_char;

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
