//! The Windows settings that change a transfer's answer: hardware-accelerated GPU scheduling as
//! the adapter reports it (`D3DKMTQueryAdapterInfo`, WDDM 2.7 caps) with the `HwSchMode`
//! registry value beside it, the TDR values, the Windows build, the active power plan. The CUDA
//! sysmem fallback policy is a driver-profile setting no public API reveals: always `unknown`.

use crate::platform::{HagsCaps, HwSchMode, PowerPlan, Seconds, Setting, Settings, Source};
use windows::Wdk::Graphics::Direct3D::{
    D3DKMT_CLOSEADAPTER, D3DKMT_OPENADAPTERFROMLUID, D3DKMT_QUERYADAPTERINFO, D3DKMT_WDDM_2_7_CAPS,
    D3DKMTCloseAdapter, D3DKMTOpenAdapterFromLuid, D3DKMTQueryAdapterInfo,
    KMTQAITYPE_WDDM_2_7_CAPS,
};
use windows::Win32::Foundation::{HLOCAL, LUID, LocalFree, WIN32_ERROR};
use windows::Win32::System::Power::{PowerGetActiveScheme, PowerReadFriendlyName};
use windows::Win32::System::Registry::{
    HKEY, HKEY_LOCAL_MACHINE, REG_ROUTINE_FLAGS, RRF_RT_REG_DWORD, RRF_RT_REG_SZ, RegGetValueW,
};
use windows::core::{GUID, HSTRING};

/// A registry key: its root, its path below the root, and the name shown as the source.
#[derive(Debug, Clone, Copy)]
pub struct RegKey<'a> {
    root: HKEY,
    root_name: &'static str,
    path: &'a str,
}

impl<'a> RegKey<'a> {
    pub fn local_machine(path: &'a str) -> Self {
        RegKey {
            root: HKEY_LOCAL_MACHINE,
            root_name: "HKLM",
            path,
        }
    }
    /// A key below HKCU (tests write there, never below HKLM).
    #[cfg(test)]
    pub fn current_user(path: &'a str) -> Self {
        RegKey {
            root: windows::Win32::System::Registry::HKEY_CURRENT_USER,
            root_name: "HKCU",
            path,
        }
    }
    fn source(&self, value: &str) -> Source {
        Source::Registry(format!("{}\\{}\\{value}", self.root_name, self.path))
    }

    /// A REG_DWORD value, or why not (absent: "not set").
    pub fn dword(&self, value: &str) -> Setting<u32> {
        match ffi_reg_dword(self.root, self.path, value) {
            Ok(v) => Setting::known(v, self.source(value)),
            Err(e) => Setting::unavailable(format!("{}: {}", self.source(value), reg_error(e))),
        }
    }

    /// A REG_SZ value, or why not.
    pub fn string(&self, value: &str) -> Setting<String> {
        match ffi_reg_string(self.root, self.path, value) {
            Ok(v) => Setting::known(v, self.source(value)),
            Err(e) => Setting::unavailable(format!("{}: {}", self.source(value), reg_error(e))),
        }
    }
}

fn reg_error(e: WIN32_ERROR) -> String {
    // ERROR_FILE_NOT_FOUND: the key or the value does not exist.
    if e.0 == 2 {
        "not set".into()
    } else {
        format!("RegGetValueW failed with error {}", e.0)
    }
}

pub const GRAPHICS_DRIVERS: &str = r"SYSTEM\CurrentControlSet\Control\GraphicsDrivers";
pub const CURRENT_VERSION: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";

/// Fills the Windows fields; `luid` is the GPU's adapter LUID (`cuDeviceGetLuid`).
pub fn fill_windows_settings(s: &mut Settings, luid: Option<[u8; 8]>) {
    fill_from_keys(
        s,
        RegKey::local_machine(GRAPHICS_DRIVERS),
        RegKey::local_machine(CURRENT_VERSION),
    );
    s.hags = match luid {
        Some(l) => hags_of_adapter(l),
        None => Setting::unavailable("no adapter LUID (CUDA gives it for the opened GPU)"),
    };
    s.power_plan = power_plan();
    s.sysmem_fallback = Setting::unavailable(
        "unknown: a driver-profile setting (NVIDIA Control Panel, id 0x10ECECC9) that no public API reveals",
    );
}

