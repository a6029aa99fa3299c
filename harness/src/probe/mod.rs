//! Memory observers: every way pinscope can see what a transfer strategy costs in memory.
//!
//! Each observer sits behind [`Observer`], one file each. The Windows-only observers (DXGI, PDH,
//! process counters) live in `windows/` and are swapped for stubs elsewhere by one `#[path]`
//! module, so callers never see a `cfg`. An observer that cannot run here says why
//! ([`Observer::unavailable`]) and the run goes on without it; a read that fails is recorded in
//! the [`Snapshot`], never fatal.
//!
//! Each observer is declared in [`crate::accounting::OBSERVERS`] (its name and noise) and set up
//! in [`Observers::for_this_machine`]; its readings that are not memory held, or have words of
//! their own, in [`crate::accounting::READINGS`]. Metric names (observer `.` metric), all bytes
//! unless noted:
//! * `cuda`: `free`, `total`, `used` (cuMemGetInfo)
//! * `nvml`: `used`, `free`, `total`, `reserved`, `process_used`; `pcie_gen`, `pcie_width`,
//!   `pcie_gen_max`, `pcie_width_max` (counts)
//! * `procfs`: `vm_rss`, `vm_hwm`, `vm_lck`, `vm_pin` (/proc/self/status); `mem_total`,
//!   `mem_available`, `committed_as`, `mlocked`, `unevictable`, `anon_pages`, `anon_huge_pages`
//!   (/proc/meminfo)
//! * `cgroup`: `current`, `max`, `peak` (this process's cgroup v2 `memory.*`)
//! * `dxgi`: `local_usage`, `local_budget`, `local_available_for_reservation`,
//!   `local_reservation`, and the same four `nonlocal_*` (NON_LOCAL = Task Manager's "shared")
//! * `pdh`: `process_dedicated`, `process_shared`, `process_total_committed`,
//!   `adapter_dedicated`, `adapter_shared`
//! * `process`: `working_set`, `peak_working_set`, `private_usage`, `pagefile_usage`
//! * `ledger`: `pinned_alloc`, `registered`, `managed`, `device`, `staging`, `pinned`

use crate::accounting::{Metric, ObserverId};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub(crate) mod cgroup;
mod cuda;
mod ledger;
mod nvml;
mod nvml_processes;
mod nvml_settings;
pub mod pin_limits;
mod procfs;

#[cfg(windows)]
#[path = "windows/mod.rs"]
mod os;
#[cfg(not(windows))]
#[path = "stub.rs"]
mod os;

pub use cgroup::{CgroupLevel, CgroupObserver};
pub use cuda::{CudaMemFn, CudaObserver};
pub use ledger::{Ledger, LedgerCategory};
pub use nvml::{NvmlFacts, NvmlObserver, nvml_facts, nvml_memory};
pub use nvml_processes::{NvmlProcesses, ProcessMemory};
pub use nvml_settings::{NvmlSettings, fill_under_load_without_nvml, fill_without_nvml};
/// The named pipe `observe` receives the injection library's events on (Windows).
#[cfg(windows)]
pub use os::pipe;
pub use os::{
    commit_observer, dxgi_adapters, dxgi_of_first_adapter, fill_windows_settings, pdh_of_adapters,
    pdh_of_process, process_parents, running_under_wine,
};
pub use pin_limits::{PinBudget, PinLimits, Predictor, pin_budget};
pub use procfs::{ProcfsObserver, parse_meminfo, parse_process_status, parse_status};

/// An observer's availability on the machine that ran.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ObserverStatus {
    #[serde(rename = "name")]
    pub observer: ObserverId,
    pub available: bool,
    /// Why not, when unavailable.
    pub reason: Option<String>,
}

/// What a reading's number counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Count,
    Percent,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Count => "count",
            Unit::Percent => "percent",
        }
    }

    /// The unit [`Unit::name`] names.
    pub fn from_name(name: &str) -> Option<Unit> {
        [Unit::Bytes, Unit::Count, Unit::Percent]
            .into_iter()
            .find(|u| u.name() == name)
    }
}

/// One value an observer saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// Observer-local metric name, snake_case (`used`, `vm_rss`, `nonlocal_usage`).
    pub metric: String,
    pub value: f64,
    pub unit: Unit,
}

impl Reading {
    pub fn bytes(metric: &str, value: u64) -> Reading {
        Reading {
            metric: metric.into(),
            value: value as f64,
            unit: Unit::Bytes,
        }
    }
    pub fn count(metric: &str, value: u64) -> Reading {
        Reading {
            metric: metric.into(),
            value: value as f64,
            unit: Unit::Count,
        }
    }
}

