//! Runs scenarios: for each case — guard, allocate, observe, touch, transfer, verify, free, hold —
//! and writes one row per lane as soon as the case ends. A failed case is a row, not a crash.

use crate::Error;
use crate::cli::{InfoArgs, RunArgs};
use crate::cuda::{self, CudaError, Gate, Gpu as CudaGpu, Kernels};
use crate::platform::{GpuInfo, Machine};
use crate::probe::{self, GpuContext, Ledger, LedgerCategory as Category, Observers, Snapshot};
use crate::results::{
    Lane, ProbeRecord, ResultsWriter, Row, SampleRow, ScenarioRecord, Sidecar, Status,
};
use crate::scenario::{Case, Scenario};
use crate::strategy::{self, Footprint, Verified};
use crate::units::{MIB, format_size};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Everything a run needs from the GPU, opened once.
/// Fields drop in declaration order: everything that lives in the GPU context (kernels, gate)
/// must go before `gpu`, which releases the context.
pub struct Session {
    pub kernels: Kernels,
    pub gate: Gate,
    pub machine: Machine,
    pub ledger: Ledger,
    pub observers: Observers,
    /// Cap of the pinned-ceiling probe (bytes).
    pub pinned_cap: u64,
    pub gpu: CudaGpu,
}

/// Opens the GPU, loads the kernels and sets up the observers; one sentence on failure.
pub fn open_session(device: u32, anonymize: bool) -> Result<Session, Error> {
    let gpu = CudaGpu::open(device).map_err(|e| Error::NoGpu(e.sentence()))?;
    let kernels = Kernels::load(&gpu).map_err(|e| Error::Cuda {
        call: "loading kernels/pinscope.ptx",
        code: e.to_string(),
        context: String::new(),
    })?;
    let gate = Gate::new().map_err(|e| Error::Cuda {
        call: "allocating the spin-gate flag",
        code: e.to_string(),
        context: String::new(),
    })?;
    let mut machine = crate::platform::this_machine(anonymize);
    machine.gpu = Some(gpu_info(&gpu));
    let ledger = Ledger::new();
    let facts = gpu.facts();
    let observers = Observers::for_this_machine(GpuContext {
        uuid: (!facts.uuid.is_empty()).then(|| facts.uuid.clone()),
        luid: facts.luid,
        cuda_mem: Some(Box::new(|| {
            cuda::cuda_mem_info().map_err(|e| e.to_string())
        })),
        ledger: ledger.clone(),
    });
    let pinned_cap = ceiling_cap(None, machine.ram_bytes)?;
    Ok(Session {
        pinned_cap,
        gpu,
        kernels,
        gate,
        machine,
        ledger,
        observers,
    })
}

fn gpu_info(gpu: &CudaGpu) -> GpuInfo {
    let f = gpu.facts();
    let nv = probe::nvml_facts((!f.uuid.is_empty()).then_some(f.uuid.as_str()));
    let mut g = GpuInfo {
        index: gpu.ordinal(),
        name: f.name.clone(),
        uuid: f.uuid.clone(),
        compute_capability: f.compute_capability.clone(),
        total_memory_bytes: f.total_memory,
        driver_version: String::new(),
        cuda_driver_version: f.cuda_driver_version.clone(),
        pci_bus_id: f.pci_bus_id.clone(),
        driver_model: if cfg!(windows) {
            if f.tcc { "tcc" } else { "wddm" }.into()
        } else {
            "linux".into()
        },
        integrated: f.integrated,
        can_map_host_memory: f.can_map_host_memory,
        luid: f
            .luid
            .map(|l| l.iter().map(|b| format!("{b:02x}")).collect()),
        multiprocessors: f.multiprocessors,
        async_engines: f.async_engines,
        ..Default::default()
    };
    if let Some(nv) = nv {
        g.driver_version = nv.driver_version;
        if cfg!(windows) && !nv.driver_model.is_empty() {
            g.driver_model = nv.driver_model;
        }
        g.pcie_gen_current = nv.pcie_gen_current;
        g.pcie_width_current = nv.pcie_width_current;
        g.pcie_gen_max = nv.pcie_gen_max;
        g.pcie_width_max = nv.pcie_width_max;
    }
    g
}

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

/// More cases than this need `--yes`.
pub const SWEEP_LIMIT: usize = 2000;

fn install_interrupt_handler() -> Arc<AtomicBool> {
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
    /// `--allow-vram-overflow`: cases with guard = false may allocate past free device memory.
    pub allow_vram_overflow: bool,
}

pub struct ScenarioOutcome {
    pub csv: PathBuf,
    pub partial: bool,
    pub summary: String,
    pub rows: Vec<Row>,
}

