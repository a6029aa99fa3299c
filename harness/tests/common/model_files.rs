//! A tiny writer of GGUF and safetensors files for the tests: the tensors' data is zeros (or
//! a byte pattern), the header is built byte by byte as the formats lay it out, so a test can
//! also write it wrong on purpose. Shared by the unit tests of `modelfile` and the CLI tests.

#![allow(dead_code)]

/// A tensor to write: name, ggml type code (GGUF) or dtype name (safetensors), shape, bytes.
#[derive(Debug, Clone)]
pub struct TestTensor {
    pub name: String,
    pub ggml_type: u32,
    pub dtype: &'static str,
    /// GGUF order (innermost first); safetensors files get it as given.
    pub shape: Vec<u64>,
    pub bytes: u64,
}

/// An F32 tensor of `shape` (bytes = 4 × elements) in both formats.
pub fn f32_tensor(name: &str, shape: &[u64]) -> TestTensor {
    TestTensor {
        name: name.into(),
        ggml_type: 0,
        dtype: "F32",
        shape: shape.to_vec(),
        bytes: 4 * shape.iter().product::<u64>(),
    }
}

/// A Q4_K tensor (256-element blocks of 144 bytes) of `shape`, GGUF only.
pub fn q4k_tensor(name: &str, shape: &[u64]) -> TestTensor {
    TestTensor {
        name: name.into(),
        ggml_type: 12,
        dtype: "U8",
        shape: shape.to_vec(),
        bytes: shape[0] / 256 * 144 * shape[1..].iter().product::<u64>(),
    }
}

fn gguf_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A GGUF file (`version` 2 or 3) with `general.architecture`, an optional
/// `general.alignment` (u32), a string array (a vocabulary, skipped by readers), and the
/// tensors laid out one after another, each padded to the alignment.
pub fn gguf(version: u32, alignment: Option<u32>, tensors: &[TestTensor]) -> Vec<u8> {
    let align = u64::from(alignment.unwrap_or(32));
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    let kvs = 2 + u64::from(alignment.is_some());
    out.extend_from_slice(&kvs.to_le_bytes());
    gguf_string(&mut out, "general.architecture");
    out.extend_from_slice(&8u32.to_le_bytes());
    gguf_string(&mut out, "llama");
    gguf_string(&mut out, "tokenizer.ggml.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&3u64.to_le_bytes());
    for tok in ["<s>", "</s>", "hello"] {
        gguf_string(&mut out, tok);
    }
    if let Some(a) = alignment {
        gguf_string(&mut out, "general.alignment");
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&a.to_le_bytes());
    }
    let mut offset = 0u64;
    for t in tensors {
        gguf_string(&mut out, &t.name);
        out.extend_from_slice(&(t.shape.len() as u32).to_le_bytes());
        for d in &t.shape {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&t.ggml_type.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        offset = (offset + t.bytes).div_ceil(align) * align;
    }
    let data_start = (out.len() as u64).div_ceil(align) * align;
    out.resize(data_start as usize, 0);
    for (i, t) in tensors.iter().enumerate() {
        out.extend(std::iter::repeat_n(i as u8, t.bytes as usize));
        let padded = (out.len() as u64 - data_start).div_ceil(align) * align;
        if i + 1 < tensors.len() {
            out.resize((data_start + padded) as usize, 0);
        }
    }
    out
}

/// A safetensors file with the tensors in order and a `__metadata__` entry.
pub fn safetensors(tensors: &[TestTensor]) -> Vec<u8> {
    let mut entries = vec![r#""__metadata__":{"format":"pt"}"#.to_string()];
    let mut offset = 0u64;
    for t in tensors {
        let shape: Vec<String> = t.shape.iter().map(u64::to_string).collect();
        entries.push(format!(
            r#""{}":{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}}"#,
            t.name,
            t.dtype,
            shape.join(","),
            offset,
            offset + t.bytes
        ));
        offset += t.bytes;
    }
    let header = format!("{{{}}}", entries.join(","));
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    for (i, t) in tensors.iter().enumerate() {
        out.extend(std::iter::repeat_n(i as u8, t.bytes as usize));
    }
    out
}

/// A small llama-like model: embeddings, `layers` blocks of attention and feed-forward weights
/// (Q4_K in GGUF, F32 in safetensors), a norm and the output.
pub fn llama_like(layers: u32, gguf_names: bool) -> Vec<TestTensor> {
    let q = |n: &str, s: &[u64]| {
        if gguf_names {
            q4k_tensor(n, s)
        } else {
            f32_tensor(n, s)
        }
    };
    let mut out = vec![if gguf_names {
        q("token_embd.weight", &[256, 8])
    } else {
        q("model.embed_tokens.weight", &[8, 256])
    }];
    for l in 0..layers {
        if gguf_names {
            out.push(q(&format!("blk.{l}.attn_q.weight"), &[256, 4]));
            out.push(q(&format!("blk.{l}.ffn_up.weight"), &[512, 4]));
            out.push(f32_tensor(&format!("blk.{l}.attn_norm.weight"), &[256]));
        } else {
            out.push(q(
                &format!("model.layers.{l}.self_attn.q_proj.weight"),
                &[4, 256],
            ));
            out.push(q(
                &format!("model.layers.{l}.mlp.up_proj.weight"),
                &[4, 512],
            ));
            out.push(f32_tensor(
                &format!("model.layers.{l}.input_layernorm.weight"),
                &[256],
            ));
        }
    }
    out.push(f32_tensor(
        if gguf_names {
            "output_norm.weight"
        } else {
            "model.norm.weight"
        },
        &[256],
    ));
    out
}
