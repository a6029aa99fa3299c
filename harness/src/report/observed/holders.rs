//! Who held what, from an observed run's allocation events: each successful allocation is held
//! from its event until the free that names the same address (or VMM handle) in the same
//! process; what is held is summed by calling library and kind over time. From that: the peak of
//! page-locked host memory, each (library, kind)'s peak, what was never freed before exit, the
//! largest pin, and the calls that failed.

use crate::results::{AllocEvent, CallKind};
use std::collections::{BTreeMap, HashMap};

/// What kind of memory an allocation holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Held {
    /// Page-locked host memory allocated by CUDA (`cuMemHostAlloc`, `cuMemAllocHost`).
    Pinned,
    /// Existing host memory page-locked (`cuMemHostRegister`).
    Registered,
    /// Managed memory (`cuMemAllocManaged`).
    Managed,
    /// Device memory (`cuMemAlloc`, stream-ordered, and VMM physical allocations).
    Device,
}

impl Held {
    pub fn word(self) -> &'static str {
        match self {
            Held::Pinned => "pinned",
            Held::Registered => "registered",
            Held::Managed => "managed",
            Held::Device => "device",
        }
    }

    /// Page-locked host memory (what the host gives up).
    pub fn page_locked(self) -> bool {
        matches!(self, Held::Pinned | Held::Registered)
    }
}

/// Which frees end which allocations: a free ends the allocation of its class at its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Class {
    Host,
    Registration,
    Device,
    Vmm,
}

/// What a call does to what is held.
enum Effect {
    Alloc(Class, Held),
    Free(Class),
    Neither,
}

fn effect(call: CallKind) -> Effect {
    match call {
        CallKind::HostAlloc => Effect::Alloc(Class::Host, Held::Pinned),
        CallKind::HostRegister => Effect::Alloc(Class::Registration, Held::Registered),
        CallKind::ManagedAlloc => Effect::Alloc(Class::Device, Held::Managed),
        CallKind::DeviceAlloc | CallKind::AsyncAlloc => Effect::Alloc(Class::Device, Held::Device),
        CallKind::VmmCreate => Effect::Alloc(Class::Vmm, Held::Device),
        CallKind::FreeHost => Effect::Free(Class::Host),
        CallKind::HostUnregister => Effect::Free(Class::Registration),
        CallKind::DeviceFree | CallKind::AsyncFree => Effect::Free(Class::Device),
        CallKind::VmmRelease => Effect::Free(Class::Vmm),
        CallKind::VmmMap => Effect::Neither,
    }
}

/// A (library, kind) pair: the library's file name, or "an unknown caller".
pub type Holder = (String, Held);

/// One holder's peak, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    pub bytes: u64,
    pub t_s: f64,
}

/// What was left held at exit by one holder.
#[derive(Debug, Clone, PartialEq)]
pub struct Left {
    pub bytes: u64,
    pub allocations: u64,
}

/// The analysis of one run's events.
#[derive(Debug, Clone, Default)]
pub struct Holders {
    /// Page-locked host memory (pinned + registered) at its peak.
    pub page_locked_peak: Option<Peak>,
    pub peaks: BTreeMap<Holder, Peak>,
    pub never_freed: BTreeMap<Holder, Left>,
    /// Each holder's bytes held after every event that changed them: (seconds, bytes).
    pub steps: BTreeMap<Holder, Vec<(f64, u64)>>,
    /// The largest successful pinning or registration.
    pub largest_pin: Option<AllocEvent>,
    /// Calls that returned an error.
    pub failed: Vec<AllocEvent>,
}

/// The name a page uses for a calling library: its file name.
pub fn library_name(e: &AllocEvent) -> String {
    match &e.library {
        Some(p) => p.rsplit('/').next().unwrap_or(p).to_string(),
        None => "an unknown caller".into(),
    }
}