fn sanitize(s: &str) -> String {
    s.chars()
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
    session: &mut Session,
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
        sanitize(&session.machine.host_name)
    ));
    let mut writer = ResultsWriter::create(&csv)?;
    let mut sidecar = Sidecar {
        schema_version: crate::results::SCHEMA_VERSION,
        pinscope_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.clone(),
        started_at: started.to_rfc3339(),
        finished_at: None,
        partial: true,
        command_line: std::env::args().collect(),
        machine: session.machine.clone(),
        scenarios: vec![ScenarioRecord {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            path: scenario.path.clone(),
            text: scenario.text.clone(),
        }],
        observers: session.observers.statuses(),
        claims: vec![],
        probes: vec![],
        derived: vec![],
    };
    let json = crate::results::sidecar_path(&csv);
    sidecar.write_atomic(&json)?;
    let watchdog = Watchdog::start(sidecar.clone(), json.clone(), opts.case_timeout);

    let ram = session.machine.ram_bytes;
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
    for (i, case) in cases.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        bar.set_message(case.title());
        watchdog.case_started(&case.title());
        // issue 13: device memory held for the case (budget.rs), then the usual guard.
        let prepared = crate::budget::prepare(
            case,
            &session.gpu,
            &session.ledger,
            opts.allow_vram_overflow,
        );
        let outcome = match prepared {
            crate::budget::Prepared::Skip(reason) => CaseOutcome::skipped(case, reason),
            crate::budget::Prepared::Fail(status) => CaseOutcome::empty(case, status),
            crate::budget::Prepared::Run(held) => {
                let mut o = match guard(case, ram, opts.allow_pinned, &session.gpu) {
                    Some(reason) => CaseOutcome::skipped(case, reason),
                    None => run_case(session, case, stop),
                };
                o.footprint.device += held.bytes;
                o
            }
        };
        let ctx = RowContext {
            run_id: &run_id,
            started_at: &sidecar.started_at,
            machine: &session.machine,
        };
        let (rows, samples) = outcome.to_rows(&ctx, case);
        writer.write_case(&rows, &samples)?;
        sidecar.probes.extend(outcome_probes(case, &outcome, &rows));
        watchdog.case_finished(&sidecar);
        all_rows.extend(rows);
        bar.set_position(i as u64 + 1);
    }
    bar.finish_and_clear();
    drop(watchdog);
    let partial = stop.load(Ordering::SeqCst);
    sidecar.partial = partial;
    sidecar.finished_at = Some(chrono::Local::now().to_rfc3339());
    sidecar.claims = crate::claims::evaluate(scenario, &all_rows, &session.machine);
    sidecar
        .derived
        .extend(crate::claims::derive(scenario, &all_rows));
    let drop_errors = cuda::take_drop_errors();
    for e in &drop_errors {
        sidecar
            .derived
            .push(("error while freeing".into(), e.clone()));
    }
    sidecar.write_atomic(&json)?;
    let summary = summary_text(scenario, &all_rows, &sidecar);
    if opts.write_report
        && let Err(e) = write_report_next_to(&csv, &scenario.name)
    {
        eprintln!("warning: the HTML report could not be written: {e}");
    }
    Ok(ScenarioOutcome {
        csv,
        partial,
        summary,
        rows: all_rows,
    })
}

/// Ends the run cleanly when one case takes longer than `--case-timeout` (a hung driver call
/// cannot be cancelled): marks the sidecar partial with the reason, writes it, exits with 124.
/// Every finished case is already on disk (rows are flushed per case).
struct Watchdog {
    shared: Arc<std::sync::Mutex<Watch>>,
    done: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

struct Watch {
    sidecar: Sidecar,
    json: PathBuf,
    case: Option<(std::time::Instant, String)>,
}

impl Watchdog {
    fn start(sidecar: Sidecar, json: PathBuf, timeout: std::time::Duration) -> Watchdog {
        Self::start_with(sidecar, json, timeout, || std::process::exit(124))
    }

