use super::*;
use crate::error::ModelProblem;
use crate::test_models::{f32_tensor, gguf, llama_like, q4k_tensor, safetensors};
use std::io::Cursor;

fn table(bytes: &[u8], format: Format) -> Result<TensorTable, source::Stop> {
    match read_from(Cursor::new(bytes), bytes.len() as u64, format) {
        Ok(t) => Ok(t),
        Err(source::Failure::Malformed(stop)) => Err(stop),
        Err(source::Failure::Io(e)) => panic!("no I/O error from memory: {e}"),
    }
}

#[test]
fn a_gguf_v3_table_has_names_types_shapes_sizes_absolute_offsets_and_layers() {
    let tensors = llama_like(2, true);
    let bytes = gguf(3, None, &tensors);
    let t = table(&bytes, Format::Gguf).expect("valid");
    assert_eq!(
        (t.format, t.version, t.alignment),
        (Format::Gguf, Some(3), Some(32))
    );
    assert_eq!(t.architecture.as_deref(), Some("llama"));
    assert_eq!(t.file_bytes, bytes.len() as u64);
    assert_eq!(t.data_offset % 32, 0);
    assert_eq!(t.tensors.len(), tensors.len());
    let q = t
        .tensors
        .iter()
        .find(|x| x.name == "blk.1.attn_q.weight")
        .expect("named");
    assert_eq!(
        (q.dtype.name(), q.shape.clone(), q.bytes),
        ("Q4_K".into(), vec![256, 4], 576)
    );
    assert_eq!(q.layer, Some(1));
    // The writer fills tensor i with the byte i: the offset points at that tensor's data.
    let i = tensors
        .iter()
        .position(|x| x.name == q.name)
        .expect("written") as u8;
    assert!(
        bytes[q.offset as usize..(q.offset + q.bytes) as usize]
            .iter()
            .all(|&b| b == i)
    );
    assert_eq!(t.layer_count(), 2);
    assert_eq!(
        t.tensor_bytes(),
        tensors.iter().map(|x| x.bytes).sum::<u64>()
    );
}

#[test]
fn gguf_v2_and_a_stated_alignment_are_read() {
    let tensors = [f32_tensor("a", &[3]), f32_tensor("b", &[5, 2])];
    let bytes = gguf(2, Some(64), &tensors);
    let t = table(&bytes, Format::Gguf).expect("valid");
    assert_eq!((t.version, t.alignment), (Some(2), Some(64)));
    assert_eq!(t.data_offset % 64, 0);
    assert_eq!(t.tensors[1].offset - t.tensors[0].offset, 64);
    assert_eq!(t.tensors[1].bytes, 40);
}

#[test]
fn a_safetensors_table_is_read_with_layers_from_model_layers_names() {
    let tensors = llama_like(3, false);
    let bytes = safetensors(&tensors);
    let t = table(&bytes, Format::Safetensors).expect("valid");
    assert_eq!((t.format, t.version), (Format::Safetensors, None));
    assert_eq!(t.tensors.len(), tensors.len());
    assert_eq!(t.tensors[0].name, "model.embed_tokens.weight");
    assert_eq!(t.tensors[0].offset, t.data_offset);
    let up = t
        .tensors
        .iter()
        .find(|x| x.name.ends_with("2.mlp.up_proj.weight"))
        .expect("named");
    assert_eq!(
        (up.layer, up.bytes, up.shape.clone()),
        (Some(2), 4 * 4 * 512, vec![4, 512])
    );
    assert_eq!(up.dtype.name(), "F32");
    assert_eq!(t.layer_count(), 3);
    assert_eq!(t.data_offset + t.tensor_bytes(), t.file_bytes);
}

#[test]
fn layers_are_parsed_from_the_names_each_format_uses() {
    assert_eq!(layer_of("blk.12.attn_k.weight", Format::Gguf), Some(12));
    assert_eq!(layer_of("token_embd.weight", Format::Gguf), None);
    assert_eq!(layer_of("blk.x.attn", Format::Gguf), None);
    assert_eq!(layer_of("blk.7", Format::Gguf), None);
    let st = Format::Safetensors;
    assert_eq!(
        layer_of("model.layers.31.mlp.down_proj.weight", st),
        Some(31)
    );
    assert_eq!(layer_of("layers.0.attention.wq.weight", st), Some(0));
    assert_eq!(layer_of("model.sublayers.3.x", st), None);
    assert_eq!(layer_of("model.norm.weight", st), None);
}

#[test]
fn the_summary_adds_bytes_by_layer_and_type_and_ranks_the_largest() {
    let bytes = gguf(3, None, &llama_like(2, true));
    let t = table(&bytes, Format::Gguf).expect("valid");
    let s = Summary::of(&t, 2);
    assert_eq!(s.tensor_count, 8);
    assert_eq!(s.by_layer.len(), 3);
    assert_eq!(s.by_layer[0].layer, None);
    assert_eq!(s.layer_bytes(1), 576 + 1152 + 1024);
    assert_eq!(s.by_dtype[0].dtype, "Q4_K");
    assert_eq!(
        s.by_layer.iter().map(|l| l.bytes).sum::<u64>(),
        s.tensor_bytes
    );
    assert_eq!(s.largest.len(), 2);
    assert!(s.largest[0].bytes >= s.largest[1].bytes);
    assert_eq!(s.largest[0].bytes, 1152);
}

