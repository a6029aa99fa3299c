//! `cgroup`: the memory charged to this process's cgroup (Linux cgroup v2): `current`, the
//! bytes charged now (`memory.current`); `max`, the limit (`memory.max`, left out when it is
//! `max`, unlimited); `peak`, the high-water mark (`memory.peak`, kernels 5.19 and later).
//!
//! Under Slurm or in a container the job's memory is charged to its cgroup and bounded by
//! `memory.max`, so an allocation can meet that limit while the machine still has RAM free;
//! `MemAvailable` and RSS do not show the limit, this observer does (and shows whether the
//! driver charges page-locked memory there at all).
//!
//! The cgroup is found once, when the observer is made: the `0::<path>` line of
//! `/proc/self/cgroup` names it under `/sys/fs/cgroup`. With no such line (cgroup v1 only), with
//! the memory controller on a v1 hierarchy (hybrid mounts), or with no `memory.current` in the
//! directory (the root cgroup, or the controller not enabled there) it is unavailable, with the
//! reason. Every file is read with a size bound; a value that does not parse is a failed read
//! or a note, never a panic.

use super::{Observer, Reading};
use crate::accounting::ObserverId;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes read from `/proc/self/cgroup` (one line per hierarchy: a few hundred bytes).
const CGROUP_LIST_LIMIT: u64 = 64 * 1024;
/// The most bytes read from a `memory.*` file (one number, or `max`).
const VALUE_LIMIT: u64 = 64;

/// What the `memory.*` files said at one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CgroupMemory {
    /// `memory.current`: bytes charged now.
    current: u64,
    /// `memory.max`: the limit in bytes; `None` = `max` (unlimited).
    max: Option<u64>,
    /// `memory.peak`: the high-water mark; `None` where the kernel has no such file.
    peak: Option<u64>,
}

/// This process's cgroup v2 path (`/slurm/uid_1/job_2`) from the text of `/proc/self/cgroup`,
/// or why there is none to read memory from.
fn parse_cgroup_list(text: &str) -> Result<String, String> {
    let mut v2 = None;
    let mut v1_memory = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            v2 = Some(path);
        } else if controllers.split(',').any(|c| c == "memory") {
            v1_memory = Some(line);
        }
    }
    if let Some(line) = v1_memory {
        return Err(format!(
            "memory is on a cgroup v1 hierarchy (`{line}`); only cgroup v2 is read"
        ));
    }
    let path = v2.ok_or("no cgroup v2 entry (`0::<path>`) in /proc/self/cgroup")?;
    if !path.starts_with('/') || path.split('/').any(|c| c == "..") {
        return Err(format!(
            "cgroup path `{path}` is outside this cgroup namespace"
        ));
    }
    Ok(path.to_string())
}

/// A `memory.*` value: bytes, or `None` for `max`.
fn parse_value(text: &str) -> Result<Option<u64>, String> {
    match text.trim() {
        "max" => Ok(None),
        t => t
            .parse()
            .map(Some)
            .map_err(|_| format!("`{}` is not a byte count", t.escape_debug())),
    }
}

/// The `memory.*` file `name` of the cgroup folder `dir`: bytes, or `None` for `max`.
fn value(dir: &Path, name: &str) -> Result<Option<u64>, String> {
    let p = dir.join(name);
    parse_value(&read_bounded(&p, VALUE_LIMIT)?).map_err(|e| format!("{}: {e}", p.display()))
}

/// `memory.current` of the cgroup folder `dir`, which must be a byte count.
fn current(dir: &Path) -> Result<u64, String> {
    value(dir, "memory.current")?.ok_or_else(|| "memory.current is `max`, not a byte count".into())
}

/// The text of `path`, at most `limit` bytes of it.
fn read_bounded(path: &Path, limit: u64) -> Result<String, String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit).read_to_string(&mut text))
        .map_err(|e| format!("reading {}: {e}", path.display()))?;
    Ok(text)
}

/// One cgroup on the way from this process's cgroup up to the top: its path below
/// `/sys/fs/cgroup` and its `memory.max` (`None` = `max`) and `memory.current`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupLevel {
    pub path: String,
    pub max: Option<u64>,
    pub current: u64,
}

/// The cgroups whose limits bound this process: its own first, then each parent up to the root
/// cgroup, which has no limit files. A parent's `memory.max` bounds every cgroup below it, and
/// job managers set it there: Slurm limits `job_N` while the job's processes run in
/// `job_N/step_M/user/task_K`, whose own `memory.max` is `max`. This process's cgroup must read
/// (else why not); a parent whose files do not read is left out.
pub fn levels(root: &Path) -> Result<Vec<CgroupLevel>, String> {
    let dir = CgroupObserver::find(root)?;
    let top = root.join("sys/fs/cgroup");
    let mut out = Vec::new();
    let mut at = Some(dir.as_path());
    while let Some(d) = at.filter(|d| *d != top && d.starts_with(&top)) {
        let level = current(d).and_then(|current| {
            Ok(CgroupLevel {
                path: level_path(&top, d),
                max: value(d, "memory.max")?,
                current,
            })
        });
        match level {
            Ok(l) => out.push(l),
            Err(why) if out.is_empty() => return Err(why),
            Err(_) => {}
        }
        at = d.parent();
    }
    Ok(out)
}

