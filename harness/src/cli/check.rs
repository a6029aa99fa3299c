//! `pinscope check`: a health verdict for one GPU, in the shape cluster health checks expect.
//! Short pinned and pageable copies both ways with data verification, the settings recorded
//! during a transfer, the live pin budget, then one severity per check and for the node, with a
//! one-line reason. Exit 0 pass or warn, 1 a check failed, 3 could not run (no usable GPU, or
//! one that could not be opened), 2 bad arguments (docs/check.md). `--prom FILE` also writes the
//! verdict for Prometheus' textfile collector, whatever the outcome.

use super::budget_record::{MeasuredBudget, measured_budget, write_measured_budget};
use crate::Error;
use crate::health::{
    self, BudgetNumbers, CheckEntry, CheckResult, Copies, DEFAULT_MIN_LINK_SHARE, Measured,
    NodeMetrics, Severity, Thresholds,
};
use crate::platform::{Platform, Recorded, Settings};
use crate::probe::PinBudget;
use crate::run::{CheckPlan, measure_check_with, open_runner};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// The GPU to check: one CUDA device ordinal, as `run --device` takes it.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub device: String,
    /// Print JSON instead of text (only JSON on stdout; same exit code).
    #[arg(long)]
    pub json: bool,
    /// Print only the one-line reason (for node-problem-detector and drain commands).
    #[arg(long, conflicts_with = "json")]
    pub reason: bool,
    /// Also write the verdict as a Prometheus textfile (a name ending in .prom), atomically.
    #[arg(long, value_name = "FILE")]
    pub prom: Option<PathBuf>,
    /// Copy less (64 MiB copies, fewer of them): for frequent health checks.
    #[arg(long)]
    pub quick: bool,
    /// Fail when pinned host→device bandwidth is below this many GB/s (1e9 B/s); warn within 5%
    /// above it. Default: a share of the link's theoretical rate (--min-link-share).
    #[arg(long, value_name = "GB/s", allow_negative_numbers = true)]
    pub min_h2d: Option<f64>,
    /// As --min-h2d, for device→host.
    #[arg(long, value_name = "GB/s", allow_negative_numbers = true)]
    pub min_d2h: Option<f64>,
    /// Share of the link's theoretical rate (from its maximum generation and width) that pinned
    /// bandwidth must reach where no --min-h2d / --min-d2h is given.
    #[arg(
        long,
        default_value_t = DEFAULT_MIN_LINK_SHARE,
        value_name = "FRACTION",
        allow_negative_numbers = true
    )]
    pub min_link_share: f64,
    /// A record of `pinscope budget --json`: the pin_budget check judges its measured total
    /// (safe bytes pinned together) instead of the live predictor's.
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
}

/// A GPU as the verdict names it.
#[derive(Debug, serde::Serialize)]
struct GpuId {
    index: u32,
    name: String,
    uuid: String,
}

/// How much `check` copied.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Full,
    Quick,
}

/// The verdict `check` prints: as text, or as JSON for scripts (docs/check.md).
#[derive(Debug, serde::Serialize)]
struct CheckReport {
    #[serde(flatten)]
    envelope: super::Envelope,
    schema_version: u32,
    host: String,
    /// When the check started, RFC 3339 UTC.
    time: String,
    gpus: Vec<GpuId>,
    severity: Severity,
    reason: String,
    mode: Mode,
    seconds: f64,
    platform: Recorded<Platform>,
    thresholds: Thresholds,
    #[serde(serialize_with = "entries")]
    checks: Vec<CheckResult>,
    measured: Option<Measured>,
    settings: Option<Settings>,
    pin_budget: PinBudget,
    /// The safe amounts of the record `--budget` named, when one was given.
    measured_pin_budget: Option<MeasuredBudget>,
}

/// The checks as `{name, severity, value, unit, threshold, advice}`.
fn entries<S: serde::Serializer>(checks: &[CheckResult], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(checks.iter().map(CheckEntry::of))
}

fn thresholds(args: &CheckArgs) -> Result<Thresholds, Error> {
    let floor = |name: &str, v: Option<f64>| match v {
        Some(x) if !(x.is_finite() && x > 0.0) => Err(Error::Usage(format!(
            "--{name} {x} is not a bandwidth: give a number of GB/s above 0, such as 48"
        ))),
        _ => Ok(v),
    };
    let share = args.min_link_share;
    if !(share > 0.0 && share <= 1.0) {
        return Err(Error::Usage(format!(
            "--min-link-share {share} is not a share: give a fraction above 0 and at most 1, such as 0.6"
        )));
    }
    Ok(Thresholds {
        min_h2d_gbs: floor("min-h2d", args.min_h2d)?,
        min_d2h_gbs: floor("min-d2h", args.min_d2h)?,
        min_link_share: share,
    })
}