fn refused(bytes: &[u8], format: Format) -> source::Stop {
    table(bytes, format).expect_err("refused")
}

#[test]
fn malformed_gguf_headers_are_refused_at_the_byte_where_they_go_wrong() {
    let good = gguf(3, None, &[f32_tensor("blk.0.w", &[8])]);
    let mut bad = good.clone();
    bad[0] = b'X';
    assert_eq!(refused(&bad, Format::Gguf).problem, ModelProblem::BadMagic);
    let mut v1 = good.clone();
    v1[4] = 1;
    assert_eq!(
        refused(&v1, Format::Gguf),
        source::Stop {
            offset: 4,
            problem: ModelProblem::Version(1)
        }
    );
    let mut huge = good.clone();
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let stop = refused(&huge, Format::Gguf);
    assert_eq!(stop.offset, 8);
    assert!(
        matches!(
            stop.problem,
            ModelProblem::Count {
                what: "tensors",
                ..
            }
        ),
        "{stop:?}"
    );
    // Every cut short of the data is refused as truncated, never a panic.
    let data_start = table(&good, Format::Gguf).expect("valid").data_offset as usize;
    for cut in 0..data_start {
        let stop = refused(&good[..cut], Format::Gguf);
        assert!(
            matches!(
                stop.problem,
                ModelProblem::Truncated { .. }
                    | ModelProblem::PastEnd { .. }
                    | ModelProblem::Count { .. }
            ),
            "cut at {cut}: {stop:?}"
        );
    }
}

/// The offset of the tensor entry of a one-tensor file named `name`: after the name's bytes.
fn after_name(bytes: &[u8], name: &str) -> usize {
    bytes
        .windows(name.len())
        .position(|w| w == name.as_bytes())
        .expect("name")
        + name.len()
}

#[test]
fn bad_tensor_entries_are_refused_with_their_offset() {
    let good = gguf(3, None, &[f32_tensor("blk.0.w", &[8])]);
    let at = after_name(&good, "blk.0.w");
    let mut dims = good.clone();
    dims[at..at + 4].copy_from_slice(&9u32.to_le_bytes());
    assert_eq!(refused(&dims, Format::Gguf).offset, at as u64);
    let mut ty = good.clone();
    ty[at + 12..at + 16].copy_from_slice(&4u32.to_le_bytes());
    let stop = refused(&ty, Format::Gguf);
    assert_eq!(
        stop,
        source::Stop {
            offset: at as u64 + 12,
            problem: ModelProblem::UnknownType {
                what: "ggml type",
                code: 4
            }
        }
    );
    let mut past = good.clone();
    past[at + 16..at + 24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(
        refused(&past, Format::Gguf).problem,
        ModelProblem::PastEnd { .. }
    ));
    let mut name = good.clone();
    name[at - 1] = 0xff;
    assert_eq!(
        refused(&name, Format::Gguf).problem,
        ModelProblem::NotUtf8 {
            what: "tensor name"
        }
    );
}

#[test]
fn overlapping_and_unaligned_gguf_tensors_are_refused() {
    let good = gguf(3, None, &[f32_tensor("a", &[8]), f32_tensor("b", &[8])]);
    let at = after_name(&good, "b") + 4 + 8 + 4;
    let mut overlap = good.clone();
    overlap[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    let stop = refused(&overlap, Format::Gguf);
    assert!(
        matches!(stop.problem, ModelProblem::Overlap { .. }),
        "{stop:?}"
    );
    let mut unaligned = good.clone();
    unaligned[at..at + 8].copy_from_slice(&33u64.to_le_bytes());
    assert!(matches!(
        refused(&unaligned, Format::Gguf).problem,
        ModelProblem::Invalid { .. }
    ));
}

#[test]
fn a_q4k_row_that_is_not_whole_blocks_is_refused() {
    let mut t = q4k_tensor("blk.0.w", &[256]);
    t.shape = vec![100];
    let bytes = gguf(3, None, &[t]);
    assert!(matches!(
        refused(&bytes, Format::Gguf).problem,
        ModelProblem::Invalid { .. }
    ));
}

#[test]
fn malformed_safetensors_headers_are_refused_with_an_offset() {
    let good = safetensors(&[f32_tensor("layers.0.w", &[4])]);
    let mut huge = good.clone();
    huge[..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(
        refused(&huge, Format::Safetensors).problem,
        ModelProblem::TooLong { .. }
    ));
    let mut past = good.clone();
    past[..8].copy_from_slice(&((good.len() as u64) + 1).to_le_bytes());
    assert!(matches!(
        refused(&past, Format::Safetensors).problem,
        ModelProblem::Truncated { .. }
    ));
    let mut json = good.clone();
    let colon = json.iter().position(|&b| b == b':').expect("a colon");
    json[colon] = b';';
    let stop = refused(&json, Format::Safetensors);
    assert_eq!(stop.offset, colon as u64, "{stop:?}");
    let mut utf = good.clone();
    utf[10] = 0xff;
    assert_eq!(refused(&utf, Format::Safetensors).offset, 10);
    let short = &good[..good.len() - 1];
    assert!(matches!(
        refused(short, Format::Safetensors).problem,
        ModelProblem::PastEnd { .. }
    ));
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(
        refused(&long, Format::Safetensors).problem,
        ModelProblem::Invalid { .. }
    ));
}

