//! `process`: this process's memory counters (`GetProcessMemoryInfo`,
//! `PROCESS_MEMORY_COUNTERS_EX`): working set (Task Manager's "memory") and private usage (commit).
//! Wine leaves `PrivateUsage` at 0; real Windows fills it. Also the machine's commit charge and
//! limit (`GetPerformanceInfo`) and every process's parent (a Toolhelp snapshot), which
//! `observe` reads.

use super::super::{Observer, Reading};
use crate::accounting::ObserverId;
use crate::platform::{Bytes, Setting, Source};
use windows::Win32::Foundation::{CloseHandle, HANDLE};
use windows::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
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
fn commit_bytes(p: &PERFORMANCE_INFORMATION) -> (Bytes, Bytes) {
    let bytes = |pages: usize| Bytes((pages as u64).saturating_mul(p.PageSize as u64));
    (bytes(p.CommitLimit), bytes(p.CommitTotal))
}

/// The system commit limit and commit charge.
pub fn commit_charge() -> (Setting<Bytes>, Setting<Bytes>) {
    match ffi_performance_info() {
        Ok(p) => {
            let (limit, total) = commit_bytes(&p);
            let source =
                |field: &str| Source::Win32(format!("GetPerformanceInfo {field} × PageSize"));
            (
                Setting::known(limit, source("CommitLimit")),
                Setting::known(total, source("CommitTotal")),
            )
        }
        Err(why) => (Setting::unavailable(why.clone()), Setting::unavailable(why)),
    }
}

/// The machine's commit charge and commit limit at each read (`commit_charge`,
/// `commit_limit`), what Task Manager shows as "Committed".
pub struct CommitObserver;

impl Observer for CommitObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Process
    }

    fn unavailable(&self) -> Option<String> {
        (!super::ffi_has_export("psapi.dll", "GetPerformanceInfo"))
            .then(|| "psapi.dll has no GetPerformanceInfo here".into())
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let (limit, total) = commit_bytes(&ffi_performance_info()?);
        Ok(vec![
            Reading::bytes("commit_charge", total.0),
            Reading::bytes("commit_limit", limit.0),
        ])
    }
}

/// A Toolhelp snapshot handle, closed on drop.
struct Snapshot(HANDLE);

impl Drop for Snapshot {
    fn drop(&mut self) {
        ffi_close_snapshot(self.0);
    }
}

fn ffi_close_snapshot(h: HANDLE) {
    // SAFETY: the handle came from CreateToolhelp32Snapshot and is closed exactly once (by the
    // `Snapshot` owning it). The status is ignored: nothing to do about it.
    let _ = unsafe { CloseHandle(h) };
}

/// `(pid, parent pid)` of every process alive now. A parent id may name a process that has
/// exited, or a later one given the same id: Windows does not re-parent orphans.
pub fn ffi_process_parents() -> Result<Vec<(u32, u32)>, String> {
    // SAFETY: no preconditions; a valid handle is returned or the call fails.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) }
        .map(Snapshot)
        .map_err(|e| format!("CreateToolhelp32Snapshot: {e}"))?;
    let mut entry = PROCESSENTRY32W {
        dwSize: size_of::<PROCESSENTRY32W>() as u32,
        ..Default::default()
    };
    let mut out = Vec::new();
    // SAFETY: `snap.0` is an open process snapshot; `entry` is writable with `dwSize` set.
    let mut more = unsafe { Process32FirstW(snap.0, &raw mut entry) }.is_ok();
    while more {
        out.push((entry.th32ProcessID, entry.th32ParentProcessID));
        // SAFETY: as above; the snapshot stays open until `snap` drops after the loop.
        more = unsafe { Process32NextW(snap.0, &raw mut entry) }.is_ok();
    }
    Ok(out)
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

    #[test]
    fn commit_charge_is_below_its_limit_and_parents_include_ours() {
        let mut o = CommitObserver;
        assert!(o.unavailable().is_none());
        let r = o.read().expect("GetPerformanceInfo");
        let get = |m: &str| r.iter().find(|r| r.metric == m).map_or(0.0, |r| r.value);
        println!("commit readings: {r:?}");
        assert!(get("commit_charge") > 0.0, "{r:?}");
        assert!(get("commit_limit") >= get("commit_charge"), "{r:?}");
        let parents = ffi_process_parents().expect("Toolhelp snapshot");
        assert!(parents.iter().any(|(pid, _)| *pid == std::process::id()));
    }
}