    /// `on_timeout` runs after the sidecar was written (the process exits there; tests observe).
    fn start_with(
        sidecar: Sidecar,
        json: PathBuf,
        timeout: std::time::Duration,
        on_timeout: impl Fn() + Send + 'static,
    ) -> Watchdog {
        let shared = Arc::new(std::sync::Mutex::new(Watch {
            sidecar,
            json,
            case: None,
        }));
        let done = Arc::new(AtomicBool::new(false));
        let (sh, dn) = (shared.clone(), done.clone());
        let handle = std::thread::spawn(move || {
            while !dn.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let Ok(mut w) = sh.lock() else { return };
                let Some((t, title)) = w.case.clone() else {
                    continue;
                };
                if t.elapsed() < timeout || dn.load(Ordering::SeqCst) {
                    continue;
                }
                let msg = format!(
                    "case `{title}` did not finish within {:?} (--case-timeout); the run was ended",
                    timeout
                );
                w.sidecar.partial = true;
                w.sidecar.finished_at = Some(chrono::Local::now().to_rfc3339());
                w.sidecar.derived.push(("watchdog".into(), msg.clone()));
                let _ = w.sidecar.write_atomic(&w.json);
                eprintln!(
                    "error: {msg}; every finished case is in {}",
                    w.json.with_extension("csv").display()
                );
                w.case = None;
                on_timeout();
            }
        });
        Watchdog {
            shared,
            done,
            handle: Some(handle),
        }
    }
    fn case_started(&self, title: &str) {
        if let Ok(mut w) = self.shared.lock() {
            w.case = Some((std::time::Instant::now(), title.to_string()));
        }
    }
    fn case_finished(&self, sidecar: &Sidecar) {
        if let Ok(mut w) = self.shared.lock() {
            w.case = None;
            w.sidecar = sidecar.clone();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn write_report_next_to(csv: &Path, title: &str) -> Result<(), Error> {
    let set = crate::results::ResultSet::load(csv)?;
    let html = csv.with_extension("html");
    crate::report::write_report(&[set], &html, title)
}

fn outcome_probes(case: &Case, outcome: &CaseOutcome, rows: &[Row]) -> Vec<ProbeRecord> {
    let Some(r) = rows.first() else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let rec = |name: &str, value: f64, detail: String| ProbeRecord {
        scenario: case.scenario.clone(),
        case_key: r.case_key.clone(),
        name: name.into(),
        value,
        unit: "MiB".into(),
        detail,
    };
    if let (Some(h), Some(f)) = (r.max_alloc_held_mib, r.max_alloc_free_mib) {
        v.push(rec("max allocatable device memory, case memory held", h, format!("{} with the case's host memory held, {f:.0} MiB after it was freed: the difference, {:.0} MiB, is what holding it costs the device budget", case.label, f - h)));
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
            "pinned ceiling",
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

/// Why a case must not run here, decided before anything is allocated.
pub fn guard(case: &Case, ram: u64, allow_pinned: f64, gpu: &CudaGpu) -> Option<String> {
    let pinned = case.pinned_bytes();
    let cap = (ram as f64 * allow_pinned) as u64;
    if ram > 0 && pinned > cap {
        return Some(format!(
            "it would pin {}, more than the cap of {} ({:.0}% of RAM; raise it with --allow-pinned)",
            format_size(pinned),
            format_size(cap),
            allow_pinned * 100.0
        ));
    }
    if ram > 0 && case.host_bytes() > ram.saturating_mul(9) / 10 {
        return Some(format!(
            "it needs {} of host memory, more than 90% of this machine's {}",
            format_size(case.host_bytes()),
            format_size(ram)
        ));
    }
    if !case.guard {
        return None;
    }
    if let Ok((free, _)) = gpu.mem_info() {
        let need = case.device_bytes();
        if need > free {
            return Some(format!(
                "it needs {} of device memory and only {} is free",
                format_size(need),
                format_size(free)
            ));
        }
    }
    None
}

/// What happened to one case.
struct CaseOutcome {
    status: Status,
    lanes: Vec<(Lane, u64)>,
    measured: crate::measure::Measured,
    verified: String,
    setup: strategy::SetupTimes,
    footprint: Footprint,
    snapshots: Vec<Snapshot>,
    timeline: Vec<Snapshot>,
    max_alloc_held: Option<u64>,
    max_alloc_free: Option<u64>,
    pinned_ceiling: Option<Ceiling>,
}

/// What the pinned-ceiling probe obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    pub bytes: u64,
    pub cap: u64,
    /// The driver error that stopped it, or `None` when it reached the cap.
    pub error: Option<String>,
    pub seconds: f64,
}

/// Allocates pinned chunks of `chunk` bytes until the driver refuses or `cap` is reached, then
/// frees them all. Never exceeds `cap`.
pub fn pinned_ceiling(chunk: u64, cap: u64, ledger: &Ledger) -> Ceiling {
    // issue 13: the probe goes on in 256 MiB steps after the first failure (budget.rs).
    crate::budget::pinned_ceiling_stepped(chunk, cap, ledger)
}

/// The pinned-ceiling cap: `--pinned-cap`, or min(50% of RAM, 16 GiB); never above 75% of RAM.
pub fn ceiling_cap(arg: Option<&str>, ram: u64) -> Result<u64, Error> {
    let default = (ram / 2).min(16 * crate::units::GIB);
    let Some(text) = arg else {
        return Ok(default);
    };
    let cap =
        crate::units::parse_size(text).map_err(|e| Error::Usage(format!("--pinned-cap: {e}")))?;
    if ram > 0 && cap > ram / 4 * 3 {
        return Err(Error::Usage(format!(
            "--pinned-cap {text} is more than 75% of this machine's {} of RAM: pinning that much can freeze it; give a smaller cap",
            format_size(ram)
        )));
    }
    Ok(cap)
}

impl CaseOutcome {
    fn skipped(case: &Case, reason: String) -> Self {
        Self::empty(case, Status::Skipped(reason))
    }
    fn empty(case: &Case, status: Status) -> Self {
        let lanes = match case.direction {
            _ if case.engine.is_device() => vec![(Lane::Device, case.size)],
            crate::scenario::Direction::H2d => vec![(Lane::H2d, case.size)],
            crate::scenario::Direction::D2h => vec![(Lane::D2h, case.size)],
            crate::scenario::Direction::Bidirectional => vec![
                (Lane::H2d, case.size),
                (Lane::D2h, case.size),
                (Lane::Sum, 2 * case.size),
            ],
        };
        CaseOutcome {
            status,
            lanes,
            measured: Default::default(),
            verified: "off".into(),
            setup: Default::default(),
            footprint: Default::default(),
            snapshots: vec![],
            timeline: vec![],
            max_alloc_held: None,
            max_alloc_free: None,
            pinned_ceiling: None,
        }
    }
}

fn ledger_add(l: &Ledger, f: &Footprint) {
    l.add(Category::PinnedAlloc, f.pinned_alloc);
    l.add(Category::Registered, f.registered);
    l.add(Category::Managed, f.managed);
    l.add(Category::Staging, f.staging);
    l.add(Category::Device, f.device);
}

fn ledger_sub(l: &Ledger, f: &Footprint) {
    l.sub(Category::PinnedAlloc, f.pinned_alloc);
    l.sub(Category::Registered, f.registered);
    l.sub(Category::Managed, f.managed);
    l.sub(Category::Staging, f.staging);
    l.sub(Category::Device, f.device);
}

fn failed(e: &CudaError, phase: &str) -> Status {
    Status::Failed(format!("{} ({phase})", e))
}

/// Largest device allocation that succeeds, to 64 MiB (binary search, each released at once).
pub fn max_allocatable(gpu: &CudaGpu) -> Result<u64, CudaError> {
    let step = 64 * MIB;
    let (_, total) = gpu.mem_info()?;
    let mut lo = 0u64; // known to succeed (in steps)
    let mut hi = total / step + 1; // known to fail
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if cuda::try_device_alloc((mid * step) as usize)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo * step)
}

fn run_case(session: &mut Session, case: &Case, stop: &AtomicBool) -> CaseOutcome {
    let gpu = strategy::Gpu {
        kernels: &session.kernels,
        gate: &session.gate,
    };
    let mut out = CaseOutcome::empty(case, Status::Ok);
    let accounting = case.probes.accounting;
    let obs = &mut session.observers;
    let snap = |obs: &mut Observers, out: &mut CaseOutcome, phase: &str| {
        if accounting {
            out.snapshots.push(obs.snapshot(phase));
        }
    };
    snap(obs, &mut out, "before");
    let mut transfer = match strategy::allocate(case, &gpu) {
        Ok(t) => t,
        Err(e) => {
            out.status = failed(&e, "allocation");
            return out;
        }
    };
    out.footprint = transfer.footprint();
    ledger_add(&session.ledger, &out.footprint);
    snap(obs, &mut out, "alloc");
    let mut status = transfer
        .touch(&gpu)
        .map_err(|e| failed(&e, "first touch"))
        .err();
    snap(obs, &mut out, "touch");
    if status.is_none() && case.probes.max_alloc {
        match max_allocatable(&session.gpu) {
            Ok(v) => out.max_alloc_held = Some(v),
            Err(e) => status = Some(failed(&e, "max-alloc probe")),
        }
    }
    if status.is_none() {
        let batch = strategy::batch_for(case);
        // issue 13: a churn case is `cycles` single copies, no warm-up (strategy/churn.rs).
        let (measure, batch) = if case.mode == crate::scenario::Mode::Churn {
            let n = case.vram.cycles;
            let m = crate::scenario::Measure {
                warmup: 0,
                min_samples: n,
                max_samples: n,
                time_limit: std::time::Duration::MAX,
                ..case.measure.clone()
            };
            (m, 1)
        } else {
            (case.measure.clone(), batch)
        };
        match crate::measure::run(transfer.as_mut(), &gpu, &measure, batch, stop) {
            Ok(m) => out.measured = m,
            Err((e, m)) => {
                out.measured = m;
                status = Some(failed(&e, "transfer"));
            }
        }
    }
    snap(obs, &mut out, "transfer");
    if status.is_none() && case.measure.verify {
        match transfer.verify(&gpu) {
            Ok(Verified::Yes) => out.verified = "yes".into(),
            Ok(Verified::NotApplicable) => out.verified = "n/a".into(),
            Ok(Verified::Mismatch {
                lane,
                bad_words,
                first,
            }) => {
                out.verified = "no".into();
                status = Some(Status::Failed(format!(
                    "data mismatch: {bad_words} of {} words wrong after {} (first at word {})",
                    case.size / 4,
                    lane.name(),
                    first.map_or("?".into(), |f| f.to_string())
                )));
            }
            Ok(Verified::Copies {
                bad_copies, copies, ..
            }) => {
                out.verified = "no".into();
                status = Some(Status::Failed(strategy::churn::mismatch_status(
                    bad_copies, copies,
                )));
            }
            Err(e) => status = Some(failed(&e, "verification")),
        }
    }
    out.setup = transfer.setup();
    match transfer.free() {
        Ok(t) => out.setup = t,
        Err(e) => {
            status.get_or_insert(failed(&e, "free"));
        }
    }
    ledger_sub(&session.ledger, &out.footprint);
    snap(obs, &mut out, "free");
    if accounting && !case.probes.hold_after_free.is_zero() {
        out.timeline = probe::timeline(
            obs,
            case.probes.hold_after_free,
            case.probes.hold_interval,
            stop,
        );
    }
    if case.probes.max_alloc
        && let Ok(v) = max_allocatable(&session.gpu)
    {
        out.max_alloc_free = Some(v);
    }
    if case.probes.pinned_ceiling && !stop.load(Ordering::SeqCst) {
        out.pinned_ceiling = Some(pinned_ceiling(
            case.probes.ceiling_chunk,
            session.pinned_cap,
            &session.ledger,
        ));
    }
    if let Some(s) = status {
        out.status = s;
    } else if out.measured.stopped_by == "interrupted" && out.measured.samples.is_empty() {
        out.status = Status::Skipped("interrupted".into());
    }
    out
}

struct RowContext<'a> {
    run_id: &'a str,
    started_at: &'a str,
    machine: &'a Machine,
}

fn stat(v: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let med = crate::measure::median(v);
    let min = v.iter().copied().reduce(f64::min);
    let max = v.iter().copied().reduce(f64::max);
    (med, min, max)
}

fn outliers(v: &[f64]) -> u32 {
    let Some(m) = crate::measure::median(v) else {
        return 0;
    };
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    let mad = crate::measure::median(&dev).unwrap_or(0.0) * 1.4826;
    if mad == 0.0 {
        return 0;
    }
    v.iter().filter(|x| (*x - m).abs() > 3.0 * mad).count() as u32
}

impl CaseOutcome {
    fn to_rows(&self, ctx: &RowContext, case: &Case) -> (Vec<Row>, Vec<SampleRow>) {
        let key = case.key();
        let mut rows = Vec::new();
        let mut samples = Vec::new();
        let before = self.snapshots.iter().find(|s| s.phase == "before");
        let after_touch = self.snapshots.iter().find(|s| s.phase == "touch");
        let end = self
            .timeline
            .last()
            .or_else(|| self.snapshots.iter().find(|s| s.phase == "free"));
        let mut accounting = Vec::new();
        if let Some(b) = before {
            for (phase, snap) in [("alloc", after_touch), ("free", end)] {
                if let Some(a) = snap {
                    for (m, v) in probe::column_values(b, a) {
                        accounting.push((phase.to_string(), m, v));
                    }
                }
            }
        }
        for (lane, bytes) in &self.lanes {
            let bw = self.measured.bandwidth(*lane, *bytes);
            let times = self.measured.times(*lane);
            let (bmed, bmin, bmax) = stat(&bw);
            let (tmed, tmin, tmax) = stat(&times);
            let spread = crate::measure::relative_spread(&bw).map(|s| s * 100.0);
            let wall = self.measured.wall_times();
            let reg = self
                .measured
                .samples
                .iter()
                .filter_map(|s| s.register_ms)
                .collect::<Vec<_>>();
            let unreg = self
                .measured
                .samples
                .iter()
                .filter_map(|s| s.unregister_ms)
                .collect::<Vec<_>>();
            rows.push(Row {
                run_id: ctx.run_id.into(),
                started_at: ctx.started_at.into(),
                machine: ctx.machine.key(),
                scenario: case.scenario.clone(),
                case_label: case.label.clone(),
                case_index: case.index,
                case_key: key.clone(),
                lane: *lane,
                host: crate::budget::host_column(case),
                flags: case.flags.label(),
                engine: case.engine.to_string(),
                direction: case.direction.to_string(),
                mode: case.mode.to_string(),
                size_bytes: case.size,
                chunk_bytes: case.chunk.unwrap_or(0),
                ring: case.ring,
                streams: case.streams,
                threads: case.threads.resolve(),
                batch: self.measured.batch,
                axes: case
                    .axes
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(";"),
                status: self.status.clone(),
                samples: bw.len() as u32,
                outliers: outliers(&bw),
                bw_median_gbs: bmed,
                bw_min_gbs: bmin,
                bw_max_gbs: bmax,
                bw_spread_pct: spread,
                time_median_ms: tmed,
                time_min_ms: tmin,
                time_max_ms: tmax,
                wall_median_ms: crate::measure::median(&wall),
                verified: self.verified.clone(),
                alloc_ms: self.setup.alloc_ms,
                register_ms: crate::measure::median(&reg).or(self.setup.register_ms),
                unregister_ms: crate::measure::median(&unreg).or(self.setup.unregister_ms),
                free_ms: self.setup.free_ms,
                pinned_bytes: self.footprint.pinned_alloc
                    + self.footprint.registered
                    + self.footprint.staging,
                device_bytes: self.footprint.device,
                accounting: accounting.clone(),
                max_alloc_held_mib: self.max_alloc_held.map(|v| v as f64 / MIB as f64),
                max_alloc_free_mib: self.max_alloc_free.map(|v| v as f64 / MIB as f64),
                pinned_ceiling_mib: self
                    .pinned_ceiling
                    .as_ref()
                    .map(|c| c.bytes as f64 / MIB as f64),
            });
            let l = lane.name().to_string();
            for (i, v) in bw.iter().enumerate() {
                samples.push(SampleRow {
                    case_key: key.clone(),
                    lane: l.clone(),
                    series: "bw_gbs".into(),
                    index: i.to_string(),
                    t_ms: None,
                    value: *v,
                });
            }
            for (i, v) in self.measured.event_times(*lane).iter().enumerate() {
                samples.push(SampleRow {
                    case_key: key.clone(),
                    lane: l.clone(),
                    series: "event_ms".into(),
                    index: i.to_string(),
                    t_ms: None,
                    value: *v,
                });
            }
            for (i, v) in wall.iter().enumerate() {
                samples.push(SampleRow {
                    case_key: key.clone(),
                    lane: l.clone(),
                    series: "wall_ms".into(),
                    index: i.to_string(),
                    t_ms: None,
                    value: *v,
                });
            }
        }
        // Accounting: every observer's absolute reading at every phase, and the hold timeline.
        for s in &self.snapshots {
            for (o, r) in &s.readings {
                samples.push(SampleRow {
                    case_key: key.clone(),
                    lane: String::new(),
                    series: format!("phase:{o}.{}", r.metric),
                    index: s.phase.clone(),
                    t_ms: Some(s.t_ms),
                    value: r.value,
                });
            }
        }
        let t0 = self
            .snapshots
            .iter()
            .find(|s| s.phase == "free")
            .map_or(0.0, |s| s.t_ms);
        for (i, s) in self.timeline.iter().enumerate() {
            for (o, r) in &s.readings {
                samples.push(SampleRow {
                    case_key: key.clone(),
                    lane: String::new(),
                    series: format!("timeline:{o}.{}", r.metric),
                    index: i.to_string(),
                    t_ms: Some(s.t_ms - t0),
                    value: r.value,
                });
            }
        }
        (rows, samples)
    }
}

fn summary_text(scenario: &Scenario, rows: &[Row], sidecar: &Sidecar) -> String {
    let mut s = format!("\n{} — {}\n", scenario.name, scenario.description);
    s.push_str(&format!(
        "{:<4} {:<34} {:<5} {:>10} {:>10} {:>7} {:>4} {:>8}  {}\n",
        "#", "case", "lane", "size", "GB/s", "spread", "n", "verified", "status"
    ));
    for r in rows {
        let title = if r.axes.is_empty() {
            r.case_label.clone()
        } else {
            format!("{} {}", r.case_label, r.axes.replace(';', " "))
        };
        s.push_str(&format!(
            "{:<4} {:<34} {:<5} {:>10} {:>10} {:>7} {:>4} {:>8}  {}\n",
            r.case_index,
            truncate(&title, 34),
            r.lane.name(),
            format_size(r.size_bytes),
            r.bw_median_gbs.map_or("-".into(), |v| format!("{v:.2}")),
            r.bw_spread_pct.map_or("-".into(), |v| format!("{v:.1}%")),
            r.samples,
            r.verified,
            r.status.to_field()
        ));
    }
    let answer = answer_lines(rows);
    if !answer.is_empty() {
        s.push_str("\nin plain words:\n");
        for l in answer {
            s.push_str(&format!("  {l}\n"));
        }
    }
    if !sidecar.derived.is_empty() {
        s.push_str("\nderived:\n");
        for (k, v) in &sidecar.derived {
            s.push_str(&format!("  {k}: {v}\n"));
        }
    }
    if !sidecar.claims.is_empty() {
        s.push_str("\nclaims:\n");
        for c in &sidecar.claims {
            s.push_str(&format!("  [{}] {} — {}\n", c.verdict, c.text, c.detail));
        }
    }
    if sidecar.partial {
        s.push_str("\nthe run was interrupted: the files hold every case that finished\n");
    }
    s
}

fn row_title(r: &Row) -> String {
    r.title()
}

/// The answer to "which way is fastest and what does it cost", per direction, in sentences.
pub fn answer_lines(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for lane in [Lane::H2d, Lane::D2h] {
        let ok: Vec<&Row> = rows
            .iter()
            .filter(|r| r.lane == lane && r.status.is_ok() && r.bw_median_gbs.is_some())
            .filter(|r| r.engine != "cpu-read" && r.engine != "cpu-write")
            .filter(|r| r.direction != "bidirectional")
            .collect();
        let bw = |r: &Row| r.bw_median_gbs.unwrap_or(0.0);
        let Some(best) = ok.iter().copied().max_by(|a, b| bw(a).total_cmp(&bw(b))) else {
            continue;
        };
        let dir = if lane == Lane::H2d {
            "host->GPU"
        } else {
            "GPU->host"
        };
        out.push(format!(
            "{dir}: fastest is {} at {:.1} GB/s, holding {} page-locked.",
            row_title(best),
            bw(best),
            format_size(best.pinned_bytes)
        ));
        // The least pinned memory that stays within 5% of the fastest.
        if let Some(frugal) = ok
            .iter()
            .copied()
            .filter(|r| bw(r) >= 0.95 * bw(best) && r.pinned_bytes < best.pinned_bytes)
            .min_by_key(|r| r.pinned_bytes)
        {
            out.push(format!(
                "{dir}: {} reaches {:.0}% of that ({:.1} GB/s) with only {} page-locked.",
                row_title(frugal),
                100.0 * bw(frugal) / bw(best),
                bw(frugal),
                format_size(frugal.pinned_bytes)
            ));
        }
        if let Some(pageable) = ok
            .iter()
            .copied()
            .filter(|r| r.host == "pageable" && r.mode == "direct")
            .max_by(|a, b| bw(a).total_cmp(&bw(b)))
        {
            out.push(format!(
                "{dir}: plain pageable copies ({}) get {:.1} GB/s, {:.1}x slower than the fastest.",
                row_title(pageable),
                bw(pageable),
                bw(best) / bw(pageable).max(1e-9)
            ));
        }
    }
    out.extend(crate::budget::answer_lines(rows));
    let failed = rows
        .iter()
        .filter(|r| matches!(r.status, Status::Failed(_)))
        .count();
    let skipped = rows
        .iter()
        .filter(|r| matches!(r.status, Status::Skipped(_)))
        .count();
    if failed + skipped > 0 {
        out.push(format!(
            "{failed} row(s) failed and {skipped} were skipped: see the status column."
        ));
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}

/// `pinscope info`.
pub fn info_command(args: &InfoArgs) -> Result<i32, Error> {
    let mut machine = crate::platform::this_machine(args.anonymize);
    let mut no_gpu = None;
    let session = match open_session(args.device, args.anonymize) {
        Ok(s) => Some(s),
        Err(Error::NoGpu(why)) => {
            // With --json, stdout holds only the JSON: the reason goes into it (and to stderr).
            if args.json {
                eprintln!("GPU: none usable — {why}");
            } else {
                println!("GPU: none usable — {why}");
            }
            no_gpu = Some(why);
            None
        }
        Err(e) => return Err(e),
    };
    if let Some(s) = &session {
        machine = s.machine.clone();
    }
    let code = if session.is_some() { 0 } else { 3 };
    if args.json {
        let observers = match &session {
            Some(s) => s.observers.statuses(),
            None => Observers::for_this_machine(GpuContext::default()).statuses(),
        };
        let v = serde_json::json!({
            "machine": machine,
            "gpu_unavailable": no_gpu,
            "observers": observers,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(code);
    }
    println!("host:      {}", machine.host_name);
    println!(
        "platform:  {} ({})",
        machine.platform,
        machine.platform_evidence.join("; ")
    );
    println!("os:        {}", machine.os);
    println!("kernel:    {}", machine.kernel);
    println!(
        "cpu:       {} ({} threads)",
        machine.cpu, machine.cpu_threads
    );
    println!("ram:       {}", format_size(machine.ram_bytes));
    if let Some(g) = &machine.gpu {
        println!(
            "gpu:       {} [{}] cc {} {}",
            g.name,
            g.uuid,
            g.compute_capability,
            format_size(g.total_memory_bytes)
        );
        println!(
            "driver:    {} (CUDA {}), model {}",
            g.driver_version, g.cuda_driver_version, g.driver_model
        );
        println!(
            "pci:       {} link {}",
            g.pci_bus_id,
            machine.key().pcie_link
        );
        println!(
            "maps host memory: {}, integrated: {}, copy engines: {}, SMs: {}",
            g.can_map_host_memory, g.integrated, g.async_engines, g.multiprocessors
        );
    }
    if let Some(s) = &session {
        println!("memory observers:");
        for line in probe::describe(&s.observers).lines() {
            println!("  {line}");
        }
        if args.probe {
            match max_allocatable(&s.gpu) {
                Ok(v) => println!("max allocatable device memory: {}", format_size(v)),
                Err(e) => println!("max allocatable device memory: probe failed: {e}"),
            }
            let cap = ceiling_cap(args.pinned_cap.as_deref(), machine.ram_bytes)?;
            let c = pinned_ceiling(256 * MIB, cap, &s.ledger);
            match c.error {
                Some(e) => println!(
                    "pinned ceiling: {} in 256 MiB chunks, then {e} ({:.1} s)",
                    format_size(c.bytes),
                    c.seconds
                ),
                None => println!(
                    "pinned ceiling: at least {} (reached the cap; raise it with --pinned-cap) ({:.1} s)",
                    format_size(c.bytes),
                    c.seconds
                ),
            }
            println!(
                "pinned ceiling, 90% of free device memory held: {}",
                crate::budget::ceiling_with_device_held(&s.gpu, cap, &s.ledger)
            );
        }
    } else {
        let obs = Observers::for_this_machine(GpuContext::default());
        println!("memory observers (without a GPU):");
        for line in probe::describe(&obs).lines() {
            println!("  {line}");
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sidecar() -> Sidecar {
        Sidecar {
            schema_version: crate::results::SCHEMA_VERSION,
            pinscope_version: "test".into(),
            run_id: "r".into(),
            started_at: "t".into(),
            finished_at: None,
            partial: false,
            command_line: vec![],
            machine: Machine::default(),
            scenarios: vec![],
            observers: vec![],
            claims: vec![],
            probes: vec![],
            derived: vec![],
        }
    }

    #[test]
    fn summary_does_not_print_the_results_line_which_run_prints_once() {
        let scenario = crate::scenario::parse(
            "s.toml",
            "name = \"s\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\n",
        )
        .expect("valid scenario");
        let text = summary_text(&scenario, &[], &sidecar());
        assert!(!text.contains("results:"), "{text}");
    }

    #[test]
    fn watchdog_marks_the_run_partial_when_a_case_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        let w = Watchdog::start_with(
            sidecar(),
            json.clone(),
            std::time::Duration::from_millis(300),
            move || f.store(true, Ordering::SeqCst),
        );
        w.case_started("stuck case");
        std::thread::sleep(std::time::Duration::from_millis(1200));
        drop(w);
        assert!(fired.load(Ordering::SeqCst), "the watchdog did not fire");
        let back = Sidecar::read(&json).unwrap();
        assert!(back.partial);
        assert!(
            back.derived
                .iter()
                .any(|(k, v)| k == "watchdog" && v.contains("stuck case"))
        );
    }

    #[test]
    fn watchdog_stays_quiet_for_cases_that_finish() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        let w = Watchdog::start_with(
            sidecar(),
            json.clone(),
            std::time::Duration::from_millis(500),
            move || f.store(true, Ordering::SeqCst),
        );
        for _ in 0..3 {
            w.case_started("quick case");
            std::thread::sleep(std::time::Duration::from_millis(100));
            w.case_finished(&sidecar());
        }
        std::thread::sleep(std::time::Duration::from_millis(700));
        drop(w);
        assert!(!fired.load(Ordering::SeqCst));
        assert!(!json.exists(), "nothing written when no case hangs");
    }
}
