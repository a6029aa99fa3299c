//! `pinscope budget`: the measured pin budget (docs/budget.md). The probe runs in a child process
//! (`budget-child`, hidden) under a deadline and a byte cap; this side checks the options, the GPU,
//! reads the predictor, runs the child and writes the record as text or JSON.

use crate::Error;
use crate::run::pinnable::{
    self, BudgetRecord, ChildEnd, Plan, ProbeKind, ProbeResult, SafeAmount, search::Ended,
};
use crate::units::{KIB, MIB, format_size, parse_duration, parse_size};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Ranges of the registrations probe.
const RANGE: u64 = 64 * KIB;
/// The most ranges registered: past the ~65 k where `vm.max_map_count` (65530) refuses.
const MAX_REGISTRATIONS: u64 = 70_000;
/// The most ranges registered with `--quick`.
const QUICK_REGISTRATIONS: u64 = 20_000;
/// The longest deadline taken.
const LONGEST: Duration = Duration::from_secs(3600);

#[derive(Debug, Args, Clone)]
pub struct BudgetArgs {
    /// The GPU to probe: one CUDA device ordinal, as `run --device` takes it.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub device: String,
    /// Only with no device memory held, and at most 20000 registrations: for frequent health
    /// checks (default deadline 50 s, cap 4 GiB).
    #[arg(long)]
    pub quick: bool,
    /// Kill the probe after this long (the record says so): a number and a unit, s or m
    /// (default 120s; 50s with --quick).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// The most bytes any probe pins (default 8GiB; 4GiB with --quick); never more than
    /// MemAvailable less max(a quarter of it, 2 GiB).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub cap: Option<String>,
    /// Shares of free device memory held by cuMemAlloc while probing, in percent, comma-separated.
    #[arg(
        long,
        value_name = "PERCENTS",
        value_delimiter = ',',
        default_value = "0,50,90",
        conflicts_with = "quick"
    )]
    pub hold: Vec<u8>,
    /// Bisection resolution of the largest-single probes.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub resolution: String,
    /// Chunk of the total probe.
    #[arg(long, value_name = "SIZE", default_value = "1GiB")]
    pub chunk: String,
    /// Print (or write) the JSON record instead of text.
    #[arg(long)]
    pub json: bool,
    /// File to write to (`-`: standard output).
    #[arg(long, short, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
}

/// The hidden command the probe child runs as.
#[derive(Debug, Args, Clone)]
pub struct BudgetChildArgs {
    /// The plan, as JSON.
    #[arg(long)]
    pub plan: String,
}

/// `pinscope budget-child`: the probe itself (started by `budget`).
pub fn budget_child_command(args: &BudgetChildArgs) -> Result<i32, Error> {
    let plan: Plan = serde_json::from_str(&args.plan)
        .map_err(|e| Error::Usage(format!("--plan is not a probe plan ({e}): `budget-child` is run by `pinscope budget`, not by hand")))?;
    Ok(pinnable::child_main(&plan))
}

fn size(flag: &str, text: &str) -> Result<u64, Error> {
    match parse_size(text) {
        Ok(0) => Err(Error::Usage(format!(
            "--{flag} {text}: give a size above 0, such as 1GiB"
        ))),
        Ok(n) => Ok(n),
        Err(e) => Err(Error::Usage(format!("--{flag}: {e}"))),
    }
}

/// The options checked, and the plan without its byte limit and deadline.
fn options(args: &BudgetArgs) -> Result<(Plan, u64, Duration), Error> {
    let device = super::info::one_device(&args.device, "budget")?;
    let default = if args.quick {
        ("50s", "4GiB")
    } else {
        ("120s", "8GiB")
    };
    let text = args.deadline.as_deref().unwrap_or(default.0);
    let deadline = parse_duration(text).map_err(|e| Error::Usage(format!("--deadline: {e}")))?;
    if deadline < Duration::from_secs(1) || deadline > LONGEST {
        return Err(Error::Usage(format!(
            "--deadline {text}: give a time from 1s to 1h, such as 120s"
        )));
    }
    let cap = size("cap", args.cap.as_deref().unwrap_or(default.1))?;
    if let Some(p) = args.hold.iter().find(|p| **p > 95) {
        return Err(Error::Usage(format!(
            "--hold {p}: give percents of free device memory from 0 to 95, such as 0,50,90"
        )));
    }
    let hold_percents = if args.quick {
        vec![0]
    } else {
        args.hold.clone()
    };
    let plan = Plan {
        device,
        hold_percents,
        kinds: ProbeKind::ALL.to_vec(),
        limit_bytes: 0,
        resolution_bytes: size("resolution", &args.resolution)?,
        chunk_bytes: size("chunk", &args.chunk)?,
        range_bytes: RANGE,
        max_registrations: if args.quick {
            QUICK_REGISTRATIONS
        } else {
            MAX_REGISTRATIONS
        },
        child_deadline_ms: 0,
    };
    Ok((plan, cap, deadline))
}