/// A source of memory numbers.
pub trait Observer: Send {
    /// Which observer it is.
    fn id(&self) -> ObserverId;
    /// `Some(reason)` when it cannot run on this machine; never fails the run. Most observers
    /// can always run.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// A snapshot of its values. `Err` = this read failed (recorded, not fatal).
    fn read(&mut self) -> Result<Vec<Reading>, String>;
    /// Partial problems of the last successful [`Observer::read`] (one metric missing while
    /// the others were read, e.g. NVML's per-process memory under WDDM/WSL2). Drained by the
    /// caller; default none.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// What it is watching, for `pinscope info` (the DXGI adapter, the NVML device).
    fn detail(&self) -> Option<String> {
        None
    }
}

/// When in a case a snapshot was taken (the samples file's `index` of a `phase:` reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Moment {
    /// Before the case allocated anything: the baseline of every delta.
    #[default]
    Before,
    /// The host memory allocated and first touched, no device memory yet.
    Host,
    /// Host and device memory allocated and first touched.
    Device,
    /// After the transfers.
    Transfer,
    /// Right after the case's memory was freed: the start of the hold after free.
    Free,
    /// A point of the hold after free.
    Timeline,
    /// Written by earlier versions only: after the host and device memory were allocated,
    /// before the first touch (the published runs of 2026-11-30 hold it).
    Alloc,
    /// Written by earlier versions only: after the first touch (now [`Moment::Device`]).
    Touch,
}

impl Moment {
    /// Every moment a samples file may name, the ones taken now first.
    pub const ALL: [Moment; 8] = [
        Moment::Before,
        Moment::Host,
        Moment::Device,
        Moment::Transfer,
        Moment::Free,
        Moment::Timeline,
        Moment::Alloc,
        Moment::Touch,
    ];

    /// The name the samples file writes.
    pub const fn name(self) -> &'static str {
        match self {
            Moment::Before => "before",
            Moment::Host => "host",
            Moment::Device => "device",
            Moment::Transfer => "transfer",
            Moment::Free => "free",
            Moment::Timeline => "timeline",
            Moment::Alloc => "alloc",
            Moment::Touch => "touch",
        }
    }

    /// The moment named `name` in a samples file.
    pub fn parse(name: &str) -> Option<Moment> {
        Moment::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl std::fmt::Display for Moment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// All observers' readings at one moment of a case.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub phase: Moment,
    /// Milliseconds since the [`Observers`] set was created.
    pub t_ms: f64,
    /// `(observer, reading)`.
    pub readings: Vec<(ObserverId, Reading)>,
    /// `(observer, message)`: failed reads and partial problems.
    pub errors: Vec<(ObserverId, String)>,
}

impl Snapshot {
    /// The value of `observer.metric`, if it was read.
    pub fn value(&self, observer: ObserverId, metric: &str) -> Option<f64> {
        self.readings
            .iter()
            .find(|(o, r)| *o == observer && r.metric == metric)
            .map(|(_, r)| r.value)
    }

    fn keyed(&self) -> BTreeMap<(ObserverId, &str), &Reading> {
        self.readings
            .iter()
            .map(|(o, r)| ((*o, r.metric.as_str()), r))
            .collect()
    }
}

/// A DXGI adapter as `IDXGIFactory1::EnumAdapters1` describes it (Windows only).
#[derive(Debug, Clone, PartialEq)]
pub struct DxgiAdapter {
    pub description: String,
    /// LowPart (u32 LE) then HighPart (i32 LE), as `cuDeviceGetLuid` returns it.
    pub luid: [u8; 8],
    /// `DXGI_ADAPTER_FLAG_SOFTWARE` (the Basic Render Driver, WARP).
    pub software: bool,
    pub dedicated_video_memory: u64,
    pub shared_system_memory: u64,
}

/// What the CUDA layer knows about the GPU under test, handed to [`Observers::for_this_machine`].
#[derive(Default)]
pub struct GpuContext {
    /// `GPU-xxxxxxxx-...` (the `GPU-` prefix is added when missing).
    pub uuid: Option<String>,
    /// Adapter LUID as `cuDeviceGetLuid` returns it: LowPart (u32 LE) then HighPart (i32 LE).
    pub luid: Option<[u8; 8]>,
    /// `cuMemGetInfo` on the case's context: `(free, total)` bytes.
    pub cuda_mem: Option<CudaMemFn>,
    /// pinscope's own count of what it allocated.
    pub ledger: Ledger,
}

/// The set of observers a run uses.
pub struct Observers {
    list: Vec<Box<dyn Observer>>,
    start: Instant,
}

impl Observers {
    /// Every observer pinscope knows, set up for this machine: cuda, nvml, procfs, cgroup, dxgi,
    /// pdh, process, ledger. Those that cannot run here stay in the set as unavailable, with a reason.
    pub fn for_this_machine(ctx: GpuContext) -> Observers {
        let mut list: Vec<Box<dyn Observer>> = vec![
            Box::new(CudaObserver::new(ctx.cuda_mem)),
            NvmlObserver::open(ctx.uuid.as_deref()),
            Box::new(ProcfsObserver::new()),
            Box::new(CgroupObserver::new()),
        ];
        list.extend(os::observers(ctx.luid));
        list.push(Box::new(ctx.ledger));
        Observers::new(list)
    }

