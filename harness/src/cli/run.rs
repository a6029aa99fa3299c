//! `pinscope run`: checks the options that need no GPU, loads the scenarios, opens the runner
//! and runs each scenario.

use super::RunArgs;
use crate::Error;
use crate::platform::DeviceSelection;
use crate::run::{
    Fleet, RunOptions, Runner, SWEEP_LIMIT, ceiling_cap, install_interrupt_handler, open_runner,
    run_scenario,
};
use crate::scenario::Scenario;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The GPUs of this run: `--device` when given, else the scenarios' `devices` (they must agree),
/// else GPU 0.
fn device_selection(arg: Option<&str>, scenarios: &[Scenario]) -> Result<DeviceSelection, Error> {
    if let Some(a) = arg {
        return DeviceSelection::parse(a).map_err(|e| Error::Usage(format!("--device {a}: {e}")));
    }
    let mut chosen: Option<(&Scenario, &DeviceSelection)> = None;
    for s in scenarios {
        if let Some(d) = &s.devices {
            match chosen {
                Some((other, od)) if od != d => {
                    return Err(Error::Usage(format!(
                        "{} asks for devices = \"{d}\" and {} for \"{od}\": run them separately or pass --device",
                        s.path, other.path
                    )));
                }
                _ => chosen = Some((s, d)),
            }
        }
    }
    Ok(chosen.map(|(_, d)| d.clone()).unwrap_or_default())
}

/// `pinscope run`.
pub fn run_command(args: &RunArgs, quiet: bool) -> Result<i32, Error> {
    let case_timeout = checked_options(args)?;
    let scenarios = load_scenarios(args)?;
    // A results folder that cannot be one is refused before the driver is loaded.
    crate::results::check_output_folder(&args.out_dir)?;
    let selection = device_selection(args.device.as_deref(), &scenarios)?;
    // Validate what needs only the host before touching the GPU.
    let ram = crate::platform::this_machine(false).ram_bytes;
    let pinned_cap = ceiling_cap(args.pinned_cap.as_deref(), ram)?;
    let devices = resolve_devices(&selection)?;
    let first = devices.first().copied().unwrap_or(0);
    let mut runner = open_runner(first, args.anonymize)?;
    runner.pinned_cap = pinned_cap;
    let stop = install_interrupt_handler();
    let fleet = if devices.len() > 1 {
        Some(std::sync::Arc::new(Fleet::open(
            &devices,
            args.anonymize,
            pinned_cap,
            stop.clone(),
        )?))
    } else {
        if selection.is_multi() && !quiet {
            eprintln!(
                "note: --device {selection} selects one GPU on this machine (GPU {first}): each case runs on it alone, and its \"all GPUs\" figures are this GPU's"
            );
        }
        None
    };
    let opts = RunOptions {
        allow_pinned: args.input.allow_pinned.fraction(),
        only: args.only.clone(),
        quiet,
        case_timeout,
        write_report: !args.no_report,
        fleet,
        allow_vram_overflow: args.allow_vram_overflow,
    };
    run_each(&mut runner, &scenarios, args, &opts, &stop)
}

/// `--case-timeout` above zero: the case timeout.
fn checked_options(args: &RunArgs) -> Result<Duration, Error> {
    let case_timeout = crate::units::parse_duration(&args.case_timeout)
        .map_err(|e| Error::Usage(format!("--case-timeout: {e}")))?;
    if case_timeout.is_zero() {
        return Err(Error::Usage(format!(
            "--case-timeout {} would end the run before any case starts: give a positive duration such as 10m",
            args.case_timeout
        )));
    }
    Ok(case_timeout)
}

/// The scenario files, refused together when they expand to more cases than a run takes
/// without `--yes`.
fn load_scenarios(args: &RunArgs) -> Result<Vec<Scenario>, Error> {
    let mut scenarios = Vec::new();
    for p in &args.input.scenarios {
        let s = args.input.load(p)?;
        s.require_sources()?;
        super::note_shipped(p, &s);
        scenarios.push(s);
    }
    let total: usize = scenarios.iter().map(|s| s.cases.len()).sum();
    if total > SWEEP_LIMIT && !args.yes {
        return Err(Error::Refused(format!(
            "these scenarios expand to {total} cases, more than {SWEEP_LIMIT}: check with `pinscope plan`, then pass --yes to run them all"
        )));
    }
    Ok(scenarios)
}

/// The device indices a selection names (one GPU needs no driver to resolve).
fn resolve_devices(selection: &DeviceSelection) -> Result<Vec<u32>, Error> {
    match selection {
        DeviceSelection::List(one) if one.len() == 1 => Ok(one.clone()),
        several => {
            let count = crate::cuda::device_count().map_err(|e| Error::NoGpu(e.sentence()))?;
            several
                .resolve(count)
                .map_err(|e| Error::Usage(format!("--device {selection}: {e}")))
        }
    }
}

/// Runs each scenario in turn, naming its results file; an interrupt stops after the scenario it
/// cut short.
fn run_each(
    runner: &mut Runner,
    scenarios: &[Scenario],
    args: &RunArgs,
    opts: &RunOptions,
    stop: &Arc<AtomicBool>,
) -> Result<i32, Error> {
    for s in scenarios {
        let out = run_scenario(runner, s, &args.out_dir, opts, stop)?;
        if !opts.quiet || out.partial {
            eprintln!("{}", out.summary);
        }
        super::print_out(&format!("results: {}\n", out.csv.display()))?;
        if out.partial {
            return Err(Error::Interrupted(
                "partial results were written above; every finished case is in them".into(),
            ));
        }
    }
    Ok(0)
}
