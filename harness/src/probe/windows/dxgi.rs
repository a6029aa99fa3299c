//! `dxgi`: what WDDM charges this process on the adapter under test,
//! `IDXGIAdapter3::QueryVideoMemoryInfo`: LOCAL = dedicated VRAM, NON_LOCAL = system memory the
//! GPU maps — Task Manager's per-process "shared GPU memory", where pinned host memory lands.
//!
//! The adapter is matched to CUDA's by LUID; without a LUID, the first adapter that is not the
//! software (WARP) adapter is used, so it also answers under Wine.
//!
//! `QueryVideoMemoryInfo` reports for the calling process — pinscope — only: the budget is the
//! adapter's (what WDDM would let a process use), but the usage is pinscope's own, never another
//! process's. This is why `observe` reads the observed processes' usage from PDH's `GPU Process
//! Memory` counters and takes from DXGI only the NON_LOCAL budget (and pinscope's own usage, as a
//! check that pinscope itself holds none).

use super::super::{DxgiAdapter, Observer, Reading};
use super::luid_bytes;
use crate::accounting::ObserverId;
use crate::platform::{Bytes, Setting, Source};
use windows::Win32::Graphics::Dxgi::{
    CreateDXGIFactory1, DXGI_ADAPTER_DESC1, DXGI_ADAPTER_FLAG_SOFTWARE, DXGI_ERROR_NOT_FOUND,
    DXGI_MEMORY_SEGMENT_GROUP, DXGI_MEMORY_SEGMENT_GROUP_LOCAL,
    DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL, DXGI_QUERY_VIDEO_MEMORY_INFO, IDXGIAdapter1,
    IDXGIAdapter3, IDXGIFactory1,
};
use windows::core::Interface;

/// An `IDXGIAdapter3` that may move between threads.
struct Adapter3(IDXGIAdapter3);

// SAFETY: DXGI objects are free-threaded (DXGI is thread-safe except for swap chains and output
// duplication, which this type never touches); QueryVideoMemoryInfo may be called from any thread.
unsafe impl Send for Adapter3 {}

fn describe(desc: &DXGI_ADAPTER_DESC1) -> DxgiAdapter {
    let len = desc
        .Description
        .iter()
        .position(|c| *c == 0)
        .unwrap_or(desc.Description.len());
    DxgiAdapter {
        description: String::from_utf16_lossy(&desc.Description[..len]),
        luid: luid_bytes(desc.AdapterLuid.LowPart, desc.AdapterLuid.HighPart),
        software: (desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE.0 as u32) != 0,
        dedicated_video_memory: desc.DedicatedVideoMemory as u64,
        shared_system_memory: desc.SharedSystemMemory as u64,
    }
}

/// Every adapter of a new DXGI factory, with its description.
fn ffi_enum_adapters() -> Result<Vec<(IDXGIAdapter1, DxgiAdapter)>, String> {
    // SAFETY: CreateDXGIFactory1 has no preconditions; it returns an owned, ref-counted COM
    // pointer (released on drop).
    let factory: IDXGIFactory1 =
        unsafe { CreateDXGIFactory1() }.map_err(|e| format!("CreateDXGIFactory1: {e}"))?;
    let mut out = Vec::new();
    for i in 0..64 {
        // SAFETY: `factory` is a valid IDXGIFactory1; an index past the last adapter returns
        // DXGI_ERROR_NOT_FOUND rather than touching memory.
        let adapter = match unsafe { factory.EnumAdapters1(i) } {
            Ok(a) => a,
            Err(e) if e.code() == DXGI_ERROR_NOT_FOUND => break,
            Err(e) => return Err(format!("EnumAdapters1({i}): {e}")),
        };
        // SAFETY: `adapter` is a valid IDXGIAdapter1 returned just above.
        let desc = unsafe { adapter.GetDesc1() }.map_err(|e| format!("GetDesc1({i}): {e}"))?;
        out.push((adapter, describe(&desc)));
    }
    Ok(out)
}

fn ffi_query(
    adapter: &IDXGIAdapter3,
    group: DXGI_MEMORY_SEGMENT_GROUP,
) -> Result<DXGI_QUERY_VIDEO_MEMORY_INFO, String> {
    let mut info = DXGI_QUERY_VIDEO_MEMORY_INFO::default();
    // SAFETY: `adapter` is a valid IDXGIAdapter3; node 0 exists on every adapter; `info` is a
    // writable DXGI_QUERY_VIDEO_MEMORY_INFO that outlives the call.
    unsafe { adapter.QueryVideoMemoryInfo(0, group, &mut info) }
        .map_err(|e| format!("QueryVideoMemoryInfo: {e}"))?;
    Ok(info)
}

/// The DXGI adapters of this machine, software adapters included (flagged).
pub fn dxgi_adapters() -> Result<Vec<DxgiAdapter>, String> {
    Ok(ffi_enum_adapters()?.into_iter().map(|(_, d)| d).collect())
}

