//! Model files as workloads: the tensor table of a GGUF (v2, v3) or safetensors file — names,
//! types, shapes, byte sizes, absolute offsets, the layer each tensor belongs to — and the page
//! cache state of a file. Headers are untrusted input: every count and length is bounded by the
//! file's size before anything is allocated, and a malformed one is refused with the byte offset
//! ([`crate::Error::BadModel`]). Nothing here needs a GPU.

mod ggml;
mod gguf;
pub mod page_cache;
mod safetensors;
mod source;
mod summary;

pub use ggml::{GGML_TYPES, GgmlType, ggml_type};
pub use summary::{DtypeBytes, LayerBytes, Summary};

use crate::Error;
use crate::input::{InputKind, check_regular};
use std::io::{Read, Seek};
use std::path::Path;

/// The formats pinscope reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Gguf,
    Safetensors,
}

impl Format {
    /// The name a sentence uses.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gguf => "GGUF",
            Format::Safetensors => "safetensors",
        }
    }
}

/// A tensor's element type: a ggml type (GGUF) or a safetensors dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum Dtype {
    Ggml(GgmlType),
    Safetensors(::safetensors::Dtype),
}

impl Dtype {
    /// The name the format gives it (`Q4_K`, `BF16`).
    pub fn name(&self) -> String {
        match self {
            Dtype::Ggml(t) => t.name.to_string(),
            Dtype::Safetensors(d) => format!("{d:?}"),
        }
    }
}

/// One tensor of the table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tensor {
    pub name: String,
    #[serde(serialize_with = "dtype_name")]
    pub dtype: Dtype,
    /// Dimensions as the file lists them (GGUF: innermost first; safetensors: row-major).
    pub shape: Vec<u64>,
    /// Bytes of its data.
    pub bytes: u64,
    /// Absolute offset of its first byte in the file.
    pub offset: u64,
    /// The layer its name places it in (`blk.N.`, `model.layers.N.`, `layers.N.`).
    pub layer: Option<u32>,
}

fn dtype_name<S: serde::Serializer>(d: &Dtype, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&d.name())
}

/// A model file's tensor table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TensorTable {
    pub format: Format,
    /// GGUF's version; safetensors has none.
    pub version: Option<u32>,
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// Where the data section starts (absolute).
    pub data_offset: u64,
    /// GGUF's `general.alignment` (32 when absent); safetensors has none.
    pub alignment: Option<u64>,
    /// GGUF's `general.architecture`, when present.
    pub architecture: Option<String>,
    /// In file order (by offset).
    pub tensors: Vec<Tensor>,
}

impl TensorTable {
    /// Bytes of all tensors.
    pub fn tensor_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.bytes).sum()
    }

    /// Bytes a loader offloading `n` layers moves to the GPU, counted as llama.cpp offloads: the
    /// last `n` blocks; an `n` past the block count adds the tensors outside every block but the
    /// token embeddings (the output layer), which stay on the host.
    pub fn offloaded_bytes(&self, n: u32) -> u64 {
        let blocks = self.layer_count();
        let first = blocks.saturating_sub(n);
        let in_blocks: u64 = self
            .tensors
            .iter()
            .filter(|t| t.layer.is_some_and(|l| l >= first))
            .map(|t| t.bytes)
            .sum();
        let is_embedding =
            |name: &str| name.starts_with("token_embd.") || name.contains("embed_tokens.");
        let outside: u64 = self
            .tensors
            .iter()
            .filter(|t| t.layer.is_none() && !is_embedding(&t.name))
            .map(|t| t.bytes)
            .sum();
        in_blocks + if n > blocks { outside } else { 0 }
    }

    /// The highest layer index named, plus one (0 with none).
    pub fn layer_count(&self) -> u32 {
        self.tensors
            .iter()
            .filter_map(|t| t.layer)
            .max()
            .map_or(0, |l| l.saturating_add(1))
    }
}

