//! Stage three: the cartesian product of the sweeps (nvbench style: axes in the order written,
//! top-level axes first, the first axis varying slowest), one [`Case`] per point, and the rules
//! about combinations of keys, checked on every point and reported once per distinct problem.
//!
//! Precedence, lowest first: built-in defaults, `[defaults]`, top-level `[sweep]`, the case's own
//! keys, the case's own sweep. A case that sets a key itself, or sweeps it itself, is not expanded
//! along the top-level axis of that key.

use super::keys;
use super::raw::Pos;
use super::validate::{Axis, CaseBlock, File, Settings};
use super::{Axes, Case, ChunkUse, Direction, Engine, HostKind, Mode, Wait};
use crate::error::Problem;
use crate::units::{self, MIB};
use std::collections::HashSet;

/// Most cases one file may expand to.
pub const CASE_LIMIT: u64 = 100_000;

/// Default `size` when neither the case nor `[defaults]` gives one (the key table's default, a
/// test checks they agree).
pub const DEFAULT_SIZE: u64 = 512 * MIB;

/// The axes a block is expanded along, in product order.
fn axes_of<'a>(file: &'a File, block: &'a CaseBlock) -> Vec<&'a Axis> {
    file.sweep
        .iter()
        .filter(|a| {
            !block.settings.contains_key(a.key.name())
                && !block.sweep.iter().any(|b| b.key == a.key)
        })
        .chain(block.sweep.iter())
        .collect()
}

/// Expands every block. Combination problems are appended to `problems`; blocks that already had
/// problems are counted but not checked (their settings are incomplete).
pub(super) fn expand(file: &File, problems: &mut Vec<Problem>) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut seen: HashSet<(Pos, String)> = HashSet::new();
    let mut total: u64 = 0;
    for block in &file.cases {
        let axes = axes_of(file, block);
        let count = axes
            .iter()
            .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64))
            .unwrap_or(u64::MAX);
        if count > CASE_LIMIT {
            problems.push(block.pos.problem(format!(
                "the sweep of case `{}` expands to {count} cases; the limit is {CASE_LIMIT}: split it or reduce axes",
                block.label
            )));
            return cases;
        }
        total = total.saturating_add(count);
        if total > CASE_LIMIT {
            problems.push(block.pos.problem(format!(
                "the sweeps of this file expand to {total} cases, counting up to case `{}`; the limit is {CASE_LIMIT}: split the file or reduce axes",
                block.label
            )));
            return cases;
        }
        if block.broken || file.broken {
            continue;
        }
        for point in 0..count {
            // Mixed-radix digits, last axis fastest.
            let mut rest = point;
            let mut digits = vec![0usize; axes.len()];
            for (d, a) in digits.iter_mut().zip(&axes).rev() {
                let n = (a.values.len() as u64).max(1);
                *d = (rest % n) as usize;
                rest /= n;
            }
            let mut settings = file.defaults.clone();
            settings.extend(block.settings.iter().map(|(k, g)| (*k, g.clone())));
            let mut case_axes = Axes::default();
            for (a, d) in axes.iter().zip(&digits) {
                if let Some(g) = a.values.get(*d) {
                    settings.insert(a.key.name(), g.clone());
                    case_axes.push(a.key, g.written.clone());
                }
            }
            let mut case = build_case(&file.name, &block.label, &settings);
            case.index = cases.len();
            case.axes = case_axes;
            for v in violations(&case, &settings) {
                // Point at the swept value behind the problem if there is one, else at the
                // first key involved that was written down, else at the case.
                let swept = |k: &&&str| case.axes.iter().any(|(a, _)| a.name() == **k);
                let pos = v
                    .keys
                    .iter()
                    .filter(swept)
                    .chain(v.keys.iter())
                    .find_map(|k| settings.get(k).map(|g| g.pos))
                    .unwrap_or(block.pos);
                let with: Vec<String> = case
                    .axes
                    .iter()
                    .filter(|(k, _)| v.keys.contains(&k.name()))
                    .map(|(k, val)| format!("{k}={val}"))
                    .collect();
                let with = if with.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", with.join(", "))
                };
                let message = format!("case `{}`{with}: {}", case.label, v.message);
                if seen.insert((pos, message.clone())) {
                    problems.push(pos.problem(message));
                }
            }
            cases.push(case);
        }
    }
    cases
}

/// A case from settings; keys not given take the defaults of the key table.
pub(super) fn build_case(scenario: &str, label: &str, settings: &Settings) -> Case {
    let mut c = Case {
        scenario: scenario.to_string(),
        label: label.to_string(),
        ..super::validate::default_case().clone()
    };
    for (key, g) in settings {
        if let Some(k) = keys::key(key) {
            (k.set)(&mut c, g);
        }
    }
    c
}

/// A broken rule: the keys involved (the first given one locates it) and the message.
struct Violation {
    keys: &'static [&'static str],
    message: String,
}

