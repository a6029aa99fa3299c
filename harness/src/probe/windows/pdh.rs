//! `pdh`: Task Manager's own numbers, from the performance counters (English names, so it works
//! on any display language): `\GPU Process Memory(pid_<pid>_*)\Dedicated Usage`,
//! `Shared Usage`, `Total Committed`, and `\GPU Adapter Memory(*)\Dedicated Usage` /
//! `Shared Usage`. Instances (`pid_<pid>_luid_0x…_0x…_phys_0`) are summed, restricted to the
//! CUDA device's LUID when one is known. The process counters are read for pinscope itself
//! ([`PdhObserver::open`]) or for another process ([`PdhObserver::for_process`], what `observe`
//! reads for each process of the observed tree); the adapter counters alone are
//! [`PdhObserver::adapters`].
//!
//! Wine has no GPU counters (`PdhAddEnglishCounterW` fails) and may lack
//! `PdhGetFormattedCounterArrayW`; calling a missing import aborts the process there. So every
//! PDH export is looked up before it is first called, any counter that cannot be added makes the
//! observer unavailable (naming the counter, with the PDH status in hex), and the array call is
//! only ever made on a query whose counters were all added.

use super::super::{Observer, Reading};
use super::{ffi_has_export, luid_instance_tag};
use crate::accounting::ObserverId;
use windows::Win32::System::Performance::{
    PDH_FMT_COUNTERVALUE_ITEM_W, PDH_FMT_LARGE, PDH_HCOUNTER, PDH_HQUERY, PDH_MORE_DATA,
    PdhAddEnglishCounterW, PdhCloseQuery, PdhCollectQueryData, PdhGetFormattedCounterArrayW,
    PdhOpenQueryW,
};
use windows::core::{HSTRING, PCWSTR};

/// The exports called to open a query and add its counters.
const OPEN_EXPORTS: &[&str] = &["PdhOpenQueryW", "PdhAddEnglishCounterW", "PdhCloseQuery"];
/// The exports called to read a query whose counters were all added.
const READ_EXPORTS: &[&str] = &["PdhCollectQueryData", "PdhGetFormattedCounterArrayW"];

/// Whose memory a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Of {
    /// One process (`{pid}` in the path).
    Process,
    /// Every process on the adapters: machine-wide.
    Adapter,
}

/// `(metric, counter path, whose)`; `{pid}` is replaced by the process's id.
const COUNTERS: &[(&str, &str, Of)] = &[
    (
        "process_dedicated",
        r"\GPU Process Memory(pid_{pid}_*)\Dedicated Usage",
        Of::Process,
    ),
    (
        "process_shared",
        r"\GPU Process Memory(pid_{pid}_*)\Shared Usage",
        Of::Process,
    ),
    (
        "process_total_committed",
        r"\GPU Process Memory(pid_{pid}_*)\Total Committed",
        Of::Process,
    ),
    (
        "adapter_dedicated",
        r"\GPU Adapter Memory(*)\Dedicated Usage",
        Of::Adapter,
    ),
    (
        "adapter_shared",
        r"\GPU Adapter Memory(*)\Shared Usage",
        Of::Adapter,
    ),
];

/// A PDH status code with its name where pinscope knows it.
fn status_text(code: u32) -> String {
    let name = match code {
        0xC000_0BB8 => " (PDH_CSTATUS_NO_OBJECT: no such counter object)",
        0xC000_0BB9 => " (PDH_CSTATUS_NO_COUNTER)",
        0xC000_0BC0 => " (PDH_CSTATUS_BAD_COUNTERNAME)",
        0xC000_0BD3 => " (PDH_NOT_IMPLEMENTED)",
        0x8000_07D5 => " (PDH_NO_DATA)",
        0x8000_07D2 => " (PDH_MORE_DATA)",
        _ => "",
    };
    format!("0x{code:08X}{name}")
}

