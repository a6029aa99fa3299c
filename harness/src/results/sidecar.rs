//! The JSON sidecar: machine metadata, scenario text, observers, claims; written atomically.

use crate::platform::Machine;
pub use crate::probe::ObserverStatus;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A scenario as it was run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRecord {
    pub name: String,
    pub description: String,
    pub path: String,
    pub text: String,
}

/// One claim's verdict after the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    pub scenario: String,
    pub text: String,
    pub verdict: ClaimStatus,
    /// Measured value and bound, or why it does not apply.
    pub detail: String,
}

/// What checking a claim after the run found; written to the sidecar, the console and the pages
/// as `held`, `not held` or `not applicable here`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClaimStatus {
    #[serde(rename = "held")]
    Held,
    #[serde(rename = "not held")]
    NotHeld,
    /// The claim is for other platforms, or its case or metric was not measured here.
    #[serde(rename = "not applicable here")]
    NotApplicable,
}

impl ClaimStatus {
    /// The words the outputs use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::NotHeld => "not held",
            Self::NotApplicable => "not applicable here",
        }
    }

    /// Whether the claim was judged on this machine (held or not held).
    pub fn is_judged(self) -> bool {
        self != Self::NotApplicable
    }
}

impl std::fmt::Display for ClaimStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A probe result not tied to one case (e.g. the pinned-ceiling probe).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub scenario: String,
    pub case_key: String,
    pub name: ProbeName,
    pub value: f64,
    pub unit: String,
    pub detail: String,
}

/// Which probe a [`ProbeRecord`] holds; its JSON form is the sentence `name` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProbeName {
    /// The most host memory the pinned-ceiling probe could pin.
    #[serde(rename = "pinned ceiling")]
    PinnedCeiling,
    /// The max-alloc probe with only the case's host memory held.
    #[serde(rename = "max allocatable device memory, only host memory held")]
    MaxAllocHostOnly,
    /// The max-alloc probe with the case's host and device memory held.
    #[serde(
        rename = "max allocatable device memory, case memory held",
        alias = "max allocatable device memory, host and device memory held"
    )]
    MaxAllocCaseHeld,
    /// A probe this version does not know (a record written by another version).
    #[serde(other)]
    Other,
}

impl ProbeName {
    /// The words the outputs use.
    pub fn name(self) -> &'static str {
        match self {
            Self::PinnedCeiling => "pinned ceiling",
            Self::MaxAllocHostOnly => "max allocatable device memory, only host memory held",
            Self::MaxAllocCaseHeld => "max allocatable device memory, host and device memory held",
            Self::Other => "another probe",
        }
    }

    /// Whether this is one of the max-alloc probe's records.
    pub fn is_max_alloc(self) -> bool {
        matches!(self, Self::MaxAllocHostOnly | Self::MaxAllocCaseHeld)
    }
}

impl std::fmt::Display for ProbeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything about a run that is not a per-case number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    pub schema_version: u32,
    pub pinscope_version: String,
    pub run_id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// True when the run was interrupted or ended early: the CSV holds only finished cases.
    pub partial: bool,
    pub command_line: Vec<String>,
    pub machine: Machine,
    pub scenarios: Vec<ScenarioRecord>,
    /// The observers this version knows; a sidecar written by a newer pinscope may list more,
    /// which are left out when read rather than refusing the file.
    #[serde(deserialize_with = "known_observers")]
    pub observers: Vec<ObserverStatus>,
    /// Every GPU of a multi-GPU run (index, UUID, PCI bus, NUMA node); empty for one-GPU runs,
    /// whose GPU is `machine.gpu`.
    #[serde(default)]
    pub gpus: Vec<crate::platform::GpuInfo>,
    #[serde(default)]
    pub claims: Vec<ClaimVerdict>,
    #[serde(default)]
    pub probes: Vec<ProbeRecord>,
    /// Why sampling stopped, per case key (written by name: `spread`, `max_samples`, …); absent
    /// in files written before it was added.
    #[serde(default)]
    pub stopped_by: std::collections::BTreeMap<String, super::StopReason>,
    /// Free-form derived results (e.g. "model load time") in display order.
    #[serde(default)]
    pub derived: Vec<(String, String)>,
    /// The case the run was ended in because it ran past `--case-timeout`; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<CaseTimeout>,
    /// Present on a run made up for tests or demonstrations, not measured: what made it and
    /// how. Pages and comparisons of such a run say SYNTHETIC DATA. pinscope never writes it.
    #[serde(rename = "SYNTHETIC", default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<String>,
}

/// A case that ran past `--case-timeout` (a hung driver call cannot be cancelled, so the run
/// was ended there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseTimeout {
    /// The case's title.
    pub case: String,
    /// The limit it ran past (ms).
    pub limit_ms: u64,
}

impl std::fmt::Display for CaseTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limit = std::time::Duration::from_millis(self.limit_ms);
        write!(
            f,
            "case `{}` did not finish within {limit:?} (--case-timeout); the run was ended",
            self.case
        )
    }
}

