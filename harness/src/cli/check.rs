//! `pinscope check`: a health verdict for one GPU in well under 30 s. Short pinned and pageable
//! copies both ways with data verification, the settings recorded during a transfer, then one
//! verdict per check. Exit 0 when nothing failed (warnings printed), 1 when a check failed,
//! 3 without a GPU, 2 for bad arguments.

use crate::Error;
use crate::health::{
    self, CheckResult, Copies, DEFAULT_MIN_LINK_SHARE, Measured, Thresholds, Verdict,
};
use crate::platform::{Platform, Recorded, Settings};
use crate::run::{measure_check, open_session};
use clap::Args;
use std::time::Instant;

#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// The GPU to check: one CUDA device ordinal, as `run --device` takes it.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub device: String,
    /// Print JSON instead of text (only JSON on stdout; same exit code).
    #[arg(long)]
    pub json: bool,
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
}

/// The report `check` prints: as text, or as JSON for scripts.
#[derive(Debug, serde::Serialize)]
struct CheckReport {
    #[serde(flatten)]
    envelope: super::Envelope,
    verdict: Verdict,
    device: u32,
    gpu: Option<String>,
    platform: Recorded<Platform>,
    seconds: f64,
    thresholds: Thresholds,
    checks: Vec<CheckResult>,
    measured: Option<Measured>,
    settings: Option<Settings>,
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
    let started = Instant::now();
    let machine = crate::platform::this_machine(false);
    let mut report = CheckReport {
        envelope: super::Envelope::new(3, None),
        verdict: Verdict::NotRun,
        device,
        gpu: None,
        platform: machine.platform.clone(),
        seconds: 0.0,
        thresholds,
        checks: Vec::new(),
        measured: None,
        settings: None,
    };
    match open_session(device, false) {
        Ok(mut session) => {
            session.read_settings_under_load();
            let wsl2 = session.machine.platform.is(Platform::Wsl2);
            let measured = measure_check(&session, wsl2);
            let settings = session.machine.settings.clone().unwrap_or_default();
            report.checks = health::evaluate(&measured, &settings, &thresholds, wsl2);
            report.verdict = health::overall(&report.checks);
            report.envelope.exit_code = i32::from(report.verdict == Verdict::Fail);
            report.gpu = session.machine.gpu.as_ref().map(|g| g.name.clone());
            report.measured = Some(measured);
            report.settings = Some(settings);
        }
        Err(Error::NoGpu(why)) => {
            let no_gpu = super::info::NO_GPU;
            report.checks = health::all_not_run(&format!("{no_gpu}: {why}"));
            report.settings = Some(crate::run::record_settings_without_gpu(no_gpu));
            report.envelope.gpu_unavailable = Some(why);
        }
        Err(e) => return Err(e),
    }
    report.seconds = started.elapsed().as_secs_f64();
    if args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::Usage(format!("the check's JSON could not be written ({e})")))?;
        super::print_out(&format!("{text}\n"))?;
    } else {
        super::print_out(&text_of(&report))?;
    }
    Ok(report.envelope.exit_code)
}

/// The report as text, one line per check.
fn text_of(r: &CheckReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = match (&r.gpu, &r.envelope.gpu_unavailable) {
        (_, Some(why)) => writeln!(out, "pinscope check: no usable GPU — {why}"),
        (gpu, None) => writeln!(
            out,
            "pinscope check: GPU {} ({}), {}",
            r.device,
            gpu.as_deref().unwrap_or("unnamed"),
            r.platform
        ),
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
        if !c.advice.is_empty() && r.envelope.gpu_unavailable.is_none() {
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
    let _ = writeln!(
        out,
        "verdict: {} (exit {}) in {:.1} s",
        r.verdict.name(),
        r.envelope.exit_code,
        r.seconds
    );
    out
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
