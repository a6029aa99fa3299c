//! A results CSV with its sidecar and samples, loaded together and checked to belong together.

use super::csv_read::read_rows;
use super::samples::Samples;
use super::schema::*;
use super::sidecar::{samples_path, sidecar_path};
use crate::Error;
use std::path::{Path, PathBuf};

/// A results CSV with its sidecar and samples, as `compare` and `report` consume it.
#[derive(Debug, Clone)]
pub struct ResultSet {
    pub path: PathBuf,
    pub rows: Vec<Row>,
    /// The series the views read (bandwidth samples, timelines); see [`Samples`].
    pub samples: Samples,
    /// `None` when the sidecar is missing (a CSV alone can still be compared).
    pub sidecar: Option<super::Sidecar>,
}

impl ResultSet {
    /// Loads `x.csv`, and `x.samples.csv` / `x.json` beside it when present.
    /// A samples file or sidecar that belongs to another run is refused: its run id (sidecar)
    /// or its case keys (samples) must be those of the CSV.
    pub fn load(path: &Path) -> Result<ResultSet, Error> {
        let sp = samples_path(path);
        // The samples file is usually 50 times the CSV: read it beside the rows.
        let (rows, samples) = rayon::join(
            || read_rows(path),
            || {
                if sp.exists() {
                    Samples::read(&sp)
                } else {
                    Ok(Samples::default())
                }
            },
        );
        let (rows, samples) = (rows?, samples?);
        check_samples_belong(path, &rows, &sp, &samples)?;
        let jp = sidecar_path(path);
        let sidecar = if jp.exists() {
            Some(super::Sidecar::read(&jp)?)
        } else {
            None
        };
        if let Some(s) = &sidecar {
            check_sidecar_belongs(path, &rows, &jp, s)?;
        }
        Ok(ResultSet {
            path: path.to_path_buf(),
            rows,
            samples,
            sidecar,
        })
    }

    /// True when the run that wrote it did not finish (interrupted or ended early).
    pub fn is_partial(&self) -> bool {
        self.sidecar.as_ref().is_some_and(|s| s.partial)
    }

    /// A run made up for tests or demonstrations: its sidecar says so in its `SYNTHETIC` field.
    pub fn is_synthetic(&self) -> bool {
        self.sidecar.as_ref().is_some_and(|c| c.synthetic.is_some())
    }

    /// The raw bandwidth samples (GB/s) of one case and lane.
    pub fn bandwidth_samples(&self, case_key: &str, lane: Lane) -> &[f64] {
        self.samples.bandwidth(case_key, lane)
    }
}

/// Refuses a sidecar whose run id is not the run id of the CSV's rows.
fn check_sidecar_belongs(
    csv: &Path,
    rows: &[Row],
    json: &Path,
    sidecar: &super::Sidecar,
) -> Result<(), Error> {
    let ids: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| &*r.run_id)
        .filter(|id| !id.is_empty())
        .collect();
    if ids.is_empty() || ids.contains(sidecar.run_id.as_str()) {
        return Ok(());
    }
    let ids: Vec<&str> = ids.into_iter().collect();
    Err(Error::BadResults {
        path: json.to_path_buf(),
        reason: format!(
            "it belongs to run {}, but {} holds run {}: move the sidecar away or put the CSV of its run beside it",
            sidecar.run_id,
            csv.display(),
            ids.join(", ")
        ),
    })
}

/// Refuses a samples file with samples of a case the CSV does not have (it was written by
/// another run: its intervals would silently be computed from the wrong numbers, or not at all).
fn check_samples_belong(
    csv: &Path,
    rows: &[Row],
    path: &Path,
    samples: &Samples,
) -> Result<(), Error> {
    let keys: std::collections::HashSet<&str> = rows.iter().map(|r| r.case_key.as_str()).collect();
    match samples.case_keys().find(|k| !keys.contains(k)) {
        None => Ok(()),
        Some(key) => Err(Error::BadResults {
            path: path.to_path_buf(),
            reason: format!(
                "it holds samples of case `{}`, which {} does not have, so it belongs to another run: move it away or put the CSV of its run beside it",
                key,
                csv.display()
            ),
        }),
    }
}
