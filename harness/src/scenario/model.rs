//! The validated scenario and the expanded cases the runner executes.
//!
//! `raw.rs` reads TOML into loosely typed tables with source spans, `validate.rs` turns that into a
//! [`Scenario`], and `expand.rs` takes the cartesian product of its sweeps into [`Case`]s.
//!
//! Every type of the case model (host kind, engine, direction, threads, measurement and probe
//! settings, [`Case`], [`Scenario`]) with the small quantities derived from it; the mode, its
//! declaration, the typed [`Route`] it gives a case and the memory that route holds are
//! `modes.rs`'s.

use super::Mode;
use super::axes::{Axes, CaseKey};
pub use crate::cuda::HostFlags;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

use super::named::{named_enum, setting_enum};

setting_enum! {
    /// Where the host side of a transfer lives.
    pub enum HostKind {
        /// Ordinary `malloc`-style memory (page-aligned, touched before timing).
        Pageable,
        /// `cuMemHostAlloc` / `cudaMallocHost`: page-locked by the driver.
        #[default]
        Alloc,
        /// Pageable memory page-locked with `cuMemHostRegister`.
        Register,
        /// `cuMemAllocManaged`: unified memory, migrated on demand.
        Managed,
    }
    names Pageable = "pageable", Alloc = "alloc", Register = "register", Managed = "managed";
}

impl HostKind {
    /// True when the memory is page-locked for the whole case.
    pub fn is_pinned(self) -> bool {
        matches!(self, Self::Alloc | Self::Register)
    }
}

setting_enum! {
    /// What moves the bytes.
    pub enum Engine {
        /// The DMA copy engines (`cuMemcpyAsync`).
        #[default]
        Copy,
        /// A copy kernel on the SMs; with mapped host memory this is zero-copy access.
        Kernel,
        /// A kernel that only reads host memory (zero-copy read bandwidth; direction h2d).
        KernelRead,
        /// A kernel that only writes host memory (zero-copy write bandwidth; direction d2h).
        KernelWrite,
        /// The CPU reads the host buffer (what write-combined memory costs the CPU; direction d2h).
        CpuRead,
        /// The CPU writes the host buffer (direction h2d).
        CpuWrite,
        /// A kernel reads device memory only (device memory bandwidth; no host buffer).
        DeviceRead,
        /// A kernel writes device memory only.
        DeviceWrite,
        /// A kernel copies one device buffer into another.
        DeviceCopy,
        /// The copy engines copy one device buffer into another (`cuMemcpyDtoDAsync`, what
        /// nvbandwidth's `device_local_copy` times).
        DeviceCopyEngine,
        /// An empty kernel: nothing moves (launch and synchronisation cost; no host buffer).
        Empty,
        /// One thread chases a chain of pointers through mapped host memory at a 128-byte stride
        /// (nvbandwidth's `host_device_latency_sm`): zero-copy read latency.
        Chase,
        /// The same over a random single-cycle chain (no stride a prefetcher could follow).
        ChaseRandom,
    }
    names Copy = "copy", Kernel = "kernel", KernelRead = "kernel-read",
        KernelWrite = "kernel-write", CpuRead = "cpu-read", CpuWrite = "cpu-write",
        DeviceRead = "device-read", DeviceWrite = "device-write", DeviceCopy = "device-copy",
        DeviceCopyEngine = "device-copy-engine", Empty = "empty", Chase = "chase",
        ChaseRandom = "chase-random";
}

impl Engine {
    /// True for engines that have no host buffer and move nothing over PCIe: the device memory
    /// engines and the empty kernel.
    pub fn is_device(self) -> bool {
        matches!(
            self,
            Self::DeviceRead
                | Self::DeviceWrite
                | Self::DeviceCopy
                | Self::DeviceCopyEngine
                | Self::Empty
        )
    }
    /// True for engines that run a kernel on host memory the GPU addresses (needs mapped/managed).
    pub fn is_zero_copy(self) -> bool {
        matches!(
            self,
            Self::Kernel | Self::KernelRead | Self::KernelWrite | Self::Chase | Self::ChaseRandom
        )
    }
    /// True for the pointer-chase engines (one dependent load after another: read latency).
    pub fn is_chase(self) -> bool {
        matches!(self, Self::Chase | Self::ChaseRandom)
    }
    /// True for engines where only the CPU touches memory (no transfer over PCIe).
    pub fn is_cpu(self) -> bool {
        matches!(self, Self::CpuRead | Self::CpuWrite)
    }
}