fn open(luid: Option<[u8; 8]>) -> Result<(Adapter3, DxgiAdapter), String> {
    let adapters = ffi_enum_adapters()?;
    let found = match luid {
        Some(l) => adapters
            .into_iter()
            .find(|(_, d)| d.luid == l)
            .ok_or_else(|| {
                format!(
                    "no DXGI adapter has the CUDA device's LUID {}",
                    l.iter().map(|b| format!("{b:02x}")).collect::<String>()
                )
            })?,
        None => adapters
            .into_iter()
            .find(|(_, d)| !d.software)
            .ok_or("no hardware DXGI adapter")?,
    };
    let (adapter, desc) = found;
    let a3: IDXGIAdapter3 = adapter.cast().map_err(|e| {
        format!(
            "{} has no IDXGIAdapter3 (QueryVideoMemoryInfo needs Windows 10): {e}",
            desc.description
        )
    })?;
    Ok((Adapter3(a3), desc))
}

/// The NON_LOCAL (shared) budget and usage of the adapter with `luid` (the first hardware
/// adapter without one): what WDDM lets this process page-lock, and what it has.
pub fn dxgi_nonlocal(luid: Option<[u8; 8]>) -> (Setting<Bytes>, Setting<Bytes>) {
    let read = open(luid).and_then(|(adapter, desc)| {
        ffi_query(&adapter.0, DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL).map(|i| (i, desc))
    });
    match read {
        Ok((i, desc)) => {
            let source = |field: &str| {
                Source::Win32(format!(
                    "IDXGIAdapter3::QueryVideoMemoryInfo NON_LOCAL {field} ({})",
                    desc.description
                ))
            };
            (
                Setting::known(Bytes(i.Budget), source("Budget")),
                Setting::known(Bytes(i.CurrentUsage), source("CurrentUsage")),
            )
        }
        Err(why) => (Setting::unavailable(why.clone()), Setting::unavailable(why)),
    }
}

pub struct DxgiObserver {
    adapter: Adapter3,
    desc: DxgiAdapter,
}

impl DxgiObserver {
    /// Finds the adapter by LUID (`cuDeviceGetLuid` bytes), or the first hardware adapter;
    /// unavailable, with the reason, when there is none.
    pub fn open(luid: Option<[u8; 8]>) -> Box<dyn Observer> {
        super::super::opened(ObserverId::Dxgi, open(luid), |(adapter, desc)| {
            DxgiObserver { adapter, desc }
        })
    }
}

impl Observer for DxgiObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Dxgi
    }

    fn detail(&self) -> Option<String> {
        let d = &self.desc;
        Some(format!(
            "{} (LUID {}, {} MiB dedicated, {} MiB shared)",
            d.description,
            d.luid
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            d.dedicated_video_memory >> 20,
            d.shared_system_memory >> 20
        ))
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let adapter = &self.adapter;
        let mut out = Vec::with_capacity(8);
        for (prefix, group) in [
            ("local", DXGI_MEMORY_SEGMENT_GROUP_LOCAL),
            ("nonlocal", DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL),
        ] {
            let i = ffi_query(&adapter.0, group).map_err(|e| format!("{prefix}: {e}"))?;
            out.extend([
                Reading::bytes(&format!("{prefix}_usage"), i.CurrentUsage),
                Reading::bytes(&format!("{prefix}_budget"), i.Budget),
                Reading::bytes(
                    &format!("{prefix}_available_for_reservation"),
                    i.AvailableForReservation,
                ),
                Reading::bytes(&format!("{prefix}_reservation"), i.CurrentReservation),
            ]);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_numbers() {
        let adapters = dxgi_adapters().expect("DXGI factory");
        println!("DXGI adapters: {adapters:#?}");
        assert!(!adapters.is_empty(), "at least one adapter");
        let mut o = DxgiObserver::open(None);
        if let Some(why) = o.unavailable() {
            panic!("DXGI observer unavailable: {why}");
        }
        println!("detail: {:?}", o.detail());
        let r = o.read().expect("QueryVideoMemoryInfo");
        println!("DXGI readings: {r:#?}");
        assert_eq!(r.len(), 8);
        let budget = |m: &str| r.iter().find(|r| r.metric == m).map(|r| r.value);
        if super::super::running_under_wine() {
            // What Wine (wined3d) answers: LOCAL budget = the adapter's dedicated memory, usage 0,
            // NON_LOCAL all zero.
            assert!(budget("local_budget").unwrap_or(0.0) > 0.0, "{r:?}");
        }
        assert!(
            budget("local_budget").unwrap_or(0.0) > 0.0
                || budget("nonlocal_budget").unwrap_or(0.0) > 0.0,
            "{r:?}"
        );
    }

    #[test]
    fn unknown_luid_is_unavailable_with_reason() {
        let o = DxgiObserver::open(Some([0xfe, 0xca, 0xad, 0xde, 0x77, 0x66, 0x55, 0x44]));
        let why = o.unavailable().expect("no adapter has that LUID");
        assert!(why.contains("feca"), "{why}");
    }
}
