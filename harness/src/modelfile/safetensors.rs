//! safetensors: an 8-byte little-endian header length, then that many bytes of JSON
//! (`{name: {dtype, shape, data_offsets: [start, end]}, "__metadata__": {…}}`), then the data,
//! offsets counted from the byte after the header. The JSON is read and validated by Hugging
//! Face's `safetensors` crate (offsets contiguous from 0, sizes matching dtype × shape); this
//! module bounds the header by the file first and checks that the data ends with the file.

use super::source::{Failure, Parsed, Source, Stop};
use super::{Dtype, Format, Tensor, TensorTable, check_extents, layer_of};
use crate::error::ModelProblem;
use std::io::{Read, Seek};

/// The `safetensors` crate's own bound on the header (`MAX_HEADER_SIZE`).
const MAX_HEADER: u64 = 100_000_000;

pub fn read<R: Read + Seek>(src: &mut Source<R>) -> Parsed<TensorTable> {
    let n = src.u64()?;
    let header = src.bytes("header", n, MAX_HEADER)?;
    let text = std::str::from_utf8(&header).or_else(|e| {
        src.stop_at(
            8 + e.valid_up_to() as u64,
            ModelProblem::NotUtf8 { what: "header" },
        )
    })?;
    let metadata: safetensors::tensor::Metadata =
        serde_json::from_str(text).map_err(|e| json_stop(text, &e))?;
    let data_offset = 8 + n;
    let mut tensors = tensors(&metadata, data_offset, src)?;
    tensors.sort_by_key(|t| t.offset);
    check_extents(&tensors, src.len(), 8)?;
    let data_end = data_offset.saturating_add(metadata.data_len() as u64);
    if data_end != src.len() {
        return src.stop_at(
            data_end.min(src.len()),
            ModelProblem::Invalid {
                what: format!(
                    "the header's tensors end at byte {data_end} and the file at {}",
                    src.len()
                ),
            },
        );
    }
    Ok(TensorTable {
        format: Format::Safetensors,
        version: None,
        file_bytes: src.len(),
        data_offset,
        alignment: None,
        architecture: None,
        tensors,
    })
}

/// Where the JSON stopped: serde_json counts lines and columns; the header's byte is found from
/// them (a one-line header, as writers make, is column − 1 past byte 8).
fn json_stop(text: &str, e: &serde_json::Error) -> Failure {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = 8 + (line_start + e.column().saturating_sub(1)) as u64;
    Failure::Malformed(Stop {
        offset,
        problem: ModelProblem::Invalid {
            what: format!("the JSON header is not a valid safetensors table ({e})"),
        },
    })
}

fn tensors<R: Read + Seek>(
    metadata: &safetensors::tensor::Metadata,
    data_offset: u64,
    src: &Source<R>,
) -> Parsed<Vec<Tensor>> {
    let mut out = Vec::new();
    for (name, info) in metadata.tensors() {
        let (start, end) = info.data_offsets;
        let Some(offset) = data_offset.checked_add(start as u64) else {
            return src.stop_at(
                8,
                ModelProblem::Invalid {
                    what: format!("tensor `{}` starts past 2^64", name.escape_debug()),
                },
            );
        };
        out.push(Tensor {
            layer: layer_of(&name, Format::Safetensors),
            dtype: Dtype::Safetensors(info.dtype),
            shape: info.shape.iter().map(|&d| d as u64).collect(),
            bytes: (end - start) as u64,
            offset,
            name,
        });
    }
    Ok(out)
}
