//! One sample of every observer over the observed process tree: per process and summed over the
//! tree, `/proc/<pid>/status` (`VmRSS`, `RssShmem`, `VmLck`, `VmPin`) and NVML's device memory;
//! for the machine, `/proc/meminfo`'s `MemAvailable` and the cgroup pinscope and the command
//! share; on Windows, Task Manager's GPU memory counters and the commit charge ([`WddmObservers`]).
//! An observer that cannot run here is listed once with the reason.

use super::tree::{ProcTree, descendants, process_and_tree_points};
use super::wddm::WddmObservers;
use crate::probe::{CgroupObserver, NvmlProcesses, Observer, Reading, Unit};
use crate::results::{Scope, Source, TimelinePoint, Unavailable};
use std::path::{Path, PathBuf};

/// The `/proc/<pid>/status` readings summed over the tree, in the order they are written.
const TREE_SUMMED: [&str; 4] = ["vm_rss", "rss_shmem", "vm_lck", "vm_pin"];

pub struct Sampler {
    /// `/proc`, when this OS has one.
    proc_root: Option<PathBuf>,
    tree: Option<ProcTree>,
    cgroup: Option<CgroupObserver>,
    nvml: Option<NvmlProcesses>,
    wddm: Option<WddmObservers>,
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
    /// The observers of this machine (the real `/proc`, cgroup, NVML and Windows' counters).
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
        // Only Windows has them; elsewhere they are not listed as missing (nothing there shows
        // Task Manager's numbers).
        if cfg!(windows) {
            s.wddm = Some(WddmObservers::for_this_machine(&mut s.unavailable));
        }
        s
    }

    /// Reads `/proc` under `proc_root` (`None`: this OS has none, and the tree is listed by the
    /// OS where it can be); no cgroup, no NVML, no Windows counters.
    pub fn with_proc(proc_root: Option<PathBuf>) -> Sampler {
        let mut s = Sampler {
            tree: proc_root.as_ref().map(ProcTree::new),
            proc_root,
            cgroup: None,
            nvml: None,
            wddm: None,
            unavailable: Vec::new(),
            notes: Vec::new(),
            max_processes: 0,
        };
        if s.proc_root.is_none() {
            let (status, meminfo) = if cfg!(windows) {
                (
                    "unavailable on this OS: Windows has no /proc/<pid>/status (the GPU memory of each process is PDH's `GPU Process Memory`)",
                    "unavailable on this OS: Windows has no /proc/meminfo (the machine's commit charge is `commit`)",
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
            None => match crate::probe::process_parents() {
                Some(Ok(parents)) => descendants(root, &parents),
                Some(Err(e)) => {
                    let note = format!("the process list: {e} (the tree is the command alone)");
                    if !self.notes.contains(&note) {
                        self.notes.push(note);
                    }
                    vec![root]
                }
                None => vec![root],
            },
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
        if let Some(w) = &mut self.wddm {
            out.extend(w.sample(t_s, &pids, &mut self.unavailable, &mut self.notes));
        }
        out
    }
}

/// Per process and summed over the tree; a process gone between listing and reading is left out.
fn status_points(proc_root: &Path, pids: &[u32], t_s: f64) -> Vec<TimelinePoint> {
    let read = pids
        .iter()
        .filter_map(|&pid| {
            let path = proc_root.join(pid.to_string()).join("status");
            let text = std::fs::read_to_string(&path).ok()?;
            Some((pid, crate::probe::parse_process_status(&text)))
        })
        .collect();
    process_and_tree_points(Source::Status, t_s, read, Some(&TREE_SUMMED))
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

    /// Under Wine (the Windows cross-check) and on Windows: one sample of a child process's tree
    /// with this machine's observers.
    #[cfg(windows)]
    #[test]
    fn samples_a_child_tree_with_the_windows_observers() {
        let mut child = std::process::Command::new("cmd")
            .args(["/c", "ping", "-n", "3", "127.0.0.1"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("cmd starts");
        let mut s = Sampler::for_this_machine();
        // Until cmd has started ping (its child), at most 2 s.
        let mut points = Vec::new();
        for i in 0..20 {
            points = s.sample(f64::from(i) * 0.1, child.id());
            if value(&points, Scope::Tree, "processes").unwrap_or(0.0) >= 2.0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = child.wait();
        for p in &points {
            println!(
                "{:?} {} {} = {}",
                p.scope,
                p.source.name(),
                p.reading,
                p.value
            );
        }
        for u in &s.unavailable {
            println!("unavailable: {}: {}", u.observer.name(), u.reason);
        }
        println!("notes: {:?}", s.notes);
        assert!(value(&points, Scope::Tree, "processes").unwrap_or(0.0) >= 2.0);
        let machine = |source, reading: &str| {
            points
                .iter()
                .find(|p| p.scope == Scope::Machine && p.source == source && p.reading == reading)
                .map(|p| p.value)
        };
        let charge = machine(Source::Commit, "commit_charge").expect("commit charge");
        let limit = machine(Source::Commit, "commit_limit").expect("commit limit");
        assert!(charge > 0.0 && limit >= charge, "{charge} of {limit}");
        let budget = machine(Source::Dxgi, "nonlocal_budget").expect("DXGI NON_LOCAL budget");
        let usage = machine(Source::Dxgi, "nonlocal_usage").expect("DXGI NON_LOCAL usage");
        assert!(
            usage >= 0.0 && usage <= budget.max(0.0),
            "{usage} of {budget}"
        );
        if crate::probe::running_under_wine() {
            let pdh = s.unavailable.iter().find(|u| u.observer == Source::Pdh);
            let why = pdh
                .map(|u| u.reason.as_str())
                .expect("Wine has no GPU counters");
            let process_counter = format!(r"\GPU Process Memory(pid_{}_*)", child.id());
            assert!(why.contains(r"\GPU Adapter Memory(*)"), "{why}");
            assert!(why.contains(&process_counter), "{why}");
            assert!(points.iter().all(|p| p.source != Source::Pdh));
        }
    }
}
