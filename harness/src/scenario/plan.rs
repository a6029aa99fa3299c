//! `pinscope plan`: what a scenario expands to, what each case pins and allocates, and roughly how
//! long it will take, without touching a GPU.
//!
//! Size: over 500 lines: the table and, at the end, its device-memory cells (free device memory,
//! `device_hold`, past-the-card notes, device and churn estimates) that read the same constants.

use super::fits::refusal;
use super::{CHASE_STEPS, Case, CaseKey, Engine, Sampling, Scenario, Speed};
use crate::units::{GB, MIB, display_width, format_size};
use std::collections::HashSet;
use std::fmt::Write as _;

/// Assumed bandwidth for page-locked host memory (alloc, register), bytes per second.
pub const ASSUMED_PINNED_BPS: f64 = 25.0 * GB;
/// Assumed bandwidth for pageable, managed and staged transfers, bytes per second.
pub const ASSUMED_PAGEABLE_BPS: f64 = 6.0 * GB;
/// Assumed CPU bandwidth reading or writing host memory (`cpu-read`, `cpu-write`), bytes per second.
pub const ASSUMED_CPU_BPS: f64 = 10.0 * GB;
/// Assumed CPU bandwidth reading write-combined (uncached) memory, bytes per second.
pub const ASSUMED_WC_READ_BPS: f64 = 0.5 * GB;
/// Fixed cost per case (context, allocation, probes' first snapshots), seconds.
pub const SETUP_S: f64 = 0.5;
/// `run --case-timeout` when none is given: a case that runs longer (its hold after free
/// included) ends the run.
pub const DEFAULT_CASE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
/// [`DEFAULT_CASE_TIMEOUT`] as the command line writes it.
pub const DEFAULT_CASE_TIMEOUT_TEXT: &str = "10m";

/// The bandwidth the estimate assumes for a case, bytes per second: the CPU engines' own, else
/// the speed its mode declares.
pub fn assumed_bps(c: &Case) -> f64 {
    match c.engine {
        Engine::CpuRead if c.flags.write_combined => return ASSUMED_WC_READ_BPS,
        Engine::CpuRead | Engine::CpuWrite => return ASSUMED_CPU_BPS,
        _ => {}
    }
    match c.mode.declaration().speed {
        Speed::OfHostMemory if c.host.is_pinned() => ASSUMED_PINNED_BPS,
        Speed::OfHostMemory | Speed::Pageable => ASSUMED_PAGEABLE_BPS,
    }
}

/// A rough wall-time estimate for one case, in seconds (the model is printed under the table):
/// by the way its mode samples, the launch-only engines and the device engines by their own.
pub fn estimate_seconds(c: &Case) -> f64 {
    let sampling = c.mode.declaration().sampling;
    if sampling == Sampling::PerOperation {
        return latency_estimate_seconds(c);
    }
    if c.engine == Engine::Empty || c.engine.is_chase() {
        return launches_estimate_seconds(c);
    }
    if sampling == Sampling::Cycles {
        return churn_estimate_seconds(c);
    }
    if let Some(s) = device_estimate_seconds(c) {
        return s;
    }
    let bps = assumed_bps(c);
    let batch = u64::from(c.batch());
    let per_sample = batch as f64 * c.size as f64 / bps;
    let warmup = warmup_seconds(&c.measure, f64::from(c.measure.warmup), per_sample);
    let at_least = f64::from(c.measure.min_samples) * per_sample;
    let at_most = f64::from(c.measure.max_samples) * per_sample;
    let limit = c.measure.time_limit.as_secs_f64();
    let sampling = at_most.min(limit.max(at_least));
    warmup + sampling + c.probes.hold_after_free.as_secs_f64() + SETUP_S
}

/// Assumed fixed cost of one latency sample (the call, the synchronisation, the clock), seconds.
pub const ASSUMED_LATENCY_S: f64 = 20e-6;

