//! GGUF (ggml's `docs/gguf.md`), versions 2 and 3, little-endian: `GGUF`, version u32, tensor
//! count u64, key-value count u64, the typed key-value pairs, then per tensor its name, n_dims
//! u32, dims u64[n_dims], ggml type u32 and offset u64 into the data section, which starts at
//! the next multiple of `general.alignment` (32 when absent). Sizes are not stored: each comes
//! from the type's block size and the element count, and is checked against the next tensor's
//! offset and the end of the file.

use super::source::{Parsed, Source};
use super::{Format, Tensor, TensorTable, check_extents, ggml_type, layer_of};
use crate::error::ModelProblem;
use std::io::{Read, Seek};

pub const MAGIC: &[u8; 4] = b"GGUF";
/// ggml's `GGML_MAX_DIMS`.
const MAX_DIMS: u32 = 4;
/// Longest key or tensor name kept (names are at most 64 bytes in ggml; keys are short).
const MAX_NAME: u64 = 64 * 1024;
/// Longest string value kept (only `general.architecture` is kept; others are skipped).
const MAX_KEPT_VALUE: u64 = 1024;
/// Arrays nest this deep at most.
const MAX_DEPTH: u32 = 8;
const DEFAULT_ALIGNMENT: u64 = 32;
/// Smallest key-value pair: an empty key (8), a type (4), a one-byte value.
const MIN_KV_BYTES: u64 = 13;
/// Smallest tensor entry: an empty name (8), n_dims (4), type (4), offset (8).
const MIN_TENSOR_BYTES: u64 = 24;

/// The key-value pairs pinscope keeps.
#[derive(Default)]
struct Kept {
    alignment: Option<u64>,
    architecture: Option<String>,
}

/// A scalar value read from a key-value pair (strings only when asked for).
enum Value {
    Unsigned(u64),
    Signed(i64),
    Text(String),
    Other,
}

pub fn read<R: Read + Seek>(src: &mut Source<R>) -> Parsed<TensorTable> {
    if src.array::<4>()? != *MAGIC {
        return src.stop_at(0, ModelProblem::BadMagic);
    }
    let version = src.u32()?;
    if !(2..=3).contains(&version) {
        return src.stop_at(4, ModelProblem::Version(version));
    }
    let tensor_count = src.u64()?;
    let tensors_at = src.pos() - 8;
    let kv_count = src.u64()?;
    let kv_count = src.bound_count("key-value pairs", kv_count, MIN_KV_BYTES)?;
    let kept = read_pairs(src, kv_count)?;
    let tensor_count = bound_at(src, tensors_at, tensor_count)?;
    let alignment = kept.alignment.unwrap_or(DEFAULT_ALIGNMENT);
    let mut tensors = read_infos(src, tensor_count)?;
    let data_offset = src.pos().div_ceil(alignment) * alignment;
    let end_of_infos = src.pos();
    place(
        &mut tensors,
        data_offset,
        alignment,
        src.len(),
        end_of_infos,
    )?;
    Ok(TensorTable {
        format: Format::Gguf,
        version: Some(version),
        file_bytes: src.len(),
        data_offset,
        alignment: Some(alignment),
        architecture: kept.architecture,
        tensors,
    })
}

/// The tensor count, bounded by what is left after the key-value pairs.
fn bound_at<R: Read + Seek>(src: &Source<R>, at: u64, count: u64) -> Parsed<usize> {
    let fits = count
        .checked_mul(MIN_TENSOR_BYTES)
        .is_some_and(|b| b <= src.remaining());
    match usize::try_from(count) {
        Ok(n) if fits => Ok(n),
        _ => src.stop_at(
            at,
            ModelProblem::Count {
                what: "tensors",
                count,
            },
        ),
    }
}

fn string<R: Read + Seek>(src: &mut Source<R>, what: &'static str, limit: u64) -> Parsed<String> {
    let at = src.pos();
    let len = src.u64()?;
    let bytes = src.bytes(what, len, limit)?;
    String::from_utf8(bytes).or_else(|_| src.stop_at(at, ModelProblem::NotUtf8 { what }))
}

fn read_pairs<R: Read + Seek>(src: &mut Source<R>, count: usize) -> Parsed<Kept> {
    let mut kept = Kept::default();
    for _ in 0..count {
        let key = string(src, "key", MAX_NAME)?;
        let ty_at = src.pos();
        let ty = src.u32()?;
        let keep_text = key == "general.architecture";
        let value = value(src, ty, ty_at, keep_text, 0)?;
        match (key.as_str(), value) {
            ("general.alignment", v) => kept.alignment = Some(alignment(src, ty_at, v)?),
            ("general.architecture", Value::Text(a)) => kept.architecture = Some(a),
            _ => {}
        }
    }
    Ok(kept)
}

/// `general.alignment`: a positive power of two, as ggml requires.
fn alignment<R: Read + Seek>(src: &Source<R>, at: u64, v: Value) -> Parsed<u64> {
    let a = match v {
        Value::Unsigned(a) => Some(a),
        Value::Signed(a) => u64::try_from(a).ok(),
        _ => None,
    };
    match a.filter(|a| a.is_power_of_two() && *a <= 1 << 30) {
        Some(a) => Ok(a),
        None => src.stop_at(
            at,
            ModelProblem::Invalid {
                what: "general.alignment is not a power of two up to 1 GiB".into(),
            },
        ),
    }
}