#[test]
fn the_refusal_is_one_sentence_naming_the_file_and_byte_with_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cut.gguf");
    let good = gguf(3, None, &[f32_tensor("w", &[8])]);
    std::fs::write(&path, &good[..20]).expect("write");
    let e = read(&path).expect_err("refused");
    e.assert_bad_input("cut.gguf is not a readable GGUF file: at byte 16,");
    assert_eq!(e.to_string().lines().count(), 1, "{e}");
    let other = dir.path().join("weights.bin");
    std::fs::write(&other, b"nothing").expect("write");
    read(&other)
        .expect_err("refused")
        .assert_bad_input("neither a GGUF file");
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
        let _ = table(&bytes, Format::Gguf);
        let _ = table(&bytes, Format::Safetensors);
    }

    #[test]
    fn mutated_valid_headers_never_panic(
        at in 0usize..4096,
        with in proptest::collection::vec(proptest::num::u8::ANY, 1..9),
        cut in 0usize..4096,
    ) {
        for (format, mut bytes) in [
            (Format::Gguf, gguf(3, Some(64), &llama_like(1, true))),
            (Format::Safetensors, safetensors(&llama_like(1, false))),
        ] {
            let at = at % bytes.len();
            let end = (at + with.len()).min(bytes.len());
            bytes[at..end].copy_from_slice(&with[..end - at]);
            let _ = table(&bytes, format);
            let cut = cut % (bytes.len() + 1);
            let _ = table(&bytes[..cut], format);
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn dropping_a_file_from_the_page_cache_is_recorded_consistently() {
    use page_cache::{Effect, drop_cached, resident};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("weights.bin");
    let size = 8 * crate::units::MIB;
    std::fs::write(&path, vec![7u8; size as usize]).expect("write");
    let before = resident(&path);
    let r = drop_cached(&path, resident).expect("advised");
    assert_eq!(r.file_bytes, size);
    assert_eq!(r.method, page_cache::DROP_METHOD);
    assert_eq!(r.effect, Effect::of(&r.resident_before, &r.resident_after));
    // What the kernel does is its own (tmpfs keeps pages): the record must agree with its counts.
    match (&r.resident_before, &r.resident_after, r.effect) {
        (Ok(b), Ok(a), Effect::Dropped) => assert!(a < b && *b <= size),
        (Ok(b), Ok(a), Effect::Kept) => assert!(a >= b && *b > 0),
        (Ok(0), Ok(_), Effect::AlreadyCold) => {}
        (b, a, Effect::Unknown) => assert!(b.is_err() || a.is_err()),
        other => panic!("inconsistent record {other:?}"),
    }
    // The count taken alone agrees in kind with the record's first one.
    assert_eq!(before.is_ok(), r.resident_before.is_ok());
}

#[cfg(not(target_os = "linux"))]
#[test]
fn page_cache_state_is_unavailable_off_linux() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("weights.bin");
    std::fs::write(&path, b"abc").expect("write");
    assert_eq!(
        page_cache::resident(&path),
        Err(page_cache::Unavailable::ThisOs)
    );
    page_cache::drop_cached(&path, page_cache::resident)
        .expect_err("unavailable")
        .assert_bad_input("unavailable on this OS");
}

#[test]
fn offloading_counts_the_last_blocks_then_the_output_never_the_embeddings() {
    let bytes = gguf(3, None, &llama_like(3, true));
    let t = table(&bytes, Format::Gguf).expect("valid");
    let s = Summary::of(&t, 0);
    assert_eq!(t.offloaded_bytes(1), s.layer_bytes(2));
    assert_eq!(t.offloaded_bytes(2), s.layer_bytes(1) + s.layer_bytes(2));
    let blocks: u64 = (0..3).map(|l| s.layer_bytes(l)).sum();
    assert_eq!(t.offloaded_bytes(3), blocks);
    // One more than the blocks adds output_norm (1 KiB), not token_embd.
    assert_eq!(t.offloaded_bytes(4), blocks + 1024);
    assert_eq!(t.offloaded_bytes(40), blocks + 1024);
}
