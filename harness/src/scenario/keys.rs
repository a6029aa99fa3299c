//! Every case key, declared once: its type (which bounds how it validates), default and where it
//! lands in a [`Case`]; its name is its [`CaseKey`]'s. Validation (`validate`, which also parses
//! the defaults), case building (`expand`) and the docs (`harness/scenarios/README.md`'s key
//! table, checked by the test below) all read this table.
//!
//! A new case key takes four edits: its [`CaseKey`] variant and name (`axes.rs`), its [`Case`]
//! field (a type with a `Default`), its row here, and its row in `harness/scenarios/README.md`
//! (the tests fail until this table has one row per [`CaseKey`] and the README lists it with this
//! default).

use super::Case;
use super::axes::CaseKey;
use super::raw::Pos;
use super::{Cache, Direction, Engine, HostFlags, HostKind, Mode, Threads, Wait};
use std::time::Duration;

/// The type of a case key.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ty {
    /// One of a setting enum's names (made by `choice!`): `names[i]` is the value `val(i)`.
    Choice {
        names: &'static [&'static str],
        val: fn(usize) -> Val,
    },
    Flags,
    /// Bytes: a positive multiple of 16 (`size`: of 4; `expand` asks 16 of the non-latency modes).
    Size,
    Int {
        min: u32,
        max: u32,
    },
    /// A fraction in (0, 1).
    Spread,
    Dur,
    Bool,
    /// `"auto"` or a count from 1 to 256.
    Threads,
    /// `device_hold`: a size, or relative to free device memory (`vram.rs`).
    Hold,
}

/// A typed value of a case key.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    Host(HostKind),
    Flags(HostFlags),
    Engine(Engine),
    Direction(Direction),
    Mode(Mode),
    Wait(Wait),
    Cache(Cache),
    Bytes(u64),
    Int(u32),
    Float(f64),
    Dur(Duration),
    Bool(bool),
    Threads(Threads),
    Hold(super::vram::DeviceHold),
}

/// A value with what the user wrote and where.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Given {
    pub val: Val,
    /// As written: `64MiB`, `h2d`, `mapped+portable` / `none` for flags.
    pub written: String,
    pub pos: Pos,
}

/// One case key.
pub(super) struct Key {
    pub id: CaseKey,
    pub ty: Ty,
    /// The default as TOML would write it, exactly as the README's default column shows it;
    /// `none`: unset.
    pub default: &'static str,
    /// Writes a value of this key's type into a case.
    pub set: fn(&mut Case, &Given),
}

impl Key {
    /// The name, `measure` and `probes` keys by their dotted name.
    pub fn name(&self) -> &'static str {
        self.id.name()
    }
}

/// A setter writing `Val::$variant` into `case.$field` (a dotted path for `measure`/`probes`),
/// wrapped in `Some` for an optional field.
macro_rules! set {
    ($variant:ident => $($field:ident).+) => {
        |c: &mut Case, g: &Given| {
            if let Val::$variant(x) = &g.val {
                c.$($field).+ = *x;
            }
        }
    };
    ($variant:ident => Some $($field:ident).+) => {
        |c: &mut Case, g: &Given| {
            if let Val::$variant(x) = &g.val {
                c.$($field).+ = Some(*x);
            }
        }
    };
}

/// A [`Key`] whose setter writes `Val::$variant` into `case.$field` (`Some $field`: an optional
/// field, unset by default).
macro_rules! key {
    ($id:ident, $ty:expr, $default:literal, $variant:ident => $($path:tt)+) => {
        Key { id: CaseKey::$id, ty: $ty, default: $default, set: set!($variant => $($path)+) }
    };
}

/// The [`Ty::Choice`] of setting enum `$t`, whose values are `Val::$variant`.
macro_rules! choice {
    ($t:ident => $variant:ident) => {
        Ty::Choice {
            names: &$t::NAMES,
            val: |i| Val::$variant($t::ALL[i]),
        }
    };
}

