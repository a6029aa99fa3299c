//! The plainest small-copy latency loop through pinscope's CUDA layer, for telling pinscope's
//! runner apart from the layer under it when its numbers differ from the driver-API probe's
//! (`scripts/probes/latency_driver.cu`). It makes the probe's `async` key's calls in the probe's
//! order (a copy on a non-blocking stream, then the stream's synchronisation, host clock around
//! both, back to back) and prints the probe's line, so `scripts/latency-process.sh` reads both.
//!
//!   copy_loop <pageable|pinned> <h2d|d2h> <bytes> [samples] [--upload] [--upload-first]
//!             [--upload-same] [--events] [--record] [--rayon] [--session] [--kernels] [--gate] [--machine]
//!             [--observers]
//!   copy_loop run <scenario.toml> <strategy|case|strategy-all|case-all>
//!
//! Each flag adds one thing a `pinscope run` process has, set up before the buffers and held
//! while sampling, so rounds with and without it say what moves the copy:
//! - `--rayon`: the host buffer first touched with pinscope's own fill (`fill_zero`), which
//!   starts rayon's global pool of worker threads;
//! - `--session`: the whole run session (`open_session`: GPU, kernels, spin gate, machine facts
//!   and settings, NVML, observers) instead of the bare GPU;
//! - `--kernels`, `--gate`, `--machine`, `--observers`: one part of the session each (the
//!   embedded PTX module; the spin gate's mapped page-locked flag; the machine's facts; the
//!   observers, with three snapshots taken, as a case takes before its sampling);
//! - `--record`: each sample kept as pinscope's sampling loop keeps it (a `SampleTimes` pushed
//!   onto a growing list, the stop flag and the clock read), not as a bare number;
//! - `--upload`: the device buffer first written as a one-way strategy writes a small source
//!   (the pattern in a fresh `Vec`, `cuMemcpyHtoD` from it, the stream synchronised);
//! - `--events`: two timing events created before sampling (the latency clock's pair);
//! - `--upload-first`: the same upload as `--upload`, made before the stream is created (the
//!   driver-API probe's order);
//! - `--upload-same`: the probe's upload exactly: the pattern written into the copy's own host
//!   buffer, `cuMemcpyHtoD` from it, the host buffer zeroed, all before the stream is created;
//! - `--settings`: the settings record (`record_settings`: attributes, host files, NVML; then
//!   `record_under_load`: a sampling load of 64 MiB page-locked copies, its buffers then freed);
//! - `--load`: that sampling load alone (64 MiB page-locked and device buffers, 32 copies, freed),
//!   as the probe's `LATENCY_PRELOAD=free` makes it;
//! - `--load-own`: that load in a context of its own (`cuCtxCreate`, destroyed after), as the
//!   probe's `LATENCY_PRELOAD=own`; `--load-one`: the load with one copy instead of 32;
//!   `--load-wait`: the load, then 2 s idle before the copy's buffers are made.
//! - `--d2h-other`: one 4-byte device-to-host copy into another pageable buffer first, that
//!   buffer kept (so the copy's own buffer is not the process's first pageable destination);
//!   `--d2h-other-freed`: the same, that buffer freed before the copy's own is made.
//! - the steps of pinscope's 64 KiB pageable host-to-device latency case, one flag each, made
//!   first in this order: `--pre-h2d` (its copies: 1100 timed the probe's way on a stream of their
//!   own, then 1000 between an event pair), `--pre-memset` (its first touch of the device end:
//!   `cuMemsetD8Async` of 64 KiB), `--pre-verify` (its check: the verify kernel over the 64 KiB,
//!   an 8-byte result written and read back into pageable memory; the kernels are held after),
//!   `--pre-read8` (that 8-byte read-back alone); every buffer freed after.
//!
//! The line ends with the CPUs the sampling thread ran on when its samples began and ended
//! (`cpu=a->b`, from `/proc/thread-self/stat`) and the host buffer's address, as the probe's does.
//!
//! `run` takes the first case of a scenario through pinscope's own code, in a session:
//! `strategy` is the strategy's buffers, first touch and sampling loop alone (what `pinscope run`
//! does less the observers, the ledger and the phases); `case` is the runner's whole case.
//! `strategy-all` and `case-all` take every case of the scenario that way, in its order, in one
//! session, and print one line per case: whether a case made earlier in the process moves a later
//! one, and which part of a case does.

