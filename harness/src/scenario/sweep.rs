//! Sweeps: the axes of `[sweep]` and of a `[[case]]`'s `sweep`, each value checked on its own,
//! ranges (`"4KiB..64MiB *2"`) expanded into their values.

use super::axes::CaseKey;
use super::keys::Key;
use super::keys::{Given, KEYS, Ty};
use super::raw::{self, Kind, Pos};
use super::suggest::did_you_mean;
use super::values::parse_value;
use crate::error::Problem;
use crate::units;

/// One sweep axis: a key and its values in the order written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub key: CaseKey,
    pub pos: Pos,
    pub values: Vec<Given>,
}

/// Reads a sweep table (`where_` is "[sweep]" or "the sweep of [[case]] #2").
pub(super) fn parse_sweep(
    where_: &str,
    table: &raw::Table,
    problems: &mut Vec<Problem>,
) -> Vec<Axis> {
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