/// Model files are read by their header only; the data may be any size.
const MODEL_FILE: InputKind = InputKind {
    what: "a model file (GGUF or safetensors)",
    max_bytes: u64::MAX,
    max_line: None,
};

/// Reads the tensor table of the GGUF or safetensors file at `path`: the format is told by the
/// first bytes (`GGUF`), else by the `.safetensors` extension, else refused.
pub fn read(path: &Path) -> Result<TensorTable, Error> {
    let len = check_regular(path, &MODEL_FILE)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let format = sniff(&mut reader, path)?;
    read_from(reader, len, format).map_err(|f| failure(path, format, f))
}

/// The format of the file: its magic, else its extension.
fn sniff<R: Read + Seek>(r: &mut R, path: &Path) -> Result<Format, Error> {
    let mut magic = Vec::with_capacity(4);
    (&mut *r)
        .take(4)
        .read_to_end(&mut magic)
        .map_err(|e| Error::io(path, e))?;
    r.rewind().map_err(|e| Error::io(path, e))?;
    if magic == gguf::MAGIC {
        return Ok(Format::Gguf);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "safetensors" => Ok(Format::Safetensors),
        "gguf" => Err(failure(
            path,
            Format::Gguf,
            source::Failure::Malformed(source::Stop {
                offset: 0,
                problem: crate::error::ModelProblem::BadMagic,
            }),
        )),
        _ => Err(Error::Input {
            path: path.to_path_buf(),
            reason: "it is neither a GGUF file (it does not start with `GGUF`) nor named `.safetensors`: give a GGUF or safetensors model file".into(),
        }),
    }
}

/// Reads a table of `format` from `r` (`len` bytes long): the seam the tests and the fuzz
/// property drive with bytes in memory.
pub fn read_from<R: Read + Seek>(r: R, len: u64, format: Format) -> source::Parsed<TensorTable> {
    let mut src = source::Source::new(r, len);
    match format {
        Format::Gguf => gguf::read(&mut src),
        Format::Safetensors => safetensors::read(&mut src),
    }
}

fn failure(path: &Path, format: Format, f: source::Failure) -> Error {
    match f {
        source::Failure::Io(e) => crate::input::unreadable(path, e),
        source::Failure::Malformed(stop) => Error::BadModel {
            path: path.to_path_buf(),
            format: format.name(),
            offset: stop.offset,
            problem: stop.problem,
        },
    }
}

/// The layer a tensor's name places it in: `blk.N.` (GGUF), `layers.N.` at the start or after a
/// dot (`model.layers.N.`, safetensors).
pub fn layer_of(name: &str, format: Format) -> Option<u32> {
    let rest = match format {
        Format::Gguf => name.strip_prefix("blk.")?,
        Format::Safetensors => {
            let at = name
                .match_indices("layers.")
                .find(|&(i, _)| i == 0 || name.as_bytes()[i - 1] == b'.')?
                .0;
            &name[at + "layers.".len()..]
        }
    };
    let digits = rest.split('.').next()?;
    if digits.is_empty() || !rest[digits.len()..].starts_with('.') {
        return None;
    }
    digits.parse().ok()
}

/// Refuses overlapping tensors and tensors past the end; `tensors` sorted by offset.
fn check_extents(tensors: &[Tensor], file_bytes: u64, at: u64) -> source::Parsed<()> {
    use crate::error::ModelProblem;
    let stop = |problem| {
        Err(source::Failure::Malformed(source::Stop {
            offset: at,
            problem,
        }))
    };
    for (i, t) in tensors.iter().enumerate() {
        let end = t.offset.saturating_add(t.bytes);
        if end > file_bytes {
            return stop(ModelProblem::PastEnd {
                tensor: t.name.clone(),
                end,
                file: file_bytes,
            });
        }
        if let Some(next) = tensors.get(i + 1).filter(|n| n.offset < end) {
            return stop(ModelProblem::Overlap {
                tensor: t.name.clone(),
                other: next.name.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
