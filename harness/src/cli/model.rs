//! `pinscope model FILE`: a model file's tensor table (GGUF or safetensors) summed by layer and
//! type, its largest tensors, and how much of it the page cache holds; `--drop-cache` makes it
//! cold first. Reads the file's header only and writes nothing.

use crate::Error;
use crate::modelfile::page_cache::{self, DropRecord, Resident};
use crate::modelfile::{Summary, TensorTable};
use crate::units::format_size;
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, Args, Clone)]
pub struct ModelArgs {
    /// The model file: GGUF (v2, v3) or safetensors.
    pub file: PathBuf,
    /// Print JSON (the whole tensor table, the sums and the page-cache state) instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many of the largest tensors to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// First drop the file's pages from the page cache (fdatasync, then
    /// posix_fadvise(POSIX_FADV_DONTNEED); no root needed; Linux) and say what was resident
    /// before and after.
    #[arg(long)]
    pub drop_cache: bool,
}

/// The JSON document of `model --json`.
#[derive(serde::Serialize)]
struct ModelReport<'a> {
    pinscope_version: &'static str,
    file: String,
    table: &'a TensorTable,
    summary: &'a Summary,
    #[serde(serialize_with = "page_cache::resident_field")]
    resident_bytes: Resident,
    drop_cache: Option<&'a DropRecord>,
}

pub fn model_command(args: &ModelArgs) -> Result<i32, Error> {
    let table = crate::modelfile::read(&args.file)?;
    let summary = Summary::of(&table, args.top);
    let dropped = if args.drop_cache {
        Some(page_cache::drop_cached(
            &args.file,
            crate::scenario::resident,
        )?)
    } else {
        None
    };
    let resident = match &dropped {
        Some(d) => d.resident_after.clone(),
        None => crate::scenario::resident(&args.file),
    };
    let text = if args.json {
        let report = ModelReport {
            pinscope_version: env!("CARGO_PKG_VERSION"),
            file: args.file.display().to_string(),
            table: &table,
            summary: &summary,
            resident_bytes: resident,
            drop_cache: dropped.as_ref(),
        };
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::System(format!("the model's JSON could not be written ({e})")))?;
        format!("{json}\n")
    } else {
        render(args, &table, &summary, &resident, dropped.as_ref())
    };
    super::print_out(&text)?;
    Ok(0)
}

fn render(
    args: &ModelArgs,
    table: &TensorTable,
    summary: &Summary,
    resident: &Resident,
    dropped: Option<&DropRecord>,
) -> String {
    let mut out = String::new();
    write_heading(&mut out, args, table, summary);
    if let Some(d) = dropped {
        let _ = writeln!(
            out,
            "drop cache: {} — resident before {}, after {} ({})",
            d.method,
            resident_text(&d.resident_before),
            resident_text(&d.resident_after),
            effect_words(d.effect)
        );
    }
    let _ = match resident {
        Ok(b) => writeln!(
            out,
            "page cache: {} resident, counted with {}",
            format_size(*b),
            page_cache::COUNTED_WITH
        ),
        Err(why) => writeln!(out, "page cache: {}", why.sentence()),
    };
    write_layers(&mut out, summary);
    write_dtypes(&mut out, summary);
    write_largest(&mut out, summary);
    out
}

fn write_heading(out: &mut String, args: &ModelArgs, table: &TensorTable, summary: &Summary) {
    let version = table.version.map(|v| format!(" v{v}")).unwrap_or_default();
    let arch = table
        .architecture
        .as_deref()
        .map(|a| format!(", {}", crate::input::escape_text(a)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{}: {}{version}{arch}, {} ({} bytes), {} tensors, {} in tensors, {} layers",
        args.file.display(),
        table.format.name(),
        format_size(table.file_bytes),
        table.file_bytes,
        summary.tensor_count,
        format_size(summary.tensor_bytes),
        summary.layer_count
    );
    let align = table
        .alignment
        .map(|a| format!(" (alignment {a})"))
        .unwrap_or_default();
    let _ = writeln!(out, "data starts at byte {}{align}", table.data_offset);
}

fn write_layers(out: &mut String, summary: &Summary) {
    let _ = writeln!(
        out,
        "\nbytes by layer\n  {:<10} {:>8} {:>14}",
        "layer", "tensors", "bytes"
    );
    for l in &summary.by_layer {
        let name = l.layer.map_or("(none)".to_string(), |n| n.to_string());
        let _ = writeln!(
            out,
            "  {name:<10} {:>8} {:>14}",
            l.tensors,
            format_size(l.bytes)
        );
    }
}

fn write_dtypes(out: &mut String, summary: &Summary) {
    let _ = writeln!(
        out,
        "\nbytes by type\n  {:<10} {:>8} {:>14}",
        "type", "tensors", "bytes"
    );
    for d in &summary.by_dtype {
        let _ = writeln!(
            out,
            "  {:<10} {:>8} {:>14}",
            d.dtype,
            d.tensors,
            format_size(d.bytes)
        );
    }
}

fn write_largest(out: &mut String, summary: &Summary) {
    let _ = writeln!(out, "\nlargest tensors");
    for t in &summary.largest {
        let shape: Vec<String> = t.shape.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "  {:<40} {:<8} {:<18} {:>12}  at byte {}",
            crate::input::escape_text(&t.name),
            t.dtype.name(),
            format!("[{}]", shape.join(", ")),
            format_size(t.bytes),
            t.offset
        );
    }
}

fn resident_text(r: &Resident) -> String {
    match r {
        Ok(b) => format_size(*b),
        Err(why) => why.sentence().to_string(),
    }
}

fn effect_words(e: page_cache::Effect) -> &'static str {
    use page_cache::Effect::*;
    match e {
        AlreadyCold => "nothing was resident: the file was already cold",
        Dropped => "dropped",
        Kept => "the file system kept the pages (tmpfs or similar): the file stays warm",
        Unknown => "not counted",
    }
}
