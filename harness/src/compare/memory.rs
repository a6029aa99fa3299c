//! What page-locked memory cost, as one typed finding: which phase a row recorded the host
//! memory alone in ([`HostPhase`]), and, for the largest page-locked allocation of a set of runs,
//! what each run's observers saw ([`MemoryFinding`]). `compare` (every format) and `report` (its
//! answer and its platform page) render this one finding, so they cannot say different things
//! about the same file.

use crate::accounting::{Metric, Phase};
use crate::results::{ResultSet, Row};
use crate::units::format_size;
use serde::Serialize;

/// Metrics whose change is device memory.
const DEVICE_SIDE: &[Metric] = &[Metric::Shared, Metric::Dedicated, Metric::CudaUsed];

/// The metrics a memory sentence names.
const NAMED: &[Metric] = &[
    Metric::Shared,
    Metric::Dedicated,
    Metric::CudaUsed,
    Metric::ProcRss,
    Metric::LedgerPinned,
];

/// Where a row holds what its host memory alone cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostPhase {
    /// The `host` phase (`d_host_*`): allocated and first touched before any device memory.
    Recorded,
    /// No `host` phase, but the case holds no device memory: its `alloc` phase is the host
    /// memory alone.
    AllocIsHostAlone,
    /// Only the `alloc` phase, with the case's device memory in it: the run did not record the
    /// host memory alone (written before pinscope had the host phase).
    NotRecorded,
    /// No accounting delta at all (the case did not finish, or no observer was available).
    NoAccounting,
}

impl HostPhase {
    pub fn of(r: &Row) -> HostPhase {
        if r.has_accounting_at(Phase::Host) {
            HostPhase::Recorded
        } else if !r.has_accounting_at(Phase::Alloc) {
            HostPhase::NoAccounting
        } else if r.device_bytes == 0 {
            HostPhase::AllocIsHostAlone
        } else {
            HostPhase::NotRecorded
        }
    }

    /// The host memory's own cost is known: recorded on its own, or alone in the case.
    pub fn known(self) -> bool {
        matches!(self, HostPhase::Recorded | HostPhase::AllocIsHostAlone)
    }

    /// As the compare CSV writes it.
    pub fn name(self) -> &'static str {
        match self {
            HostPhase::Recorded => "recorded",
            HostPhase::AllocIsHostAlone => "alloc-is-host-alone",
            HostPhase::NotRecorded => "not-recorded",
            HostPhase::NoAccounting => "",
        }
    }
}

/// MiB `metric` moved when the case's host memory alone was allocated and first touched.
fn host_alone(r: &Row, metric: Metric) -> Option<f64> {
    match HostPhase::of(r) {
        HostPhase::Recorded => r.accounting_value(Phase::Host, metric),
        HostPhase::AllocIsHostAlone => r.accounting_value(Phase::Alloc, metric),
        HostPhase::NotRecorded | HostPhase::NoAccounting => None,
    }
}

/// MiB `metric` moved when the case's device memory was added to its host memory.
fn device_added(r: &Row, metric: Metric) -> Option<f64> {
    Some(r.accounting_value(Phase::Alloc, metric)? - r.accounting_value(Phase::Host, metric)?)
}

/// One observer's change, MiB.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Moved {
    pub metric: Metric,
    pub mib: f64,
}

fn moved(r: &Row, metrics: &[Metric], value: impl Fn(&Row, Metric) -> Option<f64>) -> Vec<Moved> {
    metrics
        .iter()
        .filter_map(|m| value(r, *m).map(|mib| Moved { metric: *m, mib }))
        .collect()
}

/// `CUDA used +512 MiB, host RSS +512 MiB`.
fn words(moved: &[Moved]) -> String {
    moved
        .iter()
        .map(|m| format!("{} {:+.0} MiB", m.metric.declaration().words, m.mib))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a run's observers saw of the host memory alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "host_memory_alone", rename_all = "kebab-case")]
pub enum HostCost {
    /// Recorded on its own ([`HostPhase::known`]): what each observer moved (empty: no observer
    /// recorded a value), then what the case's device memory added on top.
    Recorded {
        moved: Vec<Moved>,
        device_added: Vec<Moved>,
    },
    /// Not recorded by this run: only what host and device memory moved together.
    NotRecorded { together: Vec<Moved> },
    /// The run recorded no memory change for the case.
    NoAccounting,
}

/// What one run's case cost in memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinCost {
    pub case_label: String,
    pub pinned_bytes: u64,
    pub device_bytes: u64,
    #[serde(flatten)]
    pub host: HostCost,
    /// What stayed after the free and the hold.
    pub after_free: Vec<Moved>,
    /// The case's shared GPU memory was observed (WDDM's counter; other platforms lack it).
    pub shared_observable: bool,
}

