//! Stage two: the raw tree → typed settings per block and sweeps (`[[claim]]` and `[[derived]]`
//! blocks are read in `validate_blocks`). Each value is checked on its own here (type, unit,
//! range); rules about combinations of keys need the expanded cases and live in `expand`. Every
//! problem is collected, none stops the others.
//!
//! Size: over 500 lines because every case key's value type is checked here (sizes, ranges,
//! durations, flags, sweeps with ranges), each with its own located message and did-you-mean;
//! the keys themselves are declared in `keys`.

use super::axes::CaseKey;
use super::keys::Key;
pub(super) use super::keys::{Given, KEYS, Ty, Val};
use super::raw::{self, Entry, Kind, Pos};
use super::{Case, HostFlags, Threads};
use super::{Claim, Derived};
use crate::error::Problem;
use crate::units;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;
use std::time::Duration;

/// The keys a `[[case]]` block may hold besides the case keys ([`super::keys::KEYS`]; the
/// dotted ones sit under `measure`/`probes`).
const BLOCK_ONLY_KEYS: &[&str] = &["label", "measure", "probes", "sweep"];

/// The names a `[[case]]` block may hold, for suggestions.
fn case_block_keys() -> impl Iterator<Item = &'static str> {
    KEYS.iter()
        .map(Key::name)
        .filter(|k| !k.contains('.'))
        .chain(BLOCK_ONLY_KEYS.iter().copied())
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "devices",
    "defaults",
    "sweep",
    "case",
    "claim",
    "derived",
];
/// Smallest chunk of the pinned-ceiling probe.
pub(super) const MIN_CEILING_CHUNK: u64 = crate::units::MIB;

fn key_spec(name: &str) -> Option<(&'static str, Ty)> {
    super::keys::key(name).map(|k| (k.name(), k.ty))
}

/// Settings of one block, by (dotted) key.
pub(super) type Settings = BTreeMap<&'static str, Given>;

/// One sweep axis: a key and its values in the order written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub key: CaseKey,
    pub pos: Pos,
    pub values: Vec<Given>,
}

/// A `[[case]]` block, typed but not expanded.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CaseBlock {
    /// 1-based position among the `[[case]]` blocks.
    pub number: usize,
    pub label: String,
    pub pos: Pos,
    pub settings: Settings,
    pub sweep: Vec<Axis>,
    /// Problems were found in this block: its combinations are not checked.
    pub broken: bool,
}

/// A `[[derived]]` block with where each of its case labels was written (checked against the
/// expanded cases in `expand`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DerivedBlock {
    /// 1-based position among the `[[derived]]` blocks.
    pub number: usize,
    pub derived: Derived,
    pub label_pos: Vec<Pos>,
}

/// A scenario file, typed but not expanded.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct File {
    pub name: String,
    pub description: String,
    pub defaults: Settings,
    pub sweep: Vec<Axis>,
    pub sweep_pos: Pos,
    pub cases: Vec<CaseBlock>,
    pub claims: Vec<Claim>,
    pub derived: Vec<DerivedBlock>,
    /// `devices = "all"` / `"0,1"` / `[0, 1]`: the GPUs the scenario runs on, all at once.
    pub devices: Option<crate::platform::DeviceSelection>,
    /// Problems in `[defaults]` or `[sweep]`: no combination is checked.
    pub broken: bool,
}

/// The closest candidate, if any is close enough to be a likely typo.
pub(super) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// "; did you mean `x`?" or "".
pub(super) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!("; did you mean `{c}`?"))
}

/// A problem for each key of `t` not among `known`; `here` says where (`in [[claim]] #2`).
pub(super) fn unknown_keys(
    t: &raw::Table,
    here: &str,
    known: &[&str],
    problems: &mut Vec<Problem>,
) {
    for e in &t.entries {
        if !known.contains(&e.key.as_str()) {
            problems.push(e.key_pos.problem(format!(
                "unknown key `{}` {here}{}",
                e.key,
                did_you_mean(&e.key, known.iter().copied())
            )));
        }
    }
}

/// "; did you mean \"x\"?" or "" (for values, which are strings in TOML).
pub(super) fn did_you_mean_value<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!("; did you mean \"{c}\"?"))
}

