//! Scenarios: TOML files describing transfer experiments. Parsed in stages — raw TOML with source
//! positions (`raw`), typed and checked values (`validate`), the cartesian product of the sweeps
//! with the rules about combinations (`expand`) — into a [`Scenario`]. `plan` prints what a
//! scenario expands to. Every problem of a file is reported at once, each at its line:column.
//!
//! The grammar, in short (harness/scenarios/README.md has the long form):
//!
//! ```toml
//! name = "quick"                        # [a-z0-9-_]+
//! description = "the question it answers"
//! [defaults]                            # any case key
//! measure = { min_samples = 3 }
//! [sweep]                               # axes applied to every case
//! direction = ["h2d", "d2h"]
//! [[case]]
//! label = "pinned"                      # unique
//! host = "alloc"                        # pageable | alloc | register | managed
//! flags = ["mapped"]                    # portable | mapped | write-combined
//! engine = "copy"                       # copy | kernel | kernel-read | kernel-write | cpu-read | cpu-write
//! guard = true                          # false: try allocations beyond free device memory
//! probes = { pinned_ceiling = true, ceiling_chunk = "256MiB" }
//! sweep = { size = ["64MiB", "1GiB"], "measure.batch" = [1, 8] }
//! [[claim]]
//! text = "..."
//! case = "pinned"
//! metric = "bw_median_gbs"
//! op = ">="
//! value = 20.0
//! [[derived]]                           # computed after the run, see `claims::derive`
//! text = "load time"
//! cases = ["pinned"]                    # labels that expand to one case each; the metric is summed
//! metric = "time_median_ms"
//! scale = 1e-3                          # value = scale × sum, or scale / sum with invert = true
//! unit = "s"
//! ```

mod axes;
mod characters;
mod claim;
mod expand;
mod file_load;
mod fits;
mod keys;
mod model;
mod modes;
mod named;
pub(crate) use named::written_as_text;
mod plan;
mod raw;
pub mod shipped;
mod suggest;
mod sweep;
mod validate;
mod validate_blocks;
mod values;
mod vram;
mod workload;

pub use axes::{Axes, CaseKey};
pub use claim::{Claim, ClaimMetric, Derived, Op, PlatformTag, Reference, RowMetric, Unit};
pub use expand::{CASE_LIMIT, DEFAULT_SIZE};
pub use file_load::{Cache, CacheState, CufileMode, FileKind, LoadSource, Region, resident};
pub use fits::{AllowPinned, Refusal, refusal};
pub use model::*;
pub use modes::{ChunkUse, LatencyCall, Load, Mode, ModeDecl, Route, Sampling, Speed, Words};
pub use plan::{
    ASSUMED_DEVICE_BPS, ASSUMED_PAGEABLE_BPS, ASSUMED_PINNED_BPS, DEFAULT_CASE_TIMEOUT,
    DEFAULT_CASE_TIMEOUT_TEXT, DeviceFree, SETUP_S, estimate_seconds, format_bytes_exact,
    format_seconds, latency_counts, plan_summary, plan_table, plan_table_for,
};
pub use vram::{DEFAULT_CYCLES, DEFAULT_PAUSE, DeviceHold, VramKeys};
pub use workload::{FilePaths, ModelWorkload};

use crate::Error;
use crate::error::{Problem, Problems};
use raw::Pos;
use std::path::Path;

/// Largest scenario file read, in bytes (the shipped ones are under 20 KiB; a file of
/// [`CASE_LIMIT`] minimal cases is about 3.7 MB).
pub const MAX_SCENARIO_BYTES: usize = crate::input::SCENARIO_FILE.max_bytes as usize;

fn too_large(path: &str, size: String) -> Error {
    Error::Scenario(Problems {
        path: path.into(),
        items: vec![Pos::START.problem(format!(
            "the file is {size}; scenario files are limited to 4 MiB ({MAX_SCENARIO_BYTES} bytes): split it into several files"
        ))],
    })
}

