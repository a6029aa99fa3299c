//! The observed command's process tree: the command and every descendant alive now (DataLoader
//! workers, Ollama's runners), found through `/proc/<pid>/stat` on Linux and a Toolhelp snapshot
//! of every process's parent on Windows. On Linux a descendant whose parent exits is re-parented
//! to init and leaves the tree; Windows keeps the exited parent's id, so there it stays in the
//! tree while that id is not reused. Elsewhere the tree is the command alone.

use crate::probe::{Reading, Unit};
use crate::results::{Scope, Source, TimelinePoint};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Reads process trees under a `/proc` (tests use fixture folders).
pub struct ProcTree {
    proc_root: PathBuf,
}

impl ProcTree {
    pub fn new(proc_root: impl Into<PathBuf>) -> ProcTree {
        ProcTree {
            proc_root: proc_root.into(),
        }
    }

    /// `root` and its descendants alive now, `root` first, then breadth first by pid.
    pub fn of(&self, root: u32) -> Vec<u32> {
        descendants(root, &self.parents())
    }

    /// (pid, parent pid) of every process listed under the proc root.
    fn parents(&self) -> Vec<(u32, u32)> {
        let Ok(dir) = std::fs::read_dir(&self.proc_root) else {
            return Vec::new();
        };
        dir.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| Some((pid, parent_of(&self.proc_root, pid)?)))
            .collect()
    }
}

/// The parent pid in `/proc/<pid>/stat` (gone, or unreadable: `None`).
fn parent_of(proc_root: &Path, pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    parse_stat_ppid(&text)
}

/// The parent pid from the text of `/proc/<pid>/stat`: `pid (comm) state ppid …`; the command
/// name may hold spaces and parentheses, so fields are counted after its last `)`.
pub fn parse_stat_ppid(text: &str) -> Option<u32> {
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `root` and every process below it in the (pid, parent) list, `root` first.
pub fn descendants(root: u32, parents: &[(u32, u32)]) -> Vec<u32> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &(pid, ppid) in parents {
        if pid != ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while let Some(&pid) = out.get(i) {
        if let Some(kids) = children.get_mut(&pid) {
            kids.sort_unstable();
            // A list read while processes come and go may repeat a pid; each is listed once.
            for k in kids.iter() {
                if !out.contains(k) {
                    out.push(*k);
                }
            }
        }
        i += 1;
    }
    out
}

/// Each process's readings of `source`, then their sums over the tree: of the readings named in
/// `summed`, in its order, or (`None`) of every reading, in the order first read. A sum is
/// written only for a reading some process had.
pub(super) fn process_and_tree_points(
    source: Source,
    t_s: f64,
    read: Vec<(u32, Vec<Reading>)>,
    summed: Option<&[&str]>,
) -> Vec<TimelinePoint> {
    let mut out = Vec::new();
    let mut sums: Vec<(String, f64, Unit)> = Vec::new();
    for (pid, readings) in read {
        for r in readings {
            if summed.is_none_or(|names| names.contains(&r.metric.as_str())) {
                match sums.iter_mut().find(|s| s.0 == r.metric) {
                    Some(s) => s.1 += r.value,
                    None => sums.push((r.metric.clone(), r.value, r.unit)),
                }
            }
            out.push(TimelinePoint {
                t_s,
                scope: Scope::Process(pid),
                source,
                reading: r.metric,
                value: r.value,
                unit: r.unit,
            });
        }
    }
    if let Some(names) = summed {
        sums.sort_by_key(|s| names.iter().position(|n| *n == s.0));
    }
    out.extend(
        sums.into_iter()
            .map(|(reading, value, unit)| TimelinePoint {
                t_s,
                scope: Scope::Tree,
                source,
                reading,
                value,
                unit,
            }),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parent_after_a_name_with_parentheses() {
        assert_eq!(parse_stat_ppid("42 (sh) S 7 42 42 0"), Some(7));
        assert_eq!(parse_stat_ppid("43 (a) b) (c) R 42 1 1"), Some(42));
        assert_eq!(parse_stat_ppid("garbage"), None);
        assert_eq!(parse_stat_ppid("1 (x)"), None);
    }

    #[test]
    fn descendants_cover_grandchildren_and_nothing_else() {
        let parents = [(10, 1), (11, 10), (12, 11), (13, 1), (14, 12), (15, 13)];
        assert_eq!(descendants(10, &parents), vec![10, 11, 12, 14]);
        assert_eq!(descendants(99, &parents), vec![99]);
        // A cycle in a list read mid-change does not loop.
        assert_eq!(descendants(20, &[(21, 20), (20, 21)]), vec![20, 21]);
    }

    #[test]
    fn reads_a_fixture_proc_folder() {
        let d = tempfile::tempdir().expect("dir");
        for (pid, ppid) in [(5, 1), (6, 5), (7, 6), (8, 1)] {
            let dir = d.path().join(pid.to_string());
            std::fs::create_dir_all(&dir).expect("pid dir");
            std::fs::write(dir.join("stat"), format!("{pid} (p q) S {ppid} 0 0")).expect("stat");
        }
        std::fs::create_dir_all(d.path().join("self")).expect("self");
        assert_eq!(ProcTree::new(d.path()).of(5), vec![5, 6, 7]);
    }

    #[test]
    fn tree_sums_keep_the_named_order_or_the_order_first_read() {
        let read = || {
            vec![
                (1, vec![Reading::bytes("b", 1), Reading::bytes("a", 2)]),
                (2, vec![Reading::bytes("a", 10), Reading::bytes("c", 5)]),
            ]
        };
        let tree = |points: Vec<TimelinePoint>| -> Vec<(String, f64)> {
            points
                .into_iter()
                .filter(|p| p.scope == Scope::Tree)
                .map(|p| (p.reading, p.value))
                .collect()
        };
        let all = process_and_tree_points(Source::Pdh, 0.0, read(), None);
        assert_eq!(all.len(), 4 + 3);
        assert!(all.iter().all(|p| p.source == Source::Pdh));
        let want = [("b", 1.0), ("a", 12.0), ("c", 5.0)].map(|(r, v)| (r.to_string(), v));
        assert_eq!(tree(all), want);
        let named = process_and_tree_points(Source::Status, 0.0, read(), Some(&["c", "a", "z"]));
        let want = [("c", 5.0), ("a", 12.0)].map(|(r, v)| (r.to_string(), v));
        assert_eq!(tree(named), want);
    }
}
