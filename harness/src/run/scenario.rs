//! One scenario: its cases in order, each row written as soon as its case ends, the JSON sidecar,
//! claims and derived results, and the HTML report beside the CSV.

use super::case::{guard, run_case};
use super::device_memory::{self, Prepared};
use super::fleet::Fleet;
use super::outcome::{CaseOutcome, RowContext};
use super::runner::Runner;
use super::watchdog::Watchdog;
use crate::Error;
use crate::cuda;
use crate::report::summary_text;
use crate::results::{
    ProbeName, ProbeRecord, ResultsWriter, Row, SampleRow, ScenarioRecord, Sidecar,
};
use crate::scenario::{Case, Scenario};
use crate::units::{MIB, format_size};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// More cases than this need `--yes`.
pub const SWEEP_LIMIT: usize = 2000;

/// Ctrl-C sets the returned flag (the current sample finishes); a second Ctrl-C exits with 130.
pub fn install_interrupt_handler() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let presses = Arc::new(AtomicU32::new(0));
    let (s, p) = (stop.clone(), presses.clone());
    // A second handler cannot be installed (e.g. in tests calling this twice): then Ctrl-C keeps
    // its default behaviour, which is acceptable.
    let _ = ctrlc::set_handler(move || {
        if p.fetch_add(1, Ordering::SeqCst) >= 1 {
            eprintln!("\nsecond interrupt: exiting now");
            std::process::exit(130);
        }
        eprintln!(
            "\ninterrupt: finishing the current sample, then writing what was measured (Ctrl-C again to quit at once)"
        );
        s.store(true, Ordering::SeqCst);
    });
    stop
}

pub struct RunOptions {
    pub allow_pinned: f64,
    pub only: Option<String>,
    pub quiet: bool,
    pub case_timeout: std::time::Duration,
    pub write_report: bool,
    /// Set when the run uses several GPUs (`--device all` / a list): every case runs on each GPU
    /// alone and then on all of them at once.
    pub fleet: Option<std::sync::Arc<super::Fleet>>,
    /// `--allow-vram-overflow`: cases with guard = false may allocate past free device memory.
    pub allow_vram_overflow: bool,
}

pub struct ScenarioOutcome {
    pub csv: PathBuf,
    pub partial: bool,
    pub summary: String,
    pub rows: Vec<Row>,
}

/// The longest part of a results file name taken from one text (the scenario name, the host
/// name): with the stamp and `.samples.csv` the name stays far below the 255-byte limit.
const NAME_PART_CHARS: usize = 64;

