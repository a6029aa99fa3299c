//! The budget record: what `pinscope budget` measured (JSON, [`SCHEMA_VERSION`]), what the probe
//! child writes line by line while it measures, and the safe amounts derived from the
//! measurements by one stated rule. docs/budget.md describes every field.

use super::deadline::ChildEnd;
use super::search;
use crate::cuda::{CudaError, ErrorCode};
use crate::probe::PinBudget;
use crate::probe::pin_limits::HEADROOM_KEPT;
use serde::{Deserialize, Serialize};

/// Version of the budget record; a reader refuses another.
pub const SCHEMA_VERSION: u32 = 1;

/// The rule that turns measurements into safe amounts, as the record states it.
pub const SAFE_RULE: &str = "per kind, the smallest amount found at any device-memory hold level, less 10%; at_least when the probe's own cap or deadline ended it rather than a refusal (the machine allows more)";

/// A driver call that refused: which call, and its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub call: String,
    pub code: ErrorCode,
}

impl From<CudaError> for Refusal {
    fn from(e: CudaError) -> Refusal {
        Refusal {
            call: e.call.to_string(),
            code: e.code,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed with {}", self.call, self.code)
    }
}

/// What ended one probe.
pub type Ended = search::Ended<Refusal>;

/// The four probes, each run at every hold level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// The largest single `cuMemHostAlloc`.
    HostAlloc,
    /// The largest single `cuMemHostRegister` of a plain (touched) allocation.
    HostRegister,
    /// The most bytes pinned together, in `cuMemHostAlloc` chunks.
    Total,
    /// The most small ranges registered together (`cuMemHostRegister` each).
    Registrations,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 4] = [
        ProbeKind::HostAlloc,
        ProbeKind::HostRegister,
        ProbeKind::Total,
        ProbeKind::Registrations,
    ];

    /// What the probe finds, in words.
    pub fn title(self) -> &'static str {
        match self {
            ProbeKind::HostAlloc => "largest single cuMemHostAlloc",
            ProbeKind::HostRegister => "largest single cuMemHostRegister",
            ProbeKind::Total => "total pinned in chunks",
            ProbeKind::Registrations => "small ranges registered",
        }
    }
}

/// What a probe found: bytes, or a count of registered ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Found {
    Bytes(u64),
    Ranges(u64),
}

impl Found {
    pub fn amount(self) -> u64 {
        match self {
            Found::Bytes(n) | Found::Ranges(n) => n,
        }
    }
}

/// What the process could still do right after a refusal (or after the error was read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterCheck {
    /// A 1 MiB `cuMemHostAlloc`: `None` when it worked.
    pub pin_1mib_error: Option<Refusal>,
    /// An empty kernel launched and waited for: `None` when it worked.
    pub kernel_error: Option<Refusal>,
}

impl AfterCheck {
    pub fn worked(&self) -> bool {
        self.pin_1mib_error.is_none() && self.kernel_error.is_none()
    }
}

/// Whether a refused pin left the process able to pin and launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recoverable {
    /// The next pin and kernel launch worked at once.
    AtOnce,
    /// They failed until the error was read (`cuCtxSynchronize`), then worked.
    AfterReadingTheError,
    /// They still failed after the error was read: the process is poisoned.
    No,
}

/// The after-effect of a refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    pub recoverable: Recoverable,
    pub at_once: AfterCheck,
    /// What reading the error (`cuCtxSynchronize`) returned, when it was read: `None` inside
    /// means it returned success.
    pub read: Option<Option<Refusal>>,
    pub after_read: Option<AfterCheck>,
}

/// One probe at one hold level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    pub kind: ProbeKind,
    /// Share of free device memory held by `cuMemAlloc` during the probe (percent).
    pub hold_percent: u8,
    pub found: Found,
    pub ended: Ended,
    /// Sizes tried (largest-single probes) or pieces pinned (total, registrations).
    pub tries: u64,
    pub seconds: f64,
    /// After a refusal: whether the process could still pin and launch.
    pub after_refusal: Option<Recovery>,
}

/// Device memory held for one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    pub percent: u8,
    pub device_free_bytes: u64,
    pub device_total_bytes: u64,
    pub held_bytes: u64,
    /// Why less than asked was held (the level's probes ran with what was held).
    pub error: Option<Refusal>,
}