pub(super) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value as it would appear in TOML, or its type for arrays and tables.
pub(super) fn shown(v: &raw::Value) -> String {
    match &v.kind {
        Kind::Str(s) => format!("\"{s}\""),
        Kind::Int(i) => i.to_string(),
        Kind::Float(f) => f.to_string(),
        Kind::Bool(b) => b.to_string(),
        other => other.type_name().to_string(),
    }
}

/// A value that must be one of a setting enum's names: the index in `names` of the name `v`
/// holds, with the name.
fn choice_value(key: &str, names: &[&str], v: &raw::Value) -> Result<(usize, String), Problem> {
    let expected = format!("`{key}` must be one of {}", quoted_list(names));
    match &v.kind {
        Kind::Str(s) => match names.iter().position(|n| n == s) {
            Some(i) => Ok((i, s.clone())),
            None => Err(v.pos.problem(format!(
                "{expected}, not \"{s}\"{}",
                did_you_mean_value(s, names.iter().copied())
            ))),
        },
        other => Err(v
            .pos
            .problem(format!("{expected}, not {}", other.type_name()))),
    }
}

fn flags_value(key: &str, v: &raw::Value, in_sweep: bool) -> Result<(HostFlags, String), Problem> {
    let Kind::Array(items) = &v.kind else {
        let msg = if in_sweep {
            format!(
                "each value of the sweep axis `{key}` is an array of flags, like flags = [[], [\"mapped\"]], not {}",
                v.kind.type_name()
            )
        } else {
            format!(
                "`{key}` must be an array like [\"mapped\", \"portable\"], not {}",
                v.kind.type_name()
            )
        };
        return Err(v.pos.problem(msg));
    };
    let mut flags = HostFlags::default();
    let mut written = Vec::new();
    for item in items {
        let name = match &item.kind {
            Kind::Str(s) => s.as_str(),
            other => {
                return Err(item.pos.problem(format!(
                    "`{key}` must contain only {}, not {}",
                    quoted_list(&HostFlags::NAMES),
                    other.type_name()
                )));
            }
        };
        match name {
            "portable" => flags.portable = true,
            "mapped" => flags.mapped = true,
            "write-combined" => flags.write_combined = true,
            _ => {
                return Err(item.pos.problem(format!(
                    "`{key}` must contain only {}, not \"{name}\"{}",
                    quoted_list(&HostFlags::NAMES),
                    did_you_mean_value(name, HostFlags::NAMES)
                )));
            }
        }
        if written.contains(&name) {
            return Err(item.pos.problem(format!("`{key}` lists \"{name}\" twice")));
        }
        written.push(name);
    }
    let text = if written.is_empty() {
        "none".to_string()
    } else {
        written.join("+")
    };
    Ok((flags, text))
}

/// The multiple every size key's bytes must be: `size` may be any multiple of 4 (a latency case
/// copies from 4 bytes up; the other modes need 16, a rule in `expand`), the others 16.
fn size_multiple(key: &str) -> u64 {
    if key == "size" { 4 } else { 16 }
}

fn size_value(key: &str, v: &raw::Value) -> Result<(u64, String), Problem> {
    let step = size_multiple(key);
    let multiple = |shown: String| {
        v.pos.problem(format!(
            "`{key}` must be a positive multiple of {step} bytes, not {shown}"
        ))
    };
    let (bytes, written, shown) = match &v.kind {
        Kind::Str(s) => match units::parse_size(s) {
            Ok(b) if b.to_string() == *s => (b, s.clone(), format!("\"{s}\"")),
            Ok(b) => (b, s.clone(), format!("\"{s}\" ({b} bytes)")),
            Err(e) => {
                return Err(v.pos.problem(format!("`{key}` is not a valid size: {e}")));
            }
        },
        Kind::Int(i) => match u64::try_from(*i) {
            Ok(b) => (b, i.to_string(), i.to_string()),
            Err(_) => return Err(multiple(i.to_string())),
        },
        other => {
            return Err(v.pos.problem(format!(
                "`{key}` must be a size like \"64MiB\" or a whole number of bytes, not {}",
                other.type_name()
            )));
        }
    };
    if bytes == 0 || !bytes.is_multiple_of(step) {
        return Err(multiple(shown));
    }
    Ok((bytes, written))
}