use pinscope::cuda::{DeviceBuffer, Gpu, HostBuffer, HostFlags, Stream, fill_zero};
use pinscope::measure::SampleTimes;
use pinscope::scenario::Lane;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The optional parts of a run's process, by flag.
const PARTS: [&str; 22] = [
    "--upload-first",
    "--upload-same",
    "--upload",
    "--events",
    "--record",
    "--rayon",
    "--session",
    "--kernels",
    "--gate",
    "--machine",
    "--observers",
    "--settings",
    "--load",
    "--load-own",
    "--load-one",
    "--load-wait",
    "--d2h-other",
    "--d2h-other-freed",
    "--pre-h2d",
    "--pre-memset",
    "--pre-verify",
    "--pre-read8",
];

struct Args {
    pageable: bool,
    h2d: bool,
    bytes: usize,
    samples: usize,
    /// The flags of [`PARTS`] given.
    parts: Vec<&'static str>,
}

impl Args {
    fn has(&self, part: &str) -> bool {
        self.parts.contains(&part)
    }
}

fn parse() -> Result<Args, String> {
    let mut parts = Vec::new();
    let mut rest = Vec::new();
    for a in std::env::args().skip(1) {
        match PARTS.iter().find(|p| **p == a) {
            Some(p) => parts.push(*p),
            None => rest.push(a),
        }
    }
    let usage = "usage: copy_loop <pageable|pinned> <h2d|d2h> <bytes> [samples] [--upload] \
                 [--upload-first] [--upload-same] [--settings] [--load] [--load-own] [--load-one] [--load-wait] [--d2h-other] [--d2h-other-freed] [--pre-h2d] [--pre-memset] [--pre-verify] [--pre-read8] [--events] [--record] [--rayon] [--session] [--kernels] [--gate] [--machine] [--observers]";
    let [kind, dir, bytes, more @ ..] = rest.as_slice() else {
        return Err(usage.into());
    };
    let number = |s: &str| {
        s.parse::<usize>()
            .map_err(|_| format!("not a number: {s}; {usage}"))
    };
    Ok(Args {
        pageable: match kind.as_str() {
            "pageable" => true,
            "pinned" => false,
            _ => return Err(usage.into()),
        },
        h2d: match dir.as_str() {
            "h2d" => true,
            "d2h" => false,
            _ => return Err(usage.into()),
        },
        bytes: number(bytes)?.max(1),
        samples: more
            .first()
            .map(|s| number(s))
            .transpose()?
            .unwrap_or(1000)
            .max(10),
        parts,
    })
}

/// The probe's output line for `key`: the order statistics of `us` (pinscope's own type-7
/// percentiles, the probe's interpolation), and what the process held besides the copy.
/// Where the samples ran: `cpu=a->b` (see [`this_cpu`]) and, when known, `host=0x…`.
fn placement(cpus: [Option<u32>; 2], host: Option<usize>) -> String {
    let cpu = |c: Option<u32>| c.map_or("?".to_string(), |c| c.to_string());
    let host = host.map_or(String::new(), |a| format!("  host={a:#x}"));
    format!("cpu={}->{}{host}", cpu(cpus[0]), cpu(cpus[1]))
}

fn probe_line(
    key: &str,
    us: &[f64],
    placed: &str,
    with: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let p = pinscope::stats::percentiles(us).ok_or("no samples")?;
    Ok(format!(
        "key={key:<34} min {:8.2}  p50 {:8.2}  p90 {:8.2}  p99 {:8.2} us  n={}  data=n/a  {placed}  with {with}",
        p.min,
        p.p50,
        p.p90,
        p.p99,
        us.len(),
    ))
}

