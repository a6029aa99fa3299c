//! The probe child's steps on the GPU: hold a share of free device memory, run each probe over the
//! driver's pin calls with the searches of `search.rs`, and after a refusal check whether the
//! process can still pin and launch. Everything a step pins is freed before the next step.

use super::record::{
    AfterCheck, ChildLine, Found, GpuName, Hold, Plan, ProbeKind, ProbeResult, Recoverable,
    Recovery, Refusal,
};
use super::search::{self, Ended, Sizes};
use crate::cuda::{DeviceBuffer, Gpu, HostBuffer, HostFlags, Kernels, Stream};
use crate::units::{GIB, MIB};
use std::time::{Duration, Instant};

/// Pieces a device-memory hold is allocated in.
const HOLD_PIECE: u64 = GIB;

/// What the steps use on the GPU. Fields drop in order: the stream and module before the context.
struct Tools {
    stream: Stream,
    kernels: Kernels,
    gpu: Gpu,
}

/// Runs `plan` on its GPU, handing each line to `emit` as soon as it is known; a failure to open
/// the GPU is a `Failed` line. Starts no new pin after the plan's child deadline.
pub fn run_plan(plan: &Plan, emit: &mut dyn FnMut(&ChildLine)) {
    let end = Instant::now() + Duration::from_millis(plan.child_deadline_ms);
    let out_of_time = move || Instant::now() >= end;
    let tools = match open(plan.device) {
        Ok(t) => t,
        Err(sentence) => return emit(&ChildLine::Failed { sentence }),
    };
    let facts = tools.gpu.facts();
    emit(&ChildLine::Opened {
        gpu: GpuName {
            index: plan.device,
            name: facts.name,
            uuid: facts.uuid,
        },
    });
    for &percent in &plan.hold_percents {
        if out_of_time() {
            break;
        }
        let (hold, held) = hold(&tools.gpu, percent);
        emit(&ChildLine::Hold(hold));
        for &kind in &plan.kinds {
            let result = probe(&tools, plan, kind, percent, &out_of_time);
            emit(&ChildLine::Probe(Box::new(result)));
        }
        drop(held);
    }
}

fn open(device: u32) -> Result<Tools, String> {
    let gpu = Gpu::open(device).map_err(|e| e.sentence())?;
    let kernels = Kernels::load(&gpu).map_err(|e| {
        format!(
            "pinscope's kernels did not load into the GPU ({e}): {}",
            e.code.remedy()
        )
    })?;
    let stream = Stream::new()
        .map_err(|e| format!("a CUDA stream could not be made ({e}): {}", e.code.remedy()))?;
    Ok(Tools {
        stream,
        kernels,
        gpu,
    })
}

/// Holds `percent` of free device memory in pieces; what could not be held is the hold's error.
fn hold(gpu: &Gpu, percent: u8) -> (Hold, Vec<DeviceBuffer>) {
    let (mut free, mut total, mut error) = (0, 0, None);
    match gpu.mem_info() {
        Ok(ft) => (free, total) = ft,
        Err(e) => error = Some(Refusal::from(e)),
    }
    let want = free / 100 * u64::from(percent);
    let mut held = Vec::new();
    let mut bytes = 0u64;
    while bytes < want {
        let piece = (want - bytes).min(HOLD_PIECE);
        match DeviceBuffer::new(piece as usize) {
            Ok(b) => {
                held.push(b);
                bytes += piece;
            }
            Err(e) => {
                error = Some(Refusal::from(e));
                break;
            }
        }
    }
    let hold = Hold {
        percent,
        device_free_bytes: free,
        device_total_bytes: total,
        held_bytes: bytes,
        error,
    };
    (hold, held)
}

/// One probe at one hold level, with the after-effect check when it ended on a refusal.
fn probe(
    t: &Tools,
    plan: &Plan,
    kind: ProbeKind,
    hold_percent: u8,
    out_of_time: &dyn Fn() -> bool,
) -> ProbeResult {
    let started = Instant::now();
    let sizes = Sizes {
        start: plan.resolution_bytes,
        cap: plan.limit_bytes,
        resolution: plan.resolution_bytes,
    };
    let (found, ended, tries) = match kind {
        ProbeKind::HostAlloc => {
            let r = search::largest(sizes, out_of_time, |n| pin(n).map(drop));
            (Found::Bytes(r.bytes), r.ended, u64::from(r.tries))
        }
        ProbeKind::HostRegister => {
            let r = search::largest(sizes, out_of_time, |n| {
                HostBuffer::registered(n as usize, HostFlags::default())
                    .map(drop)
                    .map_err(Refusal::from)
            });
            (Found::Bytes(r.bytes), r.ended, u64::from(r.tries))
        }
        ProbeKind::Total => {
            let chunk = plan.chunk_bytes;
            let r = search::pile_up(chunk, plan.limit_bytes, out_of_time, |_| pin(chunk));
            (Found::Bytes(r.amount), r.ended, r.pieces)
        }
        ProbeKind::Registrations => registrations(plan, out_of_time),
    };
    let after_refusal = matches!(ended, Ended::Refused { .. }).then(|| recovery(t));
    ProbeResult {
        kind,
        hold_percent,
        found,
        ended,
        tries,
        seconds: started.elapsed().as_secs_f64(),
        after_refusal,
    }
}

fn pin(bytes: u64) -> Result<HostBuffer, Refusal> {
    HostBuffer::pinned(bytes as usize, HostFlags::default()).map_err(Refusal::from)
}

/// Registers ranges of `range_bytes`, one range apart (so no two are adjacent), in one plain
/// allocation, until a refusal or the count cap.
fn registrations(
    plan: &Plan,
    out_of_time: &dyn Fn() -> bool,
) -> (Found, search::Ended<Refusal>, u64) {
    let range = plan.range_bytes.max(crate::cuda::PAGE as u64);
    let most = plan.max_registrations.min(plan.limit_bytes / range);
    let stride = 2 * range;
    let buf = match HostBuffer::pageable((most * stride) as usize) {
        Ok(b) => b,
        Err(e) => {
            let error = Refusal::from(e);
            return (Found::Ranges(0), Ended::Refused { at: 1, error }, 0);
        }
    };
    let r = search::pile_up(1, most, out_of_time, |i| {
        buf.register_range((i * stride) as usize, range as usize)
            .map_err(Refusal::from)
    });
    (Found::Ranges(r.amount), r.ended, r.pieces)
}

/// Whether the process can still pin 1 MiB and launch a kernel; if not, whether reading the
/// error (`cuCtxSynchronize`: the driver API keeps no last error, a pending one comes back from
/// the next synchronising call) clears it.
fn recovery(t: &Tools) -> Recovery {
    let at_once = after_check(t);
    if at_once.worked() {
        return Recovery {
            recoverable: Recoverable::AtOnce,
            at_once,
            read: None,
            after_read: None,
        };
    }
    let read = t.gpu.synchronize().err().map(Refusal::from);
    let after = after_check(t);
    Recovery {
        recoverable: if after.worked() {
            Recoverable::AfterReadingTheError
        } else {
            Recoverable::No
        },
        at_once,
        read: Some(read),
        after_read: Some(after),
    }
}

fn after_check(t: &Tools) -> AfterCheck {
    let pin_1mib_error = pin(MIB).err();
    let kernel_error = t
        .kernels
        .empty(&t.stream)
        .and_then(|()| t.stream.synchronize())
        .err()
        .map(Refusal::from);
    AfterCheck {
        pin_1mib_error,
        kernel_error,
    }
}
