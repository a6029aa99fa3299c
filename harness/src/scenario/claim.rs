//! Claims and derived results as a scenario states them (`[[claim]]`, `[[derived]]`), typed when
//! the file is validated: the metric a claim reads ([`ClaimMetric`], with its unit), what its
//! bound is relative to ([`Reference`]) and the platforms it applies to ([`PlatformTag`]).
//! `claims` evaluates them after a run.

use std::fmt;

use super::named::named_enum;
use crate::accounting;

named_enum! {
    /// How a claim's value is compared with its bound (written as the symbol).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Op {
        Ge,
        Le,
        Gt,
        Lt,
    }
    names Ge = ">=", Le = "<=", Gt = ">", Lt = "<";
}

impl Op {
    pub fn holds(self, lhs: f64, rhs: f64) -> bool {
        match self {
            Op::Ge => lhs >= rhs,
            Op::Le => lhs <= rhs,
            Op::Gt => lhs > rhs,
            Op::Lt => lhs < rhs,
        }
    }
}

/// The unit of a claim metric's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    GbPerS,
    Ms,
    Us,
    Mib,
    /// A count of things, or 1/0 for yes/no.
    Count,
}

named_enum! {
    /// A claim metric read from one result row: a numeric column of the results CSV,
    /// `max_alloc_drop_mib` (made from two columns), or a fact of the row's status. The order of
    /// the names is the order suggestions weigh them in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum RowMetric {
        BwMedianGbs,
        TimeMedianMs,
        WallMedianMs,
        AllocMs,
        RegisterMs,
        UnregisterMs,
        FreeMs,
        MaxAllocHeldMib,
        MaxAllocHostMib,
        MaxAllocFreeMib,
        /// The max-alloc probe's free device memory minus the host memory only held.
        MaxAllocDropMib,
        PinnedCeilingMib,
        LatMinUs,
        LatP50Us,
        LatP90Us,
        LatP99Us,
        LatEventP50Us,
        /// 1 when the case failed for want of device memory, else 0 (read from the status).
        OutOfMemory,
        /// How many copies of a churn case came back wrong (read from the status).
        MismatchedCopies,
    }
    names BwMedianGbs = "bw_median_gbs", TimeMedianMs = "time_median_ms",
        WallMedianMs = "wall_median_ms", AllocMs = "alloc_ms", RegisterMs = "register_ms",
        UnregisterMs = "unregister_ms", FreeMs = "free_ms", MaxAllocHeldMib = "max_alloc_held_mib",
        MaxAllocHostMib = "max_alloc_host_mib", MaxAllocFreeMib = "max_alloc_free_mib",
        MaxAllocDropMib = "max_alloc_drop_mib", PinnedCeilingMib = "pinned_ceiling_mib",
        LatMinUs = "lat_min_us", LatP50Us = "lat_p50_us", LatP90Us = "lat_p90_us",
        LatP99Us = "lat_p99_us", LatEventP50Us = "lat_event_p50_us",
        OutOfMemory = "out_of_memory", MismatchedCopies = "mismatched_copies";
}

impl RowMetric {
    pub fn unit(self) -> Unit {
        use RowMetric::*;
        match self {
            BwMedianGbs => Unit::GbPerS,
            TimeMedianMs | WallMedianMs | AllocMs | RegisterMs | UnregisterMs | FreeMs => Unit::Ms,
            MaxAllocHeldMib | MaxAllocHostMib | MaxAllocFreeMib | MaxAllocDropMib
            | PinnedCeilingMib => Unit::Mib,
            LatMinUs | LatP50Us | LatP90Us | LatP99Us | LatEventP50Us => Unit::Us,
            OutOfMemory | MismatchedCopies => Unit::Count,
        }
    }

    /// Whether it is read from the row's status, so a failed row is judged, not passed over (a
    /// failure is the answer it is about).
    pub fn reads_status(self) -> bool {
        matches!(self, RowMetric::OutOfMemory | RowMetric::MismatchedCopies)
    }
}

/// A metric a `[[claim]]` or `[[derived]]` names: one of a row, or an accounting delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimMetric {
    Row(RowMetric),
    /// `d_<phase>_<metric>_mib`: the metric's change at the phase against `before`.
    Accounting(accounting::Phase, accounting::Metric),
}

