//! A fleet folder as `scripts/slurm/pinscope-fleet.sbatch` writes it: one subfolder per node
//! with `steps.json` (the exit code of each step), `info.json` (`pinscope info --json`),
//! `check.json` and the run's results files. `report` takes such a folder as an input.

use crate::Error;
use crate::platform::Machine;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file in a node's folder that marks it as one: the exit code of each step.
pub const STEPS_FILE: &str = "steps.json";
/// `pinscope info --json` of the node.
pub const INFO_FILE: &str = "info.json";

/// What each step of a node's part exited with; `None`: the binary on that node lacks the step.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NodeSteps {
    pub node: String,
    pub info: Option<i32>,
    pub check: Option<i32>,
    pub run: Option<i32>,
}

/// The part of a node's `info --json` a fleet page shows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NodeInfo {
    /// The machine `info` described (its GPU, when one was usable).
    pub machine: Option<Machine>,
    /// Why `info` found no usable GPU, as it said it.
    pub gpu_unavailable: Option<String>,
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
    /// The results CSVs the node's run wrote.
    pub results: Vec<PathBuf>,
    /// A file of the node that could not be read (a node that died mid-write), in words.
    pub problem: Option<String>,
}

/// Report inputs after folders are opened: results CSVs and the node folders among them.
#[derive(Debug, Clone, Default)]
pub struct ReportInputs {
    pub results: Vec<PathBuf>,
    pub nodes: Vec<NodeFolder>,
}

/// A file stays as given. A folder gives the results CSVs in it and in its subfolders (one level
/// down, sorted by name), and each of them holding [`STEPS_FILE`] is a node.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<ReportInputs, Error> {
    let mut out = ReportInputs::default();
    for p in paths {
        if !p.is_dir() {
            out.results.push(p.clone());
            continue;
        }
        let found = results_in(p)?;
        if p.join(STEPS_FILE).is_file() {
            out.nodes.push(node_folder(p, found.clone()));
        }
        out.results.extend(found);
        for sub in sorted_entries(p)?.into_iter().filter(|e| e.is_dir()) {
            let found = results_in(&sub)?;
            if sub.join(STEPS_FILE).is_file() {
                out.nodes.push(node_folder(&sub, found.clone()));
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

/// The results CSVs directly in `dir` (their `.samples.csv` companions are read with them).
fn results_in(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    Ok(sorted_entries(dir)?
        .into_iter()
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            p.is_file()
                && name
                    .as_deref()
                    .is_some_and(|n| n.ends_with(".csv") && !n.ends_with(".samples.csv"))
        })
        .collect())
}

fn node_folder(dir: &Path, results: Vec<PathBuf>) -> NodeFolder {
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut problems = Vec::new();
    let steps = read_json::<NodeSteps>(&dir.join(STEPS_FILE), &mut problems);
    let info = read_json::<NodeInfo>(&dir.join(INFO_FILE), &mut problems).unwrap_or_default();
    NodeFolder {
        name,
        path: dir.to_path_buf(),
        steps,
        info,
        results,
        problem: (!problems.is_empty()).then(|| problems.join("; ")),
    }
}

/// Reads a node's JSON file; a missing or unreadable one is noted, not fatal: one node that died
/// while writing must not hide the rest of the fleet.
fn read_json<T: for<'de> Deserialize<'de>>(path: &Path, problems: &mut Vec<String>) -> Option<T> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(format!("no {name}"));
            None
        }
        Err(e) => {
            problems.push(format!("{name} unreadable ({e})"));
            None
        }
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!("{name} is not what pinscope writes ({e})"));
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
        assert!(n1.problem.is_none() && n1.results.is_empty());
        let n2 = &got.nodes[1];
        assert!(n2.problem.as_deref().unwrap().contains("info.json is not"));
        assert_eq!(n2.results, vec![root.join("n2/quick.csv")]);
    }

    #[test]
    fn a_file_stays_as_given() {
        let p = PathBuf::from("does/not/exist.csv");
        let got = expand_inputs(std::slice::from_ref(&p)).unwrap();
        assert_eq!(got.results, vec![p]);
        assert!(got.nodes.is_empty());
    }
}