/// An open PDH query with the [`COUNTERS`] asked for added.
struct Query {
    query: PDH_HQUERY,
    counters: Vec<(&'static str, PDH_HCOUNTER)>,
}

// SAFETY: PDH query and counter handles are process-wide and PDH serializes access to them
// internally; the handles are only used through `&mut self`, so never from two threads at once.
unsafe impl Send for Query {}

impl Drop for Query {
    fn drop(&mut self) {
        ffi_close(self.query);
    }
}

fn ffi_close(query: PDH_HQUERY) {
    // SAFETY: `query` was opened by PdhOpenQueryW and is closed exactly once (Drop, or the error
    // path of `ffi_open` before a `Query` owns it). The status is ignored: nothing to do about it.
    let _ = unsafe { PdhCloseQuery(query) };
}

/// A query of the [`COUNTERS`] of `whose`, for process `pid`.
fn ffi_open(pid: u32, whose: &[Of]) -> Result<Query, String> {
    if let Some(missing) = OPEN_EXPORTS.iter().find(|e| !ffi_has_export("pdh.dll", e)) {
        return Err(format!("pdh.dll lacks {missing} (Wine?)"));
    }
    let mut query = PDH_HQUERY::default();
    // SAFETY: a null data source means real-time data; `query` is a writable handle slot; the
    // export exists (checked above).
    let st = unsafe { PdhOpenQueryW(PCWSTR::null(), 0, &mut query) };
    if st != 0 {
        return Err(format!("PdhOpenQueryW failed: {}", status_text(st)));
    }
    let mut q = Query {
        query,
        counters: Vec::new(),
    };
    for (metric, path, _) in COUNTERS.iter().filter(|c| whose.contains(&c.2)) {
        let path = path.replace("{pid}", &pid.to_string());
        let wide = HSTRING::from(path.as_str());
        let mut counter = PDH_HCOUNTER::default();
        // SAFETY: `q.query` is open; `wide` is a NUL-terminated UTF-16 path that outlives the
        // call; `counter` is a writable handle slot.
        let st = unsafe { PdhAddEnglishCounterW(q.query, &wide, 0, &mut counter) };
        if st != 0 {
            return Err(format!(
                "PdhAddEnglishCounterW({path}) failed: {} — no GPU performance counters here",
                status_text(st)
            ));
        }
        q.counters.push((metric, counter));
    }
    if let Some(missing) = READ_EXPORTS.iter().find(|e| !ffi_has_export("pdh.dll", e)) {
        return Err(format!("pdh.dll lacks {missing} (Wine?)"));
    }
    Ok(q)
}

/// `(instance name, value)` of every instance of a wildcard counter. Only called on a [`Query`]
/// (every export present, every counter added).
fn ffi_counter_array(counter: PDH_HCOUNTER) -> Result<Vec<(String, i64)>, String> {
    let item = size_of::<PDH_FMT_COUNTERVALUE_ITEM_W>();
    for _ in 0..4 {
        let (mut bytes, mut count) = (0u32, 0u32);
        // SAFETY: sizing call: a zero buffer size with no buffer asks PDH for the size needed.
        let st = unsafe {
            PdhGetFormattedCounterArrayW(counter, PDH_FMT_LARGE, &mut bytes, &mut count, None)
        };
        if st == 0 {
            return Ok(Vec::new()); // no instances (this process has no GPU allocations yet)
        }
        if st != PDH_MORE_DATA {
            return Err(format!("PdhGetFormattedCounterArrayW: {}", status_text(st)));
        }
        // The buffer holds the items followed by their names; allocate it as items so it is
        // aligned for them.
        let mut buf = vec![PDH_FMT_COUNTERVALUE_ITEM_W::default(); (bytes as usize).div_ceil(item)];
        let mut bytes = (buf.len() * item) as u32;
        // SAFETY: `buf` is writable for `bytes` bytes and aligned for the items; PDH writes at
        // most `bytes` bytes and sets `count`.
        let st = unsafe {
            PdhGetFormattedCounterArrayW(
                counter,
                PDH_FMT_LARGE,
                &mut bytes,
                &mut count,
                Some(buf.as_mut_ptr()),
            )
        };
        if st == PDH_MORE_DATA {
            continue; // instances appeared between the calls: size again
        }
        if st != 0 {
            return Err(format!("PdhGetFormattedCounterArrayW: {}", status_text(st)));
        }
        let n = (count as usize).min(buf.len());
        let mut out = Vec::with_capacity(n);
        for it in &buf[..n] {
            // SAFETY: PDH set `szName` to a NUL-terminated string inside `buf` (alive here), and
            // for PDH_FMT_LARGE the `largeValue` member of the union is the one written.
            let (name, value) = unsafe {
                (
                    it.szName.to_string().unwrap_or_default(),
                    it.FmtValue.Anonymous.largeValue,
                )
            };
            if it.FmtValue.CStatus == 0 {
                out.push((name, value));
            }
        }
        return Ok(out);
    }
    Err("PdhGetFormattedCounterArrayW: instances kept changing".into())
}

pub struct PdhObserver {
    query: Query,
    luid_tag: Option<String>,
}

impl PdhObserver {
    /// This process's GPU memory counters and the adapters' (of the adapter with `luid`, or
    /// summed over all); unavailable, with the reason, when the query cannot be opened.
    pub fn open(luid: Option<[u8; 8]>) -> Box<dyn Observer> {
        Self::of(std::process::id(), &[Of::Process, Of::Adapter], luid)
    }