fn int_value(key: &str, min: u32, max: u32, v: &raw::Value) -> Result<(u32, String), Problem> {
    let range = if max == u32::MAX {
        format!("a whole number, {min} or more")
    } else {
        format!("a whole number from {min} to {max}")
    };
    match &v.kind {
        Kind::Int(i) => match u32::try_from(*i) {
            Ok(n) if (min..=max).contains(&n) => Ok((n, i.to_string())),
            _ => Err(v.pos.problem(format!("`{key}` must be {range}, not {i}"))),
        },
        other => Err(v.pos.problem(format!(
            "`{key}` must be {range}, not {}",
            other.type_name()
        ))),
    }
}

fn spread_value(key: &str, v: &raw::Value) -> Result<(f64, String), Problem> {
    let x = match &v.kind {
        Kind::Float(f) => *f,
        Kind::Int(i) => *i as f64,
        other => {
            return Err(v.pos.problem(format!(
                "`{key}` must be a number between 0 and 1 (exclusive), like 0.01, not {}",
                other.type_name()
            )));
        }
    };
    if x > 0.0 && x < 1.0 {
        Ok((x, x.to_string()))
    } else {
        Err(v.pos.problem(format!(
            "`{key}` must be a number between 0 and 1 (exclusive), like 0.01, not {}",
            shown(v)
        )))
    }
}

fn duration_value(key: &str, v: &raw::Value) -> Result<(Duration, String), Problem> {
    match &v.kind {
        Kind::Str(s) => units::parse_duration(s)
            .map(|d| (d, s.clone()))
            .map_err(|e| {
                v.pos
                    .problem(format!("`{key}` is not a valid duration: {e}"))
            }),
        other => Err(v.pos.problem(format!(
            "`{key}` must be a duration like \"2s\" or \"100ms\", not {}",
            other.type_name()
        ))),
    }
}

/// Parses one value of a case key (or one value of a sweep axis).
pub(super) fn parse_value(
    key: &'static str,
    ty: Ty,
    v: &raw::Value,
    in_sweep: bool,
) -> Result<Given, Problem> {
    let (val, written) = match ty {
        Ty::Choice { names, val } => choice_value(key, names, v).map(|(i, w)| (val(i), w))?,
        Ty::Flags => flags_value(key, v, in_sweep).map(|(x, w)| (Val::Flags(x), w))?,
        Ty::Size => {
            let (bytes, written) = size_value(key, v)?;
            if key == "probes.ceiling_chunk" && bytes < MIN_CEILING_CHUNK {
                return Err(v.pos.problem(format!(
                    "`{key}` must be at least 1MiB (the probe pins memory chunk by chunk), not {}",
                    shown(v)
                )));
            }
            (Val::Bytes(bytes), written)
        }
        Ty::Int { min, max } => int_value(key, min, max, v).map(|(x, w)| (Val::Int(x), w))?,
        Ty::Threads => match &v.kind {
            Kind::Str(s) if s == "auto" => (Val::Threads(Threads::Auto), "auto".into()),
            Kind::Int(_) => {
                int_value(key, 1, 256, v).map(|(x, w)| (Val::Threads(Threads::Count(x)), w))?
            }
            _ => {
                return Err(v.pos.problem(format!(
                    "`{key}` must be \"auto\" (every CPU this process may use) or a whole number from 1 to 256, not {}",
                    shown(v)
                )));
            }
        },
        Ty::Spread => spread_value(key, v).map(|(x, w)| (Val::Float(x), w))?,
        Ty::Hold => {
            let text = match &v.kind {
                Kind::Str(s) => s.clone(),
                Kind::Int(i) => i.to_string(),
                other => {
                    return Err(v.pos.problem(format!(
                        "`{key}` must be {}, not {}",
                        super::vram::HOLD_FORMS,
                        other.type_name()
                    )));
                }
            };
            let hold = super::vram::DeviceHold::parse(&text)
                .map_err(|e| v.pos.problem(format!("`{key}` {e}")))?;
            (Val::Hold(hold), text)
        }
        Ty::Dur => duration_value(key, v).map(|(x, w)| (Val::Dur(x), w))?,
        Ty::Bool => match &v.kind {
            Kind::Bool(b) => (Val::Bool(*b), b.to_string()),
            other => {
                return Err(v.pos.problem(format!(
                    "`{key}` must be true or false, not {}",
                    other.type_name()
                )));
            }
        },
    };
    Ok(Given {
        val,
        written,
        pos: v.pos,
    })
}

