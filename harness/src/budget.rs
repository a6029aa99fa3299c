//! The device-memory budget experiments (issue 13), on the runner's side: device memory held while
//! a case runs (`device_hold`), the overflow guard (past the card only with `guard = false` in the
//! scenario *and* `--allow-vram-overflow` on the command line, never with managed memory), the
//! pinned-ceiling probe that keeps going after the first failure, and the sentences the summary
//! and the report say about them.

use crate::cuda::{self, CudaError, DeviceBuffer, Gpu};
use crate::probe::{Ledger, LedgerCategory};
use crate::results::{Ceiling, Lane, Row, Status};
use crate::scenario::{Case, DeviceHold, HostKind};
use crate::units::{GIB, MIB, format_size};

/// Pieces the hold is allocated in.
pub const HOLD_PIECE: u64 = GIB;
/// Step of the pinned-ceiling probe after its first failure.
pub const CEILING_STEP: u64 = 256 * MIB;
/// The command-line opt-in, as its flag is spelled.
pub const OVERFLOW_FLAG: &str = "--allow-vram-overflow";

/// Device memory held for the length of a case (plain `cuMemAlloc`, never managed memory); freed
/// on drop, when the ledger is given back its bytes too.
pub struct Held {
    bufs: Vec<DeviceBuffer>,
    /// Bytes held.
    pub bytes: u64,
    /// Free device memory before the hold (what a relative hold was resolved against).
    pub free_before: u64,
    ledger: Option<Ledger>,
}

impl Held {
    /// Nothing held.
    pub fn none(free_before: u64) -> Held {
        Held {
            bufs: Vec::new(),
            bytes: 0,
            free_before,
            ledger: None,
        }
    }

    /// Allocates `bytes` in pieces of at most [`HOLD_PIECE`]; on a failure everything allocated so
    /// far is freed and the error says how far it got.
    pub fn allocate(
        bytes: u64,
        free_before: u64,
        ledger: &Ledger,
    ) -> Result<Held, (CudaError, u64)> {
        let mut held = Held::none(free_before);
        while held.bytes < bytes {
            let piece = (bytes - held.bytes).min(HOLD_PIECE);
            match DeviceBuffer::new(piece as usize) {
                Ok(b) => {
                    held.bufs.push(b);
                    held.bytes += piece;
                }
                Err(e) => return Err((e, held.bytes)),
            }
        }
        ledger.add(LedgerCategory::Device, held.bytes);
        held.ledger = Some(ledger.clone());
        Ok(held)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.bufs.clear();
        if let Some(l) = &self.ledger {
            l.sub(LedgerCategory::Device, self.bytes);
        }
    }
}

/// Why a case must not allocate past free device memory here, or `None`. `hold` is the resolved
/// `device_hold`, `free` the free device memory before it. A case that stays within `free` is left
/// to the runner's usual guard.
pub fn overflow_refusal(case: &Case, free: u64, hold: u64, allow_overflow: bool) -> Option<String> {
    let own = case.device_bytes();
    let need = hold.saturating_add(own);
    if need <= free {
        return None;
    }
    let what = if hold > 0 {
        format!(
            "{} of device memory ({} held by device_hold = \"{}\" and {} of its own)",
            format_size(need),
            format_size(hold),
            case.vram.device_hold_written,
            format_size(own)
        )
    } else {
        format!("{} of device memory", format_size(need))
    };
    if case.host == HostKind::Managed {
        return Some(format!(
            "it needs {what} and only {} is free; pinscope never goes past the card with managed memory (it can hang the GPU)",
            format_size(free)
        ));
    }
    if case.guard {
        // Without a hold the runner's own guard says it (and its message stays the same).
        return (hold > 0).then(|| {
            format!(
                "it needs {what} and only {} is free: set guard = false in the case and pass {OVERFLOW_FLAG} to try it",
                format_size(free)
            )
        });
    }
    if !allow_overflow {
        return Some(format!(
            "it would allocate {what}, {} past the {} free: the scenario allows it (guard = false), and the command line must too: pass {OVERFLOW_FLAG}",
            format_size(need - free),
            format_size(free)
        ));
    }
    None
}

/// What happens before a case: run it with this much held, skip it, or record a failed row.
pub enum Prepared {
    Run(Held),
    Skip(String),
    Fail(Status),
}

/// Resolves and allocates the case's `device_hold`, after the overflow guard.
pub fn prepare(case: &Case, gpu: &Gpu, ledger: &Ledger, allow_overflow: bool) -> Prepared {
    let free = match gpu.mem_info() {
        Ok((free, _)) => free,
        // Without the free memory nothing relative can be resolved; a case with no hold runs.
        Err(e) if !case.vram.device_hold.is_none() => {
            return Prepared::Fail(Status::Failed(format!("{e} (device_hold)")));
        }
        Err(_) => return Prepared::Run(Held::none(0)),
    };
    let hold = case.vram.device_hold.resolve(free);
    if let Some(why) = overflow_refusal(case, free, hold, allow_overflow) {
        return Prepared::Skip(why);
    }
    match Held::allocate(hold, free, ledger) {
        Ok(h) => Prepared::Run(h),
        Err((e, got)) => Prepared::Fail(Status::Failed(format!(
            "{e} (device_hold: {} of {} allocated, {} was free)",
            format_size(got),
            format_size(hold),
            format_size(free)
        ))),
    }
}