impl ClaimMetric {
    /// The metric written as `name`.
    pub fn parse(name: &str) -> Option<ClaimMetric> {
        RowMetric::parse(name)
            .map(ClaimMetric::Row)
            .or_else(|| accounting::parse_column(name).map(|(p, m)| ClaimMetric::Accounting(p, m)))
    }

    /// Every claim metric: the row metrics, then the accounting family in CSV order.
    pub fn all() -> impl Iterator<Item = ClaimMetric> {
        RowMetric::ALL
            .into_iter()
            .map(ClaimMetric::Row)
            .chain(accounting::columns().map(|(p, m)| ClaimMetric::Accounting(p, m)))
    }

    pub fn unit(self) -> Unit {
        match self {
            ClaimMetric::Row(m) => m.unit(),
            ClaimMetric::Accounting(..) => Unit::Mib,
        }
    }

    /// See [`RowMetric::reads_status`].
    pub fn reads_status(self) -> bool {
        matches!(self, ClaimMetric::Row(m) if m.reads_status())
    }
}

impl fmt::Display for ClaimMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaimMetric::Row(m) => f.pad(m.name()),
            ClaimMetric::Accounting(p, m) => f.pad(&accounting::column(*p, *m)),
        }
    }
}

/// What a claim's bound is a factor of (`of = ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// `pinned_bytes`: the case's page-locked bytes (in MiB for a metric in MiB).
    PinnedBytes,
    /// `size`: the case's transfer size (in MiB for a metric in MiB).
    Size,
    /// `<label>.<metric>`: the metric of another case (its first lane).
    Case { label: String, metric: ClaimMetric },
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reference::PinnedBytes => f.write_str("pinned_bytes"),
            Reference::Size => f.write_str("size"),
            Reference::Case { label, metric } => write!(f, "{label}.{metric}"),
        }
    }
}

named_enum! {
    /// A platform a claim may be limited to: a platform family, or native Windows with a driver
    /// model.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum PlatformTag {
        Linux,
        Wsl2,
        Windows,
        WindowsWddm,
        WindowsTcc,
    }
    names Linux = "linux", Wsl2 = "wsl2", Windows = "windows", WindowsWddm = "windows-wddm",
        WindowsTcc = "windows-tcc";
}

/// One expectation, as validated from a `[[claim]]` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The claim in words, with its source ("article 000: ...").
    pub text: String,
    /// Label of the case whose result is examined.
    pub case: String,
    /// Metric of that case.
    pub metric: ClaimMetric,
    pub op: Op,
    /// The bound: `factor × reference`, or `factor` alone when there is no reference.
    pub factor: f64,
    /// `None`: absolute bound.
    pub relative_to: Option<Reference>,
    /// Platforms where the claim applies; empty = all.
    pub platforms: Vec<PlatformTag>,
}

/// A number computed from case results after a run, e.g. "model load time" or "tokens/s ceiling":
/// `scale × Σ metric(cases)`, or `scale / Σ metric(cases)` when `invert`.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub text: String,
    /// Case labels whose metric is summed (the first lane row of each).
    pub cases: Vec<String>,
    pub metric: ClaimMetric,
    pub scale: f64,
    pub invert: bool,
    /// Unit shown after the value (`s`, `ms`, `tokens/s`).
    pub unit: String,
}

impl Derived {
    /// How the value is computed, in words: which metric of which cases, summed, then scaled or
    /// inverted (`time_median_ms of `pageable` + `ring` + `pinned`, summed, × 0.001, in s`), so a
    /// sum is never read as one case's value.
    pub fn formula(&self) -> String {
        let cases: Vec<String> = self.cases.iter().map(|c| format!("`{c}`")).collect();
        let (of, joined) = (&self.metric, cases.join(" + "));
        let mut out = if cases.len() > 1 {
            format!("{of} of {joined}, summed")
        } else {
            format!("{of} of {joined}")
        };
        match (self.invert, self.scale) {
            (true, k) => out = format!("{k} / ({out})"),
            (false, k) if k != 1.0 => out.push_str(&format!(", × {k}")),
            _ => {}
        }
        if !self.unit.is_empty() {
            out.push_str(&format!(", in {}", self.unit));
        }
        out
    }
}