/// The exact rule texts, shared with the tests.
pub(super) const KERNEL_NEEDS_MAPPED: &str = "zero-copy kernel access needs mapped memory: add \"mapped\" to flags (host = \"alloc\" or \"register\") or use host = \"managed\"";
pub(super) const MANAGED_UNGUARDED: &str = "guard = false with host = \"managed\" could oversubscribe device memory with managed memory, which can hang the GPU: keep guard = true for managed cases";

/// The rules of the latency modes (one copy per sample from or to host memory, any multiple of
/// 4 bytes; one direction, which the bidirectional rule already asks), and the 16-byte multiple every other mode's `size` needs; `size` as written.
fn latency_rules(c: &Case, size: &str) -> Vec<Rule> {
    let mut v: Vec<Rule> = Vec::new();
    if c.wait != Wait::Stream && c.mode != Mode::Latency {
        v.push((
            &["wait", "mode"],
            format!(
                "wait = \"{}\" says how a latency sample's end is awaited: it needs mode = \"latency\"",
                c.wait
            ),
        ));
    }
    if c.engine.is_chase() {
        if c.host == HostKind::Managed {
            v.push((
                &["engine", "host"],
                format!("engine = \"{}\" reads page-locked host memory in place; managed memory would migrate to the GPU: use host = \"alloc\" or \"register\" with flags = [\"mapped\"]", c.engine),
            ));
        }
        if c.size < 4096 {
            v.push((
                &["size", "engine"],
                format!("engine = \"{}\" chains one pointer per 128 bytes: `size` must be at least 4KiB, not {size}", c.engine),
            ));
        }
    }
    if !c.mode.is_latency() {
        if !c.size.is_multiple_of(16) {
            v.push((
                &["size", "mode"],
                format!(
                    "`size` must be a multiple of 16 bytes, not {size}, unless mode is \"latency\", \"latency-sync\" or \"enqueue\" (those take any multiple of 4)"
                ),
            ));
        }
        return v;
    }
    let mode = c.mode;
    let launches = c.engine == Engine::Empty && mode != Mode::LatencySync;
    if c.engine != Engine::Copy && !launches {
        v.push((
            &["mode", "engine"],
            format!(
                "mode = \"{mode}\" times copies (or, except \"latency-sync\", launches of engine = \"empty\"): it needs engine = \"copy\", not \"{}\"",
                c.engine
            ),
        ));
    }
    if c.host == HostKind::Managed && !c.engine.is_device() {
        v.push((
            &["mode", "host"],
            format!("mode = \"{mode}\" times copies from pageable, allocated or registered memory: use host = \"pageable\", \"alloc\" or \"register\", not \"managed\""),
        ));
    }
    v
}

/// One rule a case breaks: the keys it concerns and what to change.
type Rule = (&'static [&'static str], String);

/// Every rule about combinations of keys that `c` breaks, in the order they are reported.
fn violations(c: &Case, s: &Settings) -> Vec<Violation> {
    let written = |key: &str, bytes: u64| {
        s.get(key)
            .map_or_else(|| units::format_size(bytes), |g| g.written.clone())
    };
    let mut rules = host_memory_rules(c);
    rules.extend(mode_rules(c));
    rules.extend(transfer_rules(c, &written));
    // Device engines, device_hold, churn (vram.rs).
    rules.extend(super::vram::rules(c, &|k| s.contains_key(k)));
    rules.extend(latency_rules(c, &written("size", c.size)));
    rules.extend(sampling_rules(c));
    rules
        .into_iter()
        .map(|(keys, message)| Violation { keys, message })
        .collect()
}

/// The host memory and its flags: zero-copy needs mapped memory, write-combined needs
/// `cuMemHostAlloc`, pageable and managed memory take no flags.
fn host_memory_rules(c: &Case) -> Vec<Rule> {
    let mut v: Vec<Rule> = Vec::new();
    if c.engine.is_zero_copy() {
        let mapped = match c.host {
            HostKind::Managed => true,
            HostKind::Alloc | HostKind::Register => c.flags.mapped,
            HostKind::Pageable => false,
        };
        if !mapped {
            v.push((&["engine", "host", "flags"], KERNEL_NEEDS_MAPPED.into()));
        }
    }
    if c.flags.write_combined && c.host == HostKind::Register {
        v.push((
            &["flags", "host"],
            "write-combined memory exists only for host = \"alloc\" (cuMemHostAlloc): remove it from flags or use host = \"alloc\"".into(),
        ));
    }
    if matches!(c.host, HostKind::Pageable | HostKind::Managed) && !c.flags.is_empty() {
        v.push((
            &["flags", "host"],
            format!(
                "host = \"{}\" takes no flags (flags are for host = \"alloc\" or \"register\"): remove {}",
                c.host,
                c.flags.label()
            ),
        ));
    }
    v
}

