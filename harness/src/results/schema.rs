//! The results file format (versioned): one CSV row per case and lane, a long-form samples CSV,
//! and a JSON sidecar with the machine and the scenario text.
//!
//! Bump [`SCHEMA_VERSION`] whenever a column changes meaning or disappears; adding a column at the
//! end is compatible (readers look columns up by name).

use crate::accounting::{self, ReadingName};
use crate::probe::Moment;
use serde::{Deserialize, Serialize};

pub use super::failure::{Cause, Failure, Phase};
pub use crate::platform::MachineKey;
pub use crate::scenario::Lane;
use crate::scenario::{
    Axes, Cache, CaseKey, CufileMode, Direction, Engine, FileKind, HostFlags, HostKind, Mode, Wait,
};
use std::fmt;
use std::sync::Arc;

pub const SCHEMA_VERSION: u32 = 1;

/// Rows of a multi-GPU case carry `@gpu<ordinal>` (alone), `@gpu<ordinal>/<n>` (one of n at
/// once) or `@all/<n>` (their sum) after the case key, so that each placement keeps its own
/// samples and compares with the same placement of another run.
pub const MULTI_GPU_MARK: char = '@';

/// What a case ended as.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Status {
    #[default]
    Ok,
    /// The case ran into an error: which call, the code, the phase, or what a data check found.
    Failed(Failure),
    /// The case was not run; the text says why (guard, unsupported on this machine, interrupted).
    Skipped(String),
}

impl Status {
    pub fn is_ok(&self) -> bool {
        matches!(self, Status::Ok)
    }
    /// `ok`, `failed: <sentence>`, `skipped: <reason>` — the CSV form.
    pub fn to_field(&self) -> String {
        match self {
            Status::Ok => "ok".into(),
            Status::Failed(f) => format!("failed: {f}"),
            Status::Skipped(r) => format!("skipped: {r}"),
        }
    }
    /// The status whose CSV form is `s`; a failure's sentence is read into its data here, once.
    pub fn from_field(s: &str) -> Option<Status> {
        if s == "ok" {
            Some(Status::Ok)
        } else if let Some(r) = s.strip_prefix("failed: ") {
            Some(Status::Failed(Failure::parse(r)))
        } else {
            s.strip_prefix("skipped: ")
                .map(|r| Status::Skipped(r.into()))
        }
    }
    /// The failure, if the case failed.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Status::Failed(f) => Some(f),
            _ => None,
        }
    }
}

/// What checking the moved data found (the `verified` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Verification {
    /// Every word was right.
    Yes,
    /// Some word was wrong (the status says how many).
    No,
    /// Not checked (`verify = false`, or the case did not get that far).
    #[default]
    Off,
    /// Nothing lands anywhere that could be checked (read-only kernels).
    NotApplicable,
}

/// Why sampling stopped (the `stopped_by` column, and the sidecar's `stopped_by` by case key);
/// serialized by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The spread target was reached.
    Spread,
    MaxSamples,
    TimeLimit,
    Interrupted,
    /// Several GPUs sampled in lockstep and another one ended the round.
    AnotherGpuStopped,
}

/// The GPU a row was measured on (the `device` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Device {
    /// The GPU of this CUDA ordinal.
    Gpu(u32),
    /// The sum over every GPU of a multi-GPU case.
    All,
}

/// A value of a CSV column that is one of a few names: its text, and back.
pub trait Named: Sized + Copy + 'static {
    /// Every value, in the order messages list them.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == s)
    }
}

impl Named for Verification {
    const ALL: &'static [Self] = &[Self::Yes, Self::No, Self::Off, Self::NotApplicable];
    fn name(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::No => "no",
            Self::Off => "off",
            Self::NotApplicable => "n/a",
        }
    }
}