/// The settings record's sampling load: 64 MiB page-locked and device buffers, 32 copies from
/// one to the other, all freed.
fn sampling_load(copies: usize) -> Result<(), pinscope::cuda::CudaError> {
    const BYTES: usize = 64 << 20;
    let host = HostBuffer::pinned(BYTES, HostFlags::default())?;
    let dev = DeviceBuffer::new(BYTES)?;
    let s = Stream::new()?;
    for _ in 0..copies {
        s.copy_h2d(&dev, 0, &host, 0, BYTES)?;
    }
    s.synchronize()
}

/// The CPU the calling thread last ran on: field 39 of `/proc/thread-self/stat` (Linux only;
/// `None` elsewhere).
fn this_cpu() -> Option<u32> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

/// The probe's key of an async copy.
fn copy_key(pageable: bool, h2d: bool, bytes: impl std::fmt::Display) -> String {
    format!(
        "copy/{}/{}/{bytes}/async",
        if pageable { "pageable" } else { "pinned" },
        if h2d { "h2d" } else { "d2h" },
    )
}

type Held = Vec<Box<dyn std::any::Any>>;

/// The GPU (bare, or inside a whole session) and the parts the flags ask for, held until the
/// sampling is over; the GPU is first, so it is dropped last.
fn set_up(a: &Args) -> Result<Held, Box<dyn std::error::Error>> {
    if a.has("--session") {
        return Ok(vec![Box::new(pinscope::run::open_session(0, false)?)]);
    }
    let gpu = Gpu::open(0).map_err(|e| e.sentence())?;
    let mut parts: Held = Vec::new();
    if a.has("--kernels") {
        parts.push(Box::new(pinscope::cuda::Kernels::load(&gpu)?));
    }
    if a.has("--gate") {
        parts.push(Box::new(pinscope::cuda::Gate::new()?));
    }
    if a.has("--machine") {
        parts.push(Box::new(pinscope::platform::this_machine(false)));
    }
    if a.has("--observers") {
        let facts = gpu.facts();
        let mut obs = pinscope::probe::Observers::for_this_machine(pinscope::probe::GpuContext {
            uuid: (!facts.uuid.is_empty()).then(|| facts.uuid.clone()),
            luid: facts.luid,
            cuda_mem: None,
            ledger: pinscope::probe::Ledger::new(),
        });
        for _ in 0..3 {
            parts.push(Box::new(obs.snapshot(pinscope::probe::Moment::Before)));
        }
        parts.push(Box::new(obs));
    }
    if a.has("--settings") {
        let facts = gpu.facts();
        let info = pinscope::platform::GpuInfo {
            uuid: facts.uuid.clone(),
            pci_bus_id: facts.pci_bus_id.clone(),
            ..Default::default()
        };
        let mut settings = pinscope::run::record_settings(&gpu, &info);
        pinscope::run::settings::record_under_load(&mut settings, &info);
        parts.push(Box::new(settings));
    }
    if a.has("--load") || a.has("--load-wait") {
        sampling_load(32)?;
    }
    if a.has("--load-wait") {
        std::thread::sleep(Duration::from_secs(2));
    }
    if a.has("--load-one") {
        sampling_load(1)?;
    }
    if a.has("--load-own") {
        let own = pinscope::cuda::OwnContext::create(pinscope::cuda::Schedule::Spin)?;
        sampling_load(32)?;
        drop(own);
    }
    if a.has("--d2h-other") || a.has("--d2h-other-freed") {
        let mut other = HostBuffer::pageable(4)?;
        let dev = DeviceBuffer::new(4)?;
        dev.read(0, other.as_mut_slice())?;
        drop(dev);
        if a.has("--d2h-other") {
            parts.push(Box::new(other));
        }
    }
    pre_steps(a, &gpu, &mut parts)?;
    let mut held: Held = vec![Box::new(gpu)];
    held.extend(parts);
    Ok(held)
}