const ANY: u32 = u32::MAX;

/// Every case key, in the README's order (the order [`CaseKey`] declares them).
pub(super) const KEYS: &[Key] = &[
    key!(Host, choice!(HostKind => Host), "\"alloc\"", Host => host),
    key!(Flags, Ty::Flags, "[]", Flags => flags),
    key!(Engine, choice!(Engine => Engine), "\"copy\"", Engine => engine),
    key!(Direction, choice!(Direction => Direction), "\"h2d\"", Direction => direction),
    key!(Mode, choice!(Mode => Mode), "\"direct\"", Mode => mode),
    key!(Wait, choice!(Wait => Wait), "\"stream\"", Wait => wait),
    key!(Size, Ty::Size, "\"512MiB\"", Bytes => size),
    key!(Chunk, Ty::Size, "none", Bytes => Some chunk),
    key!(Ring, Ty::Int { min: 1, max: ANY }, "3", Int => ring),
    key!(Streams, Ty::Int { min: 1, max: 16 }, "1", Int => streams),
    key!(Threads, Ty::Threads, "\"auto\"", Threads => threads),
    key!(Guard, Ty::Bool, "true", Bool => guard),
    key!(MeasureWarmup, Ty::Int { min: 0, max: ANY }, "2", Int => measure.warmup),
    key!(MeasureWarmupTime, Ty::Dur, "\"0s\"", Dur => measure.warmup_time),
    key!(MeasureMinSamples, Ty::Int { min: 1, max: 100_000 }, "5", Int => measure.min_samples),
    key!(MeasureMaxSamples, Ty::Int { min: 1, max: 100_000 }, "30", Int => measure.max_samples),
    key!(MeasureTargetSpread, Ty::Spread, "0.01", Float => measure.target_spread),
    key!(MeasureTimeLimit, Ty::Dur, "\"10s\"", Dur => measure.time_limit),
    key!(MeasureVerify, Ty::Bool, "true", Bool => measure.verify),
    key!(MeasureBatch, Ty::Int { min: 0, max: ANY }, "0", Int => measure.batch),
    key!(MeasureSamples, Ty::Int { min: 10, max: 1_000_000 }, "1000", Int => measure.samples),
    key!(ProbesAccounting, Ty::Bool, "true", Bool => probes.accounting),
    key!(ProbesMaxAlloc, Ty::Bool, "false", Bool => probes.max_alloc),
    key!(ProbesPinnedCeiling, Ty::Bool, "false", Bool => probes.pinned_ceiling),
    key!(ProbesCeilingChunk, Ty::Size, "\"256MiB\"", Bytes => probes.ceiling_chunk),
    key!(ProbesHoldAfterFree, Ty::Dur, "\"2s\"", Dur => probes.hold_after_free),
    key!(ProbesHoldInterval, Ty::Dur, "\"100ms\"", Dur => probes.hold_interval),
    Key {
        id: CaseKey::DeviceHold,
        ty: Ty::Hold,
        default: "\"0\"",
        set: |c, g| {
            if let Val::Hold(h) = g.val {
                c.vram.device_hold = h;
                c.vram.device_hold_written = g.written.clone();
            }
        },
    },
    key!(Cycles, Ty::Int { min: 1, max: 100_000 }, "20", Int => vram.cycles),
    key!(Pause, Ty::Dur, "\"5ms\"", Dur => vram.pause),
    key!(Layers, Ty::Int { min: 1, max: 100_000 }, "none", Int => Some layers),
    key!(Cache, choice!(Cache => Cache), "\"warm\"", Cache => cache),
];