/// The registry-backed fields, read below the given keys (tests use keys they wrote).
pub fn fill_from_keys(s: &mut Settings, graphics: RegKey<'_>, version: RegKey<'_>) {
    s.hw_sch_mode = map(graphics.dword("HwSchMode"), HwSchMode);
    s.tdr_delay = map(graphics.dword("TdrDelay"), Seconds);
    s.tdr_level = graphics.dword("TdrLevel");
    s.tdr_ddi_delay = map(graphics.dword("TdrDdiDelay"), Seconds);
    s.windows_build = match (version.string("CurrentBuild"), version.dword("UBR")) {
        (Setting::Known { value, source }, Setting::Known { value: ubr, .. }) => {
            Setting::known(format!("{value}.{ubr}"), source)
        }
        (Setting::Known { value, source }, Setting::Unavailable { .. }) => {
            Setting::known(value, source)
        }
        (Setting::Unavailable { unavailable }, _) => Setting::unavailable(unavailable),
    };
    s.windows_display_version = version.string("DisplayVersion");
}

fn map<T, U>(s: Setting<T>, f: impl FnOnce(T) -> U) -> Setting<U> {
    match s {
        Setting::Known { value, source } => Setting::known(f(value), source),
        Setting::Unavailable { unavailable } => Setting::unavailable(unavailable),
    }
}

/// Hardware-accelerated GPU scheduling as the adapter with this LUID reports it.
pub fn hags_of_adapter(luid: [u8; 8]) -> Setting<HagsCaps> {
    let source = Source::Win32("D3DKMTQueryAdapterInfo(KMTQAITYPE_WDDM_2_7_CAPS)".into());
    for call in ["D3DKMTOpenAdapterFromLuid", "D3DKMTQueryAdapterInfo"] {
        if !super::ffi_has_export("gdi32.dll", call) {
            return Setting::unavailable(format!("gdi32.dll has no {call} here"));
        }
    }
    let (low, high) = super::luid_parts(luid);
    match ffi_wddm_2_7_caps(LUID {
        LowPart: low,
        HighPart: high,
    }) {
        Ok(bits) => Setting::known(hags_caps(bits), source),
        Err(why) => Setting::unavailable(format!("{source}: {why}")),
    }
}

/// `D3DKMT_WDDM_2_7_CAPS` bits: 0 supported, 1 enabled, 2 enabled by default.
pub fn hags_caps(bits: u32) -> HagsCaps {
    HagsCaps {
        supported: bits & 1 != 0,
        enabled: bits & 2 != 0,
        enabled_by_default: bits & 4 != 0,
    }
}

/// The active power plan's GUID and friendly name.
fn power_plan() -> Setting<PowerPlan> {
    if !super::ffi_has_export("powrprof.dll", "PowerGetActiveScheme") {
        return Setting::unavailable("powrprof.dll has no PowerGetActiveScheme here");
    }
    let source = Source::Win32("PowerGetActiveScheme, PowerReadFriendlyName".into());
    match ffi_active_scheme() {
        Ok(guid) => {
            let name = ffi_friendly_name(&guid).unwrap_or_default();
            Setting::known(
                PowerPlan {
                    guid: format!("{guid:?}"),
                    name,
                },
                source,
            )
        }
        Err(e) => Setting::unavailable(format!("PowerGetActiveScheme failed with error {}", e.0)),
    }
}

/// `RegGetValueW` of `value` under `root\path`, refusing any type `flags` does not admit: into
/// `data` when given, else only the size; `size` is the bytes `data` holds, then the bytes the
/// value needs.
///
/// # Safety
/// `data`, when given, must point to `*size` writable bytes.
unsafe fn ffi_reg_get(
    root: HKEY,
    (path, value): (&HSTRING, &HSTRING),
    flags: REG_ROUTINE_FLAGS,
    data: Option<*mut std::ffi::c_void>,
    size: &mut u32,
) -> Result<(), WIN32_ERROR> {
    // SAFETY: `path` and `value` are NUL-terminated UTF-16 that outlive the call; `size` is a
    // writable u32; the caller gives `data` with `*size` writable bytes, or none.
    let r = unsafe { RegGetValueW(root, path, value, flags, None, data, Some(size)) };
    if r.is_ok() { Ok(()) } else { Err(r) }
}

fn ffi_reg_dword(root: HKEY, path: &str, value: &str) -> Result<u32, WIN32_ERROR> {
    let names = (&HSTRING::from(path), &HSTRING::from(value));
    let mut data = 0u32;
    let mut size = std::mem::size_of::<u32>() as u32;
    let out = Some((&mut data as *mut u32).cast());
    // SAFETY: `data` is a writable u32 and `size` says so; RRF_RT_REG_DWORD makes the call
    // refuse any other type.
    unsafe { ffi_reg_get(root, names, RRF_RT_REG_DWORD, out, &mut size) }?;
    Ok(data)
}