/// A key's default parsed by the same code as a written value; `Ok(None)` for `none`, and the
/// problem when the default in [`KEYS`] does not parse (a test keeps every default valid).
pub(super) fn default_val(k: &Key) -> Result<Option<Given>, Problem> {
    if k.default == "none" {
        return Ok(None);
    }
    let table = raw::parse(&format!("v = {}", k.default))?;
    let Some(entry) = table.get("v") else {
        return Err(Pos::START.problem(format!(
            "the default of `{}` ({}) is not one TOML value",
            k.name(),
            k.default
        )));
    };
    parse_value(k.name(), k.ty, &entry.value, false).map(Some)
}

/// The case every key's default makes (scenario and label empty).
pub(super) fn default_case() -> &'static Case {
    static CASE: OnceLock<Case> = OnceLock::new();
    CASE.get_or_init(|| {
        let mut c = Case::default();
        // A default that does not parse leaves the model's own default in place.
        for k in KEYS {
            if let Ok(Some(v)) = default_val(k) {
                (k.set)(&mut c, &v);
            }
        }
        c
    })
}

/// Where a block is, for messages: "[defaults]", "[[case]] #2".
#[derive(Debug, Clone, Copy)]
enum Block {
    Defaults,
    Case(usize),
}

impl Block {
    fn name(self) -> String {
        match self {
            Block::Defaults => "[defaults]".into(),
            Block::Case(n) => format!("[[case]] #{n}"),
        }
    }
}

/// Reads the case keys of `[defaults]` or a `[[case]]` (not `label`/`sweep`, handled by the caller).
fn parse_settings(
    block: Block,
    entries: &[Entry],
    out: &mut Settings,
    problems: &mut Vec<Problem>,
) {
    for e in entries {
        match e.key.as_str() {
            "label" | "sweep" if matches!(block, Block::Case(_)) => {}
            "label" => problems.push(
                e.key_pos
                    .problem("`label` cannot be in [defaults]: each [[case]] needs its own"),
            ),
            "sweep" => problems.push(e.key_pos.problem(
                "`sweep` cannot be in [defaults]: put axes for every case in the top-level [sweep]",
            )),
            group @ ("measure" | "probes") => {
                let Kind::Table(t) = &e.value.kind else {
                    problems.push(e.value.pos.problem(format!(
                        "`{group}` must be a table, like {group} = {{ {} }}, not {}",
                        if group == "measure" {
                            "min_samples = 5"
                        } else {
                            "max_alloc = true"
                        },
                        e.value.kind.type_name()
                    )));
                    continue;
                };
                let prefix = format!("{group}.");
                let subkeys: Vec<&str> = KEYS
                    .iter()
                    .filter_map(|k| k.name().strip_prefix(prefix.as_str()))
                    .collect();
                for sub in &t.entries {
                    let full = format!("{group}.{}", sub.key);
                    match key_spec(&full) {
                        Some((k, ty)) => match parse_value(k, ty, &sub.value, false) {
                            Ok(g) => {
                                out.insert(k, g);
                            }
                            Err(p) => problems.push(p),
                        },
                        None => problems.push(sub.key_pos.problem(format!(
                            "unknown key `{}` in `{group}` of {}{}",
                            sub.key,
                            block.name(),
                            did_you_mean(&sub.key, subkeys.iter().copied())
                        ))),
                    }
                }
            }
            other => match key_spec(other) {
                Some((k, ty)) => match parse_value(k, ty, &e.value, false) {
                    Ok(g) => {
                        out.insert(k, g);
                    }
                    Err(p) => problems.push(p),
                },
                None => {
                    let candidates = case_block_keys().filter(|k| {
                        matches!(block, Block::Case(_)) || !matches!(*k, "label" | "sweep")
                    });
                    problems.push(e.key_pos.problem(format!(
                        "unknown key `{other}` in {}{}",
                        block.name(),
                        did_you_mean(other, candidates)
                    )));
                }
            },
        }
    }
}

