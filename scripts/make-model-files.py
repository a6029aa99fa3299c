#!/usr/bin/env python3
"""Writes a GGUF file with the tensor table of llama.cpp's Llama-2 7B Q4_K_M and a safetensors
file of about the same size, their data patterned, for measuring model loads
(`pinscope run model-load --model FILE`, `scripts/publish.sh models`).

Usage: scripts/make-model-files.py OUT_DIR [--scale F] [--force]

  OUT_DIR   writes OUT_DIR/llama-7b-q4_k_m.gguf and OUT_DIR/llama-7b.safetensors
  --scale F every 2-D tensor keeps its row length and gets F times its rows (0 < F <= 4;
            default 1: the full 7B table, 4.08 GB = 3.80 GiB; 1.06 passes 4 GiB); the 291
            tensors and their types stay
  --force   replaces files of these names (without it an existing file is refused)

The GGUF table: token_embd (Q4_K), output (Q6_K), output_norm (F32) and 32 blocks of attn_q,
attn_k, attn_output, ffn_gate, ffn_up (Q4_K), attn_v and ffn_down (Q6_K in the blocks where
llama.cpp's Q4_K_M gives them more bits, else Q4_K), attn_norm and ffn_norm (F32): 291 tensors,
4 081 004 224 bytes of tensors at scale 1, as llama-2-7b.Q4_K_M.gguf has them. The safetensors
file holds the same tensors under Hugging Face's names as U8 rows of the same bytes. The data is
a random block of an odd length repeated, so a copy to the wrong offset does not compare equal.
Python 3 standard library only.
"""

import json
import os
import struct
import sys

# ggml types: code, elements per block, bytes per block.
F32, Q4_K, Q6_K = (0, 1, 4), (12, 256, 144), (14, 256, 210)
EMBD, FFN, VOCAB, BLOCKS = 4096, 11008, 32000, 32
ALIGN = 32
PATTERN_BYTES = (16 << 20) + 4093


def more_bits(i, n=BLOCKS):
    """llama.cpp's use_more_bits: the blocks whose attn_v and ffn_down Q4_K_M makes Q6_K."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def table(scale):
    """(gguf name, hf name, type, [ne0, ne1]) of every tensor, in llama.cpp's order."""
    rows = lambda n: max(1, round(n * scale))
    t = [("token_embd.weight", "model.embed_tokens.weight", Q4_K, [EMBD, rows(VOCAB)])]
    for i in range(BLOCKS):
        v, down = (Q6_K, Q6_K) if more_bits(i) else (Q4_K, Q4_K)
        hf = f"model.layers.{i}."
        t += [
            (f"blk.{i}.attn_q.weight", hf + "self_attn.q_proj.weight", Q4_K, [EMBD, rows(EMBD)]),
            (f"blk.{i}.attn_k.weight", hf + "self_attn.k_proj.weight", Q4_K, [EMBD, rows(EMBD)]),
            (f"blk.{i}.attn_v.weight", hf + "self_attn.v_proj.weight", v, [EMBD, rows(EMBD)]),
            (f"blk.{i}.attn_output.weight", hf + "self_attn.o_proj.weight", Q4_K, [EMBD, rows(EMBD)]),
            (f"blk.{i}.ffn_gate.weight", hf + "mlp.gate_proj.weight", Q4_K, [EMBD, rows(FFN)]),
            (f"blk.{i}.ffn_up.weight", hf + "mlp.up_proj.weight", Q4_K, [EMBD, rows(FFN)]),
            (f"blk.{i}.ffn_down.weight", hf + "mlp.down_proj.weight", down, [FFN, rows(EMBD)]),
            (f"blk.{i}.attn_norm.weight", hf + "input_layernorm.weight", F32, [EMBD]),
            (f"blk.{i}.ffn_norm.weight", hf + "post_attention_layernorm.weight", F32, [EMBD]),
        ]
    t += [
        ("output_norm.weight", "model.norm.weight", F32, [EMBD]),
        ("output.weight", "lm_head.weight", Q6_K, [EMBD, rows(VOCAB)]),
    ]
    return t


def nbytes(ty, dims):
    elements = 1
    for d in dims:
        elements *= d
    return elements // ty[1] * ty[2]


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_header(tensors):
    """The GGUF v3 header and tensor infos, padded to the alignment; the data offsets."""
    kv = [
        gguf_str("general.architecture") + struct.pack("<I", 8) + gguf_str("llama"),
        gguf_str("general.name") + struct.pack("<I", 8) + gguf_str("pinscope llama-7b q4_k_m table"),
        gguf_str("general.alignment") + struct.pack("<II", 4, ALIGN),
        gguf_str("llama.block_count") + struct.pack("<II", 4, BLOCKS),
    ]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv)
    offset, offsets = 0, []
    for name, _, ty, dims in tensors:
        out += gguf_str(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ty[0], offset)
        offsets.append(offset)
        offset += -(-nbytes(ty, dims) // ALIGN) * ALIGN
    out += b"\0" * (-len(out) % ALIGN)
    return out, offset


def safetensors_header(tensors):
    """The safetensors header (length and JSON) and the data's length."""
    meta, at = {"__metadata__": {"format": "pt"}}, 0
    for _, name, ty, dims in tensors:
        n = nbytes(ty, dims)
        rows = dims[1] if len(dims) > 1 else 1
        meta[name] = {"dtype": "U8", "shape": [rows, n // rows], "data_offsets": [at, at + n]}
        at += n
    text = json.dumps(meta, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, at


def write(path, header, data_bytes, force):
    if os.path.exists(path) and not force:
        sys.exit(f"{path} exists: give --force to replace it, or another folder")
    block = os.urandom(PATTERN_BYTES)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(header)
        left = data_bytes
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    print(f"{path}: {len(header) + data_bytes} bytes")


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    scale, force = 1.0, "--force" in argv
    if "--scale" in argv:
        i = argv.index("--scale")
        try:
            scale = float(argv[i + 1])
        except (IndexError, ValueError):
            sys.exit("--scale needs a number, like --scale 0.25")
        args = [a for a in args if a != argv[i + 1]]
    if len(args) != 1 or not 0 < scale <= 4:
        sys.exit(__doc__.split("\n\n")[1])
    out = args[0]
    os.makedirs(out, exist_ok=True)
    tensors = table(scale)
    header, data = gguf_header(tensors)
    write(os.path.join(out, "llama-7b-q4_k_m.gguf"), header, data, force)
    header, data = safetensors_header(tensors)
    write(os.path.join(out, "llama-7b.safetensors"), header, data, force)


if __name__ == "__main__":
    main(sys.argv[1:])