/// `pinscope check`.
pub fn check_command(args: &CheckArgs) -> Result<i32, Error> {
    let thresholds = thresholds(args)?;
    let device = super::info::one_device(&args.device, "check")?;
    if let Some(path) = &args.prom {
        prom_path(path)?;
    }
    let measured_pin_budget = args.budget.as_deref().map(measured_budget).transpose()?;
    let started = Instant::now();
    let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let machine = crate::platform::this_machine(false);
    let platform = machine.platform.known().unwrap_or(Platform::Other);
    let mut report = CheckReport {
        envelope: super::Envelope::new(3, None),
        schema_version: health::SCHEMA_VERSION,
        host: machine.host_name.clone(),
        time,
        gpus: Vec::new(),
        severity: Severity::Error,
        reason: String::new(),
        mode: if args.quick { Mode::Quick } else { Mode::Full },
        seconds: 0.0,
        platform: machine.platform.clone(),
        thresholds,
        checks: Vec::new(),
        measured: None,
        settings: None,
        pin_budget: crate::probe::pin_budget(platform, None),
        measured_pin_budget,
    };
    let could_not_run = measure(&mut report, args, device);
    report.checks.push(pin_budget_check(&report));
    report.severity = health::node_severity(&report.checks, could_not_run.is_none());
    report.reason = health::reason(report.severity, &report.checks, could_not_run.as_deref());
    report.envelope.exit_code = report.severity.exit_code();
    report.seconds = started.elapsed().as_secs_f64();
    if let Some(path) = &args.prom {
        write_prom(path, &report)?;
    }
    print(&report, args)?;
    Ok(report.envelope.exit_code)
}

/// The pin_budget check: of the measured total when `--budget` gave one, else of the predictor.
fn pin_budget_check(report: &CheckReport) -> CheckResult {
    let Some(m) = &report.measured_pin_budget else {
        let budget = &report.pin_budget;
        let safe = budget
            .host_alloc_bytes
            .ok_or(budget.unavailable.as_deref().unwrap_or("no reading"));
        return health::pin_budget(safe);
    };
    let safe = m.safe.total_bytes.map(|a| a.value).ok_or(
        "the budget record has no measured total: measure again with `pinscope budget --json -o FILE`",
    );
    let mut c = health::pin_budget(safe);
    if !c.threshold.is_empty() {
        c.threshold
            .push_str(&format!("; measured by `pinscope budget` at {}", m.time));
    }
    c
}

/// Opens the GPU and measures into `report`; `Some(why)` when no GPU could be used.
fn measure(report: &mut CheckReport, args: &CheckArgs, device: u32) -> Option<String> {
    let plan = if args.quick {
        CheckPlan::QUICK
    } else {
        CheckPlan::FULL
    };
    match open_runner(device, false) {
        Ok(mut runner) => {
            runner.read_settings_under_load();
            let wsl2 = runner.machine.platform.is(Platform::Wsl2);
            let measured = measure_check_with(&runner, wsl2, &plan);
            let settings = runner.machine.settings.clone().unwrap_or_default();
            report.checks = health::evaluate(&measured, &settings, &report.thresholds, wsl2);
            report.gpus = runner
                .machine
                .gpu
                .iter()
                .map(|g| GpuId {
                    index: g.index,
                    name: g.name.clone(),
                    uuid: g.uuid.clone(),
                })
                .collect();
            // On Windows the DXGI adapter is the GPU's (by LUID), not the first one.
            let platform = report.platform.known().unwrap_or(Platform::Other);
            report.pin_budget = crate::probe::pin_budget(platform, runner.gpu.facts().luid);
            report.measured = Some(measured);
            report.settings = Some(settings);
            None
        }
        Err(Error::NoGpu(why)) => {
            let no_gpu = super::info::NO_GPU;
            report.checks = health::all_not_run(&format!("{no_gpu}: {why}"));
            report.settings = Some(crate::run::record_settings_without_gpu(no_gpu));
            report.envelope.gpu_unavailable = Some(why.clone());
            Some(format!("no GPU: {why}"))
        }
        // The GPU is there but could not be opened (its kernels, a driver call): the node's
        // verdict says so, as for no GPU, so that a health check still gets its document.
        Err(e) => {
            report.checks = health::all_not_run(&e.to_string());
            report.envelope.gpu_unavailable = Some(e.to_string());
            Some(format!("could not run: {e}"))
        }
    }
}

