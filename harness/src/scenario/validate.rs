//! Stage two: the raw tree → typed settings per block and sweeps (`[[claim]]` and `[[derived]]`
//! blocks are read in `validate_blocks`). Each value is checked on its own here (type, unit,
//! range); rules about combinations of keys need the expanded cases and live in `expand`. Every
//! problem is collected, none stops the others. A value on its own is checked in `values`, a
//! sweep's axes in `sweep`.

use super::keys::Key;
pub(super) use super::keys::{Given, KEYS, Ty};
use super::raw::{self, Entry, Kind, Pos};
use super::suggest::{did_you_mean, unknown_keys};
pub(super) use super::sweep::Axis;
use super::sweep::parse_sweep;
pub(super) use super::values::default_case;
use super::values::parse_value;
use super::{Claim, Derived};
use crate::error::Problem;
use std::collections::{BTreeMap, HashMap};

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
    "model",
    "file",
    "defaults",
    "sweep",
    "case",
    "claim",
    "derived",
];

fn key_spec(name: &str) -> Option<(&'static str, Ty)> {
    super::keys::key(name).map(|k| (k.name(), k.ty))
}

/// Settings of one block, by (dotted) key.
pub(super) type Settings = BTreeMap<&'static str, Given>;

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
    /// `model` and `file`: paths as written.
    pub files: super::workload::FilePaths,
    /// Problems in `[defaults]` or `[sweep]`: no combination is checked.
    pub broken: bool,
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
    file.files = super::workload::read_paths(root, problems);
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
