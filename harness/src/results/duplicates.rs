//! What repeats among the runs given to `report` or `compare`: the same run given twice (one run
//! id in two inputs), or a row repeated inside one file (the same case, lane and GPU twice). Both
//! are still read; the commands say what repeats so the pages are not read as two runs.

use super::{Device, ResultSet};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

/// One repetition among loaded runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Duplicate {
    /// The inputs `first` and `again` hold the same run.
    SameRun {
        first: PathBuf,
        again: PathBuf,
        run_id: String,
    },
    /// A case's row appears `times` times in one file.
    RepeatedRow {
        path: PathBuf,
        case_label: String,
        lane: &'static str,
        device: Option<Device>,
        times: usize,
    },
}

impl fmt::Display for Duplicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Duplicate::SameRun {
                first,
                again,
                run_id,
            } => write!(
                f,
                "{} and {} hold the same run (run id {run_id}): it is shown twice",
                first.display(),
                again.display()
            ),
            Duplicate::RepeatedRow {
                path,
                case_label,
                lane,
                device,
                times,
            } => {
                write!(
                    f,
                    "{} has the row of case `{case_label}` {lane}",
                    path.display()
                )?;
                match device {
                    Some(Device::Gpu(i)) => write!(f, " on GPU {i}")?,
                    Some(Device::All) => write!(f, " on all GPUs")?,
                    None => {}
                }
                write!(f, " {times} times: every copy is read")
            }
        }
    }
}

/// Every repetition among `sets`: runs given twice first, then rows repeated within a file (each
/// repeated row once, in file order).
pub fn duplicates(sets: &[ResultSet]) -> Vec<Duplicate> {
    let mut found = Vec::new();
    let mut runs: HashMap<&str, &ResultSet> = HashMap::new();
    for set in sets {
        let Some(id) = set.rows.first().map(|r| &*r.run_id) else {
            continue;
        };
        match runs.get(id) {
            Some(first) => found.push(Duplicate::SameRun {
                first: first.path.clone(),
                again: set.path.clone(),
                run_id: id.to_string(),
            }),
            None => {
                runs.insert(id, set);
            }
        }
    }
    for set in sets {
        found.extend(repeated_rows(set));
    }
    found
}

/// Rows of one file whose case (index and key), lane and GPU appear more than once.
fn repeated_rows(set: &ResultSet) -> Vec<Duplicate> {
    let mut count: HashMap<(usize, &str, &str, Option<Device>), usize> = HashMap::new();
    let mut order = Vec::new();
    for r in &set.rows {
        let key = (r.case_index, r.case_key.as_str(), r.lane.name(), r.device);
        let n = count.entry(key).or_insert(0);
        *n += 1;
        if *n == 2 {
            order.push((key, r.case_label.as_str()));
        }
    }
    order
        .into_iter()
        .map(|(key, label)| Duplicate::RepeatedRow {
            path: set.path.clone(),
            case_label: label.to_string(),
            lane: key.2,
            device: key.3,
            times: count.get(&key).copied().unwrap_or(2),
        })
        .collect()
}
