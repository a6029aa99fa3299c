//! The plainest small-copy latency loop through pinscope's CUDA layer, for telling pinscope's
//! runner apart from the layer under it when its numbers differ from the driver-API probe's
//! (`scripts/probes/latency_driver.cu`). It makes the probe's `async` key's calls in the probe's
//! order (a copy on a non-blocking stream, then the stream's synchronisation, host clock around
//! both, back to back) and prints the probe's line, so `scripts/latency-process.sh` reads both.
//!
//!   copy_loop <pageable|pinned> <h2d|d2h> <bytes> [samples] [--rayon]
//!
//! `--rayon` first touches the host buffer with pinscope's own fill (`fill_zero`), which starts
//! rayon's global pool of worker threads, as every `pinscope run` does; without it the process
//! has no thread beside the timed one.

use pinscope::cuda::{DeviceBuffer, Gpu, HostBuffer, HostFlags, Stream, fill_zero};
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    pageable: bool,
    h2d: bool,
    bytes: usize,
    samples: usize,
    rayon: bool,
}

fn parse() -> Result<Args, String> {
    let mut rayon = false;
    let mut rest = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--rayon" {
            rayon = true;
        } else {
            rest.push(a);
        }
    }
    let usage = "usage: copy_loop <pageable|pinned> <h2d|d2h> <bytes> [samples] [--rayon]";
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
        rayon,
    })
}

/// The `p`-quantile of sorted `v`, interpolated as the probe does.
fn quantile(v: &[f64], p: f64) -> f64 {
    let h = (v.len() - 1) as f64 * p;
    let lo = h as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

fn run(a: &Args) -> Result<String, Box<dyn std::error::Error>> {
    let _gpu = Gpu::open(0).map_err(|e| e.sentence())?;
    let mut host = if a.pageable {
        HostBuffer::pageable(a.bytes)?
    } else {
        HostBuffer::pinned(a.bytes, HostFlags::default())?
    };
    if a.rayon {
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
    v.sort_by(f64::total_cmp);
    let key = format!(
        "copy/{}/{}/{}/async",
        if a.pageable { "pageable" } else { "pinned" },
        if a.h2d { "h2d" } else { "d2h" },
        a.bytes
    );
    Ok(format!(
        "key={key:<34} min {:8.2}  p50 {:8.2}  p90 {:8.2}  p99 {:8.2} us  n={}  data=n/a{}",
        v[0],
        quantile(&v, 0.5),
        quantile(&v, 0.9),
        quantile(&v, 0.99),
        v.len(),
        if a.rayon {
            "  (rayon pool started)"
        } else {
            ""
        }
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