impl Named for StopReason {
    const ALL: &'static [Self] = &[
        Self::Spread,
        Self::MaxSamples,
        Self::TimeLimit,
        Self::Interrupted,
        Self::AnotherGpuStopped,
    ];
    fn name(self) -> &'static str {
        match self {
            Self::Spread => "spread",
            Self::MaxSamples => "max_samples",
            Self::TimeLimit => "time_limit",
            Self::Interrupted => "interrupted",
            Self::AnotherGpuStopped => "another GPU stopped",
        }
    }
}

/// [`Named`] for the case settings' enums, from the names they are declared with.
macro_rules! named_as_declared {
    ($($t:ty),+) => {
        $(impl Named for $t {
            const ALL: &'static [Self] = &<$t>::ALL;
            fn name(self) -> &'static str {
                <$t>::name(self)
            }
        })+
    };
}
named_as_declared!(Engine, Direction, Mode, Wait, Cache, FileKind, CufileMode);

impl fmt::Display for Verification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<StopReason, D::Error> {
        let s = String::deserialize(d)?;
        StopReason::from_name(&s).ok_or_else(|| {
            let names: Vec<&str> = StopReason::ALL.iter().map(|r| r.name()).collect();
            serde::de::Error::custom(format!("`{s}` is not one of {}", names.join(", ")))
        })
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gpu(i) => f.pad(&i.to_string()),
            Self::All => f.pad("all"),
        }
    }
}

impl Device {
    /// `0`, `1`, … or `all`.
    pub fn parse(s: &str) -> Option<Device> {
        if s == "all" {
            Some(Device::All)
        } else {
            s.parse().ok().map(Device::Gpu)
        }
    }
}

/// The `host` column: the host memory's kind, or `device` for device engines (no host buffer).
pub fn host_name(host: Option<HostKind>) -> &'static str {
    host.map_or("device", HostKind::name)
}

/// The largest default cap of the pinned-ceiling probe (MiB): min(50% of RAM, 16 GiB).
pub const DEFAULT_CEILING_CAP_MAX_MIB: f64 = 16.0 * 1024.0;