/// Reads a sweep table (`where_` is "[sweep]" or "the sweep of [[case]] #2").
fn parse_sweep(where_: &str, table: &raw::Table, problems: &mut Vec<Problem>) -> Vec<Axis> {
    let mut axes: Vec<Axis> = Vec::new();
    for (key, key_pos, value) in flat_sweep_entries(table, problems) {
        if key == "label" {
            problems.push(key_pos.problem("`label` cannot be swept: write one [[case]] per label"));
            continue;
        }
        let Some(spec) = super::keys::key(&key) else {
            problems.push(key_pos.problem(format!(
                "unknown sweep axis `{key}` in {where_}{}",
                did_you_mean(&key, KEYS.iter().map(Key::name))
            )));
            continue;
        };
        if axes.iter().any(|a| a.key == spec.id) {
            problems.push(key_pos.problem(format!(
                "sweep axis `{}` appears twice in {where_}",
                spec.id
            )));
            continue;
        }
        if let Some(values) = axis_values(spec.name(), spec.ty, value, where_, problems) {
            axes.push(Axis {
                key: spec.id,
                pos: key_pos,
                values,
            });
        }
    }
    axes
}

/// The entries of a sweep table with `measure = { batch = [..] }` flattened into `measure.batch`.
fn flat_sweep_entries<'a>(
    table: &'a raw::Table,
    problems: &mut Vec<Problem>,
) -> Vec<(String, Pos, &'a raw::Value)> {
    let mut flat: Vec<(String, Pos, &raw::Value)> = Vec::new();
    for e in &table.entries {
        match (&e.key[..], &e.value.kind) {
            (group @ ("measure" | "probes"), Kind::Table(t)) => {
                for sub in &t.entries {
                    flat.push((format!("{group}.{}", sub.key), sub.key_pos, &sub.value));
                }
            }
            (group @ ("measure" | "probes"), _) => problems.push(e.key_pos.problem(format!(
                "sweep axis `{group}` names a table: sweep one of its keys, like \"{group}.{}\" = [..]",
                if group == "measure" { "batch" } else { "max_alloc" }
            ))),
            _ => flat.push((e.key.clone(), e.key_pos, &e.value)),
        }
    }
    flat
}

/// The checked values of one sweep axis, or `None` (with problems) when any is wrong.
fn axis_values(
    k: &'static str,
    ty: Ty,
    value: &raw::Value,
    where_: &str,
    problems: &mut Vec<Problem>,
) -> Option<Vec<Given>> {
    let items = axis_items(k, ty, value, where_, problems)?;
    if items.is_empty() {
        problems.push(value.pos.problem(format!(
            "sweep axis `{k}` in {where_} has no values: give at least one"
        )));
        return None;
    }
    let mut values = Vec::new();
    let mut ok = true;
    for item in items.iter() {
        match parse_value(k, ty, item, true) {
            Ok(g) => values.push(g),
            Err(p) => {
                ok = false;
                problems.push(p);
            }
        }
    }
    ok.then_some(values)
}

/// The values an axis is written as: its array, or the values its range stands for.
fn axis_items<'a>(
    k: &'static str,
    ty: Ty,
    value: &'a raw::Value,
    where_: &str,
    problems: &mut Vec<Problem>,
) -> Option<std::borrow::Cow<'a, [raw::Value]>> {
    let numeric = matches!(ty, Ty::Size | Ty::Int { .. } | Ty::Threads);
    match &value.kind {
        Kind::Array(items) => Some(std::borrow::Cow::Borrowed(items)),
        Kind::Str(text) if numeric && text.contains("..") => {
            match range_values(k, ty, text, value.pos, where_) {
                Ok(v) => Some(std::borrow::Cow::Owned(v)),
                Err(p) => {
                    problems.push(p);
                    None
                }
            }
        }
        _ => {
            problems.push(value.pos.problem(format!(
                "sweep axis `{k}` in {where_} must be an array of values, like size = [\"64MiB\", \"1GiB\"]{}, not {}",
                if numeric {
                    ", or a range like \"64MiB..1GiB x2\""
                } else {
                    ""
                },
                value.kind.type_name()
            )));
            None
        }
    }
}

/// Most values one range may give (the case limit of a whole file).
const RANGE_LIMIT: u64 = super::CASE_LIMIT;

/// A size written compactly in the largest binary unit that divides it (`64MiB`, `1536KiB`).
fn compact_size(bytes: u64) -> String {
    for (name, m) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{name}", bytes / m);
        }
    }
    bytes.to_string()
}