/// Bytes of a fixed-size value type; `None` for strings and arrays.
fn fixed_size(ty: u32) -> Option<u64> {
    match ty {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

fn value<R: Read + Seek>(
    src: &mut Source<R>,
    ty: u32,
    ty_at: u64,
    keep_text: bool,
    depth: u32,
) -> Parsed<Value> {
    Ok(match ty {
        0 => Value::Unsigned(u64::from(src.array::<1>()?[0])),
        2 => Value::Unsigned(u64::from(u16::from_le_bytes(src.array()?))),
        4 => Value::Unsigned(u64::from(src.u32()?)),
        10 => Value::Unsigned(src.u64()?),
        1 => Value::Signed(i64::from(i8::from_le_bytes(src.array()?))),
        3 => Value::Signed(i64::from(i16::from_le_bytes(src.array()?))),
        5 => Value::Signed(i64::from(i32::from_le_bytes(src.array()?))),
        11 => Value::Signed(i64::from_le_bytes(src.array()?)),
        8 if keep_text => Value::Text(string(src, "string value", MAX_KEPT_VALUE)?),
        8 => {
            let len = src.u64()?;
            src.skip(len)?;
            Value::Other
        }
        9 => {
            skip_array(src, depth)?;
            Value::Other
        }
        _ => match fixed_size(ty) {
            Some(n) => {
                src.skip(n)?;
                Value::Other
            }
            None => {
                return src.stop_at(
                    ty_at,
                    ModelProblem::UnknownType {
                        what: "value type",
                        code: ty,
                    },
                );
            }
        },
    })
}

fn skip_array<R: Read + Seek>(src: &mut Source<R>, depth: u32) -> Parsed<()> {
    if depth >= MAX_DEPTH {
        return src.stop(ModelProblem::Invalid {
            what: format!("arrays nest deeper than {MAX_DEPTH} levels"),
        });
    }
    let ty_at = src.pos();
    let ty = src.u32()?;
    let count = src.u64()?;
    let min_each = match ty {
        8 => 8,
        9 => 12,
        t => fixed_size(t).unwrap_or(1),
    };
    let count = src.bound_count("array elements", count, min_each)?;
    if let Some(n) = fixed_size(ty) {
        return src.skip(n * count as u64);
    }
    for _ in 0..count {
        value(src, ty, ty_at, false, depth + 1)?;
    }
    Ok(())
}

/// One tensor's entry, its offset still relative to the data section.
fn read_infos<R: Read + Seek>(src: &mut Source<R>, count: usize) -> Parsed<Vec<Tensor>> {
    // The count is bounded by the file's size at 24 bytes an entry; a `Tensor` is larger, so
    // the vector grows as entries are read rather than being sized by the count.
    let mut tensors = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let name = string(src, "tensor name", MAX_NAME)?;
        let dims_at = src.pos();
        let n_dims = src.u32()?;
        if n_dims > MAX_DIMS {
            return src.stop_at(
                dims_at,
                ModelProblem::Invalid {
                    what: format!("tensor has {n_dims} dimensions, more than ggml's {MAX_DIMS}"),
                },
            );
        }
        let shape = (0..n_dims)
            .map(|_| src.u64())
            .collect::<Parsed<Vec<u64>>>()?;
        let ty_at = src.pos();
        let code = src.u32()?;
        let Some(ty) = ggml_type(code) else {
            let what = "ggml type";
            return src.stop_at(ty_at, ModelProblem::UnknownType { what, code });
        };
        let bytes = ty.bytes(&shape).or_else(|why| {
            src.stop_at(
                dims_at,
                ModelProblem::Invalid {
                    what: format!("tensor `{}`: {why}", name.escape_debug()),
                },
            )
        })?;
        let offset = src.u64()?;
        let layer = layer_of(&name, Format::Gguf);
        let dtype = super::Dtype::Ggml(ty);
        tensors.push(Tensor {
            name,
            dtype,
            shape,
            bytes,
            offset,
            layer,
        });
    }
    Ok(tensors)
}

/// Makes offsets absolute, checks their alignment, sorts by offset, and refuses tensors that
/// overlap or run past the end (reported at the end of the tensor table, where data starts).
fn place(
    tensors: &mut [Tensor],
    data_offset: u64,
    alignment: u64,
    file_bytes: u64,
    at: u64,
) -> Parsed<()> {
    for t in tensors.iter_mut() {
        let stop = |what: String| {
            Err(super::source::Failure::Malformed(super::source::Stop {
                offset: at,
                problem: ModelProblem::Invalid { what },
            }))
        };
        if t.offset % alignment != 0 {
            return stop(format!(
                "tensor `{}` starts at {}, not a multiple of the alignment {alignment}",
                t.name.escape_debug(),
                t.offset
            ));
        }
        match data_offset.checked_add(t.offset) {
            Some(o) => t.offset = o,
            None => {
                return stop(format!(
                    "tensor `{}` starts past 2^64",
                    t.name.escape_debug()
                ));
            }
        }
    }
    tensors.sort_by_key(|t| t.offset);
    check_extents(tensors, file_bytes, at)
}
