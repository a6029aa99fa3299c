//! `pinscope observe -- CMD [ARGS…]`, and `pinscope report` and `pinscope compare` of observed runs.

use super::{CompareArgs, CompareOutput, ReportArgs};
use crate::Error;
use crate::observe::{Options, observe};
use crate::report::observed::compare::{ObservedComparison, ObservedRun};
use crate::results::{
    AllocEvent, EVENTS_SUFFIX, Inputs, OBSERVED_SUFFIX, ObservedSidecar, OutputPolicy,
    TIMELINE_SUFFIX, TimelinePoint, observed_stem, read_events, read_timeline, with_suffix,
};
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;

/// What `observe --help` ends with.
const AFTER_HELP: &str = "\
Examples:
  pinscope observe -- python3 train.py --epochs 1
  pinscope observe --interval 50ms -o observed -- ollama run llama3 hi
  pinscope report observed/<stem>.timeline.csv -o observed.html

Exit status: the command's own, 128+N when signal N ended it; 127 when it is not found, 126
when it cannot be run, 2 for a usage error. Ctrl-C reaches the command; SIGTERM and SIGHUP sent
to pinscope are forwarded to it. Files: <stem>.timeline.csv, .observed.json, .events.csv.";

#[derive(Debug, Args, Clone)]
#[command(after_help = AFTER_HELP)]
pub struct ObserveArgs {
    /// Time between samples: a number and a unit, us, ms, s, m or h (more than 0).
    #[arg(long, value_name = "DURATION", default_value = "100ms")]
    pub interval: String,
    /// Folder for the results files (created if missing; no file in it is replaced).
    #[arg(
        long = "out-dir",
        short = 'o',
        value_name = "DIR",
        alias = "out",
        default_value = "results"
    )]
    pub out_dir: PathBuf,
    /// The CUPTI library, or the folder holding it (default: looked for in CUDA_PATH, CUDA_HOME,
    /// /usr/local/cuda and the command's Python environment).
    #[arg(long, value_name = "PATH")]
    pub cupti: Option<PathBuf>,
    /// Print nothing of pinscope's own but errors (the command's output is its own).
    #[arg(long, short)]
    pub quiet: bool,
    /// The command to run and observe, with its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

/// `pinscope observe`: exits with the command's status (128 + N when signal N ended it).
pub fn observe_command(args: &ObserveArgs, quiet: bool) -> Result<i32, Error> {
    let interval = crate::units::parse_duration(&args.interval)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            Error::Usage(format!(
                "--interval {} is not a duration above 0: write a number and a unit, e.g. 100ms or 1s",
                crate::input::escape_text(&args.interval)
            ))
        })?;
    let opts = Options {
        command: args.command.clone(),
        interval,
        out_dir: args.out_dir.clone(),
        cupti: args.cupti.clone(),
        command_line: std::env::args().collect(),
    };
    let observed = observe(&opts)?;
    let s = &observed.sidecar;
    if !quiet {
        if let Some(missing) = &s.cupti.missing {
            eprintln!("note: {missing}");
        } else if let Some(why) = &s.events.not_injected {
            eprintln!("note: {why}");
        }
        for n in &s.notes {
            eprintln!("note: {n}");
        }
        for u in &s.unavailable {
            eprintln!("note: {} not observed: {}", u.observer.name(), u.reason);
        }
        eprintln!(
            "observed {} samples, at most {} process(es) at once, {} allocation event(s) from {} process(es); wrote {}, {}, {}",
            s.samples,
            s.max_processes,
            s.events.events,
            s.events.processes,
            observed.files[0].display(),
            observed.files[1].display(),
            observed.files[2].display()
        );
    }
    Ok(s.ending.exit_status())
}

