//! `process`: this process's memory counters (`GetProcessMemoryInfo`,
//! `PROCESS_MEMORY_COUNTERS_EX`): working set (Task Manager's "memory") and private usage (commit).
//! Wine leaves `PrivateUsage` at 0; real Windows fills it.

use super::super::{Observer, Reading};
use crate::accounting::ObserverId;
use crate::platform::{Bytes, Setting, Source};
use windows::Win32::System::ProcessStatus::{
    GetPerformanceInfo, GetProcessMemoryInfo, PERFORMANCE_INFORMATION, PROCESS_MEMORY_COUNTERS,
    PROCESS_MEMORY_COUNTERS_EX,
};
use windows::Win32::System::Threading::GetCurrentProcess;

pub struct ProcessObserver;

fn ffi_memory_counters() -> Result<PROCESS_MEMORY_COUNTERS_EX, String> {
    let mut c = PROCESS_MEMORY_COUNTERS_EX {
        cb: size_of::<PROCESS_MEMORY_COUNTERS_EX>() as u32,
        ..Default::default()
    };
    // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing; `c` is a writable
    // PROCESS_MEMORY_COUNTERS_EX whose size is passed as `cb`, which the API accepts in place of
    // the smaller PROCESS_MEMORY_COUNTERS it is declared with.
    unsafe {
        GetProcessMemoryInfo(
            GetCurrentProcess(),
            (&raw mut c).cast::<PROCESS_MEMORY_COUNTERS>(),
            c.cb,
        )
    }
    .map_err(|e| format!("GetProcessMemoryInfo: {e}"))?;
    Ok(c)
}

fn ffi_performance_info() -> Result<PERFORMANCE_INFORMATION, String> {
    if !super::ffi_has_export("psapi.dll", "GetPerformanceInfo") {
        return Err("psapi.dll has no GetPerformanceInfo here".into());
    }
    let mut p = PERFORMANCE_INFORMATION {
        cb: size_of::<PERFORMANCE_INFORMATION>() as u32,
        ..Default::default()
    };
    // SAFETY: `p` is a writable PERFORMANCE_INFORMATION whose size is passed as `cb`; the export
    // exists (checked above), so the call cannot abort the process under Wine.
    unsafe { GetPerformanceInfo(&raw mut p, p.cb) }
        .map_err(|e| format!("GetPerformanceInfo: {e}"))?;
    Ok(p)
}

/// The system commit limit and commit charge, in bytes (`GetPerformanceInfo` counts pages).
pub fn commit_charge() -> (Setting<Bytes>, Setting<Bytes>) {
    match ffi_performance_info() {
        Ok(p) => {
            let bytes = |pages: usize| Bytes((pages as u64).saturating_mul(p.PageSize as u64));
            let source =
                |field: &str| Source::Win32(format!("GetPerformanceInfo {field} × PageSize"));
            (
                Setting::known(bytes(p.CommitLimit), source("CommitLimit")),
                Setting::known(bytes(p.CommitTotal), source("CommitTotal")),
            )
        }
        Err(why) => (Setting::unavailable(why.clone()), Setting::unavailable(why)),
    }
}

impl Observer for ProcessObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Process
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let c = ffi_memory_counters()?;
        Ok(vec![
            Reading::bytes("working_set", c.WorkingSetSize as u64),
            Reading::bytes("peak_working_set", c.PeakWorkingSetSize as u64),
            Reading::bytes("private_usage", c.PrivateUsage as u64),
            Reading::bytes("pagefile_usage", c.PagefileUsage as u64),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_set_is_positive() {
        let mut o = ProcessObserver;
        assert!(o.unavailable().is_none());
        let r = o.read().expect("GetProcessMemoryInfo on ourselves");
        let ws = r
            .iter()
            .find(|r| r.metric == "working_set")
            .map_or(0.0, |r| r.value);
        println!("process readings: {r:?}");
        assert!(ws > 0.0, "{r:?}");
    }
}
