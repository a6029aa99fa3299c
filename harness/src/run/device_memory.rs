//! Device memory held while a case runs (`device_hold`), and the overflow guard: past the card
//! only with `guard = false` in the scenario *and* `--allow-vram-overflow` on the command line,
//! never with managed memory.

use crate::cuda::{CudaError, DeviceBuffer, Gpu};
use crate::probe::{Ledger, LedgerCategory};
use crate::results::{Cause, Failure, Phase, Status};
use crate::scenario::{Case, HostKind};
use crate::units::{GIB, format_size};

/// Pieces the hold is allocated in.
pub const HOLD_PIECE: u64 = GIB;
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
            return Prepared::Fail(Status::Failed(Failure::call(&e, Phase::DeviceHold)));
        }
        Err(_) => return Prepared::Run(Held::none(0)),
    };
    let hold = case.vram.device_hold.resolve(free);
    if let Some(why) = overflow_refusal(case, free, hold, allow_overflow) {
        return Prepared::Skip(why);
    }
    match Held::allocate(hold, free, ledger) {
        Ok(h) => Prepared::Run(h),
        Err((e, got)) => Prepared::Fail(Status::Failed(Failure::new(Cause::DeviceHold {
            call: e.call.to_string(),
            code: e.code,
            allocated: got,
            wanted: hold,
            free,
        }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(extra: &str) -> Case {
        let size = if extra.contains("size") {
            ""
        } else {
            "size = \"1GiB\"\n"
        };
        let text = format!(
            "name = \"t\"\ndescription = \"d\"\n[[case]]\nlabel = \"c\"\nengine = \"device-read\"\n{size}{extra}\n"
        );
        crate::scenario::parse("t.toml", &text)
            .expect("valid scenario")
            .cases
            .remove(0)
    }

    #[test]
    fn past_the_card_is_refused_without_both_opt_ins() {
        let free = 100 * GIB;
        // Scenario opt-in only (guard = false), no command-line flag: refused.
        let c = case("device_hold = \"free+5%\"\nguard = false");
        let hold = c.vram.device_hold.resolve(free);
        assert_eq!(
            overflow_refusal(&c, free, hold, false).as_deref(),
            Some(
                "it would allocate 106 GiB of device memory (105 GiB held by device_hold = \"free+5%\" and 1 GiB of its own), 6 GiB past the 100 GiB free: the scenario allows it (guard = false), and the command line must too: pass --allow-vram-overflow"
            )
        );
        // Both opt-ins: tried.
        assert_eq!(overflow_refusal(&c, free, hold, true), None);
        // The command-line flag alone: a scenario cannot even say free+5% with guard on (see the
        // scenario tests); an absolute hold past the card is refused at run time.
        let c = case("device_hold = \"120GiB\"");
        assert_eq!(
            overflow_refusal(&c, free, 120 * GIB, true).as_deref(),
            Some(
                "it needs 121 GiB of device memory (120 GiB held by device_hold = \"120GiB\" and 1 GiB of its own) and only 100 GiB is free: set guard = false in the case and pass --allow-vram-overflow to try it"
            )
        );
        // A plain case past the card with guard = false but no flag: refused too.
        let c = case("size = \"128GiB\"\nguard = false");
        assert_eq!(
            overflow_refusal(&c, free, 0, false).as_deref(),
            Some(
                "it would allocate 128 GiB of device memory, 28 GiB past the 100 GiB free: the scenario allows it (guard = false), and the command line must too: pass --allow-vram-overflow"
            )
        );
        // Guard on, no hold: the runner's usual guard speaks.
        let c = case("size = \"128GiB\"");
        assert_eq!(overflow_refusal(&c, free, 0, true), None);
    }

    #[test]
    fn within_the_card_needs_no_opt_in() {
        let free = 100 * GIB;
        for hold in ["free-50%", "free-10%", "free-2GiB", "8GiB"] {
            let c = case(&format!("device_hold = \"{hold}\""));
            let h = c.vram.device_hold.resolve(free);
            assert_eq!(overflow_refusal(&c, free, h, false), None, "{hold}");
        }
        // free-1% with 1 GiB of its own goes 0 bytes past... 99 + 1 = 100: still within.
        let c = case("device_hold = \"free-1%\"");
        assert_eq!(
            overflow_refusal(&c, free, c.vram.device_hold.resolve(free), false),
            None
        );
        // free-0.5% + 1 GiB goes past: refused with the guard on.
        let c = case("device_hold = \"free-0.5%\"");
        let h = c.vram.device_hold.resolve(free);
        assert!(
            overflow_refusal(&c, free, h, true).unwrap().ends_with(
                "set guard = false in the case and pass --allow-vram-overflow to try it"
            )
        );
    }
}