/// One row of the results CSV. The run, its start, the machine and the scenario are the same on
/// most rows of a file: they are shared (`Arc`), one copy per file instead of one per row.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Row {
    pub run_id: Arc<str>,
    pub started_at: Arc<str>,
    pub machine: Arc<MachineKey>,
    pub scenario: Arc<str>,
    pub case_label: String,
    pub case_index: usize,
    /// [`crate::scenario::Case::key`]: the identity used to match runs.
    pub case_key: String,
    pub lane: Lane,
    /// The host memory's kind; `None` for device engines (written `device`).
    pub host: Option<HostKind>,
    pub flags: HostFlags,
    pub engine: Engine,
    pub direction: Direction,
    pub mode: Mode,
    pub size_bytes: u64,
    pub chunk_bytes: u64,
    pub ring: u32,
    pub streams: u32,
    pub threads: u32,
    /// Transfers timed together as one sample.
    pub batch: u32,
    /// The sweep axes, values as written (`key=value;...` in the file).
    pub axes: Axes,
    pub status: Status,
    pub samples: u32,
    /// Samples more than 3 scaled MADs from the median (flagged, kept).
    pub outliers: u32,
    /// GB/s = 1e9 B/s, from CUDA event time.
    pub bw_median_gbs: Option<f64>,
    pub bw_min_gbs: Option<f64>,
    pub bw_max_gbs: Option<f64>,
    /// 100 × MAD / median of the bandwidth samples.
    pub bw_spread_pct: Option<f64>,
    /// Event time per transfer (ms).
    pub time_median_ms: Option<f64>,
    pub time_min_ms: Option<f64>,
    pub time_max_ms: Option<f64>,
    /// Host wall time per transfer (ms), including CPU work such as staging memcpy.
    pub wall_median_ms: Option<f64>,
    pub verified: Verification,
    /// Setup costs (ms): allocation, registration, unregistration and free of the host memory.
    pub alloc_ms: Option<f64>,
    pub register_ms: Option<f64>,
    pub unregister_ms: Option<f64>,
    pub free_ms: Option<f64>,
    /// Page-locked host bytes held by the case (ledger).
    pub pinned_bytes: u64,
    pub device_bytes: u64,
    /// `(phase, metric) -> MiB delta` ([`crate::accounting`]). Missing = observer unavailable.
    pub accounting: Vec<(accounting::Phase, accounting::Metric, f64)>,
    /// Largest device allocation (MiB) with the case's host *and device* memory held: written
    /// by pinscope before the host phase existed, read from such files, empty in new ones.
    pub max_alloc_held_mib: Option<f64>,
    /// Largest device allocation (MiB) after the case's memory was freed.
    pub max_alloc_free_mib: Option<f64>,
    /// Largest device allocation (MiB) with only the case's host memory held (allocated and
    /// first touched, no device memory yet).
    pub max_alloc_host_mib: Option<f64>,
    /// Pinned memory (MiB) the pinned-ceiling probe obtained before failing or reaching its cap.
    pub pinned_ceiling_mib: Option<f64>,
    /// The pinned-ceiling probe's cap (MiB): a ceiling equal to it is the probe's limit, not the
    /// machine's. Empty in files written before this column.
    pub pinned_ceiling_cap_mib: Option<f64>,
    /// Why sampling stopped; `None` (empty) when no sample was taken, and in files written
    /// before this column.
    pub stopped_by: Option<StopReason>,
    /// The GPU the row was measured on; `None` (empty) in files written before this column.
    pub device: Option<Device>,
    /// How many GPUs were moving data at the same time (1: alone).
    pub gpus_at_once: u32,
    /// Latency cases (`mode = "latency"`, `"latency-sync"`, `"enqueue"`): order statistics of
    /// the host-clock time of one copy (or of one copy call, `enqueue`), µs; empty otherwise.
    pub lat_min_us: Option<f64>,
    pub lat_p50_us: Option<f64>,
    pub lat_p90_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    /// Latency cases: median event (device) time of one copy, µs; empty where no events are
    /// recorded (`latency-sync`, `enqueue`).
    pub lat_event_p50_us: Option<f64>,
    /// `mode = "latency"` rows: how the host waited for each sample to end (`wait`); empty on
    /// every other row. Files written before this column: read from the case key (see
    /// [`crate::results::read_rows`]).
    pub wait: Option<Wait>,
    /// File-load rows (`mode = "load-*"`): the page cache each load started from (`cache`);
    /// empty on every other row and in files written before this column.
    pub cache: Option<Cache>,
    /// File-load rows: what the loaded file is (`gguf`, `safetensors`, `data`).
    pub file_format: Option<FileKind>,
    /// File-load rows: the tensors in the file's table (0 for a data file and other rows).
    pub file_tensors: u32,
    /// File-load rows: bytes of the file in the page cache when a load started (median).
    pub resident_before_bytes: Option<f64>,
    /// File-load rows: bytes of the file in the page cache once a load was done (median): the
    /// page cache the way of loading leaves held.
    pub resident_after_bytes: Option<f64>,
    /// File-load rows, the median time of each stage of one load (ms): inside `read`/`pread`;
    /// copies out of a mapping (page faults, staging and DMA together); registering a mapping;
    /// the copies to the device after the reads.
    pub read_ms: Option<f64>,
    pub fault_ms: Option<f64>,
    pub pin_ms: Option<f64>,
    pub dma_ms: Option<f64>,
    /// `load-cufile` rows: `direct` (GPUDirect Storage) or `compatibility` (cuFile's POSIX
    /// reads through bounce buffers).
    pub cufile_mode: Option<CufileMode>,
}