/// `pinscope report` of one observed run (its `.timeline.csv` or `.observed.json`): `None` when
/// the inputs are results CSVs, which the run report reads.
pub fn report_observed(args: &ReportArgs, quiet: bool) -> Result<Option<i32>, Error> {
    let stems: Vec<Option<PathBuf>> = args.results.iter().map(|p| observed_stem(p)).collect();
    if stems.iter().all(Option::is_none) {
        return Ok(None);
    }
    let [Some(stem)] = stems.as_slice() else {
        return Err(Error::Usage(
            "report one observed run at a time (its .timeline.csv or .observed.json), without results CSVs beside it".into(),
        ));
    };
    let mut read = Inputs::default();
    read_observed_files(&mut read, stem);
    let policy = OutputPolicy::new(read, args.force);
    super::check_output(&policy, &args.output)?;
    let (sidecar, points, events) = load_observed(stem)?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("pinscope observe: {}", sidecar.command.join(" ")));
    let page = crate::report::observed::observed_page(&sidecar, &points, &events, &title);
    super::write_output(&policy, &args.output, page.as_bytes())?;
    if !quiet && args.output.as_os_str() != "-" {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(Some(0))
}

/// `pinscope compare` on observed runs (each given by its `.timeline.csv` or `.observed.json`):
/// `None` when no input is one, so the results comparison goes on.
pub fn compare_observed(args: &CompareArgs, quiet: bool) -> Result<Option<i32>, Error> {
    let stems: Vec<Option<PathBuf>> = args.results.iter().map(|p| observed_stem(p)).collect();
    if stems.iter().all(Option::is_none) {
        return Ok(None);
    }
    let Some(stems) = stems.into_iter().collect::<Option<Vec<PathBuf>>>() else {
        return Err(Error::Usage(
            "compare observed runs with observed runs only (each its .timeline.csv or .observed.json), not with results CSVs".into(),
        ));
    };
    if args.fail_on.is_some() {
        return Err(Error::Usage(
            "--fail-on judges results CSVs; observed runs have no verdicts: leave it out".into(),
        ));
    }
    let mut read = Inputs::default();
    for stem in &stems {
        read_observed_files(&mut read, stem);
    }
    let policy = OutputPolicy::new(read, args.force);
    for path in std::iter::once(&args.output).chain(&args.html) {
        super::check_output(&policy, path)?;
    }
    let mut loaded = Vec::new();
    for stem in &stems {
        loaded.push(load_observed(stem)?);
    }
    let runs: Vec<ObservedRun> = stems
        .iter()
        .zip(&loaded)
        .map(|(stem, (sidecar, points, events))| ObservedRun {
            name: stem
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            sidecar,
            points,
            events,
        })
        .collect();
    let cmp = ObservedComparison::of(&runs);
    let text = match args.format {
        CompareOutput::Table | CompareOutput::Markdown => cmp.markdown(),
        CompareOutput::Csv => cmp.csv(),
        CompareOutput::Json => serde_json::to_string_pretty(&cmp).unwrap_or_default() + "\n",
        CompareOutput::Html => cmp.html(),
    };
    super::write_output(&policy, &args.output, text.as_bytes())?;
    if let Some(path) = &args.html {
        super::write_output(&policy, path, cmp.html().as_bytes())?;
    }
    if !quiet && args.output.as_os_str() != "-" {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(Some(0))
}

/// An observed run's three files, as inputs no output may replace.
fn read_observed_files(read: &mut Inputs, stem: &std::path::Path) {
    read.add(&with_suffix(stem, TIMELINE_SUFFIX), "observer timeline");
    read.add(
        &with_suffix(stem, OBSERVED_SUFFIX),
        "observed run's sidecar",
    );
    read.add(&with_suffix(stem, EVENTS_SUFFIX), "allocation events");
}

/// An observed run's sidecar, timeline and events (none when its events file is absent).
fn load_observed(
    stem: &std::path::Path,
) -> Result<(ObservedSidecar, Vec<TimelinePoint>, Vec<AllocEvent>), Error> {
    let sidecar = ObservedSidecar::read(&with_suffix(stem, OBSERVED_SUFFIX))?;
    let points = read_timeline(&with_suffix(stem, TIMELINE_SUFFIX))?;
    let events_file = with_suffix(stem, EVENTS_SUFFIX);
    let events = if events_file.exists() {
        read_events(&events_file)?
    } else {
        Vec::new()
    };
    Ok((sidecar, points, events))
}