    /// A set of the given observers (tests, or a runner that wants fewer).
    pub fn new(list: Vec<Box<dyn Observer>>) -> Observers {
        Observers {
            list,
            start: Instant::now(),
        }
    }

    /// Reads every available observer once.
    pub fn snapshot(&mut self, phase: Moment) -> Snapshot {
        let mut snap = Snapshot {
            phase,
            t_ms: self.start.elapsed().as_secs_f64() * 1e3,
            ..Default::default()
        };
        for obs in &mut self.list {
            if obs.unavailable().is_some() {
                continue;
            }
            let id = obs.id();
            match obs.read() {
                Ok(readings) => snap.readings.extend(readings.into_iter().map(|r| (id, r))),
                Err(e) => snap.errors.push((id, e)),
            }
            snap.errors
                .extend(obs.take_notes().into_iter().map(|n| (id, n)));
        }
        snap
    }

    /// Each observer's availability, for the results sidecar.
    pub fn statuses(&self) -> Vec<ObserverStatus> {
        self.list
            .iter()
            .map(|o| {
                let reason = o.unavailable();
                ObserverStatus {
                    observer: o.id(),
                    available: reason.is_none(),
                    reason,
                }
            })
            .collect()
    }
}

/// `(observer, metric) -> after - before`, for readings taken in both snapshots.
pub fn delta<'a>(before: &Snapshot, after: &'a Snapshot) -> Vec<((ObserverId, &'a str), f64)> {
    let b = before.keyed();
    after
        .keyed()
        .into_iter()
        .filter_map(|(k, a)| b.get(&k).map(|r| (k, a.value - r.value)))
        .collect()
}

/// The CSV's accounting metrics ([`crate::accounting::METRICS`], each from its first source
/// read) as MiB deltas between two snapshots. A metric whose sources were not read in both
/// snapshots is left out.
pub fn column_values(before: &Snapshot, after: &Snapshot) -> Vec<(Metric, f64)> {
    let d: BTreeMap<(ObserverId, &str), f64> = delta(before, after).into_iter().collect();
    crate::accounting::METRICS
        .iter()
        .filter_map(|m| {
            let v = m.sources.iter().find_map(|s| d.get(s))?;
            Some((m.metric, v / crate::units::MIB as f64))
        })
        .collect()
}

/// Samples every `interval` until `hold` has passed (or `stop` is set): the hold-after-free
/// timeline. The first sample is taken at once, the last at `hold`; phase `timeline`.
pub fn timeline(
    obs: &mut Observers,
    hold: Duration,
    interval: Duration,
    stop: &AtomicBool,
) -> Vec<Snapshot> {
    let start = Instant::now();
    let interval = interval.max(Duration::from_millis(1));
    let mut out = vec![obs.snapshot(Moment::Timeline)];
    let mut next = interval;
    while !stop.load(Ordering::Relaxed) {
        let target = next.min(hold);
        // Sleep in short slices so a stop request is seen quickly.
        loop {
            let now = start.elapsed();
            if now >= target || stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep((target - now).min(Duration::from_millis(50)));
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        out.push(obs.snapshot(Moment::Timeline));
        if target >= hold {
            break;
        }
        next += interval;
    }
    out
}

/// One line per observer, `name: available` (with what it watches, when it says) or
/// `name: unavailable: <reason>`, for `pinscope info`.
pub fn describe(obs: &Observers) -> String {
    obs.list
        .iter()
        .map(|o| match (o.unavailable(), o.detail()) {
            (Some(r), _) => format!("{}: unavailable: {r}\n", o.id()),
            (None, Some(d)) => format!("{}: available: {d}\n", o.id()),
            (None, None) => format!("{}: available\n", o.id()),
        })
        .collect()
}

/// An observer that cannot run here: it does not exist on this OS (the DXGI observer on Linux,
/// ...), or it could not open what it watches (see [`opened`]).
pub struct Unsupported {
    id: ObserverId,
    reason: String,
}

impl Unsupported {
    pub fn new(id: ObserverId, reason: impl Into<String>) -> Unsupported {
        Unsupported {
            id,
            reason: reason.into(),
        }
    }
}

/// An observer of something it opens first (an NVML device, a DXGI adapter, a PDH query): the
/// observer `make` builds from what was opened, or, when opening failed, the observer `id`
/// unavailable with the reason (every read fails with it too).
pub(crate) fn opened<T, O: Observer + 'static>(
    id: ObserverId,
    opened: Result<T, String>,
    make: impl FnOnce(T) -> O,
) -> Box<dyn Observer> {
    match opened {
        Ok(v) => Box::new(make(v)),
        Err(why) => Box::new(Unsupported::new(id, why)),
    }
}

impl Observer for Unsupported {
    fn id(&self) -> ObserverId {
        self.id
    }
    fn unavailable(&self) -> Option<String> {
        Some(self.reason.clone())
    }
    fn read(&mut self) -> Result<Vec<Reading>, String> {
        Err(self.reason.clone())
    }
}

#[cfg(test)]
mod tests;