/// A latency case: warm-up and `measure.samples` single copies, each the fixed cost plus the
/// size at the assumed bandwidth, stopping at `time_limit`.
fn latency_estimate_seconds(c: &Case) -> f64 {
    let (warmup, samples) = latency_counts(&c.measure);
    let bytes = if c.engine == Engine::Empty { 0 } else { c.size };
    let per = ASSUMED_LATENCY_S + bytes as f64 / assumed_bps(c);
    let sampling = (f64::from(samples) * per).min(c.measure.time_limit.as_secs_f64());
    warmup_seconds(&c.measure, f64::from(warmup), per)
        + sampling
        + c.probes.hold_after_free.as_secs_f64()
        + SETUP_S
}

/// Assumed time of one dependent load from mapped host memory (a PCIe round trip), seconds.
pub const ASSUMED_CHASE_LOAD_S: f64 = 1e-6;

/// The empty kernel and the pointer chase in `mode = "direct"`: `batch` launches per sample
/// (20 µs each, or [`CHASE_STEPS`] loads of 1 µs), sampled as every direct case is.
fn launches_estimate_seconds(c: &Case) -> f64 {
    let per_launch = if c.engine.is_chase() {
        CHASE_STEPS as f64 * ASSUMED_CHASE_LOAD_S
    } else {
        ASSUMED_LATENCY_S
    };
    let per_sample = f64::from(c.batch()) * per_launch;
    let sampling = (f64::from(c.measure.max_samples) * per_sample).min(
        c.measure
            .time_limit
            .as_secs_f64()
            .max(f64::from(c.measure.min_samples) * per_sample),
    );
    warmup_seconds(&c.measure, f64::from(c.measure.warmup), per_sample)
        + sampling
        + c.probes.hold_after_free.as_secs_f64()
        + SETUP_S
}

/// The warm-up's time: `count` untimed operations of `per` seconds each, or
/// `measure.warmup_time`, whichever is longer.
fn warmup_seconds(m: &super::Measure, count: f64, per: f64) -> f64 {
    (count * per).max(m.warmup_time.as_secs_f64())
}

/// Untimed and timed copies of a latency case: (warm-up, samples). The warm-up is
/// `measure.warmup` or a tenth of the samples, whichever is more.
pub fn latency_counts(m: &super::Measure) -> (u32, u32) {
    (m.warmup.max(m.samples / 10), m.samples)
}

/// `0.8 s`, `12.0 s`, `3m 05s`, `1h 02m`, `3d 04h`, `12.3 years`: at most two fields, each unit
/// used only below the next one.
pub fn format_seconds(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "?".into();
    }
    if s < 60.0 {
        return format!("{s:.1} s");
    }
    const DAY: f64 = 86_400.0;
    const YEAR: f64 = 365.0 * DAY;
    if s >= YEAR {
        return format!("{:.1} years", s / YEAR);
    }
    let whole = s.round() as u64;
    if whole < 3600 {
        format!("{}m {:02}s", whole / 60, whole % 60)
    } else if whole < 86_400 {
        format!("{}h {:02}m", whole / 3600, (whole % 3600) / 60)
    } else {
        format!("{}d {:02}h", whole / 86_400, (whole % 86_400) / 3600)
    }
}

/// Bytes in the largest binary unit that divides them exactly (`4455 MiB`, `125 KiB`), so the
/// table shows the numbers scenarios are written in; otherwise three significant digits in the
/// largest unit not above them (`1.40 GiB`, `16.0 EiB`).
pub fn format_bytes_exact(bytes: u64) -> String {
    const UNITS: [(&str, u64); 6] = [
        ("EiB", 1 << 60),
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", MIB),
        ("KiB", 1 << 10),
    ];
    for (name, m) in UNITS {
        if bytes >= m && bytes.is_multiple_of(m) && bytes / m < 100_000 {
            return format!("{} {name}", bytes / m);
        }
    }
    for (name, m) in UNITS {
        if bytes >= m {
            let v = bytes as f64 / m as f64;
            return if v < 10.0 {
                format!("{v:.2} {name}")
            } else if v < 100.0 {
                format!("{v:.1} {name}")
            } else {
                format!("{v:.0} {name}")
            };
        }
    }
    format!("{bytes} B")
}

fn dash_if_zero(bytes: u64) -> String {
    if bytes == 0 {
        "-".into()
    } else {
        format_bytes_exact(bytes)
    }
}