fn ffi_reg_string(root: HKEY, path: &str, value: &str) -> Result<String, WIN32_ERROR> {
    let names = (&HSTRING::from(path), &HSTRING::from(value));
    let mut size = 0u32;
    // SAFETY: without a buffer the call only writes the size in bytes.
    unsafe { ffi_reg_get(root, names, RRF_RT_REG_SZ, None, &mut size) }?;
    let mut buf = vec![0u16; (size as usize).div_ceil(2).max(1)];
    let mut bytes = (buf.len() * 2) as u32;
    // SAFETY: `buf` holds `bytes` writable bytes; the call writes at most that many and
    // NUL-terminates the string.
    unsafe {
        ffi_reg_get(
            root,
            names,
            RRF_RT_REG_SZ,
            Some(buf.as_mut_ptr().cast()),
            &mut bytes,
        )
    }?;
    let end = buf.iter().position(|c| *c == 0).unwrap_or(buf.len());
    Ok(String::from_utf16_lossy(&buf[..end]))
}

fn ffi_wddm_2_7_caps(luid: LUID) -> Result<u32, String> {
    let mut open = D3DKMT_OPENADAPTERFROMLUID {
        AdapterLuid: luid,
        hAdapter: 0,
    };
    // SAFETY: `open` is a valid, writable D3DKMT_OPENADAPTERFROMLUID; the export was checked.
    let status = unsafe { D3DKMTOpenAdapterFromLuid(&mut open) };
    if status.is_err() {
        return Err(format!(
            "D3DKMTOpenAdapterFromLuid returned {:#x}",
            status.0
        ));
    }
    let mut caps = D3DKMT_WDDM_2_7_CAPS::default();
    let mut query = D3DKMT_QUERYADAPTERINFO {
        hAdapter: open.hAdapter,
        Type: KMTQAITYPE_WDDM_2_7_CAPS,
        pPrivateDriverData: (&mut caps as *mut D3DKMT_WDDM_2_7_CAPS).cast(),
        PrivateDriverDataSize: std::mem::size_of::<D3DKMT_WDDM_2_7_CAPS>() as u32,
    };
    // SAFETY: `query` names the adapter opened above and points at `caps`, whose size it gives.
    let status = unsafe { D3DKMTQueryAdapterInfo(&mut query) };
    let close = D3DKMT_CLOSEADAPTER {
        hAdapter: open.hAdapter,
    };
    // SAFETY: closes the handle opened above, once.
    let _ = unsafe { D3DKMTCloseAdapter(&close) };
    if status.is_err() {
        return Err(format!("it returned {:#x}", status.0));
    }
    // SAFETY: both union members are a u32 view of the same 4 bytes.
    Ok(unsafe { caps.Anonymous.Value })
}

fn ffi_active_scheme() -> Result<GUID, WIN32_ERROR> {
    let mut guid: *mut GUID = std::ptr::null_mut();
    // SAFETY: `guid` is a valid out-pointer; on success it points at a GUID the caller frees
    // with LocalFree (done below, after copying it).
    let r = unsafe { PowerGetActiveScheme(None, &mut guid) };
    if r.is_err() || guid.is_null() {
        return Err(r);
    }
    // SAFETY: non-null and written by PowerGetActiveScheme.
    let value = unsafe { *guid };
    // SAFETY: frees the GUID PowerGetActiveScheme allocated, once.
    let _ = unsafe { LocalFree(Some(HLOCAL(guid.cast()))) };
    Ok(value)
}

