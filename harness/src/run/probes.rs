//! Probes run around a case or by `info --probe`: the largest device allocation and the pinned
//! ceiling.

use crate::Error;
use crate::cuda::{self, CudaError, Gpu as CudaGpu};
use crate::probe::Ledger;
use crate::results::Ceiling;
use crate::units::{MIB, format_size};

/// The pinned ceiling: pins chunks of `chunk` bytes until the driver refuses or `cap` is reached,
/// goes on in steps of 256 MiB after the first refusal, then frees everything. Never exceeds `cap`.
pub fn pinned_ceiling(chunk: u64, cap: u64, ledger: &Ledger) -> Ceiling {
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
