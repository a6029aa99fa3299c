//! The Windows observers: DXGI (per-process video memory budgets, what WDDM charges), PDH (Task
//! Manager's counters) and the process's own memory counters. Every `unsafe` block of the probe
//! module lives in this directory, inside functions named `ffi_*`, each with a `// SAFETY:` note.

use super::Observer;
use windows::Win32::Foundation::HMODULE;
use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress, LoadLibraryW};
use windows::core::{HSTRING, PCSTR};

mod dxgi;
mod pdh;
pub mod pipe;
mod process;
mod settings;

pub use dxgi::{dxgi_adapters, dxgi_nonlocal};
pub use process::commit_charge;
pub use settings::fill_windows_settings;

pub(super) fn observers(luid: Option<[u8; 8]>) -> Vec<Box<dyn Observer>> {
    vec![
        dxgi::DxgiObserver::open(luid),
        pdh::PdhObserver::open(luid),
        Box::new(process::ProcessObserver),
    ]
}

/// GPU memory of process `pid` by Task Manager's counters (PDH `process_*`, summed over adapters).
pub fn pdh_of_process(pid: u32) -> Box<dyn Observer> {
    pdh::PdhObserver::for_process(pid, None)
}

/// The adapters' GPU memory by Task Manager's counters (PDH `adapter_*`), machine-wide.
pub fn pdh_of_adapters() -> Box<dyn Observer> {
    pdh::PdhObserver::adapters(None)
}

/// DXGI's view of the first hardware adapter (what [`dxgi::DxgiObserver`] reads).
pub fn dxgi_of_first_adapter() -> Box<dyn Observer> {
    dxgi::DxgiObserver::open(None)
}

/// The machine's commit charge and limit (`commit_charge`, `commit_limit`).
pub fn commit_observer() -> Box<dyn Observer> {
    Box::new(process::CommitObserver)
}

/// `(pid, parent pid)` of every process alive now; `None` where the OS has no such list (it
/// does here).
pub fn process_parents() -> Option<Result<Vec<(u32, u32)>, String>> {
    Some(process::ffi_process_parents())
}

/// True when this Windows binary runs under Wine (ntdll exports `wine_get_version`).
pub fn running_under_wine() -> bool {
    ffi_has_export("ntdll.dll", "wine_get_version")
}

/// Whether `dll` (loaded if needed) exports `symbol`. Used before calling an import that Wine
/// may lack: calling a missing import aborts the process under Wine.
fn ffi_has_export(dll: &str, symbol: &str) -> bool {
    let wide = HSTRING::from(dll);
    // SAFETY: `wide` is a NUL-terminated UTF-16 string that outlives both calls; a module handle
    // from GetModuleHandleW/LoadLibraryW is not freed, so it stays valid for GetProcAddress.
    let module: Option<HMODULE> = unsafe {
        GetModuleHandleW(&wide)
            .or_else(|_| LoadLibraryW(&wide))
            .ok()
    };
    let Some(module) = module else {
        return false;
    };
    let mut name = symbol.as_bytes().to_vec();
    name.push(0);
    // SAFETY: `name` is NUL-terminated ASCII and lives across the call; `module` is valid (above).
    unsafe { GetProcAddress(module, PCSTR(name.as_ptr())) }.is_some()
}

/// `cuDeviceGetLuid` byte order: LowPart (u32 LE) then HighPart (i32 LE).
fn luid_bytes(low: u32, high: i32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&low.to_le_bytes());
    b[4..].copy_from_slice(&high.to_le_bytes());
    b
}

/// `(LowPart, HighPart)` of a `cuDeviceGetLuid` LUID.
fn luid_parts(b: [u8; 8]) -> (u32, i32) {
    (
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
    )
}

/// The LUID as it appears in PDH instance names: `luid_0x<High:08X>_0x<Low:08X>`.
fn luid_instance_tag(b: [u8; 8]) -> String {
    let (low, high) = luid_parts(b);
    format!("luid_0x{:08x}_0x{:08x}", high as u32, low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luid_round_trip_and_pdh_tag() {
        let b = luid_bytes(0x0000_d1b8, 0);
        assert_eq!(b, [0xb8, 0xd1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(luid_parts(b), (0xd1b8, 0));
        assert_eq!(luid_instance_tag(b), "luid_0x00000000_0x0000d1b8");
    }

    #[test]
    fn wine_detection_does_not_panic() {
        let wine = running_under_wine();
        println!("running under wine: {wine}");
        assert!(!ffi_has_export(
            "ntdll.dll",
            "surely_not_an_export_of_ntdll"
        ));
        assert!(ffi_has_export("kernel32.dll", "GetProcAddress"));
        assert!(!ffi_has_export("no-such-library-pinscope.dll", "x"));
    }
}