fn ffi_friendly_name(guid: &GUID) -> Option<String> {
    let mut size = 0u32;
    // SAFETY: without a buffer the call writes only the size in bytes.
    let r = unsafe { PowerReadFriendlyName(None, Some(guid), None, None, None, &mut size) };
    if r.is_err() || size == 0 {
        return None;
    }
    let mut buf = vec![0u16; (size as usize).div_ceil(2)];
    let mut bytes = (buf.len() * 2) as u32;
    // SAFETY: `buf` holds `bytes` writable bytes.
    let r = unsafe {
        PowerReadFriendlyName(
            None,
            Some(guid),
            None,
            None,
            Some(buf.as_mut_ptr().cast()),
            &mut bytes,
        )
    };
    if r.is_err() {
        return None;
    }
    let end = buf.iter().position(|c| *c == 0).unwrap_or(buf.len());
    Some(String::from_utf16_lossy(&buf[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `reg.exe` (Wine's builtin under Wine) with these arguments; panics on failure.
    fn reg(args: &[&str]) {
        let out = std::process::Command::new("reg")
            .args(args)
            .output()
            .expect("reg.exe runs");
        assert!(out.status.success(), "reg {args:?}: {out:?}");
    }

    #[test]
    fn registry_values_the_test_writes_are_read_with_their_source() {
        let base = format!(r"Software\pinscope-test-{}", std::process::id());
        let graphics = format!(r"{base}\GraphicsDrivers");
        let version = format!(r"{base}\CurrentVersion");
        let hkcu = |k: &str| format!(r"HKCU\{k}");
        for (value, data) in [("HwSchMode", "2"), ("TdrDelay", "8"), ("TdrLevel", "0")] {
            reg(&[
                "add",
                &hkcu(&graphics),
                "/v",
                value,
                "/t",
                "REG_DWORD",
                "/d",
                data,
                "/f",
            ]);
        }
        reg(&[
            "add",
            &hkcu(&version),
            "/v",
            "CurrentBuild",
            "/t",
            "REG_SZ",
            "/d",
            "26100",
            "/f",
        ]);
        reg(&[
            "add",
            &hkcu(&version),
            "/v",
            "UBR",
            "/t",
            "REG_DWORD",
            "/d",
            "4349",
            "/f",
        ]);
        reg(&[
            "add",
            &hkcu(&version),
            "/v",
            "DisplayVersion",
            "/t",
            "REG_SZ",
            "/d",
            "24H2",
            "/f",
        ]);

        let mut s = Settings::default();
        fill_from_keys(
            &mut s,
            RegKey::current_user(&graphics),
            RegKey::current_user(&version),
        );
        reg(&["delete", &hkcu(&base), "/f"]);

        assert_eq!(s.hw_sch_mode.value(), Some(&HwSchMode(2)));
        assert_eq!(
            s.hw_sch_mode.source_text(),
            format!(r"registry HKCU\{graphics}\HwSchMode")
        );
        assert_eq!(s.tdr_delay.value(), Some(&Seconds(8)));
        assert_eq!(s.tdr_level.value(), Some(&0));
        let why = s.tdr_ddi_delay.unavailable_reason().unwrap_or_default();
        assert!(why.contains("not set"), "{:?}", s.tdr_ddi_delay);
        assert_eq!(
            s.windows_build.value().map(String::as_str),
            Some("26100.4349")
        );
        assert_eq!(
            s.windows_display_version.value().map(String::as_str),
            Some("24H2")
        );
    }

    #[test]
    fn a_dword_written_as_text_is_refused_not_misread() {
        let key = format!(r"Software\pinscope-test-{}-types", std::process::id());
        reg(&[
            "add",
            &format!(r"HKCU\{key}"),
            "/v",
            "TdrDelay",
            "/t",
            "REG_SZ",
            "/d",
            "8",
            "/f",
        ]);
        let got = RegKey::current_user(&key).dword("TdrDelay");
        reg(&["delete", &format!(r"HKCU\{key}"), "/f"]);
        let why = got.unavailable_reason().unwrap_or_default();
        assert!(why.contains("RegGetValueW failed"), "{got:?}");
    }

    #[test]
    fn hags_caps_bits() {
        let c = hags_caps(0b011);
        assert!(c.supported && c.enabled && !c.enabled_by_default);
        assert_eq!(
            hags_caps(0),
            HagsCaps {
                supported: false,
                enabled: false,
                enabled_by_default: false
            }
        );
    }

    #[test]
    fn the_real_machine_fields_are_read_or_say_why() {
        let mut s = Settings::default();
        let luid = super::super::dxgi_adapters()
            .ok()
            .and_then(|a| a.first().map(|a| a.luid));
        fill_windows_settings(&mut s, luid);
        for row in s.rows() {
            println!("{}: {}  [{}]", row.label, row.value, row.source);
        }
        // Every Windows field is either read (with a source) or says why not.
        for text in [
            s.hags.value_text(),
            s.hw_sch_mode.value_text(),
            s.tdr_delay.value_text(),
            s.windows_build.value_text(),
            s.power_plan.value_text(),
        ] {
            assert!(!text.is_empty() && !text.contains("not recorded"), "{text}");
        }
        assert!(
            s.sysmem_fallback
                .value_text()
                .starts_with("unavailable: unknown")
        );
    }
}