/// `s` as a file-name part: ASCII letters, digits, `-` and `_` (anything else becomes `_`), at
/// most [`NAME_PART_CHARS`] bytes.
fn sanitize(s: &str) -> String {
    s.chars()
        .take(NAME_PART_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs every case of one scenario and writes its results files.
pub fn run_scenario(
    runner: &mut Runner,
    scenario: &Scenario,
    out_dir: &Path,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<ScenarioOutcome, Error> {
    let started = chrono::Local::now();
    let stamp = started.format("%Y%m%d-%H%M%S").to_string();
    let run_id = format!("{stamp}-{}", std::process::id());
    let csv = out_dir.join(format!(
        "{stamp}-{}-{}.csv",
        sanitize(&scenario.name),
        sanitize(&runner.machine.host_name)
    ));
    let mut writer = ResultsWriter::create(&csv)?;
    let mut sidecar = first_sidecar(runner, scenario, opts, &run_id, &started);
    let json = crate::results::sidecar_path(&csv);
    sidecar.write_atomic(&json)?;
    let watchdog = Watchdog::start(sidecar.clone(), json.clone(), opts.case_timeout);

    let cases: Vec<&Case> = scenario
        .cases
        .iter()
        .filter(|c| {
            opts.only
                .as_ref()
                .is_none_or(|o| c.label.contains(o.as_str()))
        })
        .collect();
    let bar = progress_bar(cases.len(), opts.quiet);
    let mut all_rows = Vec::new();
    // The bandwidth samples the summary's plain words judge latency differences on.
    let mut kept = crate::results::Samples::default();
    for (i, case) in cases.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        bar.set_message(case.title());
        watchdog.case_started(&case.title());
        let ctx = RowContext {
            run_id: &run_id,
            started_at: &sidecar.started_at,
            machine: &sidecar.machine,
        };
        let (outcome, (rows, samples)) = match &opts.fleet {
            Some(fleet) => run_on_fleet(fleet, case, &ctx, opts),
            None => run_on_this_gpu(runner, case, &ctx, opts, stop),
        };
        writer.write_case(&rows, &samples)?;
        for s in samples
            .iter()
            .filter(|s| s.series == crate::results::Series::Bandwidth)
        {
            if let Some(lane) = s.lane {
                kept.push_bandwidth(&s.case_key, lane, s.value);
            }
        }
        sidecar.probes.extend(outcome_probes(case, &outcome, &rows));
        if let Some(why) = outcome.measured.stopped_by {
            sidecar.stopped_by.insert(case.key(), why);
        }
        watchdog.case_finished(&sidecar);
        all_rows.extend(rows);
        bar.set_position(i as u64 + 1);
    }
    bar.finish_and_clear();
    drop(watchdog);
    // The settings' sampling transfer comes after the cases: made before, it changed what they
    // measured (settings.rs).
    runner.read_settings_under_load();
    sidecar.machine.settings = runner.machine.settings.clone();
    let partial = stop.load(Ordering::SeqCst);
    finish_sidecar(&mut sidecar, scenario, &all_rows, runner, partial);
    sidecar.write_atomic(&json)?;
    drop(writer);
    let summary = summarize_written(scenario, &csv, &sidecar, opts.write_report)
        .unwrap_or_else(|| summary_text(scenario, &all_rows, &kept, &sidecar));
    Ok(ScenarioOutcome {
        csv,
        partial,
        summary,
        rows: all_rows,
    })
}

/// The sidecar written before the first case: the machine, the scenario, the observers, and
/// `partial` until the run ends.
fn first_sidecar(
    runner: &Runner,
    scenario: &Scenario,
    opts: &RunOptions,
    run_id: &str,
    started: &chrono::DateTime<chrono::Local>,
) -> Sidecar {
    Sidecar {
        schema_version: crate::results::SCHEMA_VERSION,
        pinscope_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.to_string(),
        started_at: started.to_rfc3339(),
        finished_at: None,
        partial: true,
        command_line: std::env::args().collect(),
        machine: runner.machine.clone(),
        scenarios: vec![ScenarioRecord {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            path: scenario.path.clone(),
            text: scenario.text.clone(),
        }],
        observers: runner.observers.statuses(),
        gpus: opts.fleet.as_ref().map(|f| f.gpus()).unwrap_or_default(),
        claims: vec![],
        probes: vec![],
        stopped_by: Default::default(),
        derived: vec![],
        timed_out: None,
        synthetic: None,
    }
}

/// The rows and samples of a case and the outcome they came from.
type Ran = (CaseOutcome, (Vec<Row>, Vec<SampleRow>));

/// One case on every GPU of the fleet: on each alone, then on all at once (the outcome kept is
/// the first GPU's at once). A case that holds device memory is skipped: it runs on one GPU.
fn run_on_fleet(fleet: &Fleet, case: &Case, ctx: &RowContext, opts: &RunOptions) -> Ran {
    if case.vram.device_hold != crate::scenario::DeviceHold::None {
        let o = CaseOutcome::skipped(
            case,
            "device_hold runs on one GPU at a time: run this scenario with --device N".into(),
        );
        let rows = Row::from_outcome(&o, ctx, case);
        return (o, rows);
    }
    let alone: Vec<CaseOutcome> = (0..fleet.len())
        .map(|i| fleet.run_alone(i, case, opts.allow_pinned))
        .collect();
    let together = fleet.run_together(case, opts.allow_pinned);
    let rows = super::fleet::multi_gpu_rows(case, ctx, &fleet.gpus(), &alone, &together);
    (
        together
            .into_iter()
            .next()
            .unwrap_or_else(|| CaseOutcome::empty(case, crate::results::Status::Ok)),
        rows,
    )
}

/// One case on the runner's GPU: device memory held for it (device_memory.rs), then the usual
/// guard, then the case.
fn run_on_this_gpu(
    runner: &mut Runner,
    case: &Case,
    ctx: &RowContext,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Ran {
    let ram = runner.machine.ram_bytes;
    let prepared =
        device_memory::prepare(case, &runner.gpu, &runner.ledger, opts.allow_vram_overflow);
    let outcome = match prepared {
        Prepared::Skip(reason) => CaseOutcome::skipped(case, reason),
        Prepared::Fail(status) => CaseOutcome::empty(case, status),
        Prepared::Run(held) => {
            let mut o = match guard(case, ram, opts.allow_pinned, &runner.gpu) {
                Some(reason) => CaseOutcome::skipped(case, reason),
                None => run_case(runner, case, stop),
            };
            o.footprint.device += held.bytes;
            o
        }
    };
    let rows = Row::from_outcome(&outcome, ctx, case);
    (outcome, rows)
}

/// The sidecar at the end of the run: finished, partial or not, the claims and derived results
/// evaluated, and any error the driver reported while memory was freed.
fn finish_sidecar(
    sidecar: &mut Sidecar,
    scenario: &Scenario,
    all_rows: &[Row],
    runner: &Runner,
    partial: bool,
) {
    sidecar.partial = partial;
    sidecar.finished_at = Some(chrono::Local::now().to_rfc3339());
    sidecar.claims = crate::claims::evaluate(scenario, all_rows, &runner.machine);
    sidecar
        .derived
        .extend(crate::claims::derive(scenario, all_rows));
    let drop_errors = cuda::take_drop_errors();
    for e in &drop_errors {
        sidecar
            .derived
            .push(("error while freeing".into(), e.clone()));
    }
}

/// The console's summary and the page, both from the files just written, so a value rounds alike
/// in both; `None` (said on stderr) when they cannot be read back.
fn summarize_written(
    scenario: &Scenario,
    csv: &Path,
    sidecar: &Sidecar,
    write_report: bool,
) -> Option<String> {
    let written = match crate::results::ResultSet::load(csv) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("warning: the results could not be read back, so no HTML report: {e}");
            return None;
        }
    };
    let text = summary_text(scenario, &written.rows, &written.samples, sidecar);
    if write_report && let Err(e) = write_report_next_to(written, csv, &scenario.name) {
        eprintln!("warning: the HTML report could not be written: {e}");
    }
    Some(text)
}

fn write_report_next_to(
    set: crate::results::ResultSet,
    csv: &Path,
    title: &str,
) -> Result<(), Error> {
    let html = csv.with_extension("html");
    crate::report::write_report(&[set], &html, title)
}

fn outcome_probes(case: &Case, outcome: &CaseOutcome, rows: &[Row]) -> Vec<ProbeRecord> {
    let Some(r) = rows.first() else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let rec = |name: ProbeName, value: f64, detail: String| ProbeRecord {
        scenario: case.scenario.clone(),
        case_key: r.case_key.clone(),
        name,
        value,
        unit: "MiB".into(),
        detail,
    };
    if let (Some(h), Some(detail)) = (
        r.max_alloc_host_only_mib(),
        crate::report::max_alloc_detail(r),
    ) {
        v.push(rec(ProbeName::MaxAllocHostOnly, h, detail));
    }
    if let Some(c) = &outcome.pinned_ceiling {
        let why = match &c.error {
            Some(e) => format!("stopped by {e}"),
            None => format!(
                "reached the cap of {} (raise it with --pinned-cap)",
                format_size(c.cap)
            ),
        };
        v.push(rec(
            ProbeName::PinnedCeiling,
            c.bytes as f64 / MIB as f64,
            format!(
                "{}: {} pinned in {} chunks in {:.1} s; {why}",
                case.label,
                format_size(c.bytes),
                format_size(case.probes.ceiling_chunk),
                c.seconds
            ),
        ));
    }
    v
}

fn progress_bar(n: usize, quiet: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(n as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{prefix}[{bar:30}] case {pos}/{len} eta {eta} {wide_msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