impl Holders {
    pub fn of(events: &[AllocEvent]) -> Holders {
        let mut h = Holders::default();
        let mut live: HashMap<(u32, Class, u64), (Holder, u64)> = HashMap::new();
        let mut held: BTreeMap<Holder, u64> = BTreeMap::new();
        let mut page_locked = 0u64;
        for e in events {
            if e.result != 0 {
                h.failed.push(e.clone());
                continue;
            }
            let t = e.time_ns as f64 / 1e9;
            let (holder, delta) = match effect(e.call) {
                Effect::Alloc(class, kind) => {
                    let holder = (library_name(e), kind);
                    live.insert((e.pid, class, e.address), (holder.clone(), e.bytes));
                    if kind.page_locked()
                        && h.largest_pin.as_ref().is_none_or(|p| e.bytes > p.bytes)
                    {
                        h.largest_pin = Some(e.clone());
                    }
                    (holder, e.bytes as i128)
                }
                Effect::Free(class) => match live.remove(&(e.pid, class, e.address)) {
                    Some((holder, bytes)) => (holder, -(bytes as i128)),
                    None => continue,
                },
                Effect::Neither => continue,
            };
            let now = held.entry(holder.clone()).or_default();
            *now = (*now as i128 + delta).max(0) as u64;
            let now = *now;
            h.steps.entry(holder.clone()).or_default().push((t, now));
            let peak = h
                .peaks
                .entry(holder.clone())
                .or_insert(Peak { bytes: 0, t_s: t });
            if now > peak.bytes {
                *peak = Peak { bytes: now, t_s: t };
            }
            if holder.1.page_locked() {
                page_locked = (page_locked as i128 + delta).max(0) as u64;
                if h.page_locked_peak
                    .as_ref()
                    .is_none_or(|p| page_locked > p.bytes)
                {
                    h.page_locked_peak = Some(Peak {
                        bytes: page_locked,
                        t_s: t,
                    });
                }
            }
        }
        for (holder, bytes) in live.into_values() {
            let left = h.never_freed.entry(holder).or_insert(Left {
                bytes: 0,
                allocations: 0,
            });
            left.bytes += bytes;
            left.allocations += 1;
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(t_ms: u64, pid: u32, call: CallKind, bytes: u64, address: u64, lib: &str) -> AllocEvent {
        AllocEvent {
            time_ns: t_ms * 1_000_000,
            duration_ns: 1_000,
            pid,
            tid: pid,
            call,
            bytes,
            flags: 0,
            result: 0,
            address,
            library: Some(format!("/opt/lib/{lib}")),
        }
    }

    #[test]
    fn frees_end_the_allocation_of_their_process_and_class() {
        let gib = 1 << 30;
        let events = [
            e(100, 1, CallKind::HostAlloc, gib, 0xa, "libtorch_cuda.so"),
            e(
                200,
                1,
                CallKind::HostAlloc,
                8 << 20,
                0xb,
                "libtorch_cuda.so",
            ),
            e(250, 2, CallKind::FreeHost, 0, 0xa, "libtorch_cuda.so"),
            e(
                300,
                1,
                CallKind::DeviceAlloc,
                2 << 20,
                0xa,
                "libc10_cuda.so",
            ),
            e(400, 1, CallKind::FreeHost, 0, 0xa, "libtorch_cuda.so"),
            e(
                500,
                1,
                CallKind::VmmCreate,
                4 << 20,
                0x77,
                "libggml-cuda.so",
            ),
            e(510, 1, CallKind::VmmMap, 4 << 20, 0x1000, "libggml-cuda.so"),
            e(600, 1, CallKind::VmmRelease, 0, 0x77, "libggml-cuda.so"),
        ];
        let h = Holders::of(&events);
        let torch = ("libtorch_cuda.so".to_string(), Held::Pinned);
        assert_eq!(
            h.peaks[&torch],
            Peak {
                bytes: gib + (8 << 20),
                t_s: 0.2
            }
        );
        assert_eq!(
            h.page_locked_peak,
            Some(Peak {
                bytes: gib + (8 << 20),
                t_s: 0.2
            })
        );
        assert_eq!(
            h.never_freed.keys().cloned().collect::<Vec<_>>(),
            [("libc10_cuda.so".to_string(), Held::Device), torch.clone()]
        );
        assert_eq!(
            h.never_freed[&torch],
            Left {
                bytes: 8 << 20,
                allocations: 1
            }
        );
        assert_eq!(h.largest_pin.map(|p| p.bytes), Some(gib));
        assert_eq!(h.steps[&torch].last(), Some(&(0.4, 8 << 20)));
    }

    #[test]
    fn a_failed_call_holds_nothing_and_is_listed() {
        let mut big = e(100, 1, CallKind::HostAlloc, 64 << 30, 0, "libggml-cuda.so");
        big.result = 2;
        let h = Holders::of(&[big]);
        assert!(h.peaks.is_empty() && h.never_freed.is_empty() && h.largest_pin.is_none());
        assert_eq!(h.failed.len(), 1);
    }
}
