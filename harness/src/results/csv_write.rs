//! Writing the results CSV and its samples file, one flush per finished case.

use super::columns::{HEAD, SAMPLE_COLUMNS, TAIL, columns, opt};
use super::schema::*;
use super::sidecar::samples_path;
use crate::Error;
use crate::accounting;
use std::fs::File;
use std::path::{Path, PathBuf};

pub(super) fn row_fields(r: &Row) -> Vec<String> {
    let mut r = r.clone();
    let mut f = vec![SCHEMA_VERSION.to_string()];
    f.extend(HEAD.iter().map(|c| c.write(&mut r)));
    let family = |r: &Row, late: bool| -> Vec<String> {
        accounting::columns()
            .filter(|(p, _)| p.is_late() == late)
            .map(|(p, m)| opt(r.accounting_value(p, m)))
            .collect()
    };
    f.extend(family(&r, false));
    f.extend(TAIL.iter().map(|c| c.write(&mut r)));
    f.extend(family(&r, true));
    f
}

fn csv_error(p: &Path, e: csv::Error) -> Error {
    Error::io(p, std::io::Error::other(e))
}

/// Writes result rows as cases finish; every `write_case` ends with a flush to disk, so a run
/// that dies keeps every finished case.
pub struct ResultsWriter {
    path: PathBuf,
    rows: csv::Writer<File>,
    samples_path: PathBuf,
    samples: csv::Writer<File>,
}

impl ResultsWriter {
    /// Creates `path` and its samples file, both new: an existing file is never replaced.
    pub fn create(path: &Path) -> Result<Self, Error> {
        Self::create_with(path, &super::OutputPolicy::default())
    }

    /// [`ResultsWriter::create`] under the output policy of a command (the files it reads).
    pub fn create_with(path: &Path, policy: &super::OutputPolicy) -> Result<Self, Error> {
        let samples_path = samples_path(path);
        // Both checked before either is created: nothing is written when one is refused.
        policy.check(path)?;
        policy.check(&samples_path)?;
        let mut rows = csv::Writer::from_writer(policy.create_new(path)?);
        rows.write_record(columns())
            .map_err(|e| csv_error(path, e))?;
        let mut samples = csv::Writer::from_writer(policy.create_new(&samples_path)?);
        samples
            .write_record(SAMPLE_COLUMNS)
            .map_err(|e| csv_error(&samples_path, e))?;
        let mut w = Self {
            path: path.to_path_buf(),
            rows,
            samples_path,
            samples,
        };
        w.flush()?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one case's rows and raw samples, then flushes both files to disk.
    pub fn write_case(&mut self, rows: &[Row], samples: &[SampleRow]) -> Result<(), Error> {
        for r in rows {
            self.rows
                .write_record(row_fields(r))
                .map_err(|e| Error::io(&self.path, std::io::Error::other(e)))?;
        }
        for s in samples {
            self.samples
                .write_record(sample_fields(s))
                .map_err(|e| Error::io(&self.samples_path, std::io::Error::other(e)))?;
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.rows.flush().map_err(|e| Error::io(&self.path, e))?;
        self.samples
            .flush()
            .map_err(|e| Error::io(&self.samples_path, e))?;
        self.rows
            .get_ref()
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))?;
        self.samples
            .get_ref()
            .sync_data()
            .map_err(|e| Error::io(&self.samples_path, e))?;
        Ok(())
    }
}

/// The fields of one samples-file line, in [`SAMPLE_COLUMNS`] order.
pub(super) fn sample_fields(s: &SampleRow) -> [String; 7] {
    [
        SCHEMA_VERSION.to_string(),
        s.case_key.clone(),
        s.lane.map_or("", Lane::name).to_string(),
        s.series.to_string(),
        s.index.to_string(),
        opt(s.t_ms),
        format!("{}", s.value),
    ]
}