/// Expands a range axis, `"<from>..<to> x<factor>"` (each value `factor` times the last) or
/// `"<from>..<to> +<step>"` (each value `step` more than the last), from `from` up to `to`
/// inclusive, into the values it stands for; each value is then checked like a written one.
fn range_values(
    key: &'static str,
    ty: Ty,
    text: &str,
    pos: Pos,
    where_: &str,
) -> Result<Vec<raw::Value>, Problem> {
    let sizes = matches!(ty, Ty::Size);
    let fail = |why: String| pos.problem(format!("sweep axis `{key}` in {where_}: {why}"));
    let range = parse_range(text, sizes, &fail)?;
    let mut values = Vec::new();
    let mut v = range.from;
    loop {
        if values.len() as u64 >= RANGE_LIMIT {
            return Err(fail(format!(
                "the range \"{text}\" gives more than {RANGE_LIMIT} values: use a larger step or factor"
            )));
        }
        let kind = if sizes {
            Kind::Str(compact_size(v))
        } else {
            Kind::Int(i64::try_from(v).unwrap_or(i64::MAX))
        };
        values.push(raw::Value { kind, pos });
        let next = match range.step {
            RangeStep::Times(f) => v.checked_mul(f),
            RangeStep::Plus(add) => v.checked_add(add),
        };
        match next {
            Some(n) if n <= range.to => v = n,
            _ => break,
        }
    }
    Ok(values)
}

/// How a range goes from one value to the next.
#[derive(Clone, Copy)]
enum RangeStep {
    /// `x<factor>`: each value `factor` times the last.
    Times(u64),
    /// `+<step>`: each value `step` more than the last.
    Plus(u64),
}

/// A range as written: from, to (inclusive) and its step.
struct Range {
    from: u64,
    to: u64,
    step: RangeStep,
}

/// Reads `"<from>..<to> x<factor>"` or `"<from>..<to> +<step>"` (sizes when `sizes`, else whole
/// numbers); `fail` makes a problem located at the axis.
fn parse_range(
    text: &str,
    sizes: bool,
    fail: &dyn Fn(String) -> Problem,
) -> Result<Range, Problem> {
    let example = if sizes {
        "\"64MiB..1GiB x2\" or \"16MiB..128MiB +16MiB\""
    } else {
        "\"1..16 x2\" or \"1..8 +1\""
    };
    let not_range = || {
        fail(format!(
            "\"{text}\" is not a range: write \"<from>..<to> x<factor>\" or \"<from>..<to> +<step>\", like {example}"
        ))
    };
    let (bounds, step) = text.trim().rsplit_once(' ').ok_or_else(not_range)?;
    let (from, to) = bounds.trim().split_once("..").ok_or_else(not_range)?;
    let number = |part: &str, what: &str| -> Result<u64, Problem> {
        let part = part.trim();
        if sizes {
            units::parse_size(part)
                .map_err(|e| fail(format!("the {what} of \"{text}\" is not a size: {e}")))
        } else {
            part.parse::<u64>().map_err(|_| {
                fail(format!(
                    "the {what} of \"{text}\" is `{part}`, not a whole number"
                ))
            })
        }
    };
    let from = number(from, "start")?;
    let to = number(to, "end")?;
    if from > to {
        return Err(fail(format!(
            "the range \"{text}\" ends below its start: write the smaller value first"
        )));
    }
    let step = if let Some(f) = step.strip_prefix('x') {
        let f = f.parse::<u64>().ok().filter(|f| *f >= 2).ok_or_else(|| {
            fail(format!(
                "the factor in \"{text}\" must be a whole number, 2 or more, like x2"
            ))
        })?;
        if from == 0 {
            return Err(fail(format!(
                "the range \"{text}\" multiplies from 0, which never grows: start above 0"
            )));
        }
        RangeStep::Times(f)
    } else if let Some(st) = step.strip_prefix('+') {
        let st = number(st, "step")?;
        if st == 0 {
            return Err(fail(format!("the step in \"{text}\" must be more than 0")));
        }
        RangeStep::Plus(st)
    } else {
        return Err(not_range());
    };
    Ok(Range { from, to, step })
}

pub(super) fn string_of<'a>(
    key: &str,
    v: &'a raw::Value,
    problems: &mut Vec<Problem>,
) -> Option<&'a str> {
    match &v.kind {
        Kind::Str(s) => Some(s),
        other => {
            problems.push(v.pos.problem(format!(
                "`{key}` must be a string, not {}",
                other.type_name()
            )));
            None
        }
    }
}

