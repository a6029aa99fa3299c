//! One sample of every observer over the observed process tree: per process and summed over the
//! tree, `/proc/<pid>/status` (`VmRSS`, `RssShmem`, `VmLck`, `VmPin`) and NVML's device memory;
//! for the machine, `/proc/meminfo`'s `MemAvailable` and the cgroup pinscope and the command
//! share. An observer that cannot run here is listed once with the reason.

use super::tree::ProcTree;
use crate::probe::{CgroupObserver, NvmlProcesses, Observer, Reading, Unit};
use crate::results::{Scope, Source, TimelinePoint, Unavailable};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `/proc/<pid>/status` readings summed over the tree, in the order they are written.
const TREE_SUMMED: [&str; 4] = ["vm_rss", "rss_shmem", "vm_lck", "vm_pin"];

pub struct Sampler {
    /// `/proc`, when this OS has one.
    proc_root: Option<PathBuf>,
    tree: Option<ProcTree>,
    cgroup: Option<CgroupObserver>,
    nvml: Option<NvmlProcesses>,
    pub unavailable: Vec<Unavailable>,
    pub notes: Vec<String>,
    pub max_processes: u64,
}

fn unavailable(observer: Source, reason: impl Into<String>) -> Unavailable {
    Unavailable {
        observer,
        reason: reason.into(),
    }
}

impl Sampler {
    /// The observers of this machine (the real `/proc`, cgroup and NVML).
    pub fn for_this_machine() -> Sampler {
        let proc_root = Path::new("/proc");
        let mut s = Sampler::with_proc(
            (cfg!(target_os = "linux") && proc_root.join("meminfo").is_file())
                .then(|| proc_root.to_path_buf()),
        );
        s.add_cgroup(CgroupObserver::new());
        match NvmlProcesses::open() {
            Ok(n) => s.nvml = Some(n),
            Err(why) => s.unavailable.push(unavailable(Source::Nvml, why)),
        }
        s
    }

    /// Reads `/proc` under `proc_root` (`None`: this OS has none); no cgroup, no NVML.
    pub fn with_proc(proc_root: Option<PathBuf>) -> Sampler {
        let mut s = Sampler {
            tree: proc_root.as_ref().map(ProcTree::new),
            proc_root,
            cgroup: None,
            nvml: None,
            unavailable: Vec::new(),
            notes: Vec::new(),
            max_processes: 0,
        };
        if s.proc_root.is_none() {
            let (status, meminfo) = if cfg!(windows) {
                (
                    "unavailable on this OS: Windows has no /proc/<pid>/status (the PDH `GPU Process Memory` counters of another process are not read yet)",
                    "unavailable on this OS: Windows has no /proc/meminfo",
                )
            } else {
                (
                    "unavailable on this OS: no /proc here (Linux and WSL2 have it)",
                    "unavailable on this OS: no /proc/meminfo here (Linux and WSL2 have it)",
                )
            };
            s.unavailable.push(unavailable(Source::Status, status));
            s.unavailable.push(unavailable(Source::Meminfo, meminfo));
        }
        s
    }

    fn add_cgroup(&mut self, c: CgroupObserver) {
        match c.unavailable() {
            Some(why) if !cfg!(target_os = "linux") => self.unavailable.push(unavailable(
                Source::Cgroup,
                format!("unavailable on this OS: {why}"),
            )),
            Some(why) => self.unavailable.push(unavailable(Source::Cgroup, why)),
            None => self.cgroup = Some(c),
        }
    }

    /// Every observer's readings at `t_s` for `root`'s tree.
    pub fn sample(&mut self, t_s: f64, root: u32) -> Vec<TimelinePoint> {
        let pids = match &self.tree {
            Some(t) => t.of(root),
            None => vec![root],
        };
        self.max_processes = self.max_processes.max(pids.len() as u64);
        let mut out = Vec::new();
        let point = |scope, source, r: Reading| TimelinePoint {
            t_s,
            scope,
            source,
            reading: r.metric,
            value: r.value,
            unit: r.unit,
        };
        out.push(point(
            Scope::Tree,
            Source::Tree,
            Reading::count("processes", pids.len() as u64),
        ));
        if let Some(root) = &self.proc_root {
            out.extend(status_points(root, &pids, t_s));
            out.extend(meminfo_points(root, t_s, &mut self.notes));
        }
        if let Some(c) = &mut self.cgroup {
            match c.read() {
                Ok(readings) => out.extend(
                    readings
                        .into_iter()
                        .map(|r| point(Scope::Machine, Source::Cgroup, r)),
                ),
                Err(e) => self.notes.push(format!("cgroup at {t_s:.1} s: {e}")),
            }
            self.notes.extend(c.take_notes());
        }
        if let Some(n) = &self.nvml {
            out.extend(nvml_points(n, &pids, t_s, &mut self.notes));
        }
        out
    }
}