/// The one-line `plan -q` summary of a scenario: name, cases, refusals, estimated time.
/// `device_free` as for [`plan_table_for`].
pub fn plan_summary(
    s: &Scenario,
    ram_bytes: Option<u64>,
    allow_pinned: f64,
    device_free: Option<&DeviceFree>,
) -> String {
    let mut total_s = 0.0;
    let mut refused = 0usize;
    for c in &s.cases {
        if refusal(c, ram_bytes, allow_pinned, device_free.map(|f| f.bytes)).is_some() {
            refused += 1;
        } else {
            total_s += estimate_seconds(c);
        }
    }
    let n = s.cases.len();
    let mut out = format!("{}: {n} case{}", s.name, if n == 1 { "" } else { "s" });
    if refused > 0 {
        let _ = write!(out, " ({refused} refused)");
    }
    let _ = write!(out, ", estimated {} in total", format_seconds(total_s));
    out
}

/// The `plan` text for one scenario: header, axes, one row per case, totals and the model used.
/// `ram_bytes` (when known) and `allow_pinned` decide which cases the run would refuse.
pub fn plan_table(s: &Scenario, ram_bytes: Option<u64>, allow_pinned: f64) -> String {
    plan_table_for(s, ram_bytes, allow_pinned, None)
}

/// [`plan_table`] against `device_free` bytes of free device memory when known (`device_hold`
/// resolved, steps past the card named).
pub fn plan_table_for(
    s: &Scenario,
    ram_bytes: Option<u64>,
    allow_pinned: f64,
    device_free: Option<DeviceFree>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", s.name, s.description);
    if s.shipped {
        let _ = writeln!(
            out,
            "  shipped with pinscope {} (as {})",
            env!("CARGO_PKG_VERSION"),
            s.path
        );
    } else {
        let _ = writeln!(out, "  from {}", s.path);
    }
    write_axes(&mut out, s);
    out.push('\n');

    let extra = varying_columns(s);
    let mut header = vec![
        "#",
        "label",
        "host",
        "flags",
        "engine",
        "dir",
        "mode",
        "size",
        "chunk×ring",
    ];
    header.extend(extra.iter().map(|(name, _)| *name));
    header.extend(["pinned", "device", "est. time", "note"]);
    let mut totals = PlanTotals::default();
    let rows: Vec<Vec<String>> = s
        .cases
        .iter()
        .map(|c| {
            plan_row(
                c,
                &extra,
                ram_bytes,
                allow_pinned,
                device_free.as_ref(),
                &mut totals,
            )
        })
        .collect();
    write_aligned(&mut out, &header, rows);
    out.push('\n');
    write_totals(&mut out, s, &totals, ram_bytes, allow_pinned);
    out.push_str(&plan_footer(s, device_free.as_ref()));
    write_estimate_model(&mut out, s);
    out
}

/// The axes across all cases, values in first-seen order (a set per axis keeps this linear).
fn write_axes(out: &mut String, s: &Scenario) {
    let mut axes: Vec<(CaseKey, Vec<&str>, HashSet<&str>)> = Vec::new();
    for c in &s.cases {
        for (k, v) in c.axes.iter() {
            let i = match axes.iter().position(|(key, _, _)| *key == k) {
                Some(i) => i,
                None => {
                    axes.push((k, Vec::new(), HashSet::new()));
                    axes.len() - 1
                }
            };
            let (_, vals, set) = &mut axes[i];
            if set.insert(v) {
                vals.push(v);
            }
        }
    }
    if axes.is_empty() {
        let _ = writeln!(out, "axes: none");
    } else {
        let _ = writeln!(out, "axes:");
        for (k, vals, _) in &axes {
            let n = vals.len();
            let _ = writeln!(
                out,
                "  {k}: {n} value{} ({})",
                if n == 1 { "" } else { "s" },
                vals.join(", ")
            );
        }
    }
}