/// `[[x]]` blocks, or an inline array of tables; `None` (and a problem) for anything else.
pub(super) fn tables_of<'a>(
    key: &str,
    v: &'a raw::Value,
    problems: &mut Vec<Problem>,
) -> Option<Vec<&'a raw::Table>> {
    match &v.kind {
        Kind::Tables(ts) => Some(ts.iter().collect()),
        Kind::Array(items) if items.iter().all(|i| matches!(i.kind, Kind::Table(_))) => Some(
            items
                .iter()
                .filter_map(|i| match &i.kind {
                    Kind::Table(t) => Some(t),
                    _ => None,
                })
                .collect(),
        ),
        other => {
            problems.push(v.pos.problem(format!(
                "`{key}` must be written as [[{key}]] blocks, not {}",
                other.type_name()
            )));
            None
        }
    }
}

/// Stage two for a whole file but its `[[claim]]` and `[[derived]]` blocks (which
/// [`super::validate_blocks::add_claims_and_derived`] reads next). Problems are appended; the
/// returned `File` holds what was valid.
pub(super) fn validate(root: &raw::Table, problems: &mut Vec<Problem>) -> File {
    let mut file = File::default();
    let start = problems.len();

    unknown_keys(root, "at the top level", TOP_KEYS, problems);
    read_name(root, &mut file, problems);
    read_description(root, &mut file, problems);
    read_devices(root, &mut file, problems);
    read_defaults(root, &mut file, problems);
    read_file_sweep(root, &mut file, problems);
    file.broken = problems.len() > start;
    read_cases(root, &mut file, problems);
    file
}

/// `name`: lowercase letters, digits, `-` and `_`, short enough to name the results file.
fn read_name(root: &raw::Table, file: &mut File, problems: &mut Vec<Problem>) {
    let Some(e) = root.get("name") else {
        problems
            .push(Pos::START.problem(
                "missing `name`: add name = \"...\" (lowercase letters, digits, - and _)",
            ));
        return;
    };
    let Some(s) = string_of("name", &e.value, problems) else {
        return;
    };
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    let n = s.chars().count();
    if n > super::characters::MAX_NAME_CHARS {
        problems.push(e.value.pos.problem(format!(
            "`name` is {n} characters long; names are limited to {} so the results file named after it fits: shorten it",
            super::characters::MAX_NAME_CHARS
        )));
    } else if ok {
        file.name = s.to_string();
    } else {
        problems.push(e.value.pos.problem(format!(
            "`name` must use only a-z, 0-9, - and _, not \"{s}\""
        )));
    }
}

/// `description`: the question the scenario answers, not empty.
fn read_description(root: &raw::Table, file: &mut File, problems: &mut Vec<Problem>) {
    let Some(e) = root.get("description") else {
        problems.push(Pos::START.problem(
            "missing `description`: add description = \"...\", the question this scenario answers",
        ));
        return;
    };
    if let Some(s) = string_of("description", &e.value, problems) {
        if s.trim().is_empty() {
            problems.push(e.value.pos.problem(
                "`description` must not be empty: say which question the scenario answers",
            ));
        } else {
            file.description = s.trim().to_string();
        }
    }
}