/// Prints the report as `--json`, `--reason` or text ask.
fn print(report: &CheckReport, args: &CheckArgs) -> Result<(), Error> {
    if args.json {
        let text = serde_json::to_string_pretty(report)
            .map_err(|e| Error::Usage(format!("the check's JSON could not be written ({e})")))?;
        super::print_out(&format!("{text}\n"))
    } else if args.reason {
        super::print_out(&format!("{}\n", report.reason))
    } else {
        super::print_out(&text_of(report))
    }
}

/// Refuses a `--prom` path that is not a `.prom` file name (the textfile collector reads only
/// those; pinscope replaces nothing else).
fn prom_path(path: &Path) -> Result<(), Error> {
    if path.extension().is_none_or(|e| e != "prom") {
        return Err(Error::Usage(format!(
            "--prom {}: the textfile collector reads only files named *.prom: give such a name, e.g. /var/lib/node_exporter/textfile/pinscope.prom",
            path.display()
        )));
    }
    super::check_output(&Default::default(), path)
}

/// Writes the Prometheus file: a temporary name in the same folder, then a rename.
fn write_prom(path: &Path, r: &CheckReport) -> Result<(), Error> {
    let b = &r.pin_budget;
    let text = health::prometheus_text(&NodeMetrics {
        host: &r.host,
        gpu_uuid: r.gpus.first().map(|g| g.uuid.as_str()),
        severity: r.severity,
        seconds: r.seconds,
        checks: &r.checks,
        budget: BudgetNumbers {
            host_alloc_bytes: b.host_alloc_bytes,
            host_register_bytes: b.host_register_bytes,
            mappings: b.mappings,
        },
    });
    super::write_output(&Default::default(), path, text.as_bytes())
}

/// The report as text, one line per check.
fn text_of(r: &CheckReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = match (r.gpus.first(), &r.envelope.gpu_unavailable) {
        (_, Some(why)) => writeln!(out, "pinscope check: no usable GPU — {why}"),
        (Some(gpu), None) => writeln!(
            out,
            "pinscope check: GPU {} ({} {}), {}",
            gpu.index, gpu.name, gpu.uuid, r.platform
        ),
        (None, None) => writeln!(out, "pinscope check: GPU (unnamed), {}", r.platform),
    };
    let width = r
        .checks
        .iter()
        .map(|c| c.check.title().chars().count())
        .max()
        .unwrap_or(0);
    for c in &r.checks {
        let measured = c
            .measured
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        let mut line = format!(
            "  {:<8} {:<width$}  {measured}",
            c.verdict.name(),
            c.check.title()
        );
        if !c.threshold.is_empty() {
            line.push_str(&format!("  (threshold {})", c.threshold));
        }
        let _ = writeln!(out, "{}", line.trim_end());
        let no_gpu = r.envelope.gpu_unavailable.is_some() && c.check != health::Check::PinBudget;
        if !c.advice.is_empty() && !no_gpu {
            let _ = writeln!(out, "          → {}", c.advice);
        }
    }
    if let Some(m) = &r.measured {
        let _ = writeln!(
            out,
            "measured (median, GB/s = 1e9 B/s): pinned H2D {}, D2H {}; pageable H2D {}, D2H {}",
            gbs(m.pinned_h2d.as_ref()),
            gbs(m.pinned_d2h.as_ref()),
            gbs(m.pageable_h2d.as_ref()),
            gbs(m.pageable_d2h.as_ref())
        );
    }
    super::info::write_budget(&mut out, &r.pin_budget);
    if let Some(m) = &r.measured_pin_budget {
        write_measured_budget(&mut out, m);
    }
    let _ = writeln!(out, "reason: {}", r.reason);
    let _ = writeln!(
        out,
        "verdict: {} (exit {}) in {:.1} s",
        verdict_words(r.severity),
        r.envelope.exit_code,
        r.seconds
    );
    out
}

/// The node's severity as the text output has always said it (`not run` for `error`).
fn verdict_words(s: Severity) -> &'static str {
    match s {
        Severity::Error => "not run",
        other => other.name(),
    }
}

fn gbs(c: Option<&Copies>) -> String {
    match c {
        Some(Ok(b)) => format!(
            "{:.1} GB/s ({} copies of {})",
            b.median_gbs,
            b.samples_gbs.len(),
            crate::units::format_size(b.copy_bytes)
        ),
        Some(Err(e)) => format!("failed ({e})"),
        None => "not measured".into(),
    }
}
