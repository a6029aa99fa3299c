//! A fleet folder as `scripts/slurm/pinscope-fleet.sbatch` writes it: one subfolder per node
//! with `info.json` (`pinscope info --json`, written first), `check.json`, the run's results
//! files and `steps.json` (the exit code of each step, written last). `report` takes such a
//! folder as an input; a node that died on the way is listed with what it left, and the other
//! nodes are still reported.

use crate::Error;
use crate::platform::Machine;
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::ResultSet;

/// The file in a node's folder that says how its steps ended: the exit code of each step.
pub const STEPS_FILE: &str = "steps.json";
/// `pinscope info --json` of the node.
pub const INFO_FILE: &str = "info.json";
/// A subfolder holding one of these is a node: the script writes `info.json` first and
/// `steps.json` last, so a node that died mid-way still has the first.
const NODE_MARKS: [&str; 2] = [STEPS_FILE, INFO_FILE];

/// What each step of a node's part exited with; `None`: the binary on that node lacks the step.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NodeSteps {
    pub node: String,
    pub info: Option<i32>,
    pub check: Option<i32>,
    pub run: Option<i32>,
    /// The GPUs Slurm gave the job on the node (`SLURM_GPUS_ON_NODE`, 0 when unset); `None` in
    /// files written before the script recorded it.
    pub slurm_gpus: Option<u32>,
}

/// The part of a node's `info --json` a fleet page shows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NodeInfo {
    /// The machine `info` described (its GPU, when one was usable).
    pub machine: Option<Machine>,
    /// Why `info` found no usable GPU, as it said it.
    pub gpu_unavailable: Option<String>,
}

/// Why a results file of a node cannot be reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// Nothing in it: the node stopped before the run wrote the header.
    Empty,
    /// A header and no rows: the node stopped before the run's first case finished (the header
    /// is written before the first case).
    NoRows,
    /// The file ends inside line `line`: the node stopped while the run was writing it.
    Truncated { line: usize },
    /// What the reader said of the file (or of its samples file or sidecar).
    Refused(String),
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("empty: the node stopped before the run wrote anything"),
            Self::NoRows => f.write_str("no results: the run finished no case"),
            Self::Truncated { line } => write!(
                f,
                "truncated at line {line}: the node stopped while the run was writing it"
            ),
            Self::Refused(why) => f.write_str(why),
        }
    }
}

/// Something in a node's folder that is missing or cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeProblem {
    /// A file the script writes is not there.
    Missing(&'static str),
    /// A file of the node that could not be read (its name, the system's words).
    Unreadable { file: String, why: String },
    /// A JSON file of the node that is not what pinscope writes (cut off mid-write, or another
    /// file of the same name).
    NotOurs { file: String, why: String },
    /// The run exited without a results file.
    NoResults,
    /// A results file that is reported without its sidecar (the run's settings and memory
    /// observers are then not shown).
    NoSidecar { csv: String },
    /// A results file left out of the report.
    SetAside { csv: String, why: Unusable },
}

impl fmt::Display for NodeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(STEPS_FILE) => write!(
                f,
                "no {STEPS_FILE}: the node's part did not finish (the node failed or the job ended)"
            ),
            Self::Missing(file) => write!(f, "no {file}"),
            Self::Unreadable { file, why } => write!(f, "{file} unreadable ({why})"),
            Self::NotOurs { file, why } => write!(f, "{file} is not what pinscope writes ({why})"),
            Self::NoResults => f.write_str("no results: the run wrote no results file"),
            Self::NoSidecar { csv } => write!(
                f,
                "{csv} has no sidecar (.json) beside it: its settings are not shown"
            ),
            Self::SetAside { csv, why } => write!(f, "{csv} left out: {why}"),
        }
    }
}

/// One node's folder.
#[derive(Debug, Clone)]
pub struct NodeFolder {
    /// The folder's name (the Slurm node name).
    pub name: String,
    pub path: PathBuf,
    pub steps: Option<NodeSteps>,
    /// What its `info.json` says (empty when it could not be read).
    pub info: NodeInfo,
    /// The results CSVs of the node's run (after [`ReportInputs::load`]: those reported).
    pub results: Vec<PathBuf>,
    /// What is missing or cannot be used, in the order found.
    pub problems: Vec<NodeProblem>,
}

impl NodeFolder {
    /// True when a results file of the node was left out of the report.
    pub fn has_set_aside(&self) -> bool {
        self.problems
            .iter()
            .any(|p| matches!(p, NodeProblem::SetAside { .. }))
    }
}

