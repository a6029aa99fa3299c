//! The files a scenario names as its workload. `model = "path"`: a GGUF or safetensors file;
//! each case with `layers = N` then moves the bytes of N of its layers, read from the file's
//! tensor table, where without a model it moves its `size` as written. `file = "path"`: a file
//! whose bytes are the data to load (checked to be a readable regular file; the file-load
//! strategies that read it need a GPU and are described in docs/models.md). Relative paths are
//! relative to the scenario file's folder; `--model` on the command line replaces `model`.

use super::Scenario;
use super::file_load::{DATA_FILE, LoadSource};
use super::raw::{self, Kind, Pos};
use crate::Error;
use crate::error::Problem;
use crate::modelfile::{Summary, TensorTable};
use crate::units::format_size;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `model` and `file` as the scenario wrote them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FilePaths {
    pub model: Option<String>,
    pub file: Option<String>,
}

/// A model file read for a scenario: where, its tensor table and its sums.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelWorkload {
    pub path: PathBuf,
    pub table: TensorTable,
    pub summary: Summary,
}

/// Reads `model` and `file`: each a non-empty string.
pub(super) fn read_paths(root: &raw::Table, problems: &mut Vec<Problem>) -> FilePaths {
    let mut read = |key: &str| {
        let e = root.get(key)?;
        let bad = |pos: Pos, what: &str| {
            pos.problem(format!(
                "`{key}` must be the path of a file as a string, like {key} = \"models/llama-7b-q4_k_m.gguf\", not {what}"
            ))
        };
        match &e.value.kind {
            Kind::Str(s) if !s.trim().is_empty() => Some(s.clone()),
            Kind::Str(_) => {
                problems.push(bad(e.value.pos, "an empty string"));
                None
            }
            other => {
                problems.push(bad(e.value.pos, other.type_name()));
                None
            }
        }
    };
    FilePaths {
        model: read("model"),
        file: read("file"),
    }
}

/// `written`, relative to the scenario file's folder when it is relative and the scenario was
/// read from a file (a shipped scenario's paths are relative to the current folder).
fn resolve(s: &Scenario, written: &str) -> PathBuf {
    let p = Path::new(written);
    match Path::new(&s.path).parent() {
        Some(dir) if !s.shipped && p.is_relative() => dir.join(p),
        _ => p.to_path_buf(),
    }
}

impl Scenario {
    /// Checks the scenario's `file` and reads its `model`, resizing the cases with `layers`.
    pub(super) fn attach_files(&mut self) -> Result<(), Error> {
        if let Some(f) = self.files.file.clone() {
            let path = resolve(self, &f);
            crate::input::check_regular(&path, &DATA_FILE)?;
            if self.has_load_cases() {
                let source = std::sync::Arc::new(LoadSource::read(&path)?);
                self.load_from(&source);
            }
        }
        if let Some(m) = self.files.model.clone() {
            let path = resolve(self, &m);
            self.use_model(&path)?;
        }
        Ok(())
    }

    /// Every case sampled exactly `n` times (`--repeat`): `measure.min_samples` and `max_samples`
    /// become `n`, so neither the spread target nor the time limit ends a case sooner.
    pub fn measure_each(&mut self, n: u32) {
        for c in self.cases.iter_mut() {
            c.measure.min_samples = n;
            c.measure.max_samples = n;
        }
    }

