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

pub(super) fn observers(_luid: Option<[u8; 8]>) -> Vec<Box<dyn Observer>> {
    let why = "Windows only (this is not a Windows build)";
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