impl Row {
    /// The rows a one-GPU answer is about: every row of an ordinary run; of a multi-GPU run, the
    /// first GPU's rows measured alone (what running all at once changes is said separately).
    pub fn one_gpu_view<'a>(rows: impl IntoIterator<Item = &'a Row> + Clone) -> Vec<&'a Row> {
        let first = rows
            .clone()
            .into_iter()
            .find(|r| r.placement().is_some())
            .map(|r| r.device);
        rows.into_iter()
            .filter(|r| r.placement().is_none() || (Some(r.device) == first && r.gpus_at_once <= 1))
            .collect()
    }

    /// Where a multi-GPU row was measured, in words (`GPU 1 alone`, `GPU 1 of 2 at once`,
    /// `all 2 GPUs at once`); `None` for rows of ordinary one-GPU runs.
    pub fn placement(&self) -> Option<String> {
        self.placement_mark()?;
        let d = self.device.map(|d| d.to_string()).unwrap_or_default();
        Some(match (self.device, self.gpus_at_once) {
            (Some(Device::All), n) => format!("all {n} GPUs at once"),
            (_, n) if n <= 1 => format!("GPU {d} alone"),
            (_, n) => format!("GPU {d} of {n} at once"),
        })
    }

    /// The case key without the placement of a multi-GPU row: the same for every GPU's row.
    pub fn base_key(&self) -> &str {
        split_case_key(&self.case_key).0
    }

    /// The placement part of a multi-GPU row's case key (`gpu1`, `gpu1/2`, `all/2`).
    pub fn placement_mark(&self) -> Option<&str> {
        split_case_key(&self.case_key).1
    }

    /// The case's label with the sweep axes that tell it apart (h2d/d2h is the lane already):
    /// `staged ring (chunk=16MiB, ring=3, threads=12)`.
    pub fn title(&self) -> String {
        let one_way =
            |k: CaseKey| k == CaseKey::Direction && self.direction != Direction::Bidirectional;
        let axes: Vec<String> = self
            .axes
            .iter()
            .filter(|(k, _)| !one_way(*k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if axes.is_empty() {
            self.case_label.clone()
        } else {
            format!("{} ({})", self.case_label, axes.join(", "))
        }
        .to_string()
            + &self
                .placement()
                .map(|p| format!(" [{p}]"))
                .unwrap_or_default()
    }

    /// True when the row's number is a time rather than a bandwidth: the latency modes (one
    /// operation per sample), the empty kernel (nothing moves) and the pointer chase (time per
    /// dependent load). Their `bw_*` columns are not what they measure (a 4-byte copy's GB/s
    /// rounds to 0): tables show their `lat_*` times, answers their latency sentences.
    pub fn measures_time(&self) -> bool {
        self.mode.is_latency() || self.engine == Engine::Empty || self.engine.is_chase()
    }

    /// The median time of a row whose number is a time ([`Row::measures_time`]), µs: the
    /// `lat_p50_us` column, or for back-to-back launches (no per-launch samples) the batch's
    /// time per launch.
    pub fn time_p50_us(&self) -> Option<f64> {
        if !self.measures_time() {
            return None;
        }
        self.lat_p50_us.or(self.time_median_ms.map(|ms| ms * 1e3))
    }

    /// The largest device allocation (MiB) with only the case's host memory held: the
    /// `max_alloc_host_mib` column, or in older files `max_alloc_held_mib` when the case held no
    /// device memory (then the two are the same measurement).
    pub fn max_alloc_host_only_mib(&self) -> Option<f64> {
        self.max_alloc_host_mib
            .or(self.max_alloc_held_mib.filter(|_| self.device_bytes == 0))
    }

    /// True when the pinned-ceiling probe stopped at its own cap (so the machine allows at least
    /// that much). Files without the cap column: when the result equals the largest default cap,
    /// 16 GiB (the default is min(50% of RAM, 16 GiB)).
    pub fn pinned_ceiling_at_cap(&self) -> Option<bool> {
        let got = self.pinned_ceiling_mib?;
        let cap = self
            .pinned_ceiling_cap_mib
            .unwrap_or(DEFAULT_CEILING_CAP_MAX_MIB);
        Some(got >= cap)
    }

    pub fn accounting_value(
        &self,
        phase: accounting::Phase,
        metric: accounting::Metric,
    ) -> Option<f64> {
        self.accounting
            .iter()
            .find(|(p, m, _)| *p == phase && *m == metric)
            .map(|(_, _, v)| *v)
    }

    /// True when the row has any accounting delta at `phase`.
    pub fn has_accounting_at(&self, phase: accounting::Phase) -> bool {
        self.accounting.iter().any(|(p, _, _)| *p == phase)
    }
}

/// A case key split into the case's own key and, on a multi-GPU row, what follows
/// [`MULTI_GPU_MARK`].
pub fn split_case_key(key: &str) -> (&str, Option<&str>) {
    match key.split_once(MULTI_GPU_MARK) {
        Some((base, mark)) => (base, Some(mark)),
        None => (key, None),
    }
}

/// One raw value for the samples file: a bandwidth sample, or an accounting value at a phase or
/// a point of the hold-after-free timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub case_key: String,
    /// The lane of a per-sample series; `None` (written empty) for observer readings.
    pub lane: Option<Lane>,
    pub series: Series,
    pub index: SampleIndex,
    /// Milliseconds since the series started (timelines), else empty.
    pub t_ms: Option<f64>,
    pub value: f64,
}