/// The steps of pinscope's 64 KiB pageable H2D latency case that the `--pre-*` flags ask for.
fn pre_steps(a: &Args, gpu: &Gpu, parts: &mut Held) -> Result<(), Box<dyn std::error::Error>> {
    const BYTES: usize = 64 << 10;
    if a.has("--pre-h2d") {
        let mut host = HostBuffer::pageable(BYTES)?;
        pinscope::cuda::fill_pattern(host.as_mut_slice(), 0, 1);
        let dev = DeviceBuffer::new(BYTES)?;
        let s = Stream::new()?;
        for _ in 0..1100 {
            s.copy_h2d(&dev, 0, &host, 0, BYTES)?;
            s.synchronize()?;
        }
        let pair = [pinscope::cuda::Event::new()?, pinscope::cuda::Event::new()?];
        for _ in 0..1000 {
            pair[0].record(&s)?;
            s.copy_h2d(&dev, 0, &host, 0, BYTES)?;
            pair[1].record(&s)?;
            s.synchronize()?;
        }
    }
    if a.has("--pre-memset") {
        let dev = DeviceBuffer::new(BYTES)?;
        let s = Stream::new()?;
        dev.memset(&s, 0)?;
        s.synchronize()?;
    }
    if a.has("--pre-verify") {
        let kernels = pinscope::cuda::Kernels::load(gpu)?;
        let dev = DeviceBuffer::new(BYTES)?;
        let result = DeviceBuffer::new(16)?;
        let s = Stream::new()?;
        kernels.verify(&s, &dev, BYTES, 1, &result)?;
        parts.push(Box::new(kernels));
    }
    if a.has("--pre-read8") {
        let dev = DeviceBuffer::new(16)?;
        let mut out = [0u8; 8];
        dev.read(0, &mut out)?;
    }
    Ok(())
}

/// The copy's stream and device buffer, the buffer first written as `--upload`,
/// `--upload-first` or `--upload-same` say.
fn device_end(
    a: &Args,
    host: &mut HostBuffer,
) -> Result<(Stream, DeviceBuffer), Box<dyn std::error::Error>> {
    let upload = |dev: &DeviceBuffer| {
        let mut pattern = vec![0u8; a.bytes];
        pinscope::cuda::fill_pattern(&mut pattern, 0, 1);
        dev.write(0, &pattern)
    };
    let first = if a.has("--upload-first") {
        let dev = DeviceBuffer::new(a.bytes)?;
        upload(&dev)?;
        Some(dev)
    } else if a.has("--upload-same") {
        let dev = DeviceBuffer::new(a.bytes)?;
        pinscope::cuda::fill_pattern(host.as_mut_slice(), 0, 1);
        dev.write(0, host.as_slice())?;
        host.as_mut_slice().fill(0);
        Some(dev)
    } else {
        None
    };
    let s = Stream::new()?;
    let dev = match first {
        Some(d) => d,
        None => DeviceBuffer::new(a.bytes)?,
    };
    if a.has("--upload") {
        upload(&dev)?;
        s.synchronize()?;
    }
    Ok((s, dev))
}