    /// Process `pid`'s GPU memory counters alone (`process_*`).
    pub fn for_process(pid: u32, luid: Option<[u8; 8]>) -> Box<dyn Observer> {
        Self::of(pid, &[Of::Process], luid)
    }

    /// The adapters' GPU memory counters alone (`adapter_*`), machine-wide.
    pub fn adapters(luid: Option<[u8; 8]>) -> Box<dyn Observer> {
        Self::of(std::process::id(), &[Of::Adapter], luid)
    }

    fn of(pid: u32, whose: &[Of], luid: Option<[u8; 8]>) -> Box<dyn Observer> {
        let luid_tag = luid.map(luid_instance_tag);
        super::super::opened(ObserverId::Pdh, ffi_open(pid, whose), |query| PdhObserver {
            query,
            luid_tag,
        })
    }
}

impl Observer for PdhObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Pdh
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let q = &self.query;
        // SAFETY: `q.query` is an open query with counters added (a `Query` exists only then).
        let st = unsafe { PdhCollectQueryData(q.query) };
        if st != 0 {
            return Err(format!("PdhCollectQueryData: {}", status_text(st)));
        }
        let mut out = Vec::with_capacity(q.counters.len());
        for (metric, counter) in &q.counters {
            let items = ffi_counter_array(*counter)?;
            let sum: i64 = items
                .iter()
                .filter(|(name, _)| {
                    self.luid_tag
                        .as_ref()
                        .is_none_or(|t| name.to_ascii_lowercase().contains(t))
                })
                .map(|(_, v)| *v)
                .sum();
            out.push(Reading::bytes(metric, u64::try_from(sum).unwrap_or(0)));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_or_says_why_never_panics() {
        let mut o = PdhObserver::open(None);
        match o.unavailable() {
            Some(why) => {
                println!("pdh unavailable: {why}");
                assert!(!why.is_empty());
                assert!(o.read().is_err());
            }
            None => {
                // Real Windows with GPU counters.
                let r = o.read();
                println!("pdh readings: {r:?}");
            }
        }
        if super::super::running_under_wine() {
            assert!(o.unavailable().is_some(), "Wine has no GPU counters");
        }
    }

    #[test]
    fn another_process_is_unavailable_under_wine_naming_the_counter() {
        let mut child = std::process::Command::new("cmd")
            .args(["/c", "ping", "-n", "2", "127.0.0.1"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("cmd starts");
        let o = PdhObserver::for_process(child.id(), None);
        let adapters = PdhObserver::adapters(None);
        let _ = child.wait();
        if super::super::running_under_wine() {
            let why = o.unavailable().expect("Wine has no GPU counters");
            println!("pdh of process {}: {why}", child.id());
            assert!(
                why.contains(&format!(r"\GPU Process Memory(pid_{}_*)", child.id())),
                "{why}"
            );
            let why = adapters.unavailable().expect("Wine has no GPU counters");
            assert!(why.contains(r"\GPU Adapter Memory(*)"), "{why}");
        }
    }

    #[test]
    fn status_codes_in_hex() {
        assert_eq!(
            status_text(0xC000_0BB8),
            "0xC0000BB8 (PDH_CSTATUS_NO_OBJECT: no such counter object)"
        );
        assert_eq!(status_text(0x1234), "0x00001234");
    }
}