/// What a samples-file row holds (the `series` column).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Series {
    /// `bw_gbs`: one sample's bandwidth, GB/s.
    Bandwidth,
    /// `event_ms`: one sample's time by CUDA events, ms.
    EventTime,
    /// `wall_ms`: one sample's host wall time, ms.
    WallTime,
    /// `phase:<observer>.<metric>`: an observer's reading at the snapshot the index names.
    Phase(ReadingName),
    /// `timeline:<observer>.<metric>`: an observer's reading during the hold after free.
    Timeline(ReadingName),
    /// `setup:<what>`: a setup cost (files of earlier versions).
    Setup(String),
}

/// The series of bandwidth samples (GB/s).
pub const BANDWIDTH_SERIES: &str = "bw_gbs";
/// The series of sample times by CUDA events (ms).
pub const EVENT_TIME_SERIES: &str = "event_ms";
/// The series of sample host wall times (ms).
pub const WALL_TIME_SERIES: &str = "wall_ms";
/// The prefix of hold-after-free timeline series (`timeline:<observer>.<metric>`).
pub const TIMELINE_PREFIX: &str = "timeline:";
/// The prefix of per-phase observer readings (`phase:<observer>.<metric>`, index = the phase).
pub const PHASE_PREFIX: &str = "phase:";
/// The prefix of setup-cost series (`setup:<what>`).
pub const SETUP_PREFIX: &str = "setup:";

impl Series {
    /// The series whose text is `s` (the `series` column), or why it is not one.
    pub fn parse(s: &str) -> Result<Series, String> {
        Ok(match s {
            BANDWIDTH_SERIES => Series::Bandwidth,
            EVENT_TIME_SERIES => Series::EventTime,
            WALL_TIME_SERIES => Series::WallTime,
            _ => {
                if let Some(r) = s.strip_prefix(PHASE_PREFIX) {
                    Series::Phase(ReadingName::parse(r)?)
                } else if let Some(r) = s.strip_prefix(TIMELINE_PREFIX) {
                    Series::Timeline(ReadingName::parse(r)?)
                } else if let Some(what) = s.strip_prefix(SETUP_PREFIX) {
                    Series::Setup(what.to_string())
                } else {
                    return Err(format!(
                        "series `{s}` is not {BANDWIDTH_SERIES}, {EVENT_TIME_SERIES}, {WALL_TIME_SERIES}, {PHASE_PREFIX}<observer>.<metric>, {TIMELINE_PREFIX}<observer>.<metric> or {SETUP_PREFIX}<what>"
                    ));
                }
            }
        })
    }
}