/// Why no GPU can be probed, or `None` when the driver reports the device.
fn no_gpu(device: u32) -> Option<String> {
    use crate::cuda::OpenError;
    match crate::cuda::device_count() {
        Err(e) => Some(e.sentence()),
        Ok(0) => Some(OpenError::NoDevice("no devices".into()).sentence()),
        Ok(count) if device >= count => Some(
            OpenError::BadOrdinal {
                asked: device,
                count,
            }
            .sentence(),
        ),
        Ok(_) => None,
    }
}

/// `pinscope budget`.
pub fn budget_command(args: &BudgetArgs) -> Result<i32, Error> {
    let (mut plan, cap, deadline) = options(args)?;
    super::check_output(&Default::default(), &args.output)?;
    let started = Instant::now();
    let machine = crate::platform::this_machine(false);
    let platform = machine
        .platform
        .known()
        .unwrap_or(crate::platform::Platform::Other);
    let predictor = crate::probe::pin_budget(platform, None);
    let limits = &predictor.limits;
    let cgroup_headroom = match (limits.cgroup_max.value(), limits.cgroup_current.value()) {
        (Some(crate::probe::pin_limits::Cap::Bytes(max)), Some(now)) => {
            Some(max.saturating_sub(now.0))
        }
        _ => None,
    };
    let bounds = pinnable::bounds(
        cap,
        limits.mem_available.value().map(|b| b.0),
        cgroup_headroom,
    );
    plan.limit_bytes = bounds.limit_bytes;
    plan.child_deadline_ms = pinnable::child_deadline(deadline).as_millis() as u64;
    let mut record = BudgetRecord {
        pinscope_version: env!("CARGO_PKG_VERSION").into(),
        schema_version: pinnable::SCHEMA_VERSION,
        exit_code: 3,
        gpu_unavailable: no_gpu(plan.device),
        host: machine.host_name.clone(),
        time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        gpu: None,
        deadline_s: deadline.as_secs_f64(),
        bounds,
        plan,
        safe: pinnable::Safe::of(&[]),
        holds: Vec::new(),
        probes: Vec::new(),
        child: None,
        child_failed: None,
        mem_available_after_bytes: None,
        seconds: 0.0,
        predictor,
    };
    if let Some(why) = record.gpu_unavailable.clone() {
        if !args.json {
            return Err(Error::NoGpu(why));
        }
        eprintln!("error: {why}");
    } else {
        probe_into(&mut record, deadline)?;
    }
    record.seconds = started.elapsed().as_secs_f64();
    write(&record, args)?;
    Ok(record.exit_code)
}

/// Runs the child and puts what it measured into `record`.
fn probe_into(record: &mut BudgetRecord, deadline: Duration) -> Result<(), Error> {
    let exe = std::env::current_exe().map_err(|e| {
        Error::System(format!(
            "pinscope could not find its own program file to run the probe in a child process ({e})"
        ))
    })?;
    let (gathered, end) = pinnable::measure(&exe, &record.plan, deadline)?;
    record.mem_available_after_bytes =
        crate::probe::pin_limits::tree_limits(std::path::Path::new("/"))
            .mem_available
            .value()
            .map(|b| b.0);
    record.safe = pinnable::Safe::of(&gathered.probes);
    // A child that opened the GPU and then died (killed by the kernel, say) measured nothing
    // to trust: that is exit 1 with `child_failed`, as documented, not a record made.
    record.exit_code = if gathered.gpu.is_some() && gathered.failed.is_none() {
        0
    } else {
        1
    };
    record.gpu = gathered.gpu;
    record.holds = gathered.holds;
    record.probes = gathered.probes;
    record.child_failed = gathered.failed;
    record.child = Some(end);
    Ok(())
}