impl Engine {
    /// The one direction this engine measures, and what it does, for engines that have one
    /// (a case of it may give no other direction).
    pub fn implied_direction(self) -> Option<(Direction, &'static str)> {
        match self {
            Self::KernelRead => Some((Direction::H2d, "only reads host memory from a kernel")),
            Self::KernelWrite => Some((Direction::D2h, "only writes host memory from a kernel")),
            Self::CpuRead => Some((
                Direction::D2h,
                "times the CPU reading the host buffer, as after a device-to-host copy",
            )),
            Self::CpuWrite => Some((
                Direction::H2d,
                "times the CPU writing the host buffer, as before a host-to-device copy",
            )),
            Self::Chase | Self::ChaseRandom => Some((
                Direction::H2d,
                "reads host memory from a kernel, one dependent load at a time",
            )),
            Self::Copy | Self::Kernel => None,
            Self::DeviceRead
            | Self::DeviceWrite
            | Self::DeviceCopy
            | Self::DeviceCopyEngine
            | Self::Empty => None,
        }
    }

    /// What it does, in a report's strategy words (`copy engine`, `GPU kernel copies`).
    pub fn words(self) -> &'static str {
        match self {
            Self::Copy => "copy engine",
            Self::Kernel => "SM copy kernel",
            Self::KernelRead => "GPU kernel reads host",
            Self::KernelWrite => "GPU kernel writes host",
            Self::CpuRead => "CPU reads",
            Self::CpuWrite => "CPU writes",
            Self::DeviceRead => "GPU kernel reads",
            Self::DeviceWrite => "GPU kernel writes",
            Self::DeviceCopy => "GPU kernel copies",
            Self::DeviceCopyEngine => "copy engine copies",
            Self::Empty => "empty kernel",
            Self::Chase => "GPU kernel chases pointers in host memory",
            Self::ChaseRandom => "GPU kernel chases random pointers in host memory",
        }
    }
}

setting_enum! {
    pub enum Direction {
        #[default]
        H2d,
        D2h,
        /// H2D and D2H at the same time on two streams.
        Bidirectional,
    }
    names H2d = "h2d", D2h = "d2h", Bidirectional = "bidirectional";
}

/// How long and how often a case is sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Untimed transfers before the first sample.
    pub warmup: u32,
    /// Warm-up goes on until this much wall time has passed too (after `warmup` transfers): for
    /// links that reach their steady rate only after a few hundred ms of traffic.
    #[serde(default)]
    pub warmup_time: Duration,
    pub min_samples: u32,
    pub max_samples: u32,
    /// Stop once the relative spread (MAD / median) of the samples is at or below this.
    pub target_spread: f64,
    /// Stop sampling after this much wall time (once `min_samples` are in).
    pub time_limit: Duration,
    /// Check the data after the transfers.
    pub verify: bool,
    /// Transfers timed together as one sample; 0 means "choose so a sample moves >= 256 MiB".
    pub batch: u32,
    /// Samples of a latency case (each one timed operation, after `warmup` or a tenth of this
    /// many untimed ones, whichever is more); the spread target does not end them early.
    #[serde(default = "default_latency_samples")]
    pub samples: u32,
}

/// Dependent loads in one transfer of a pointer-chase case (`chase`, `chase-random`): one kernel
/// launch follows the chain this many times.
pub const CHASE_STEPS: u64 = 1 << 16;
/// Launches per sample of an empty-kernel case in `mode = "direct"` unless `measure.batch` says.
pub const EMPTY_BATCH: u32 = 1000;

setting_enum! {
    /// How the host waits for the end of a latency sample (`wait`).
    pub enum Wait {
        /// `cuStreamSynchronize` in the run's context (the driver's default scheduling: spin while
        /// there are fewer active contexts than cores, else yield).
        #[default]
        Stream,
        /// `cuStreamSynchronize` in a context of the case's own created with `CU_CTX_SCHED_SPIN`.
        Spin,
        /// The same with `CU_CTX_SCHED_YIELD`.
        Yield,
        /// The same with `CU_CTX_SCHED_BLOCKING_SYNC` (the thread sleeps until woken).
        Blocking,
        /// `cuEventSynchronize` on an end event created with `CU_EVENT_BLOCKING_SYNC`.
        EventBlocking,
        /// Polling `cuStreamQuery` until the stream is done.
        Query,
    }
    names Stream = "stream", Spin = "spin", Yield = "yield", Blocking = "blocking",
        EventBlocking = "event-blocking", Query = "query";
}

/// The samples a latency case takes unless `measure.samples` says otherwise.
pub const LATENCY_SAMPLES: u32 = 1000;

fn default_latency_samples() -> u32 {
    LATENCY_SAMPLES
}