/// A column the table shows only when its value varies between cases: its header and its cell.
type Column = (&'static str, fn(&Case) -> String);

/// The batch a case samples with, as the plan shows it (`auto 16` when chosen from the size).
fn plan_batch(c: &Case) -> String {
    match c.measure.batch {
        _ if c.mode.declaration().sampling != Sampling::Batched => "1".into(),
        0 if c.engine == Engine::Empty || c.engine.is_chase() => c.batch().to_string(),
        0 => format!("auto {}", c.batch()),
        b => b.to_string(),
    }
}

/// wait / cache / streams / threads / batch get a column when they vary, so sweeps over them show.
fn varying_columns(s: &Scenario) -> Vec<Column> {
    let candidates: [Column; 5] = [
        ("wait", |c| c.wait.to_string()),
        ("cache", |c| c.cache.to_string()),
        ("streams", |c| c.streams.to_string()),
        ("threads", |c| c.threads.to_string()),
        ("batch", plan_batch),
    ];
    let varies = |f: fn(&Case) -> String| {
        let mut v = s.cases.iter().map(f);
        let first = v.next();
        v.any(|x| Some(x) != first)
    };
    candidates.into_iter().filter(|(_, f)| varies(*f)).collect()
}

/// The estimate over the cases the run would start, and how many it would refuse.
#[derive(Default)]
struct PlanTotals {
    seconds: f64,
    refused: usize,
}

/// One case's row of the table, counted into `totals`.
fn plan_row(
    c: &Case,
    extra: &[Column],
    ram_bytes: Option<u64>,
    allow_pinned: f64,
    device_free: Option<&DeviceFree>,
    totals: &mut PlanTotals,
) -> Vec<String> {
    let est = estimate_seconds(c);
    let note = match refusal(c, ram_bytes, allow_pinned, device_free.map(|f| f.bytes)) {
        Some(why) => {
            totals.refused += 1;
            format!("refused: {why}")
        }
        _ => {
            totals.seconds += est;
            let note = match plan_note(c, device_free) {
                Some(n) => n,
                None if c.guard => String::new(),
                None => "guard off: tried even if device memory is short".into(),
            };
            past_timeout_note(note, est)
        }
    };
    // The device-resident engines have no host memory and no direction.
    let host_side = |v: String| if c.engine.is_device() { "-".into() } else { v };
    let mut row = vec![
        c.index.to_string(),
        c.label.clone(),
        host_side(c.host.to_string()),
        c.flags.label(),
        c.engine.to_string(),
        host_side(c.direction.to_string()),
        c.mode.to_string(),
        if c.engine == Engine::Empty {
            "-".into()
        } else {
            format_bytes_exact(c.size)
        },
        c.route().chunk_cell(),
    ];
    row.extend(extra.iter().map(|(_, f)| f(c)));
    row.extend([
        dash_if_zero(c.pinned_bytes()),
        plan_device(c, device_free),
        format_seconds(est),
        note,
    ]);
    row
}

/// `note`, and a warning when the case is estimated to run longer than run's default
/// `--case-timeout` (a long `probes.hold_after_free`, a slow sweep).
fn past_timeout_note(note: String, est: f64) -> String {
    if est <= DEFAULT_CASE_TIMEOUT.as_secs_f64() {
        return note;
    }
    let warning = format!(
        "longer than run's default --case-timeout {DEFAULT_CASE_TIMEOUT_TEXT}, which would stop it: pass a longer --case-timeout"
    );
    if note.is_empty() {
        warning
    } else {
        format!("{note}; {warning}")
    }
}

/// The header and rows in columns: the first right-aligned, the others left-aligned, padded by
/// the columns each cell takes on a terminal (a CJK character takes two).
fn write_aligned(out: &mut String, header: &[&str], rows: Vec<Vec<String>>) {
    let mut widths: Vec<usize> = header.iter().map(|h| display_width(h)).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(display_width(cell));
        }
    }
    let mut line = |cells: Vec<String>| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w.saturating_sub(display_width(cell));
            if i == 0 {
                l.push_str(&" ".repeat(pad));
                l.push_str(cell);
            } else {
                l.push_str("  ");
                l.push_str(cell);
                l.push_str(&" ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", l.trim_end());
    };
    line(header.iter().map(|h| h.to_string()).collect());
    for r in rows {
        line(r);
    }
}