fn run(a: &Args) -> Result<String, Box<dyn std::error::Error>> {
    let mut held = set_up(a)?;
    let mut host = if a.pageable {
        HostBuffer::pageable(a.bytes)?
    } else {
        HostBuffer::pinned(a.bytes, HostFlags::default())?
    };
    if a.has("--rayon") {
        fill_zero(host.as_mut_slice());
    } else {
        host.as_mut_slice().fill(0);
    }
    let (s, dev) = device_end(a, &mut host)?;
    let events = if a.has("--events") {
        Some([pinscope::cuda::Event::new()?, pinscope::cuda::Event::new()?])
    } else {
        None
    };
    let warmup = (a.samples / 10).max(100);
    let mut v = Vec::with_capacity(a.samples);
    // What `--record` keeps, as the sampling loop keeps it: grown one sample at a time.
    let mut kept: Vec<SampleTimes> = Vec::new();
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let mut first_cpu = None;
    for i in 0..warmup + a.samples {
        if i == warmup {
            first_cpu = this_cpu();
        }
        let t0 = Instant::now();
        if a.h2d {
            s.copy_h2d(&dev, 0, &host, 0, a.bytes)?;
        } else {
            s.copy_d2h(&host, 0, &dev, 0, a.bytes)?;
        }
        s.synchronize()?;
        let us = t0.elapsed().as_secs_f64() * 1e6;
        if i < warmup {
            continue;
        }
        if a.has("--record") {
            let lane = Lane::one_way(a.h2d);
            kept.push(SampleTimes::host_timed(lane, us / 1e3, None));
            if stop.load(Ordering::SeqCst) || started.elapsed() > Duration::from_secs(3600) {
                break;
            }
        }
        v.push(us);
    }
    let placed = placement([first_cpu, this_cpu()], Some(host.address()));
    drop((events, s, dev, host, kept));
    // The parts made in the GPU's context go before it.
    while held.len() > 1 {
        held.pop();
    }
    drop(held);
    let with = if a.parts.is_empty() {
        "nothing else".to_string()
    } else {
        a.parts.join(" ")
    };
    probe_line(&copy_key(a.pageable, a.h2d, a.bytes), &v, &placed, &with)
}

/// `copy_loop run FILE strategy|case[-all]`: the host-clock p50 of the scenario's first case (a
/// latency case), or of each of its cases in turn (`-all`), measured through pinscope's strategy
/// alone or through its whole case; one line per case.
fn run_scenario_cases(file: &str, how: &str) -> Result<String, Box<dyn std::error::Error>> {
    let scenario = pinscope::scenario::load(std::path::Path::new(file))?;
    let (how, all) = match how.strip_suffix("-all") {
        Some(h) => (h, true),
        None => (how, false),
    };
    let take = if all { scenario.cases.len() } else { 1 };
    if scenario.cases.is_empty() {
        return Err("the scenario has no case".into());
    }
    let mut session = pinscope::run::open_session(0, false)?;
    let mut lines = Vec::new();
    for case in scenario.cases.iter().take(take) {
        lines.push(one_case(&mut session, case, how)?);
    }
    Ok(lines.join("\n"))
}

/// One latency case through the strategy alone or the runner's whole case: its probe line.
fn one_case(
    session: &mut pinscope::run::Session,
    case: &pinscope::scenario::Case,
    how: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let stop = AtomicBool::new(false);
    let measured = match how {
        "strategy" => {
            let gpu = pinscope::measure::Gpu {
                kernels: &session.kernels,
                gate: &session.gate,
            };
            let mut host = pinscope::strategy::allocate(case)?;
            host.touch();
            let mut transfer = host.add_device(&gpu)?;
            let (m, batch) = pinscope::run::case::sampling(case);
            let measured = pinscope::measure::run(transfer.as_mut(), &gpu, &m, batch, &stop)
                .map_err(|(e, _)| e)?;
            transfer.free()?;
            measured
        }
        "case" => pinscope::run::run_case(session, case, &stop).measured,
        _ => return Err("run takes `strategy`, `case`, `strategy-all` or `case-all`".into()),
    };
    let lane = Lane::one_way(case.direction == pinscope::scenario::Direction::H2d);
    let us: Vec<f64> = measured.times(lane).iter().map(|ms| ms * 1e3).collect();
    let pageable = case.host == pinscope::scenario::HostKind::Pageable;
    let key = copy_key(pageable, lane == Lane::H2d, case.size);
    let placed = placement([None, this_cpu()], None);
    probe_line(&key, &us, &placed, &format!("pinscope's {how}"))
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, file, how] = argv.as_slice()
        && mode == "run"
    {
        return match run_scenario_cases(file, how) {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("copy_loop: {e}");
                ExitCode::from(3)
            }
        };
    }
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("copy_loop: {e}");
            ExitCode::from(3)
        }
    }
}