/// The key named `name`.
pub(super) fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::values::{default_case, default_val};

    /// The rows of `harness/scenarios/README.md`'s "Case keys" table: (key, default, values).
    fn readme_rows() -> Vec<(String, String, String)> {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/README.md"))
                .expect("harness/scenarios/README.md is readable");
        let start = text.find("## Case keys").expect("a Case keys section");
        let section = &text[start..];
        let end = section[3..].find("\n#").map_or(section.len(), |e| e + 3);
        section[..end]
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (
                    cells[1].trim_matches('`').to_string(),
                    cells[2].trim_matches('`').to_string(),
                    cells[3].to_string(),
                )
            })
            .collect()
    }

    /// The values a README cell lists: each `` `"name"` `` outside parentheses, in order (inside
    /// them the text explains a value and may name other keys' values).
    fn listed_values(cell: &str) -> Vec<&str> {
        let mut depth = 0usize;
        let mut listed = Vec::new();
        let mut rest = cell;
        while let Some(c) = rest.chars().next() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                '`' if depth == 0 && rest[1..].starts_with('"') => {
                    if let Some(end) = rest[2..].find("\"`") {
                        listed.push(&rest[2..2 + end]);
                        rest = &rest[2 + end + 2..];
                        continue;
                    }
                }
                _ => {}
            }
            rest = &rest[c.len_utf8()..];
        }
        listed
    }

    #[test]
    fn scenarios_readme_lists_exactly_the_keys_with_their_defaults() {
        let rows = readme_rows();
        let mut listed: Vec<&str> = rows.iter().map(|(k, ..)| k.as_str()).collect();
        let mut declared: Vec<&str> = KEYS.iter().map(Key::name).collect();
        listed.sort_unstable();
        declared.sort_unstable();
        assert_eq!(listed, declared, "scenarios/README.md's key table");
        for (name, default, _) in &rows {
            let k = key(name).expect("declared");
            assert_eq!(default, k.default, "the README's default of `{name}`");
        }
    }

    /// Every key whose value is one of a list of names (a setting enum, the flags) lists in the
    /// README exactly the names its parser accepts, in their declared order: a new mode, engine
    /// or flag fails here until the README says it, and a README value that is not one fails
    /// too.
    #[test]
    fn scenarios_readme_lists_exactly_the_values_each_key_accepts() {
        let rows = readme_rows();
        let mut checked = Vec::new();
        for k in KEYS {
            let accepted: &[&str] = match k.ty {
                Ty::Choice { names, .. } => names,
                Ty::Flags => &HostFlags::NAMES,
                _ => continue,
            };
            let (_, _, values) = rows
                .iter()
                .find(|(name, ..)| name == k.name())
                .expect("the README has a row for every key");
            assert_eq!(
                listed_values(values),
                accepted,
                "the values harness/scenarios/README.md lists for `{}`",
                k.name()
            );
            checked.push(k.name());
        }
        assert_eq!(
            checked,
            [
                "host",
                "flags",
                "engine",
                "direction",
                "mode",
                "wait",
                "cache"
            ]
        );
    }

    #[test]
    fn listed_values_skip_what_parentheses_explain() {
        let cell = "`\"a\"` (with `mode = \"x\"` or `\"y\"`), `\"b\"` (nested (`\"z\"`) too), `k = [\"c\"]`";
        assert_eq!(listed_values(cell), ["a", "b"]);
    }

    #[test]
    fn the_table_has_one_row_per_case_key_in_declaration_order() {
        let ids: Vec<CaseKey> = KEYS.iter().map(|k| k.id).collect();
        assert_eq!(ids, CaseKey::ALL);
    }

    #[test]
    fn every_default_parses_and_every_setter_takes_its_type() {
        for k in KEYS {
            let parsed = default_val(k);
            assert!(parsed.is_ok(), "the default of `{}`: {parsed:?}", k.name());
            if let Ok(Some(v)) = parsed {
                let mut c = default_case().clone();
                (k.set)(&mut c, &v);
                assert_eq!(&c, default_case(), "`{}`", k.name());
            }
        }
        assert_eq!(default_case().size, super::super::DEFAULT_SIZE);
        // The measure and probes defaults of the model agree with the table.
        assert_eq!(default_case().measure, super::super::Measure::default());
        assert_eq!(default_case().probes, super::super::Probes::default());
    }
}