impl Default for Measure {
    fn default() -> Self {
        Self {
            warmup: 2,
            warmup_time: Duration::ZERO,
            min_samples: 5,
            max_samples: 30,
            target_spread: 0.01,
            time_limit: Duration::from_secs(10),
            verify: true,
            batch: 0,
            samples: LATENCY_SAMPLES,
        }
    }
}

/// What is observed around the transfers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probes {
    /// Snapshot every memory observer at every phase.
    pub accounting: bool,
    /// Binary-search the largest device allocation with and without the case's host memory held.
    pub max_alloc: bool,
    /// Allocate pinned chunks until failure or the cap.
    pub pinned_ceiling: bool,
    /// Keep observing this long after the free (WDDM releases shared memory lazily).
    pub hold_after_free: Duration,
    /// How often the observers are read during the hold; at least [`Probes::MIN_HOLD_INTERVAL`].
    pub hold_interval: Duration,
    /// Chunk size of the pinned-ceiling probe (bytes).
    pub ceiling_chunk: u64,
}

impl Probes {
    /// The shortest `hold_interval`: the observers' timeline reads them at most once a
    /// millisecond, and a hold of an hour is then 3.6 million snapshots already.
    pub const MIN_HOLD_INTERVAL: Duration = Duration::from_millis(1);
}

impl Default for Probes {
    fn default() -> Self {
        Self {
            accounting: true,
            max_alloc: false,
            pinned_ceiling: false,
            hold_after_free: Duration::from_secs(2),
            hold_interval: Duration::from_millis(100),
            ceiling_chunk: 256 << 20,
        }
    }
}

/// Host threads for the staging memcpy and the CPU engines: one per CPU the process may use, at
/// most [`AUTO_THREADS_MAX`] (`"auto"`, the default), or a fixed count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Threads {
    #[default]
    Auto,
    Count(u32),
}

/// The most threads `"auto"` picks. Measured with the 16 MiB × 3 ring on 2026-11-30
/// (`scripts/staging-threads.sh` of commit 7acce45): on the 32-CPU two-GPU host 16 and 24
/// threads held 96–98% of pinned in both directions and 32 threads only 91% host-to-GPU (more
/// threads, more hand-off per chunk: a 16 MiB crew copy took 171 µs with 32 threads against
/// 119 µs with 16); on the 16-CPU host 16 threads held 97–99%. One thread copies ~12 GB/s, so
/// 16 feed well over a Gen5 x16 link.
pub const AUTO_THREADS_MAX: u32 = 16;

impl Threads {
    /// The number of threads this means on this machine (`auto`: the CPUs this process may run
    /// on, which honours affinity masks and cgroup quotas, at most [`AUTO_THREADS_MAX`]).
    pub fn resolve(self) -> u32 {
        match self {
            Threads::Count(n) => n.max(1),
            Threads::Auto => available_cpus().min(AUTO_THREADS_MAX),
        }
    }
}

/// The CPUs this process may run on, asked of the OS once: on Linux each question reads the
/// cgroup files, and `plan` resolves the threads of every staged case several times.
fn available_cpus() -> u32 {
    static CPUS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
    })
}

impl fmt::Display for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threads::Auto => f.write_str("auto"),
            Threads::Count(n) => write!(f, "{n}"),
        }
    }
}

/// One fully specified transfer experiment: a point of a scenario's sweep. `Default` gives blank
/// values; the scenario's key table holds the defaults of the keys.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Case {
    pub scenario: String,
    /// The `label` of the `[[case]]` block it came from.
    pub label: String,
    /// Position in the scenario's expanded case list, from 0.
    pub index: usize,
    pub host: HostKind,
    pub flags: HostFlags,
    pub engine: Engine,
    pub direction: Direction,
    pub mode: Mode,
    /// Bytes moved per transfer (per direction).
    pub size: u64,
    /// Staging chunk / registered slice size for `staged` and `register-per-copy`.
    pub chunk: Option<u64>,
    /// Staging buffers in the ring (`staged`).
    pub ring: u32,
    /// CUDA streams used.
    pub streams: u32,
    /// Host threads for the staging memcpy and the CPU engines.
    pub threads: Threads,
    pub measure: Measure,
    pub probes: Probes,
    /// Sweep axes of this case: each swept key with its value as the user wrote it.
    pub axes: Axes,
    /// Apply the free-device-memory guard (false: try the allocation and record the failure).
    pub guard: bool,
    /// Keys of the VRAM-budget experiments: `device_hold`, `cycles`, `pause` (see `vram.rs`).
    #[serde(default)]
    pub vram: super::vram::VramKeys,
    /// How a latency case's host waits for each sample's end.
    #[serde(default)]
    pub wait: Wait,
    /// Layers of the scenario's model this case moves: with a model, `size` is their bytes.
    #[serde(default)]
    pub layers: Option<u32>,
    /// The page cache a file-load case loads from: the file's pages dropped before each load
    /// (`cold`) or read in first (`warm`).
    #[serde(default)]
    pub cache: super::Cache,
    /// The file a file-load case loads (from the scenario's `file` or `model`, or `--model`).
    #[serde(skip)]
    pub source: Option<std::sync::Arc<super::LoadSource>>,
}