fn write(record: &BudgetRecord, args: &BudgetArgs) -> Result<(), Error> {
    let text = if args.json {
        let json = serde_json::to_string_pretty(record)
            .map_err(|e| Error::Usage(format!("the budget's JSON could not be written ({e})")))?;
        format!("{json}\n")
    } else {
        text_of(record)
    };
    super::write_output(&Default::default(), &args.output, text.as_bytes())
}

fn amount(kind: ProbeKind, n: u64) -> String {
    match kind {
        ProbeKind::Registrations => format!("{n} × {}", format_size(RANGE)),
        _ => format_size(n),
    }
}

fn ended_words(p: &ProbeResult) -> String {
    match &p.ended {
        Ended::Refused { at, error } => format!("refused at {}: {error}", amount(p.kind, *at)),
        Ended::Cap => "reached the probe's cap".into(),
        Ended::Deadline => "deadline".into(),
    }
}

pub(super) fn safe_words(kind: ProbeKind, s: Option<SafeAmount>) -> String {
    match s {
        Some(a) => format!(
            "{}{}",
            if a.at_least { "≥ " } else { "" },
            amount(kind, a.value)
        ),
        None => "not measured".into(),
    }
}

/// The record as text: one line per probe, the safe amounts, the predictor, how the child ended.
pub(super) fn text_of(r: &BudgetRecord) -> String {
    let mut out = String::new();
    let gpu = r.gpu.as_ref().map_or_else(
        || "GPU not opened".into(),
        |g| format!("GPU {} ({} {})", g.index, g.name, g.uuid),
    );
    let _ = writeln!(
        out,
        "pinscope budget: {gpu}; cap {} (in force {}: {}); deadline {:.0} s",
        format_size(r.bounds.cap_bytes),
        format_size(r.bounds.limit_bytes),
        r.bounds.rule,
        r.deadline_s
    );
    for p in &r.probes {
        let recovery = p.after_refusal.as_ref().map_or(String::new(), |a| {
            format!("; recoverable: {}", recoverable_words(a.recoverable))
        });
        let _ = writeln!(
            out,
            "  hold {:>2}%  {:<34} {:>14}  {} ({:.1} s){recovery}",
            p.hold_percent,
            p.kind.title(),
            amount(p.kind, p.found.amount()),
            ended_words(p),
            p.seconds
        );
    }
    let s = &r.safe;
    let _ = writeln!(
        out,
        "safe: cuMemHostAlloc {}, cuMemHostRegister {}, total {}, registrations {}\n  rule: {}",
        safe_words(ProbeKind::HostAlloc, s.host_alloc_bytes),
        safe_words(ProbeKind::HostRegister, s.host_register_bytes),
        safe_words(ProbeKind::Total, s.total_bytes),
        safe_words(ProbeKind::Registrations, s.registrations),
        s.rule
    );
    super::info::write_budget(&mut out, &r.predictor);
    let _ = writeln!(out, "{}", child_words(r));
    out
}

pub(super) fn recoverable_words(r: pinnable::Recoverable) -> &'static str {
    match r {
        pinnable::Recoverable::AtOnce => "yes, at once",
        pinnable::Recoverable::AfterReadingTheError => "after reading the error",
        pinnable::Recoverable::No => "no",
    }
}

fn child_words(r: &BudgetRecord) -> String {
    let mut s = r
        .child
        .as_ref()
        .map_or_else(|| "no probe ran".into(), ChildEnd::sentence);
    if let Some(why) = &r.child_failed {
        s.push_str(&format!(": {why}"));
    }
    let mib = |b: Option<u64>| b.map_or("unknown".into(), |b| format!("{} MiB", b / MIB));
    format!(
        "{s}; MemAvailable {} before, {} after; {:.1} s",
        mib(r.bounds.mem_available_bytes),
        mib(r.mem_available_after_bytes),
        r.seconds
    )
}
