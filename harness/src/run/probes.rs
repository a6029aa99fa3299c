//! Probes run around a case or by `info --probe`: the largest device allocation and the pinned
//! ceiling.

use super::Ceiling;
use super::device_memory::Held;
use crate::Error;
use crate::cuda::{self, CudaError, Gpu as CudaGpu};
use crate::probe::{Ledger, LedgerCategory};
use crate::scenario::DeviceHold;
use crate::units::{MIB, format_size};

/// Step of the pinned-ceiling probe after its first failure.
pub const CEILING_STEP: u64 = 256 * MIB;

/// Pins chunks of `chunk` until the driver refuses or `cap`; after the first refusal it goes on
/// in steps of [`CEILING_STEP`] (smaller when the chunk is) until the next refusal, so one failure
/// does not end the probe, then tries one 1 MiB pin to see whether the failures left a sticky
/// error. Everything is freed at the end. Never exceeds `cap`.
pub fn pinned_ceiling(chunk: u64, cap: u64, ledger: &Ledger) -> Ceiling {
    let t = std::time::Instant::now();
    let chunk = chunk.max(MIB);
    let step = chunk.min(CEILING_STEP);
    let mut held = Vec::new();
    let mut bytes = 0u64;
    let pin = |size: u64, held: &mut Vec<(cuda::HostBuffer, u64)>, bytes: &mut u64| {
        cuda::HostBuffer::pinned(size as usize, Default::default()).map(|b| {
            ledger.add(LedgerCategory::PinnedAlloc, size);
            *bytes += size;
            held.push((b, size));
        })
    };
    let mut first = None;
    while bytes + chunk <= cap {
        if let Err(e) = pin(chunk, &mut held, &mut bytes) {
            first = Some(e);
            break;
        }
    }
    let error = first.map(|first| {
        let at_first = bytes;
        let mut end = None;
        while bytes + step <= cap {
            if let Err(e) = pin(step, &mut held, &mut bytes) {
                end = Some(e);
                break;
            }
        }
        let after = match &end {
            Some(e) => format!("ended by {e}"),
            None => format!("reached the cap of {}", format_size(cap)),
        };
        // A sticky error (seen on WSL2) fails even a small pin afterwards.
        let sticky = match cuda::HostBuffer::pinned(MIB as usize, Default::default()) {
            Ok(_) => "a 1 MiB pin afterwards succeeded".to_string(),
            Err(e) => format!("a 1 MiB pin afterwards failed too ({e})"),
        };
        format!(
            "{first} at {} in {} chunks; then {} more in {} steps, {after}; {sticky}",
            format_size(at_first),
            format_size(chunk),
            format_size(bytes - at_first),
            format_size(step)
        )
    });
    let total: u64 = held.iter().map(|(_, n)| n).sum();
    drop(held);
    ledger.sub(LedgerCategory::PinnedAlloc, total);
    Ceiling {
        bytes,
        cap,
        error,
        seconds: t.elapsed().as_secs_f64(),
    }
}

/// `info --probe`: the pinned ceiling with 90% of free device memory held, as text.
pub fn ceiling_with_device_held(gpu: &CudaGpu, cap: u64, ledger: &Ledger) -> String {
    let hold = DeviceHold::FreeFactor(0.9);
    let free = match gpu.mem_info() {
        Ok((f, _)) => f,
        Err(e) => return format!("not measured: {e}"),
    };
    let bytes = hold.resolve(free);
    let held = match Held::allocate(bytes, free, ledger) {
        Ok(h) => h,
        Err((e, got)) => {
            return format!(
                "not measured: holding {} of device memory failed after {} ({e})",
                format_size(bytes),
                format_size(got)
            );
        }
    };
    let c = pinned_ceiling(256 * MIB, cap, ledger);
    drop(held);
    let how = match c.error {
        Some(e) => format!("then {e}"),
        None => "reached the cap; raise it with --pinned-cap".into(),
    };
    format!(
        "{} with {} of device memory held (90% of {} free), {how} ({:.1} s)",
        format_size(c.bytes),
        format_size(bytes),
        format_size(free),
        c.seconds
    )
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