/// `devices`: `"all"`, an index, `"0,1"` or `[0, 1]`, read as the command line's `--devices`.
fn read_devices(root: &raw::Table, file: &mut File, problems: &mut Vec<Problem>) {
    let Some(e) = root.get("devices") else {
        return;
    };
    let text = match &e.value.kind {
        Kind::Str(s) => Some(s.clone()),
        Kind::Int(i) => Some(i.to_string()),
        Kind::Array(items) => {
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|i| match &i.kind {
                    Kind::Int(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect();
            parts.map(|p| p.join(","))
        }
        _ => None,
    };
    match text.map(|t| crate::platform::DeviceSelection::parse(&t)) {
        Some(Ok(d)) => file.devices = Some(d),
        Some(Err(why)) => problems.push(e.value.pos.problem(format!("`devices`: {why}"))),
        None => problems.push(e.value.pos.problem(format!(
            "`devices` must be \"all\", a GPU index like 0, or a list like [0, 1], not {}",
            e.value.kind.type_name()
        ))),
    }
}

/// `[defaults]`: case keys every case starts from.
fn read_defaults(root: &raw::Table, file: &mut File, problems: &mut Vec<Problem>) {
    let Some(e) = root.get("defaults") else {
        return;
    };
    match &e.value.kind {
        Kind::Table(t) => parse_settings(Block::Defaults, &t.entries, &mut file.defaults, problems),
        other => problems.push(e.value.pos.problem(format!(
            "[defaults] must be a table of case keys, not {}",
            other.type_name()
        ))),
    }
}

/// The top-level `[sweep]`: axes every case is crossed with.
fn read_file_sweep(root: &raw::Table, file: &mut File, problems: &mut Vec<Problem>) {
    let Some(e) = root.get("sweep") else {
        return;
    };
    file.sweep_pos = e.value.pos;
    match &e.value.kind {
        Kind::Table(t) => file.sweep = parse_sweep("[sweep]", t, problems),
        other => problems.push(e.value.pos.problem(format!(
            "`sweep` must be a table of axes, like sweep = {{ size = [\"64MiB\", \"1GiB\"] }}, not {}",
            other.type_name()
        ))),
    }
}

/// The `[[case]]` blocks, at least one, each with a label unique in the file.
fn read_cases(root: &raw::Table, file: &mut File, problems: &mut Vec<Problem>) {
    let case_tables = match root.get("case") {
        Some(e) => tables_of("case", &e.value, problems),
        None => Some(Vec::new()),
    };
    if case_tables.as_ref().is_some_and(Vec::is_empty) {
        problems.push(Pos::START.problem("no [[case]] blocks: a scenario needs at least one"));
    }
    // Label → index into file.cases, so checking uniqueness stays linear in the number of cases.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, t) in case_tables.unwrap_or_default().into_iter().enumerate() {
        let block = read_case(i + 1, t, file, &mut seen, problems);
        file.cases.push(block);
    }
}

/// One `[[case]]` block (`number` is 1-based): its label, settings and own sweep.
fn read_case(
    number: usize,
    t: &raw::Table,
    file: &File,
    seen: &mut HashMap<String, usize>,
    problems: &mut Vec<Problem>,
) -> CaseBlock {
    let before = problems.len();
    let mut block = CaseBlock {
        number,
        label: String::new(),
        pos: t.pos,
        settings: Settings::new(),
        sweep: Vec::new(),
        broken: false,
    };
    read_case_label(t, file, seen, &mut block, problems);
    parse_settings(
        Block::Case(number),
        &t.entries,
        &mut block.settings,
        problems,
    );
    if let Some(e) = t.get("sweep") {
        let where_ = format!("the sweep of [[case]] #{number}");
        match &e.value.kind {
            Kind::Table(st) => block.sweep = parse_sweep(&where_, st, problems),
            other => problems.push(e.value.pos.problem(format!(
                "`sweep` in [[case]] #{number} must be a table of axes, like sweep = {{ size = [\"64MiB\", \"1GiB\"] }}, not {}",
                other.type_name()
            ))),
        }
    }
    for a in &block.sweep {
        if block.settings.contains_key(a.key.name()) {
            problems.push(a.pos.problem(format!(
                "`{}` is both set and swept in [[case]] #{number}: remove one",
                a.key
            )));
        }
    }
    block.broken = problems.len() > before;
    block
}

/// A case's `label`: present, not empty, not used by an earlier case (`seen` maps each label to
/// its index in `file.cases`).
fn read_case_label(
    t: &raw::Table,
    file: &File,
    seen: &mut HashMap<String, usize>,
    block: &mut CaseBlock,
    problems: &mut Vec<Problem>,
) {
    let number = block.number;
    let Some(e) = t.get("label") else {
        problems.push(t.pos.problem(format!(
            "[[case]] #{number} has no `label`: add label = \"...\", unique in this file"
        )));
        return;
    };
    let Some(s) = string_of("label", &e.value, problems) else {
        return;
    };
    if s.trim().is_empty() {
        problems.push(e.value.pos.problem("`label` must not be empty"));
    } else if let Some(prev) = seen.get(s).and_then(|&i| file.cases.get(i)) {
        problems.push(e.value.pos.problem(format!(
            "label `{s}` is already used by [[case]] #{} (line {}): labels must be unique",
            prev.number, prev.pos.line
        )));
    }
    block.label = s.to_string();
    seen.entry(block.label.clone()).or_insert(file.cases.len());
}