/// The GPU the probe ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuName {
    pub index: u32,
    pub name: String,
    pub uuid: String,
}

/// What the probe child is told to do (passed to it as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub device: u32,
    /// Shares of free device memory to hold, in percent, one level after another.
    pub hold_percents: Vec<u8>,
    pub kinds: Vec<ProbeKind>,
    /// The most bytes any probe pins (see [`Bounds`]).
    pub limit_bytes: u64,
    /// The largest-single searches stop when known-good and refused sizes are this close.
    pub resolution_bytes: u64,
    /// Chunk of the total probe.
    pub chunk_bytes: u64,
    /// Size of each range of the registrations probe (ranges are one range apart).
    pub range_bytes: u64,
    /// The most ranges the registrations probe registers.
    pub max_registrations: u64,
    /// The child starts no new pin after this many milliseconds.
    pub child_deadline_ms: u64,
}

/// One line the probe child writes (JSON), as soon as it knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum ChildLine {
    Opened {
        gpu: GpuName,
    },
    Hold(Hold),
    Probe(Box<ProbeResult>),
    /// The child could not go on: one sentence.
    Failed {
        sentence: String,
    },
}

/// The byte cap in force and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// `--cap`.
    pub cap_bytes: u64,
    /// MemAvailable when the probe started (`None`: not readable here).
    pub mem_available_bytes: Option<u64>,
    /// The cgroup's memory.max − memory.current when the probe started (`None`: no limit, or
    /// not readable; records of earlier versions have none).
    #[serde(default)]
    pub cgroup_headroom_bytes: Option<u64>,
    /// What no probe pins past.
    pub limit_bytes: u64,
    pub rule: String,
}

/// A safe amount of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafeAmount {
    /// Bytes, or ranges for `registrations`.
    pub value: u64,
    /// The probe's cap or deadline ended it: the machine allows more.
    pub at_least: bool,
    /// The hold level the smallest amount was found at.
    pub hold_percent: u8,
}

/// Safe amounts per kind, by [`SAFE_RULE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Safe {
    pub rule: String,
    pub host_alloc_bytes: Option<SafeAmount>,
    pub host_register_bytes: Option<SafeAmount>,
    pub total_bytes: Option<SafeAmount>,
    pub registrations: Option<SafeAmount>,
}

impl Safe {
    /// The safe amounts of `probes`: a kind with no probe that found anything has none.
    pub fn of(probes: &[ProbeResult]) -> Safe {
        let of = |kind: ProbeKind| {
            probes
                .iter()
                .filter(|p| p.kind == kind && !(p.ended == Ended::Deadline && p.tries == 0))
                .min_by_key(|p| p.found.amount())
                .map(|p| SafeAmount {
                    value: (p.found.amount() as f64 * (1.0 - HEADROOM_KEPT)) as u64,
                    at_least: !matches!(p.ended, Ended::Refused { .. }),
                    hold_percent: p.hold_percent,
                })
        };
        Safe {
            rule: SAFE_RULE.into(),
            host_alloc_bytes: of(ProbeKind::HostAlloc),
            host_register_bytes: of(ProbeKind::HostRegister),
            total_bytes: of(ProbeKind::Total),
            registrations: of(ProbeKind::Registrations),
        }
    }
}

/// What `pinscope budget` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetRecord {
    pub pinscope_version: String,
    pub schema_version: u32,
    /// The exit status the command ends with.
    pub exit_code: i32,
    /// Why no GPU could be used, when none could.
    pub gpu_unavailable: Option<String>,
    pub host: String,
    /// When the probe started, RFC 3339 UTC.
    pub time: String,
    pub gpu: Option<GpuName>,
    pub deadline_s: f64,
    pub bounds: Bounds,
    pub plan: Plan,
    pub safe: Safe,
    pub holds: Vec<Hold>,
    pub probes: Vec<ProbeResult>,
    /// How the probe child ended (`None`: none was started).
    pub child: Option<ChildEnd>,
    /// Why the child stopped before measuring everything it was asked to, in one sentence.
    pub child_failed: Option<String>,
    /// MemAvailable once the child was gone (it held no pinned memory by then).
    pub mem_available_after_bytes: Option<u64>,
    pub seconds: f64,
    /// The live predictor's reading beside the measurement.
    pub predictor: PinBudget,
}

#[cfg(test)]
mod tests;
