//! Stand-ins for the Windows-only observers on other operating systems: present in the set (so
//! the sidecar says why they did not run) and always unavailable.

use super::{DxgiAdapter, Observer, Unsupported};
use crate::accounting::ObserverId;
use crate::platform::{Bytes, Setting, Settings};

/// No DXGI here.
pub fn dxgi_adapters() -> Result<Vec<DxgiAdapter>, String> {
    Err("DXGI exists only on Windows".into())
}

/// Only Windows builds can run under Wine.
pub fn running_under_wine() -> bool {
    false
}

/// Why a Windows-only observer is unavailable here.
const WINDOWS_ONLY: &str = "Windows only (this is not a Windows build)";

pub(super) fn observers(_luid: Option<[u8; 8]>) -> Vec<Box<dyn Observer>> {
    let why = WINDOWS_ONLY;
    vec![
        Box::new(Unsupported::new(ObserverId::Dxgi, why)),
        Box::new(Unsupported::new(ObserverId::Pdh, why)),
        Box::new(Unsupported::new(ObserverId::Process, why)),
    ]
}

/// The Windows settings (HAGS, TDR, build, power plan, sysmem fallback) exist only on Windows.
pub fn fill_windows_settings(s: &mut Settings, _luid: Option<[u8; 8]>) {
    crate::platform::set_unavailable!(s, "Windows only (this is not a Windows build)"; hags, hw_sch_mode, tdr_delay, tdr_level,
        tdr_ddi_delay, windows_build, windows_display_version, power_plan, sysmem_fallback);
}

/// The DXGI NON_LOCAL budget and usage exist only on Windows.
pub fn dxgi_nonlocal(_luid: Option<[u8; 8]>) -> (Setting<Bytes>, Setting<Bytes>) {
    let why = "Windows only (DXGI)";
    (Setting::unavailable(why), Setting::unavailable(why))
}

/// The commit limit and charge of `GetPerformanceInfo` exist only on Windows.
pub fn commit_charge() -> (Setting<Bytes>, Setting<Bytes>) {
    let why = "Windows only (GetPerformanceInfo)";
    (Setting::unavailable(why), Setting::unavailable(why))
}

/// PDH exists only on Windows.
pub fn pdh_of_process(_pid: u32) -> Box<dyn Observer> {
    Box::new(Unsupported::new(ObserverId::Pdh, WINDOWS_ONLY))
}

/// PDH exists only on Windows.
pub fn pdh_of_adapters() -> Box<dyn Observer> {
    Box::new(Unsupported::new(ObserverId::Pdh, WINDOWS_ONLY))
}

/// DXGI exists only on Windows.
pub fn dxgi_of_first_adapter() -> Box<dyn Observer> {
    Box::new(Unsupported::new(ObserverId::Dxgi, WINDOWS_ONLY))
}

/// The commit charge of `GetPerformanceInfo` exists only on Windows.
pub fn commit_observer() -> Box<dyn Observer> {
    Box::new(Unsupported::new(ObserverId::Process, WINDOWS_ONLY))
}

/// The process list of a Toolhelp snapshot exists only on Windows (Linux has `/proc`).
pub fn process_parents() -> Option<Result<Vec<(u32, u32)>, String>> {
    None
}
