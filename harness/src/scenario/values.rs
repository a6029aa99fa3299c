//! One case key's value checked on its own (type, unit, range): sizes, counts, spreads, durations,
//! host flags and names from a fixed list, each with its own located message; and the defaults
//! every case starts from.

use super::keys::Key;
use super::keys::{Given, KEYS, Ty, Val};
use super::raw::{self, Kind, Pos};
use super::suggest::{did_you_mean_value, quoted_list, shown};
use super::{Case, HostFlags, Threads};
use crate::error::Problem;
use crate::units;
use std::sync::OnceLock;
use std::time::Duration;

/// Smallest chunk of the pinned-ceiling probe.
pub(super) const MIN_CEILING_CHUNK: u64 = crate::units::MIB;

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