/// Reads, validates and expands one scenario file. A file over [`MAX_SCENARIO_BYTES`] is refused
/// before it is parsed (and only that much plus one byte is ever read). A path that does not
/// exist but names a shipped scenario ([`shipped::named_by`]) loads that one.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    use crate::input::{SCENARIO_FILE, check_regular, unreadable};
    use std::io::Read;
    let shown = path.display().to_string();
    // What it is, from its metadata: a FIFO or a device is refused without being opened.
    let size = match check_regular(path, &SCENARIO_FILE) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return load_shipped(path, source);
        }
        other => other?,
    };
    if size > MAX_SCENARIO_BYTES as u64 {
        return Err(too_large(&shown, crate::units::format_size(size)));
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_SCENARIO_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(path, e))?;
    if bytes.len() > MAX_SCENARIO_BYTES {
        return Err(too_large(&shown, "over 4 MiB".into()));
    }
    match String::from_utf8(bytes) {
        Ok(text) => {
            let mut s = parse(&shown, &text)?;
            s.attach_files()?;
            Ok(s)
        }
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let prefix = e.as_bytes().get(..valid).unwrap_or_default();
            let prefix = std::str::from_utf8(prefix).unwrap_or_default();
            let pos = raw::Lines::new(prefix).pos(prefix.len());
            Err(Error::Scenario(Problems {
                path: path.to_path_buf(),
                items: vec![pos.problem(
                    "the file is not UTF-8 text (the first bad byte is here): save it as UTF-8",
                )],
            }))
        }
    }
}

/// The shipped scenario `path` names; else, when `path` has the shape of a name, a sentence that
/// points to the shipped ones; else the error `not_found` that opening `path` gave.
fn load_shipped(path: &Path, not_found: std::io::Error) -> Result<Scenario, Error> {
    if let Some(s) = shipped::named_by(path) {
        let mut scenario = parse(&s.shown_path(), s.text)?;
        scenario.shipped = true;
        return Ok(scenario);
    }
    if !shipped::is_name_shaped(path) {
        return Err(Error::io(path, not_found));
    }
    let p = path.display();
    Err(Error::Usage(match shipped::closest(path) {
        Some(near) => format!(
            "{p} does not exist and names no shipped scenario: did you mean `{}`? (`pinscope scenarios` lists them)",
            near.name
        ),
        None => format!(
            "{p} does not exist: check the path, or name a shipped scenario (`pinscope scenarios` lists them)"
        ),
    }))
}

/// Parses, validates and expands scenario text; `path_for_messages` names it in errors and is kept
/// in [`Scenario::path`]. All problems are reported at once, sorted by position.
pub fn parse(path_for_messages: &str, text: &str) -> Result<Scenario, Error> {
    let fail = |mut items: Vec<Problem>| {
        items.sort_by_key(|p| (p.line, p.column));
        // Messages quote what the user wrote: never a raw control character on the terminal.
        for p in &mut items {
            if let std::borrow::Cow::Owned(m) = crate::input::escape_text(&p.message) {
                p.message = m;
            }
        }
        Error::Scenario(Problems {
            path: path_for_messages.into(),
            items,
        })
    };
    if text.len() > MAX_SCENARIO_BYTES {
        return Err(too_large(
            path_for_messages,
            crate::units::format_size(text.len() as u64),
        ));
    }
    let root = raw::parse(text).map_err(|p| fail(vec![p]))?;
    let mut problems = Vec::new();
    characters::check(&root, &mut problems);
    let mut file = validate::validate(&root, &mut problems);
    validate_blocks::add_claims_and_derived(&root, &mut file, &mut problems);
    let cases = expand::expand(&file, &mut problems);
    expand::check_derived(&file, &mut problems);
    if !problems.is_empty() {
        return Err(fail(problems));
    }
    Ok(Scenario {
        name: file.name,
        description: file.description,
        path: path_for_messages.to_string(),
        shipped: false,
        text: text.to_string(),
        cases,
        claims: file.claims,
        derived: file.derived.into_iter().map(|d| d.derived).collect(),
        devices: file.devices,
        files: file.files,
        model: None,
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_claims;
#[cfg(test)]
mod tests_combinations;
#[cfg(test)]
mod tests_engines;
#[cfg(test)]
mod tests_keys;
#[cfg(test)]
mod tests_vram;