impl fmt::Display for Series {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Series::Bandwidth => f.write_str(BANDWIDTH_SERIES),
            Series::EventTime => f.write_str(EVENT_TIME_SERIES),
            Series::WallTime => f.write_str(WALL_TIME_SERIES),
            Series::Phase(r) => write!(f, "{PHASE_PREFIX}{r}"),
            Series::Timeline(r) => write!(f, "{TIMELINE_PREFIX}{r}"),
            Series::Setup(what) => write!(f, "{SETUP_PREFIX}{what}"),
        }
    }
}

crate::scenario::written_as_text!(Series, Series::parse);

/// Which value of its series a samples-file row is (the `index` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SampleIndex {
    /// The sample's (or timeline point's) number, from 0.
    Number(usize),
    /// The snapshot a `phase:` reading was taken at (`before`, `host`, `device`, ...).
    Phase(Moment),
}

impl SampleIndex {
    /// The index whose text is `s`: a number as the writer writes numbers, or a snapshot's
    /// name; else why it is neither.
    pub fn parse(s: &str) -> Result<SampleIndex, String> {
        match s.parse::<usize>() {
            Ok(n) if n.to_string() == s => Ok(SampleIndex::Number(n)),
            _ => Moment::parse(s).map(SampleIndex::Phase).ok_or_else(|| {
                let known: Vec<&str> = Moment::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "index `{s}` is neither a sample number (0, 1, ...) nor a snapshot ({})",
                    known.join(", ")
                )
            }),
        }
    }
}

impl fmt::Display for SampleIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleIndex::Number(n) => write!(f, "{n}"),
            SampleIndex::Phase(m) => f.write_str(m.name()),
        }
    }
}

crate::scenario::written_as_text!(SampleIndex, SampleIndex::parse);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_serialize_by_their_names() {
        for r in StopReason::ALL {
            let json = serde_json::to_string(r).expect("json");
            assert_eq!(json, format!("\"{}\"", r.name()));
            assert_eq!(serde_json::from_str::<StopReason>(&json).ok(), Some(*r));
        }
        assert!(serde_json::from_str::<StopReason>("\"MaxSamples\"").is_err());
    }

    #[test]
    fn series_and_indices_read_back_as_written() {
        for text in [
            "bw_gbs",
            "event_ms",
            "wall_ms",
            "phase:cuda.used",
            "timeline:procfs.vm_rss",
            "setup:alloc",
        ] {
            let s = Series::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s.to_string(), text);
        }
        assert_eq!(
            Series::parse("timeline:dxgi.shared"),
            Ok(Series::Timeline(ReadingName::new(
                accounting::ObserverId::Dxgi,
                "shared"
            )))
        );
        assert_eq!(SampleIndex::parse("12"), Ok(SampleIndex::Number(12)));
        for m in Moment::ALL {
            let i = SampleIndex::parse(m.name()).expect("a moment");
            assert_eq!(i, SampleIndex::Phase(m));
            assert_eq!(i.to_string(), m.name());
        }
    }

    /// A series or index that names nothing pinscope writes is refused with a sentence that
    /// names it, never kept as text.
    #[test]
    fn unknown_series_and_snapshots_are_refused_by_name() {
        let refused = |text: &str| Series::parse(text).expect_err(text);
        assert!(refused("bandwidth").contains("series `bandwidth` is not bw_gbs"));
        let e = refused("phase:gpu.used");
        assert!(e.contains("observer `gpu`") && e.contains("procfs"), "{e}");
        assert!(refused("timeline:cuda").contains("no `.`"));
        assert!(refused("phase:cuda.Used MiB").contains("not a snake_case name"));
        for text in ["touched", "007", "-1", "", "Before"] {
            let e = SampleIndex::parse(text).expect_err(text);
            assert!(e.contains(&format!("index `{text}`")), "{e}");
            assert!(e.contains("before, host, device"), "{e}");
        }
        assert!(serde_json::from_str::<SampleIndex>("\"later\"").is_err());
    }
}