    /// Reads the model at `path` and gives each case with `layers = N` the bytes of N of its
    /// layers as its size (rounded up to the 16 bytes every size is a multiple of).
    pub fn use_model(&mut self, path: &Path) -> Result<(), Error> {
        if !self.cases.iter().any(|c| c.layers.is_some()) && !self.has_load_cases() {
            return Err(Error::Usage(format!(
                "{} has no case with `layers = N` and no file-load mode: no case would move the model (add `layers` to the cases that load its layers, or use a `load-*` mode)",
                self.path
            )));
        }
        let table = crate::modelfile::read(path)?;
        if self.has_load_cases() {
            let len = crate::input::check_regular(path, &DATA_FILE)?;
            let source = std::sync::Arc::new(LoadSource::new(path, len, Some(&table)));
            self.load_from(&source);
        }
        for c in self.cases.iter_mut() {
            let Some(n) = c.layers else { continue };
            let bytes = table.offloaded_bytes(n);
            if bytes == 0 {
                return Err(Error::Usage(format!(
                    "{}: case `{}` moves {n} layers and {} has no tensors in them: give a model with layers (`pinscope model FILE` shows them)",
                    self.path,
                    c.label,
                    path.display()
                )));
            }
            c.size = bytes.div_ceil(16) * 16;
            c.chunk = c.chunk.map(|k| k.min(c.size));
        }
        let summary = Summary::of(&table, 5);
        self.model = Some(ModelWorkload {
            path: path.to_path_buf(),
            table,
            summary,
        });
        Ok(())
    }

    /// Whether a case loads the scenario's file (a `load-*` mode).
    fn has_load_cases(&self) -> bool {
        self.cases.iter().any(|c| c.mode.declaration().reads_file)
    }

    /// Gives every file-load case `source` to load, and its size as the case's.
    fn load_from(&mut self, source: &std::sync::Arc<LoadSource>) {
        for c in self.cases.iter_mut() {
            if c.mode.declaration().reads_file {
                c.size = source.file_bytes;
                c.chunk = c.chunk.map(|k| k.min(source.file_bytes));
                c.source = Some(source.clone());
            }
        }
    }

    /// Refuses a scenario whose file-load cases have no file to load: one sentence saying where
    /// to name it. Checked once `--model` has been applied.
    pub fn require_sources(&self) -> Result<(), Error> {
        match self
            .cases
            .iter()
            .find(|c| c.mode.declaration().reads_file && c.source.is_none())
        {
            Some(c) => Err(Error::Usage(format!(
                "{}: case `{}` has mode = \"{}\", which loads a file, and the scenario names none: give --model FILE, or `file = \"path\"` or `model = \"path\"` in the scenario",
                self.path, c.label, c.mode
            ))),
            None => Ok(()),
        }
    }

    /// What `plan` says about the model and the file: the file's tensor totals and each case's
    /// layers and bytes. Empty without either.
    pub fn workload_lines(&self) -> String {
        let mut out = String::new();
        if let Some(m) = &self.model {
            let t = &m.table;
            let _ = writeln!(
                out,
                "model: {} — {}{}, {} tensors, {} in tensors ({} bytes), {} layers",
                m.path.display(),
                t.format.name(),
                t.version.map(|v| format!(" v{v}")).unwrap_or_default(),
                m.summary.tensor_count,
                format_size(m.summary.tensor_bytes),
                m.summary.tensor_bytes,
                m.summary.layer_count
            );
            let blocks = m.summary.layer_count;
            for c in self.cases.iter().filter(|c| c.layers.is_some()) {
                let n = c.layers.unwrap_or_default();
                let which = if n > blocks {
                    format!("all {blocks} layers of the file and its output ({n} asked)")
                } else {
                    format!("the last {n} of the file's {blocks} layers")
                };
                let _ = writeln!(
                    out,
                    "  {}: {which}, {} ({} bytes)",
                    c.label,
                    format_size(c.size),
                    c.size
                );
            }
        }
        if self.model.is_none() && self.files.file.is_none() && self.has_load_cases() {
            let _ = writeln!(
                out,
                "file: none — the load-* cases load a file: give --model FILE, or `file = \"path\"` or `model = \"path\"` in the scenario (run refuses them without one; the sizes above are as written)"
            );
        }
        if let Some(f) = &self.files.file {
            let path = resolve(self, f);
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let resident = super::file_load::resident(&path)
                .map(format_size)
                .unwrap_or_else(|why| why.sentence().to_string());
            let _ = writeln!(
                out,
                "file: {} — {}, in the page cache: {resident}",
                path.display(),
                format_size(size)
            );
        }
        out
    }
}