impl PinCost {
    pub fn of(r: &Row) -> PinCost {
        let host = match HostPhase::of(r) {
            HostPhase::Recorded | HostPhase::AllocIsHostAlone => HostCost::Recorded {
                moved: moved(r, NAMED, host_alone),
                device_added: if r.device_bytes > 0 {
                    moved(r, DEVICE_SIDE, device_added)
                } else {
                    Vec::new()
                },
            },
            HostPhase::NotRecorded => HostCost::NotRecorded {
                together: moved(r, NAMED, |r, m| r.accounting_value(Phase::Alloc, m)),
            },
            HostPhase::NoAccounting => HostCost::NoAccounting,
        };
        PinCost {
            case_label: r.case_label.clone(),
            pinned_bytes: r.pinned_bytes,
            device_bytes: r.device_bytes,
            host,
            after_free: moved(r, NAMED, |r, m| r.accounting_value(Phase::Free, m)),
            shared_observable: r.accounting.iter().any(|(_, m, _)| *m == Metric::Shared),
        }
    }

    /// Whether any observer has a number to tell.
    pub fn observed(&self) -> bool {
        match &self.host {
            HostCost::Recorded { moved, .. } => !moved.is_empty(),
            HostCost::NotRecorded { together } => !together.is_empty(),
            HostCost::NoAccounting => false,
        }
    }

    /// The finding in words, without the run's name: what allocating the page-locked memory
    /// moved with no device memory held yet, or that this run did not record it; and whether
    /// shared GPU memory is observable.
    pub fn sentence(&self) -> String {
        let size = format_size(self.pinned_bytes);
        let case = &self.case_label;
        let mut t = match &self.host {
            HostCost::Recorded {
                moved,
                device_added,
            } => {
                let mut t = format!(
                    "allocating {size} page-locked for {case} (no device memory held yet) moved {}",
                    if moved.is_empty() {
                        "nothing an observer recorded".to_string()
                    } else {
                        words(moved)
                    }
                );
                if !device_added.is_empty() {
                    t.push_str(&format!(
                        "; the case's own {} of device memory then moved {} (device memory, not pinning)",
                        format_size(self.device_bytes),
                        words(device_added)
                    ));
                }
                t
            }
            HostCost::NotRecorded { together } => {
                let mut t = format!(
                    "what allocating {size} page-locked for {case} cost on its own was not recorded by this run (it has no host-only phase, d_host_* columns)"
                );
                if !together.is_empty() {
                    t.push_str(&format!(
                        "; together with its {} of device memory it moved {}",
                        format_size(self.device_bytes),
                        words(together)
                    ));
                }
                t
            }
            HostCost::NoAccounting => {
                format!("no memory change was recorded for {case} (holding {size} page-locked)")
            }
        };
        if !self.shared_observable && self.host != HostCost::NoAccounting {
            t.push_str("; shared GPU memory is not observable on this platform");
        }
        t
    }

    /// `after the free and the hold: …`, when an observer recorded it.
    pub fn after_free_clause(&self) -> Option<String> {
        (!self.after_free.is_empty())
            .then(|| format!("after the free and the hold: {}", words(&self.after_free)))
    }
}

/// The memory finding of a set of runs: the largest page-locked allocation and, per run, what it
/// cost there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryFinding {
    pub case_key: String,
    pub case_label: String,
    pub pinned_bytes: u64,
    /// One per run, in run order; `None` where the run lacks the case.
    pub runs: Vec<Option<PinCost>>,
}

impl MemoryFinding {
    /// The finding for runs given as their rows. The case is the largest page-locked allocation
    /// with accounting whose host memory's cost is known on its own, first run first (the first
    /// case on a tie); without one in any run, the largest with accounting at all.
    pub fn of_rows(runs: &[Vec<&Row>]) -> Option<MemoryFinding> {
        let largest = |known: bool| {
            runs.iter().find_map(|rows| {
                rows.iter()
                    .copied()
                    .filter(|r| r.pinned_bytes > 0 && !r.accounting.is_empty())
                    .filter(|r| !known || HostPhase::of(r).known())
                    .max_by_key(|r| (r.pinned_bytes, std::cmp::Reverse(r.case_index)))
            })
        };
        let case = largest(true).or_else(|| largest(false))?;
        Some(MemoryFinding {
            case_key: case.case_key.clone(),
            case_label: case.case_label.clone(),
            pinned_bytes: case.pinned_bytes,
            runs: runs
                .iter()
                .map(|rows| {
                    rows.iter()
                        .find(|r| r.case_key == case.case_key)
                        .map(|r| PinCost::of(r))
                })
                .collect(),
        })
    }

    /// The finding for loaded runs (all their rows).
    pub fn of(sets: &[ResultSet]) -> Option<MemoryFinding> {
        let runs: Vec<Vec<&Row>> = sets.iter().map(|s| s.rows.iter().collect()).collect();
        Self::of_rows(&runs)
    }

    /// One line per run, `name: sentence; after the free and the hold: …`, with `names` in run
    /// order.
    pub fn lines(&self, names: &[String]) -> Vec<String> {
        self.runs
            .iter()
            .zip(names)
            .map(|(cost, n)| match cost {
                None => format!(
                    "{n}: no {} case to tell what {} page-locked cost.",
                    self.case_label,
                    format_size(self.pinned_bytes)
                ),
                Some(c) => {
                    let mut t = format!("{n}: {}", c.sentence());
                    if let Some(after) = c.after_free_clause() {
                        t.push_str(&format!("; {after}"));
                    }
                    t.push('.');
                    t
                }
            })
            .collect()
    }
}