/// Report inputs after folders are opened: results CSVs and the node folders among them.
#[derive(Debug, Clone, Default)]
pub struct ReportInputs {
    pub results: Vec<PathBuf>,
    pub nodes: Vec<NodeFolder>,
}

impl ReportInputs {
    /// Loads the report's results files `paths`, in order. A file of a node folder that cannot
    /// be used (the node stopped before its first case, or while writing) is left out and noted
    /// on its node, so one dead node does not hide the rest of the fleet; every other file is
    /// loaded with `load`, whose error ends the report.
    pub fn load(
        &mut self,
        paths: &[PathBuf],
        load: impl Fn(&[PathBuf]) -> Result<Vec<ResultSet>, Error>,
    ) -> Result<Vec<ResultSet>, Error> {
        let owner: HashMap<&Path, usize> = self
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.results.iter().map(move |p| (p.as_path(), i)))
            .collect();
        let mut sets = Vec::with_capacity(paths.len());
        let mut noted: Vec<(usize, PathBuf, NodeProblem)> = Vec::new();
        for p in paths {
            let Some(&node) = owner.get(p.as_path()) else {
                sets.extend(load(std::slice::from_ref(p))?);
                continue;
            };
            match load_node_file(p) {
                Ok(set) => {
                    if set.sidecar.is_none() {
                        let csv = file_name(p);
                        noted.push((node, p.clone(), NodeProblem::NoSidecar { csv }));
                    }
                    sets.push(set);
                }
                Err(why) => {
                    let csv = file_name(p);
                    noted.push((node, p.clone(), NodeProblem::SetAside { csv, why }));
                }
            }
        }
        for (node, path, problem) in noted {
            let n = &mut self.nodes[node];
            if matches!(problem, NodeProblem::SetAside { .. }) {
                n.results.retain(|r| *r != path);
            }
            n.problems.push(problem);
        }
        Ok(sets)
    }

    /// One sentence naming the nodes whose results files were left out, if any.
    pub fn set_aside_warning(&self) -> Option<String> {
        let dead: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|n| {
                n.problems.iter().filter_map(move |p| match p {
                    NodeProblem::SetAside { csv, why } => Some(format!("{}/{csv} ({why})", n.name)),
                    _ => None,
                })
            })
            .collect();
        (!dead.is_empty()).then(|| {
            format!(
                "{} results file(s) of the fleet left out of the page, listed in its node table: {}",
                dead.len(),
                dead.join("; ")
            )
        })
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A node's results file, or why it cannot be reported.
fn load_node_file(p: &Path) -> Result<ResultSet, Unusable> {
    match ResultSet::load(p) {
        Ok(set) if set.rows.is_empty() => Err(Unusable::NoRows),
        Ok(set) => Ok(set),
        Err(e) => Err(why_unusable(p, &e)),
    }
}

/// Why `p` could not be loaded: a file cut off (or empty) says so, one with a header and no
/// rows too (its samples file or sidecar may be what the reader refused); else the reader's
/// sentence.
fn why_unusable(p: &Path, e: &Error) -> Unusable {
    let Ok(bytes) = crate::input::read_input(p, &crate::input::RESULTS_CSV) else {
        return Unusable::Refused(e.to_string());
    };
    match bytes.last() {
        None => Unusable::Empty,
        Some(&last) if last != b'\n' => Unusable::Truncated {
            line: bytes.iter().filter(|b| **b == b'\n').count() + 1,
        },
        Some(_) if super::read_rows_from(p, &bytes).is_ok_and(|r| r.is_empty()) => Unusable::NoRows,
        Some(_) => Unusable::Refused(e.to_string()),
    }
}

/// True when `dir` is a node's folder (see [`NODE_MARKS`]).
fn is_node(dir: &Path) -> bool {
    NODE_MARKS.iter().any(|f| dir.join(f).is_file())
}

/// A file stays as given. A folder gives the results CSVs in it and in its subfolders (one level
/// down, sorted by name), and each of them holding [`STEPS_FILE`] or [`INFO_FILE`] is a node.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<ReportInputs, Error> {
    let mut out = ReportInputs::default();
    for p in paths {
        if !p.is_dir() {
            out.results.push(p.clone());
            continue;
        }
        let subs = sorted_entries(p)?.into_iter().filter(|e| e.is_dir());
        for dir in std::iter::once(p.clone()).chain(subs) {
            let found = results_in(&dir)?;
            if is_node(&dir) {
                out.nodes.push(node_folder(&dir, found.clone()));
            }
            out.results.extend(found);
        }
    }
    Ok(out)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.map(|e| e.path()).map_err(|e| Error::io(dir, e)))
        .collect::<Result<_, _>>()?;
    v.sort();
    Ok(v)
}