/// The case count and estimate, the devices, the claims, and the pinned cap checked against.
fn write_totals(
    out: &mut String,
    s: &Scenario,
    totals: &PlanTotals,
    ram_bytes: Option<u64>,
    allow_pinned: f64,
) {
    let n = s.cases.len();
    let refused = totals.refused;
    let _ = write!(out, "{n} case{}", if n == 1 { "" } else { "s" });
    if refused > 0 {
        let _ = write!(out, " ({refused} refused)");
    }
    let _ = writeln!(
        out,
        ", estimated {} in total",
        format_seconds(totals.seconds)
    );
    if let Some(d) = &s.devices {
        let _ = writeln!(out, "{}", devices_line(d));
    }
    let (nc, nd) = (s.claims.len(), s.derived.len());
    if nc + nd > 0 {
        let _ = writeln!(
            out,
            "{nc} claim{}, {nd} derived result{} checked after the run",
            if nc == 1 { "" } else { "s" },
            if nd == 1 { "" } else { "s" }
        );
    }
    for d in &s.derived {
        let _ = writeln!(out, "  derived \"{}\" = {}", d.text, d.formula());
    }
    match ram_bytes {
        Some(r) => {
            let cap = allow_pinned * r as f64;
            let _ = writeln!(
                out,
                "pinned cap {} = {allow_pinned} × RAM {}",
                format_size(cap as u64),
                format_size(r)
            );
        }
        None => {
            let _ = writeln!(out, "RAM unknown: the pinned cap was not checked");
        }
    }
}

/// What the scenario's `devices` makes a run do.
fn devices_line(d: &crate::platform::DeviceSelection) -> String {
    use crate::platform::DeviceSelection;
    match d {
        DeviceSelection::List(one) if one.len() == 1 => format!(
            "devices = \"{d}\": each case runs on GPU {d} (checked when run); --device overrides it"
        ),
        DeviceSelection::List(several) => format!(
            "devices = \"{d}\": each case runs on each of these {} GPUs alone, then on all at once ({} runs; the estimate is for one; the GPUs are checked when run); --device overrides it",
            several.len(),
            several.len() + 1
        ),
        DeviceSelection::All => format!(
            "devices = \"{d}\": with N GPUs each case runs on each GPU alone, then on all at once (N + 1 runs; the estimate is for one); --device overrides it"
        ),
    }
}

/// The assumptions the estimates are made from.
fn write_estimate_model(out: &mut String, s: &Scenario) {
    let _ = writeln!(
        out,
        "estimates assume 25 GB/s pinned, 6 GB/s pageable/managed/staged, plus hold-after-free and 0.5 s setup per case"
    );
    let _ = writeln!(
        out,
        "  cpu-read/cpu-write: 10 GB/s, 0.5 GB/s reading write-combined memory"
    );
    let _ = writeln!(
        out,
        "  sampling: (warmup + up to max_samples) × batch × size / bandwidth, stopping at time_limit once min_samples are in; batch 0 = ceil(256 MiB / size), at most 256; max_alloc and pinned_ceiling probes not included"
    );
    if s.cases.iter().any(|c| c.mode.is_latency()) {
        let _ = writeln!(
            out,
            "  latency modes: (warm-up + samples) × (20 µs + size / bandwidth), warm-up = max(measure.warmup, samples / 10)"
        );
    }
    if s.cases
        .iter()
        .any(|c| c.engine == Engine::Empty || c.engine.is_chase())
    {
        let _ = writeln!(
            out,
            "  empty kernel: 20 µs per launch, 1000 launches per sample in mode = \"direct\"; chase: 65536 loads of 1 µs per launch"
        );
    }
}

// Free device memory, device_hold and the past-the-card steps in the plan.

/// Free device memory a plan is made against, and where the number came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceFree {
    pub bytes: u64,
    /// `given with --device-free`, `free now per NVML (of 140 GiB)`.
    pub source: String,
}

impl DeviceFree {
    /// `plan --device-free SIZE`.
    pub fn given(text: &str) -> Result<DeviceFree, crate::Error> {
        let bytes = crate::units::parse_size(text)
            .map_err(|e| crate::Error::Usage(format!("--device-free: {e}")))?;
        Ok(DeviceFree {
            bytes,
            source: "given with --device-free".into(),
        })
    }
    /// What NVML says is free on a device now, of `total`.
    pub fn reported(free: u64, total: u64) -> DeviceFree {
        DeviceFree {
            bytes: free,
            source: format!("free now per NVML, of {} in all", format_size(total)),
        }
    }
}

