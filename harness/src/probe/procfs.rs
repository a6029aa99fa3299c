//! `procfs`: this process's and the system's memory from `/proc` (Linux and WSL2; the format is
//! the same on both). Compiled everywhere, unavailable where there is no `/proc`.
//!
//! CUDA pinning shows in `VmRSS`, `MemAvailable` and (except write-combined) `Committed_AS`, not
//! in `VmLck`, `Mlocked` or `Unevictable`; all are read so a report can show that.

use super::{Observer, Reading};
use crate::accounting::ObserverId;
use std::path::PathBuf;

/// `/proc/self/status` fields read, with their metric names.
const STATUS_FIELDS: &[(&str, &str)] = &[
    ("VmRSS", "vm_rss"),
    ("VmHWM", "vm_hwm"),
    ("VmLck", "vm_lck"),
    ("VmPin", "vm_pin"),
];

/// `/proc/<pid>/status` fields read for another process (`observe`), with their metric names:
/// pinned host memory of a CUDA program shows in `RssShmem`, not `RssAnon`.
const PROCESS_FIELDS: &[(&str, &str)] = &[
    ("VmRSS", "vm_rss"),
    ("RssShmem", "rss_shmem"),
    ("VmLck", "vm_lck"),
    ("VmPin", "vm_pin"),
];

/// `/proc/meminfo` fields read, with their metric names.
const MEMINFO_FIELDS: &[(&str, &str)] = &[
    ("MemTotal", "mem_total"),
    ("MemAvailable", "mem_available"),
    ("Committed_AS", "committed_as"),
    ("Mlocked", "mlocked"),
    ("Unevictable", "unevictable"),
    ("AnonPages", "anon_pages"),
    ("AnonHugePages", "anon_huge_pages"),
];

/// The wanted `Key:   value kB` lines of a /proc file, in bytes. A field that is missing or does
/// not parse is left out.
fn parse_kb_fields(text: &str, fields: &[(&str, &str)]) -> Vec<Reading> {
    fields
        .iter()
        .filter_map(|(key, metric)| {
            let rest = text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k == *key).then_some(v)
            })?;
            let mut parts = rest.split_whitespace();
            let n: u64 = parts.next()?.parse().ok()?;
            let mult = match parts.next() {
                Some("kB") => 1024,
                None => 1,
                Some(_) => return None,
            };
            Some(Reading::bytes(metric, n.checked_mul(mult)?))
        })
        .collect()
}

/// `vm_rss`, `vm_hwm`, `vm_lck`, `vm_pin` (bytes) from the text of `/proc/<pid>/status`.
pub fn parse_status(text: &str) -> Vec<Reading> {
    parse_kb_fields(text, STATUS_FIELDS)
}

/// `vm_rss`, `rss_shmem`, `vm_lck`, `vm_pin` (bytes) from the text of `/proc/<pid>/status`.
pub fn parse_process_status(text: &str) -> Vec<Reading> {
    parse_kb_fields(text, PROCESS_FIELDS)
}

/// `mem_total`, `mem_available`, `committed_as`, `mlocked`, `unevictable`, `anon_pages`,
/// `anon_huge_pages` (bytes)
/// from the text of `/proc/meminfo`.
pub fn parse_meminfo(text: &str) -> Vec<Reading> {
    parse_kb_fields(text, MEMINFO_FIELDS)
}

pub struct ProcfsObserver {
    root: PathBuf,
}

impl Default for ProcfsObserver {
    fn default() -> Self {
        ProcfsObserver::new()
    }
}

impl ProcfsObserver {
    /// Reads the real `/proc`.
    pub fn new() -> ProcfsObserver {
        ProcfsObserver::with_root("/")
    }

    /// Reads `<root>/proc/self/status` and `<root>/proc/meminfo` (tests use fixture trees).
    pub fn with_root(root: impl Into<PathBuf>) -> ProcfsObserver {
        ProcfsObserver { root: root.into() }
    }

    fn status_path(&self) -> PathBuf {
        self.root.join("proc/self/status")
    }

    fn meminfo_path(&self) -> PathBuf {
        self.root.join("proc/meminfo")
    }
}

impl Observer for ProcfsObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Procfs
    }

    fn unavailable(&self) -> Option<String> {
        if cfg!(windows) {
            return Some("no /proc on Windows".into());
        }
        let missing: Vec<String> = [self.status_path(), self.meminfo_path()]
            .into_iter()
            .filter(|p| !p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        (!missing.is_empty()).then(|| format!("{} not found (not Linux)", missing.join(", ")))
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let read = |p: PathBuf| {
            std::fs::read_to_string(&p).map_err(|e| format!("reading {}: {e}", p.display()))
        };
        let mut out = parse_status(&read(self.status_path())?);
        out.extend(parse_meminfo(&read(self.meminfo_path())?));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn get(r: &[Reading], m: &str) -> Option<f64> {
        r.iter().find(|r| r.metric == m).map(|r| r.value)
    }

    #[test]
    fn missing_and_malformed_fields_are_absent() {
        let r = parse_status("Name:\tx\nVmRSS:\t  12 kB\nVmLck: lots kB\nVmPin: 3 MB\n");
        assert_eq!(get(&r, "vm_rss"), Some(12.0 * 1024.0));
        assert_eq!(get(&r, "vm_lck"), None);
        assert_eq!(get(&r, "vm_pin"), None, "unknown unit");
        assert_eq!(get(&r, "vm_hwm"), None);
        assert!(parse_meminfo("").is_empty());
        assert!(parse_meminfo("MemTotal:\n:::\n\u{0}").is_empty());
    }

    #[test]
    fn process_status_reads_shared_rss() {
        let r = parse_process_status("VmRSS:\t 2048 kB\nRssShmem:\t1024 kB\nVmLck:\t0 kB\n");
        assert_eq!(get(&r, "vm_rss"), Some(2048.0 * 1024.0));
        assert_eq!(get(&r, "rss_shmem"), Some(1024.0 * 1024.0));
        assert_eq!(get(&r, "vm_lck"), Some(0.0));
        assert_eq!(get(&r, "vm_pin"), None, "absent line");
    }

    #[test]
    fn unavailable_without_proc() {
        let o = ProcfsObserver::with_root("/definitely/not/a/root");
        let why = o.unavailable().expect("no proc there");
        assert!(!why.is_empty());
    }
}