/// Pins chunks of `chunk` until the driver refuses or `cap`; after the first refusal it goes on
/// in steps of [`CEILING_STEP`] (smaller when the chunk is) until the next refusal, so one failure
/// does not end the probe, then tries one 1 MiB pin to see whether the failures left a sticky
/// error. Everything is freed at the end. Never exceeds `cap`.
pub fn pinned_ceiling_stepped(chunk: u64, cap: u64, ledger: &Ledger) -> Ceiling {
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
        // A sticky error (WSL2, FreeToken#233) fails even a small pin afterwards.
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
pub fn ceiling_with_device_held(gpu: &Gpu, cap: u64, ledger: &Ledger) -> String {
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
    let c = pinned_ceiling_stepped(256 * MIB, cap, ledger);
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

/// The `device_hold=` value of a row's axes, if it was swept.
fn hold_axis(r: &Row) -> Option<&str> {
    r.axes
        .split(';')
        .find_map(|a| a.strip_prefix("device_hold="))
}

fn title(r: &Row) -> String {
    r.title()
}

/// Plain-words sentences about device bandwidth, allocations past the card, pinned ceilings with
/// device memory held and pinned churn. Empty when the rows hold none of these.
pub fn answer_lines<R: std::borrow::Borrow<Row>>(rows: &[R]) -> Vec<String> {
    let rows: Vec<&Row> = rows.iter().map(R::borrow).collect();
    let mut out = Vec::new();
    let device: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.lane == Lane::Device)
        .collect();
    let past = |r: &Row| {
        hold_axis(r)
            .and_then(|h| DeviceHold::parse(h).ok())
            .is_some_and(DeviceHold::reaches_free)
    };
    let within: Vec<&Row> = device
        .iter()
        .copied()
        .filter(|r| r.status.is_ok() && !past(r))
        .filter(|r| r.bw_median_gbs.is_some())
        .collect();
    let best_within = within
        .iter()
        .copied()
        .max_by(|a, b| a.bw_median_gbs.total_cmp_opt(b.bw_median_gbs));
    for r in &within {
        out.push(format!(
            "device memory: {} at {:.0} GB/s.",
            title(r),
            r.bw_median_gbs.unwrap_or(0.0)
        ));
    }
    for r in device.iter().copied().filter(|r| past(r)) {
        match &r.status {
            Status::Failed(why) if why.contains("OUT_OF_MEMORY") => out.push(format!(
                "past the card: {} failed with CUDA_ERROR_OUT_OF_MEMORY: CUDA did not spill device memory into host memory here.",
                title(r)
            )),
            Status::Ok => {
                let bw = r.bw_median_gbs.unwrap_or(0.0);
                let mut s = format!(
                    "past the card: {} succeeded and ran at {bw:.1} GB/s",
                    title(r)
                );
                if let Some(b) = best_within.and_then(|b| b.bw_median_gbs) {
                    s.push_str(&format!(
                        ", {:.0}x slower than within the card ({b:.0} GB/s): the allocation spilled into shared (host) memory.",
                        b / bw.max(1e-9)
                    ));
                } else {
                    s.push('.');
                }
                out.push(s);
            }
            Status::Skipped(why) => {
                out.push(format!("past the card: {} was not tried: {why}.", title(r)))
            }
            Status::Failed(why) => out.push(format!("past the card: {} failed: {why}.", title(r))),
        }
    }
    for r in rows.iter().filter(|r| hold_axis(r).is_some()) {
        if let Some(c) = r.pinned_ceiling_mib {
            out.push(format!(
                "pinned ceiling with device_hold={} held: {} ({}).",
                hold_axis(r).unwrap_or("0"),
                format_size((c * MIB as f64) as u64),
                r.case_label
            ));
        }
    }
    for r in rows.iter().filter(|r| r.mode == "churn") {
        match &r.status {
            Status::Ok => out.push(format!(
                "pinned churn: {}: all {} copies verified.",
                title(r),
                r.samples
            )),
            Status::Failed(why) if crate::strategy::churn::mismatches_in(why).is_some() => out
                .push(format!(
                    "pinned churn: {}: {why}: copies returned success and left wrong data.",
                    title(r)
                )),
            _ => {}
        }
    }
    out
}

/// `out_of_memory` and `mismatched_copies`: claim metrics read from a row's status, so they are
/// judged on failed rows too (a failure is the answer they are about).
pub fn status_metric(r: &Row, metric: &str) -> Option<f64> {
    match metric {
        // A skipped row asked nothing: not observable, so the claim is not applicable.
        "out_of_memory" => match &r.status {
            Status::Failed(why) if why.contains("CUDA_ERROR_OUT_OF_MEMORY") => Some(1.0),
            Status::Skipped(_) => None,
            _ => Some(0.0),
        },
        "mismatched_copies" if r.mode == "churn" => match &r.status {
            Status::Ok => Some(0.0),
            Status::Failed(why) => crate::strategy::churn::mismatches_in(why).map(f64::from),
            Status::Skipped(_) => None,
        },
        _ => None,
    }
}

/// True for metrics [`status_metric`] answers: a failed row is judged, not skipped.
pub fn judged_on_failure(metric: &str) -> bool {
    matches!(metric, "out_of_memory" | "mismatched_copies")
}

trait TotalCmpOpt {
    fn total_cmp_opt(&self, other: Option<f64>) -> std::cmp::Ordering;
}

impl TotalCmpOpt for Option<f64> {
    fn total_cmp_opt(&self, other: Option<f64>) -> std::cmp::Ordering {
        self.unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&other.unwrap_or(f64::NEG_INFINITY))
    }
}

#[cfg(test)]
mod tests;