/// The plan's `device` cell: the case's own device memory, plus its hold (resolved when the free
/// device memory is known, as written otherwise).
fn plan_device(c: &Case, free: Option<&DeviceFree>) -> String {
    let own = c.device_bytes();
    let hold = c.vram.device_hold;
    match (hold.is_none(), free) {
        (true, _) if own == 0 => "-".into(),
        (true, _) => format_bytes_exact(own),
        (false, Some(f)) => format_size(hold.resolve(f.bytes) + own),
        (false, None) if own == 0 => c.vram.device_hold_written.clone(),
        (false, None) => format!(
            "{} + {}",
            c.vram.device_hold_written,
            format_bytes_exact(own)
        ),
    }
}

/// The plan's note for cases that hold device memory or may go past free device memory.
fn plan_note(c: &Case, free: Option<&DeviceFree>) -> Option<String> {
    let hold = c.vram.device_hold;
    if hold.is_none() && c.guard {
        return None;
    }
    let own = c.device_bytes();
    let opt_in = if c.guard {
        "set guard = false and pass --allow-vram-overflow to try it"
    } else {
        "tried only with --allow-vram-overflow"
    };
    Some(match free {
        Some(f) => {
            let need = hold.resolve(f.bytes) + own;
            let pct = if f.bytes > 0 {
                format!(" ({:.0}%)", 100.0 * need as f64 / f.bytes as f64)
            } else {
                String::new()
            };
            if need > f.bytes {
                format!(
                    "past the card: needs {} of {} free{pct}; {opt_in}",
                    format_size(need),
                    format_size(f.bytes)
                )
            } else {
                format!(
                    "needs {} of {} free{pct}",
                    format_size(need),
                    format_size(f.bytes)
                )
            }
        }
        None if hold.reaches_free() => format!(
            "past the card (device_hold = \"{}\"); {opt_in}",
            c.vram.device_hold_written
        ),
        None if !c.guard => {
            "guard off: past free device memory only with --allow-vram-overflow".into()
        }
        None => format!(
            "holds device_hold = \"{}\" of device memory first",
            c.vram.device_hold_written
        ),
    })
}

/// The plan's line about free device memory, when any case depends on it.
fn plan_footer(s: &Scenario, free: Option<&DeviceFree>) -> String {
    let relevant = s
        .cases
        .iter()
        .any(|c| !c.vram.device_hold.is_none() || !c.guard);
    if !relevant {
        return String::new();
    }
    match free {
        Some(f) => format!(
            "device memory: {} {}; \"past the card\" steps need guard = false and --allow-vram-overflow\n",
            format_size(f.bytes),
            f.source
        ),
        None => "device memory: unknown here (no NVML): device_hold shown as written; plan for a card with --device-free SIZE\n".into(),
    }
}

/// Assumed device memory bandwidth for the estimate, bytes per second.
pub const ASSUMED_DEVICE_BPS: f64 = 500.0 * crate::units::GB;

/// A churn case: `cycles` cycles, each filling a fresh buffer at the pageable speed, the
/// `pause`, and the copy at the pinned speed.
fn churn_estimate_seconds(c: &Case) -> f64 {
    let per = c.size as f64 / ASSUMED_PAGEABLE_BPS
        + c.vram.pause.as_secs_f64()
        + c.size as f64 / ASSUMED_PINNED_BPS;
    let setup = SETUP_S + c.probes.hold_after_free.as_secs_f64();
    f64::from(c.vram.cycles) * per + setup
}

/// Estimates for the device engines; `None` for every other case.
fn device_estimate_seconds(c: &Case) -> Option<f64> {
    if !c.engine.is_device() {
        return None;
    }
    let setup = SETUP_S + c.probes.hold_after_free.as_secs_f64();
    let batch = u64::from(c.batch());
    let per_sample = batch as f64 * c.size as f64 / ASSUMED_DEVICE_BPS;
    let sampling = (f64::from(c.measure.max_samples) * per_sample).min(
        c.measure
            .time_limit
            .as_secs_f64()
            .max(f64::from(c.measure.min_samples) * per_sample),
    );
    Some(warmup_seconds(&c.measure, f64::from(c.measure.warmup), per_sample) + sampling + setup)
}