/// The results CSVs directly in `dir` (their `.samples.csv` companions are read with them; an
/// observed run's CSVs are not results CSVs).
fn results_in(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    Ok(sorted_entries(dir)?
        .into_iter()
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            p.is_file()
                && name
                    .as_deref()
                    .is_some_and(|n| n.ends_with(".csv") && !n.ends_with(".samples.csv"))
                && super::observed_stem(p).is_none()
        })
        .collect())
}

fn node_folder(dir: &Path, results: Vec<PathBuf>) -> NodeFolder {
    let mut problems = Vec::new();
    let steps = read_json::<NodeSteps>(dir, STEPS_FILE, &mut problems);
    let info = read_json::<NodeInfo>(dir, INFO_FILE, &mut problems).unwrap_or_default();
    // A node without a GPU writes no results: its GPU column says why.
    let no_gpu = steps.as_ref().is_some_and(|s| s.run == Some(3));
    if results.is_empty() && !no_gpu {
        problems.push(NodeProblem::NoResults);
    }
    NodeFolder {
        name: file_name(dir),
        path: dir.to_path_buf(),
        steps,
        info,
        results,
        problems,
    }
}

/// Reads a node's JSON file; a missing or unreadable one is noted, not fatal: one node that died
/// while writing must not hide the rest of the fleet.
fn read_json<T: for<'de> Deserialize<'de>>(
    dir: &Path,
    file: &'static str,
    problems: &mut Vec<NodeProblem>,
) -> Option<T> {
    match std::fs::read(dir.join(file)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(NodeProblem::Missing(file));
            None
        }
        Err(e) => {
            let (file, why) = (file.to_string(), e.to_string());
            problems.push(NodeProblem::Unreadable { file, why });
            None
        }
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                let (file, why) = (file.to_string(), e.to_string());
                problems.push(NodeProblem::NotOurs { file, why });
                None
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_fleet_folder_gives_its_nodes_and_their_results() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("fleet");
        write(
            &root.join("n1/steps.json"),
            r#"{"node":"n1","info":3,"check":null,"run":3}"#,
        );
        write(
            &root.join("n1/info.json"),
            r#"{"machine":null,"gpu_unavailable":"no NVIDIA driver","observers":[]}"#,
        );
        write(
            &root.join("n2/steps.json"),
            r#"{"node":"n2","info":0,"check":0,"run":0}"#,
        );
        write(&root.join("n2/info.json"), "{trunc");
        write(&root.join("n2/quick.csv"), "x");
        write(&root.join("n2/quick.samples.csv"), "x");
        write(&root.join("other/old.csv"), "x");
        let got = expand_inputs(std::slice::from_ref(&root)).unwrap();
        assert_eq!(
            got.results,
            vec![root.join("n2/quick.csv"), root.join("other/old.csv")]
        );
        let names: Vec<&str> = got.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2"]);
        let n1 = &got.nodes[0];
        assert_eq!(n1.steps.as_ref().unwrap().run, Some(3));
        assert_eq!(n1.steps.as_ref().unwrap().check, None);
        assert_eq!(n1.info.gpu_unavailable.as_deref(), Some("no NVIDIA driver"));
        // No GPU: no results file is expected, and the GPU column says why.
        assert!(n1.problems.is_empty() && n1.results.is_empty());
        let n2 = &got.nodes[1];
        assert!(
            matches!(&n2.problems[..], [NodeProblem::NotOurs { file, .. }] if file == "info.json")
        );
        assert_eq!(n2.results, vec![root.join("n2/quick.csv")]);
    }

    /// The script writes `info.json` first and `steps.json` last: a node that died between them
    /// is still a node, and says what it lacks.
    #[test]
    fn a_node_that_died_before_its_steps_file_is_still_a_node() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("fleet");
        write(
            &root.join("n1/info.json"),
            r#"{"machine":null,"gpu_unavailable":null}"#,
        );
        write(&root.join("n1/run.log"), "");
        let got = expand_inputs(std::slice::from_ref(&root)).unwrap();
        let [n1] = &got.nodes[..] else {
            panic!("{:?}", got.nodes)
        };
        assert!(n1.steps.is_none());
        let words: Vec<String> = n1.problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            words,
            [
                "no steps.json: the node's part did not finish (the node failed or the job ended)",
                "no results: the run wrote no results file"
            ]
        );
    }

    #[test]
    fn a_file_stays_as_given() {
        let p = PathBuf::from("does/not/exist.csv");
        let got = expand_inputs(std::slice::from_ref(&p)).unwrap();
        assert_eq!(got.results, vec![p]);
        assert!(got.nodes.is_empty());
    }
}