impl Case {
    /// The canonical identity used to match cases between runs: scenario, label and every
    /// parameter that changes what is measured (not the sampling settings).
    pub fn key(&self) -> String {
        format!(
            "{}/{}/host={},flags={},engine={},direction={},mode={},size={},chunk={},ring={},streams={},threads={}",
            self.scenario,
            self.label,
            self.host,
            self.flags.label(),
            self.engine,
            self.direction,
            self.mode,
            self.size,
            self.chunk.unwrap_or(0),
            self.ring,
            self.streams,
            self.threads
        ) + &self.vram.key_suffix(self.mode)
            + &if self.wait == Wait::Stream {
                String::new()
            } else {
                format!(",wait={}", self.wait)
            }
            + if self.cache == super::Cache::Cold {
                ",cache=cold"
            } else {
                ""
            }
    }

    /// Directions moved at once: 2 for `bidirectional`, else 1.
    pub(super) fn directions(&self) -> u64 {
        if self.direction == Direction::Bidirectional {
            2
        } else {
            1
        }
    }

    /// Device bytes this case allocates (managed memory counts as host here).
    pub fn device_bytes(&self) -> u64 {
        if self.engine.is_cpu() {
            return 0;
        }
        if matches!(self.engine, Engine::DeviceCopy | Engine::DeviceCopyEngine) {
            return 2 * self.size;
        }
        if self.engine == Engine::Empty || self.engine.is_chase() {
            return 0;
        }
        if self.engine.is_device() {
            return self.size;
        }
        let dirs = self.directions();
        self.size * dirs
    }

    /// Transfers (or launches) per sample: `measure.batch`, else enough transfers to move
    /// 256 MiB (at most 256); the empty kernel, which moves nothing, [`EMPTY_BATCH`] launches; the
    /// pointer chase one launch.
    pub fn batch(&self) -> u32 {
        if self.mode.declaration().reads_file {
            // Each load starts from the page cache its case asks for.
            return 1;
        }
        if self.measure.batch > 0 {
            return self.measure.batch;
        }
        if self.engine == Engine::Empty {
            return EMPTY_BATCH;
        }
        if self.engine.is_chase() {
            return 1;
        }
        (256 * crate::units::MIB)
            .div_ceil(self.size.max(1))
            .clamp(1, 256) as u32
    }

    /// A short human label: `alloc/mapped copy h2d 64 MiB`.
    pub fn title(&self) -> String {
        let mut s = format!("{} {}", self.label, self.direction);
        for (k, v) in self.axes.iter() {
            if k != CaseKey::Direction {
                s.push_str(&format!(" {k}={v}"));
            }
        }
        s
    }
}

/// A validated scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    /// The question the scenario answers.
    pub description: String,
    /// Where it was read from (for messages and the report).
    pub path: String,
    /// Read from the copy shipped inside pinscope ([`super::shipped`]), not from a file: `path`
    /// is then the repository path that copy came from.
    pub shipped: bool,
    /// The file's text, kept for the JSON sidecar and the report.
    pub text: String,
    pub cases: Vec<Case>,
    /// Expectations checked after the run (see `claims`).
    pub claims: Vec<super::Claim>,
    /// Results derived from case metrics after the run (see `claims::derive`).
    pub derived: Vec<super::Derived>,
    /// The GPUs to run on, all at once (`devices = "all"`); `None`: `--device`, else GPU 0.
    pub devices: Option<crate::platform::DeviceSelection>,
    /// `model = "path"` and `file = "path"` as written in the file.
    pub files: super::FilePaths,
    /// The model file whose tensor sizes the cases with `layers` move (`model`, or `--model`).
    pub model: Option<super::ModelWorkload>,
}

setting_enum! {
    /// Which way the bytes of one row went. A bidirectional case gives three rows: h2d, d2h, sum.
    pub enum Lane {
        #[default]
        H2d,
        D2h,
        Sum,
        /// Inside device memory (the `device-*` engines: nothing crosses PCIe).
        Device,
    }
    names H2d = "h2d", D2h = "d2h", Sum = "sum", Device = "device";
}

impl Lane {
    /// The lane of a one-way transfer: host-to-device when `h2d`, else device-to-host.
    pub fn one_way(h2d: bool) -> Lane {
        if h2d { Lane::H2d } else { Lane::D2h }
    }
}