/// `dir` as a path below `/sys/fs/cgroup`, with `/` between its parts on every OS.
fn level_path(top: &Path, dir: &Path) -> String {
    let parts: Vec<String> = dir
        .strip_prefix(top)
        .unwrap_or(dir)
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    format!("/{}", parts.join("/"))
}

pub struct CgroupObserver {
    /// The cgroup's directory, or why it cannot be read.
    dir: Result<PathBuf, String>,
    notes: Vec<String>,
}

impl Default for CgroupObserver {
    fn default() -> Self {
        CgroupObserver::new()
    }
}

impl CgroupObserver {
    /// Reads this process's cgroup under the real `/proc` and `/sys/fs/cgroup`.
    pub fn new() -> CgroupObserver {
        if cfg!(windows) {
            return CgroupObserver {
                dir: Err("no cgroups on Windows".into()),
                notes: Vec::new(),
            };
        }
        CgroupObserver::with_root("/")
    }

    /// Reads `<root>/proc/self/cgroup` and `<root>/sys/fs/cgroup/<path>/memory.*` (tests use
    /// fixture trees, on any platform).
    pub fn with_root(root: impl AsRef<Path>) -> CgroupObserver {
        CgroupObserver {
            dir: Self::find(root.as_ref()),
            notes: Vec::new(),
        }
    }

    fn find(root: &Path) -> Result<PathBuf, String> {
        let list = root.join("proc/self/cgroup");
        if !list.is_file() {
            return Err(format!("{} not found (not Linux)", list.display()));
        }
        let path = parse_cgroup_list(&read_bounded(&list, CGROUP_LIST_LIMIT)?)?;
        let dir = root
            .join("sys/fs/cgroup")
            .join(path.trim_start_matches('/'));
        if !dir.join("memory.current").is_file() {
            return Err(format!(
                "no memory.current in {} (the root cgroup, or the memory controller is not enabled for `{path}`)",
                dir.display()
            ));
        }
        Ok(dir)
    }

    /// The cgroup's memory files now: `memory.current` must read; `memory.max` and
    /// `memory.peak` that do not are left out, with a note.
    fn memory(&mut self) -> Result<CgroupMemory, String> {
        let dir = self.dir.as_ref().map_err(Clone::clone)?;
        let current = current(dir)?;
        let max = value(dir, "memory.max").unwrap_or_else(|e| {
            self.notes.push(e);
            None
        });
        let peak = if dir.join("memory.peak").is_file() {
            value(dir, "memory.peak").unwrap_or_else(|e| {
                self.notes.push(e);
                None
            })
        } else {
            None
        };
        Ok(CgroupMemory { current, max, peak })
    }
}

