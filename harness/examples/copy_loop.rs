//! The plainest small-copy latency loop through pinscope's CUDA layer, for telling pinscope's
//! runner apart from the layer under it when its numbers differ from the driver-API probe's
//! (`scripts/probes/latency_driver.cu`). It makes the probe's `async` key's calls in the probe's
//! order (a copy on a non-blocking stream, then the stream's synchronisation, host clock around
//! both, back to back) and prints the probe's line, so `scripts/latency-process.sh` reads both.
//!
//!   copy_loop <pageable|pinned> <h2d|d2h> <bytes> [samples] [--rayon] [--session]
//!             [--kernels] [--gate] [--machine] [--observers]
//!
//! Each flag adds one thing a `pinscope run` process has, set up before the buffers and held
//! while sampling, so rounds with and without it say what moves the copy:
//! - `--rayon`: the host buffer first touched with pinscope's own fill (`fill_zero`), which
//!   starts rayon's global pool of worker threads;
//! - `--session`: the whole run session (`open_session`: GPU, kernels, spin gate, machine facts
//!   and settings, NVML, observers) instead of the bare GPU;
//! - `--kernels`, `--gate`, `--machine`, `--observers`: one part of the session each (the
//!   embedded PTX module; the spin gate's mapped page-locked flag; the machine's facts; the
//!   observers, with one snapshot taken).

use pinscope::cuda::{DeviceBuffer, Gpu, HostBuffer, HostFlags, Stream, fill_zero};
use std::process::ExitCode;
use std::time::Instant;

/// The optional parts of a run's process, by flag.
const PARTS: [&str; 6] = [
    "--rayon",
    "--session",
    "--kernels",
    "--gate",
    "--machine",
    "--observers",
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
    let usage = "usage: copy_loop <pageable|pinned> <h2d|d2h> <bytes> [samples] [--rayon] \
                 [--session] [--kernels] [--gate] [--machine] [--observers]";
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

/// The `p`-quantile of sorted `v`, interpolated as the probe does.
fn quantile(v: &[f64], p: f64) -> f64 {
    let h = (v.len() - 1) as f64 * p;
    let lo = h as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
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
        parts.push(Box::new(obs.snapshot(pinscope::probe::Moment::Before)));
        parts.push(Box::new(obs));
    }
    let mut held: Held = vec![Box::new(gpu)];
    held.extend(parts);
    Ok(held)
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
    let dev = DeviceBuffer::new(a.bytes)?;
    let s = Stream::new()?;
    let warmup = (a.samples / 10).max(100);
    let mut v = Vec::with_capacity(a.samples);
    for i in 0..warmup + a.samples {
        let t0 = Instant::now();
        if a.h2d {
            s.copy_h2d(&dev, 0, &host, 0, a.bytes)?;
        } else {
            s.copy_d2h(&host, 0, &dev, 0, a.bytes)?;
        }
        s.synchronize()?;
        let us = t0.elapsed().as_secs_f64() * 1e6;
        if i >= warmup {
            v.push(us);
        }
    }
    drop((s, dev, host));
    // The parts made in the GPU's context go before it.
    while held.len() > 1 {
        held.pop();
    }
    drop(held);
    v.sort_by(f64::total_cmp);
    let key = format!(
        "copy/{}/{}/{}/async",
        if a.pageable { "pageable" } else { "pinned" },
        if a.h2d { "h2d" } else { "d2h" },
        a.bytes
    );
    let with = if a.parts.is_empty() {
        "nothing else".to_string()
    } else {
        a.parts.join(" ")
    };
    Ok(format!(
        "key={key:<34} min {:8.2}  p50 {:8.2}  p90 {:8.2}  p99 {:8.2} us  n={}  data=n/a  with {with}",
        v[0],
        quantile(&v, 0.5),
        quantile(&v, 0.9),
        quantile(&v, 0.99),
        v.len(),
    ))
}

fn main() -> ExitCode {
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