impl Sidecar {
    /// Writes the sidecar atomically: a temporary file beside it, then a rename, so a reader never
    /// sees half a file even if the process dies mid-write.
    pub fn write_atomic(&self, path: &Path) -> Result<(), crate::Error> {
        let text = serde_json::to_string_pretty(self).map_err(|e| crate::Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
        super::write_atomic(path, text.as_bytes())
    }

    pub fn read(path: &Path) -> Result<Sidecar, crate::Error> {
        let bytes = crate::input::read_input(path, &crate::input::SIDECAR_JSON)?;
        Self::from_bytes(path, &bytes)
    }

    /// Parses sidecar JSON; `path` is only used in messages.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Sidecar, crate::Error> {
        let v: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| crate::Error::BadResults {
                path: path.to_path_buf(),
                reason: format!("it is not valid JSON ({e})"),
            })?;
        let version = v.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(u64::from(super::SCHEMA_VERSION)) {
            return Err(crate::Error::BadResults {
                path: path.to_path_buf(),
                reason: format!(
                    "its schema_version is {}, this pinscope reads version {}",
                    version.map_or("missing".to_string(), |v| v.to_string()),
                    super::SCHEMA_VERSION
                ),
            });
        }
        serde_json::from_value(v).map_err(|e| crate::Error::BadResults {
            path: path.to_path_buf(),
            reason: format!("it is not a pinscope sidecar ({e})"),
        })
    }
}

/// The sidecar that belongs to a results CSV (`x.csv` → `x.json`).
pub fn sidecar_path(csv: &Path) -> PathBuf {
    csv.with_extension("json")
}

/// The samples file that belongs to a results CSV (`x.csv` → `x.samples.csv`).
pub fn samples_path(csv: &Path) -> PathBuf {
    let stem = csv.file_stem().unwrap_or_default().to_string_lossy();
    csv.with_file_name(format!("{stem}.samples.csv"))
}

/// The entries of a sidecar's `observers` that name an observer this version knows.
fn known_observers<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<ObserverStatus>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Entry {
        Known(ObserverStatus),
        Other(serde::de::IgnoredAny),
    }
    let entries = Vec::<Entry>::deserialize(d)?;
    Ok(entries
        .into_iter()
        .filter_map(|e| match e {
            Entry::Known(o) => Some(o),
            Entry::Other(_) => None,
        })
        .collect())
}

#[cfg(test)]
impl Sidecar {
    /// A sidecar with nothing in it, for tests.
    pub(crate) fn empty_for_tests() -> Sidecar {
        Sidecar {
            schema_version: super::SCHEMA_VERSION,
            pinscope_version: "test".into(),
            run_id: "r".into(),
            started_at: "t".into(),
            finished_at: None,
            partial: false,
            command_line: vec![],
            machine: Machine::default(),
            scenarios: vec![],
            observers: vec![],
            claims: vec![],
            probes: vec![],
            stopped_by: Default::default(),
            gpus: Vec::new(),
            derived: vec![],
            timed_out: None,
            synthetic: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ProbeName, ProbeRecord, Sidecar};

    #[test]
    fn probe_names_read_back_typed_from_published_sidecars_and_unknown_ones_read_as_other() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../reports/h200/20261203-100238-when-vram-runs-out-vm.json");
        let text = std::fs::read_to_string(&path).expect("a published sidecar");
        let probes = serde_json::from_str::<Sidecar>(&text)
            .expect("reads")
            .probes;
        assert!(
            probes.iter().any(|p| p.name.is_max_alloc()),
            "the run records the max-alloc probe: {probes:?}"
        );
        let record = |name: &str| {
            let json = format!(
                r#"{{"scenario":"s","case_key":"k","name":"{name}","value":1.0,"unit":"MiB","detail":""}}"#
            );
            serde_json::from_str::<ProbeRecord>(&json)
                .expect("a probe record")
                .name
        };
        assert_eq!(record("pinned ceiling"), ProbeName::PinnedCeiling);
        assert_eq!(
            record("max allocatable device memory, case memory held"),
            ProbeName::MaxAllocCaseHeld
        );
        assert_eq!(record("a probe from a later version"), ProbeName::Other);
        // A run writes the names the sidecars have always held.
        let written = serde_json::to_value(ProbeName::PinnedCeiling).expect("serializes");
        assert_eq!(written, "pinned ceiling");
        let written = serde_json::to_value(ProbeName::MaxAllocHostOnly).expect("serializes");
        assert_eq!(
            written,
            "max allocatable device memory, only host memory held"
        );
    }

    #[test]
    fn an_observer_this_version_does_not_know_is_left_out_not_refused() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../reports/h200/20261203-095848-quick-vm.json");
        let text = std::fs::read_to_string(&path).expect("the published quick sidecar");
        let known = serde_json::from_str::<Sidecar>(&text)
            .expect("reads")
            .observers;
        let newer = text.replacen(
            "\"observers\": [",
            "\"observers\": [{\"name\": \"a-future-observer\", \"available\": true, \"reason\": null},",
            1,
        );
        assert_ne!(newer, text, "the sidecar lists its observers");
        let read = serde_json::from_str::<Sidecar>(&newer).expect("a newer sidecar still reads");
        assert_eq!(read.observers, known);
        assert!(!known.is_empty());
    }
}
