//! `pinscope run`: checks the options that need no GPU, loads the scenarios, opens the session
//! and runs each scenario.

use super::RunArgs;
use crate::Error;
use crate::run::{
    RunOptions, SWEEP_LIMIT, ceiling_cap, install_interrupt_handler, open_session, run_scenario,
};

/// `pinscope run`.
pub fn run_command(args: &RunArgs, quiet: bool) -> Result<i32, Error> {
    if !(0.0..=0.9).contains(&args.allow_pinned) {
        return Err(Error::Usage(format!(
            "--allow-pinned {} is out of range: give a fraction of physical RAM between 0 and 0.9",
            args.allow_pinned
        )));
    }
    let case_timeout = crate::units::parse_duration(&args.case_timeout)
        .map_err(|e| Error::Usage(format!("--case-timeout: {e}")))?;
    if case_timeout.is_zero() {
        return Err(Error::Usage(format!(
            "--case-timeout {} would end the run before any case starts: give a positive duration such as 10m",
            args.case_timeout
        )));
    }
    let mut scenarios = Vec::new();
    for p in &args.scenarios {
        scenarios.push(crate::scenario::load(p)?);
    }
    let total: usize = scenarios.iter().map(|s| s.cases.len()).sum();
    if total > SWEEP_LIMIT && !args.yes {
        return Err(Error::Refused(format!(
            "these scenarios expand to {total} cases, more than {SWEEP_LIMIT}: check with `pinscope plan`, then pass --yes to run them all"
        )));
    }
    // Validate what needs only the host before touching the GPU.
    let ram = crate::platform::this_machine(false).ram_bytes;
    let pinned_cap = ceiling_cap(args.pinned_cap.as_deref(), ram)?;
    let mut session = open_session(args.device, args.anonymize)?;
    session.pinned_cap = pinned_cap;
    let stop = install_interrupt_handler();
    let opts = RunOptions {
        allow_pinned: args.allow_pinned,
        only: args.only.clone(),
        quiet,
        case_timeout,
        write_report: !args.no_report,
        allow_vram_overflow: args.allow_vram_overflow,
    };
    let mut interrupted = false;
    for s in &scenarios {
        let out = run_scenario(&mut session, s, &args.out, &opts, &stop)?;
        if !quiet || out.partial {
            eprintln!("{}", out.summary);
        }
        println!("results: {}", out.csv.display());
        if out.partial {
            interrupted = true;
            break;
        }
    }
    if interrupted {
        return Err(Error::Interrupted(
            "partial results were written above; every finished case is in them".into(),
        ));
    }
    Ok(0)
}