/// Per process and summed over the tree; a process gone between listing and reading is left out.
fn status_points(proc_root: &Path, pids: &[u32], t_s: f64) -> Vec<TimelinePoint> {
    let mut out = Vec::new();
    let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
    for &pid in pids {
        let path = proc_root.join(pid.to_string()).join("status");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for r in crate::probe::parse_process_status(&text) {
            if let Some(name) = TREE_SUMMED.iter().find(|n| **n == r.metric) {
                *sums.entry(name).or_default() += r.value;
            }
            out.push(TimelinePoint {
                t_s,
                scope: Scope::Process(pid),
                source: Source::Status,
                reading: r.metric,
                value: r.value,
                unit: r.unit,
            });
        }
    }
    for name in TREE_SUMMED {
        if let Some(&value) = sums.get(name) {
            out.push(TimelinePoint {
                t_s,
                scope: Scope::Tree,
                source: Source::Status,
                reading: name.into(),
                value,
                unit: Unit::Bytes,
            });
        }
    }
    out
}

fn meminfo_points(proc_root: &Path, t_s: f64, notes: &mut Vec<String>) -> Vec<TimelinePoint> {
    let path = proc_root.join("meminfo");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            notes.push(format!("{} at {t_s:.1} s: {e}", path.display()));
            return Vec::new();
        }
    };
    crate::probe::parse_meminfo(&text)
        .into_iter()
        .filter(|r| r.metric == "mem_available")
        .map(|r| TimelinePoint {
            t_s,
            scope: Scope::Machine,
            source: Source::Meminfo,
            reading: r.metric,
            value: r.value,
            unit: r.unit,
        })
        .collect()
}

fn nvml_points(
    n: &NvmlProcesses,
    pids: &[u32],
    t_s: f64,
    notes: &mut Vec<String>,
) -> Vec<TimelinePoint> {
    let mem = n.read();
    for note in mem.notes {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let point = |scope, value: u64| TimelinePoint {
        t_s,
        scope,
        source: Source::Nvml,
        reading: "process_used".into(),
        value: value as f64,
        unit: Unit::Bytes,
    };
    let mine: Vec<(u32, u64)> = pids
        .iter()
        .filter_map(|p| Some((*p, *mem.bytes.get(p)?)))
        .collect();
    let mut out: Vec<TimelinePoint> = mine
        .iter()
        .map(|&(pid, b)| point(Scope::Process(pid), b))
        .collect();
    out.push(point(Scope::Tree, mine.iter().map(|(_, b)| b).sum()));
    if let Some(free) = mem.device_free {
        out.push(TimelinePoint {
            reading: "device_free".into(),
            ..point(Scope::Machine, free)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYNTHETIC `/proc` with two processes (5 → 6) and a meminfo.
    fn fixture() -> tempfile::TempDir {
        let d = tempfile::tempdir().expect("dir");
        for (pid, ppid, rss, shmem) in [(5, 1, 1000, 0), (6, 5, 3000, 2048)] {
            let dir = d.path().join(pid.to_string());
            std::fs::create_dir_all(&dir).expect("pid dir");
            std::fs::write(dir.join("stat"), format!("{pid} (x) S {ppid} 0")).expect("stat");
            std::fs::write(
                dir.join("status"),
                format!("VmRSS:\t{rss} kB\nRssShmem:\t{shmem} kB\nVmLck:\t0 kB\nVmPin:\t0 kB\n"),
            )
            .expect("status");
        }
        std::fs::write(d.path().join("meminfo"), "MemAvailable: 500 kB\n").expect("meminfo");
        d
    }

    fn value(points: &[TimelinePoint], scope: Scope, reading: &str) -> Option<f64> {
        points
            .iter()
            .find(|p| p.scope == scope && p.reading == reading)
            .map(|p| p.value)
    }

    #[test]
    fn sums_the_tree_and_keeps_each_process() {
        let d = fixture();
        let mut s = Sampler::with_proc(Some(d.path().to_path_buf()));
        let points = s.sample(0.5, 5);
        assert_eq!(value(&points, Scope::Tree, "processes"), Some(2.0));
        assert_eq!(value(&points, Scope::Tree, "vm_rss"), Some(4000.0 * 1024.0));
        assert_eq!(
            value(&points, Scope::Tree, "rss_shmem"),
            Some(2048.0 * 1024.0)
        );
        assert_eq!(
            value(&points, Scope::Process(6), "vm_rss"),
            Some(3000.0 * 1024.0)
        );
        assert_eq!(
            value(&points, Scope::Machine, "mem_available"),
            Some(500.0 * 1024.0)
        );
        assert_eq!(s.max_processes, 2);
        assert!(s.unavailable.is_empty(), "{:?}", s.unavailable);
    }

    #[test]
    fn without_proc_the_tree_is_the_command_and_proc_is_unavailable() {
        let mut s = Sampler::with_proc(None);
        let points = s.sample(0.0, 77);
        assert_eq!(value(&points, Scope::Tree, "processes"), Some(1.0));
        assert_eq!(points.len(), 1);
        let status = s.unavailable.iter().find(|u| u.observer == Source::Status);
        assert!(status.is_some_and(|u| u.reason.contains("unavailable on this OS")));
    }
}