impl Observer for CgroupObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Cgroup
    }

    fn unavailable(&self) -> Option<String> {
        self.dir.as_ref().err().cloned()
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let m = self.memory()?;
        let mut out = vec![Reading::bytes("current", m.current)];
        out.extend(m.max.map(|v| Reading::bytes("max", v)));
        out.extend(m.peak.map(|v| Reading::bytes("peak", v)));
        Ok(out)
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn detail(&self) -> Option<String> {
        self.dir.as_ref().ok().map(|d| d.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A `<root>` with `/proc/self/cgroup` listing `list` and, for each `(file, text)` of
    /// `files`, `sys/fs/cgroup/<cgroup>/<file>`.
    fn tree(list: &str, cgroup: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(root.path().join("proc/self")).expect("proc dir");
        fs::write(root.path().join("proc/self/cgroup"), list).expect("cgroup list");
        let dir = root.path().join("sys/fs/cgroup").join(cgroup);
        fs::create_dir_all(&dir).expect("cgroup dir");
        for (name, text) in files {
            fs::write(dir.join(name), text).expect("memory file");
        }
        root
    }

    /// The observer of a [`tree`], with the tree (removed when dropped).
    fn observed(
        list: &str,
        cgroup: &str,
        files: &[(&str, &str)],
    ) -> (tempfile::TempDir, CgroupObserver) {
        let root = tree(list, cgroup, files);
        let o = CgroupObserver::with_root(root.path());
        (root, o)
    }

    fn get(r: &[Reading], m: &str) -> Option<f64> {
        r.iter().find(|r| r.metric == m).map(|r| r.value)
    }

    /// SYNTHETIC trees, each with the current, max and peak it reads as.
    #[test]
    fn reads_v2_cgroup_trees() {
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], [Option<f64>; 3]);
        let cases: [Case; 2] = [
            // A Slurm job's cgroup with a 16 GiB limit, 5 GiB charged, 6 GiB peak.
            (
                "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n",
                "system.slice/slurmstepd.scope/job_42/step_0/user/task_0",
                &[
                    ("memory.current", "5368709120\n"),
                    ("memory.max", "17179869184\n"),
                    ("memory.peak", "6442450944\n"),
                ],
                [Some(5368709120.0), Some(17179869184.0), Some(6442450944.0)],
            ),
            // No limit (`max`: unlimited, left out) and a kernel without memory.peak.
            (
                "0::/user.slice\n",
                "user.slice",
                &[("memory.current", "4096"), ("memory.max", "max\n")],
                [Some(4096.0), None, None],
            ),
        ];
        for (list, cgroup, files, expected) in cases {
            let (_root, mut o) = observed(list, cgroup, files);
            assert_eq!(o.unavailable(), None, "{cgroup}");
            assert!(o.detail().expect("a dir").ends_with(cgroup), "{cgroup}");
            let r = o.read().expect("reads");
            assert_eq!(["current", "max", "peak"].map(|m| get(&r, m)), expected);
            assert!(o.take_notes().is_empty(), "{cgroup}");
        }
    }

    #[test]
    fn odd_files_fail_the_read_or_leave_a_note() {
        let (root, mut o) = observed(
            "0::/a\n",
            "a",
            &[("memory.current", "lots\n"), ("memory.max", "-1")],
        );
        let e = o.read().expect_err("current does not parse");
        assert!(e.contains("memory.current") && e.contains("`lots`"), "{e}");
        fs::write(root.path().join("sys/fs/cgroup/a/memory.current"), "12").expect("rewrite");
        let r = o.read().expect("current parses now");
        assert_eq!(get(&r, "current"), Some(12.0));
        assert_eq!(get(&r, "max"), None);
        let notes = o.take_notes();
        assert!(
            notes.len() == 1 && notes[0].contains("memory.max"),
            "{notes:?}"
        );
        // A huge file is read only up to the bound: it does not parse, and it is an error.
        let big = "9".repeat(1 << 20);
        fs::write(root.path().join("sys/fs/cgroup/a/memory.current"), big).expect("rewrite");
        assert!(o.read().is_err());
        // The file gone after the observer was made: a failed read, not a panic.
        fs::remove_file(root.path().join("sys/fs/cgroup/a/memory.current")).expect("rm");
        assert!(o.read().expect_err("gone").contains("memory.current"));
    }

    #[test]
    fn v1_hybrid_root_and_no_proc_are_unavailable_with_a_reason() {
        // The layout of a hybrid mount: memory on v1, the v2 hierarchy empty.
        let hybrid = tree("4:memory:/process_api/x\n1:cpu:/\n0::/\n", "", &[]);
        let why = CgroupObserver::with_root(hybrid.path()).unavailable();
        assert!(why.expect("v1").contains("cgroup v1"));
        let v1_only = tree("3:cpu,memory:/job\n", "", &[]);
        let why = CgroupObserver::with_root(v1_only.path()).unavailable();
        assert!(why.expect("v1").contains("`3:cpu,memory:/job`"));
        let root_cgroup = tree("0::/\n", "", &[]);
        let why = CgroupObserver::with_root(root_cgroup.path()).unavailable();
        assert!(why.expect("no memory.current").contains("root cgroup"));
        let none = tree("", "", &[]);
        assert!(
            CgroupObserver::with_root(none.path())
                .unavailable()
                .is_some()
        );
        let mut gone = CgroupObserver::with_root("/definitely/not/a/root");
        let why = gone.unavailable().expect("no proc there");
        assert!(why.contains("not found"), "{why}");
        assert_eq!(gone.read(), Err(why));
    }

    #[test]
    fn cgroup_lists_that_are_odd() {
        assert!(parse_cgroup_list("0::/../outside\n").is_err());
        assert!(parse_cgroup_list("0::relative\n").is_err());
        assert!(parse_cgroup_list("garbage\n\u{0}\n::\n").is_err());
        assert_eq!(parse_cgroup_list("0::/a:b\n").as_deref(), Ok("/a:b"));
    }

    /// This machine's real cgroup: the v2 reading, or the reason there is none.
    #[test]
    fn cgroup_observer_on_this_machine() {
        let mut o = CgroupObserver::new();
        match o.unavailable() {
            Some(why) => {
                assert!(!why.is_empty());
                assert!(o.read().is_err());
                println!("cgroup: unavailable: {why}");
            }
            None => {
                let r = o.read().expect("reading the cgroup");
                let current = get(&r, "current").expect("memory.current");
                assert!(current > 0.0, "this test process is charged somewhere");
                if let Some(max) = get(&r, "max") {
                    assert!(max > 0.0);
                }
                println!("cgroup: {} {r:?}", o.detail().unwrap_or_default());
            }
        }
    }
}