/// What the case's mode needs of the host memory, the engine and `chunk`, as its declaration
/// says; `chunk` only with the modes that take one.
fn mode_rules(c: &Case) -> Vec<Rule> {
    let mut v: Vec<Rule> = Vec::new();
    let decl = c.mode.declaration();
    if let Some((need, what)) = decl.host
        && c.host != need
    {
        v.push((
            &["mode", "host"],
            format!(
                "mode = \"{}\" {what}: it needs host = \"{need}\", not \"{}\"",
                c.mode, c.host
            ),
        ));
    }
    if let Some(need) = decl.engine
        && c.engine != need
    {
        v.push((
            &["mode", "engine"],
            format!("mode = \"{}\" needs engine = \"{need}\"", c.mode),
        ));
    }
    if decl.reads_file && c.direction != Direction::H2d {
        v.push((
            &["mode", "direction"],
            format!(
                "mode = \"{}\" loads a file into device memory: it needs direction = \"h2d\", not \"{}\"",
                c.mode, c.direction
            ),
        ));
    }
    match (decl.chunk, c.chunk) {
        (ChunkUse::Required(what), None) => v.push((
            &["mode", "chunk"],
            format!(
                "mode = \"{}\" needs `chunk`, {what}, like chunk = \"16MiB\"",
                c.mode
            ),
        )),
        (ChunkUse::Refused, Some(_)) => {
            let taking: Vec<String> = Mode::ALL
                .into_iter()
                .filter(|m| m.declaration().chunk != ChunkUse::Refused)
                .map(|m| format!("\"{m}\""))
                .collect();
            v.push((
                &["chunk", "mode"],
                format!(
                    "`chunk` applies only to mode = {}: remove it or set mode",
                    taking.join(" or ")
                ),
            ));
        }
        (ChunkUse::Required(_), Some(_)) | (ChunkUse::Optional | ChunkUse::Refused, _) => {}
    }
    v
}

/// The chunk within the size, an engine's own direction, managed memory guarded, and what a
/// bidirectional transfer needs (`written` shows a size as the file wrote it).
fn transfer_rules(c: &Case, written: &dyn Fn(&str, u64) -> String) -> Vec<Rule> {
    let mut v: Vec<Rule> = Vec::new();
    if let Some(chunk) = c.chunk
        && chunk > c.size
    {
        v.push((
            &["chunk", "size"],
            format!(
                "`chunk` ({}) is larger than `size` ({})",
                written("chunk", chunk),
                written("size", c.size)
            ),
        ));
    }
    let fixed = c.engine.implied_direction();
    if let Some((need, what)) = fixed
        && c.direction != need
    {
        v.push((
            &["direction", "engine"],
            format!(
                "engine = \"{}\" {what}: it needs direction = \"{need}\", not \"{}\"",
                c.engine, c.direction
            ),
        ));
    }
    if !c.guard && c.host == HostKind::Managed {
        v.push((&["guard", "host"], MANAGED_UNGUARDED.into()));
    }
    // An engine with a direction of its own already said so above.
    if c.direction == Direction::Bidirectional
        && fixed.is_none()
        && (c.engine != Engine::Copy || c.mode != Mode::Direct)
    {
        v.push((
            &["direction", "engine", "mode"],
            "direction = \"bidirectional\" needs engine = \"copy\" and mode = \"direct\"".into(),
        ));
    }
    v
}

/// The sample counts in order, and the hold interval set when the hold after free is.
fn sampling_rules(c: &Case) -> Vec<Rule> {
    let mut v: Vec<Rule> = Vec::new();
    if c.measure.min_samples > c.measure.max_samples {
        v.push((
            &["measure.min_samples", "measure.max_samples"],
            format!(
                "`measure.min_samples` ({}) is larger than `measure.max_samples` ({})",
                c.measure.min_samples, c.measure.max_samples
            ),
        ));
    }
    let min = super::Probes::MIN_HOLD_INTERVAL;
    if !c.probes.hold_after_free.is_zero() && c.probes.hold_interval < min {
        v.push((
            &["probes.hold_interval", "probes.hold_after_free"],
            format!(
                "`probes.hold_interval` is {:?}: give at least {min:?} when `probes.hold_after_free` is above zero (the observers are read at most once a millisecond)",
                c.probes.hold_interval
            ),
        ));
    }
    v
}

/// Each label a `[[derived]]` names must expand to exactly one case: a derived value adds one row
/// per case, and a label swept over several values would make that row ambiguous.
pub(super) fn check_derived(file: &File, problems: &mut Vec<Problem>) {
    if file.broken || file.derived.is_empty() {
        return;
    }
    let mut by_label: std::collections::HashMap<&str, &CaseBlock> = Default::default();
    for b in &file.cases {
        by_label.entry(b.label.as_str()).or_insert(b);
    }
    for d in &file.derived {
        for (label, pos) in d.derived.cases.iter().zip(&d.label_pos) {
            let Some(&block) = by_label.get(label.as_str()) else {
                continue;
            };
            if block.broken {
                continue;
            }
            let axes = axes_of(file, block);
            let count: u64 = axes
                .iter()
                .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64))
                .unwrap_or(u64::MAX);
            if count > 1 {
                let swept: Vec<&str> = axes
                    .iter()
                    .filter(|a| a.values.len() > 1)
                    .map(|a| a.key.name())
                    .collect();
                problems.push(pos.problem(format!(
                    "[[derived]] #{} names case `{label}`, which expands to {count} cases (swept over {}): a derived value takes one row per label; give each point its own [[case]] and label",
                    d.number,
                    swept.join(", ")
                )));
            }
        }
    }
}
