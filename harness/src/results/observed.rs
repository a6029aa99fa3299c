//! An observed run (`pinscope observe -- CMD`): the observer timeline CSV, written as it is
//! sampled, and the JSON sidecar written when the command has exited. Files of one run share a
//! stem: `<stem>.timeline.csv`, `<stem>.observed.json`, `<stem>.events.csv`.

use crate::Error;
use crate::platform::Machine;
/// What a timeline value counts (the observers' own unit type).
pub use crate::probe::Unit;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The suffixes of an observed run's files.
pub const TIMELINE_SUFFIX: &str = ".timeline.csv";
pub const OBSERVED_SUFFIX: &str = ".observed.json";
pub const EVENTS_SUFFIX: &str = ".events.csv";

/// The timeline CSV's columns, in order.
pub const TIMELINE_HEADER: [&str; 6] = ["t_s", "pid", "observer", "reading", "value", "unit"];

/// Whose memory a timeline value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// One process of the tree (`pid` column: the number).
    Process(u32),
    /// Summed over the process tree at that moment (`pid` column: `tree`).
    Tree,
    /// The machine or the cgroup, not one process (`pid` column empty).
    Machine,
}

impl Scope {
    fn cell(self) -> String {
        match self {
            Scope::Process(p) => p.to_string(),
            Scope::Tree => "tree".into(),
            Scope::Machine => String::new(),
        }
    }

    fn from_cell(cell: &str) -> Option<Scope> {
        match cell {
            "tree" => Some(Scope::Tree),
            "" => Some(Scope::Machine),
            n => n.parse().ok().map(Scope::Process),
        }
    }
}

/// Where a timeline value was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `/proc/<pid>/status`: `vm_rss`, `rss_shmem`, `vm_lck`, `vm_pin`.
    Status,
    /// `/proc/meminfo`: `mem_available`.
    Meminfo,
    /// The cgroup v2 that pinscope and the command share: `current`, `max`, `peak`.
    Cgroup,
    /// NVML's device memory per process: `process_used`.
    Nvml,
    /// Windows' `GPU Process Memory` performance counters per process (Task Manager's dedicated
    /// and shared GPU memory): `process_dedicated`, `process_shared`, `process_total_committed`;
    /// and the adapters' `GPU Adapter Memory`, machine-wide: `adapter_dedicated`,
    /// `adapter_shared`.
    Pdh,
    /// DXGI's NON_LOCAL (shared) segment, machine-wide: `nonlocal_budget` (the adapter's),
    /// `nonlocal_usage` (pinscope's own: DXGI answers for the calling process).
    Dxgi,
    /// Windows' commit charge and commit limit (`GetPerformanceInfo`): `commit_charge`,
    /// `commit_limit`.
    Commit,
    /// The process tree itself: `processes` (a count).
    Tree,
}

impl Source {
    pub const ALL: [Source; 8] = [
        Source::Status,
        Source::Meminfo,
        Source::Cgroup,
        Source::Nvml,
        Source::Pdh,
        Source::Dxgi,
        Source::Commit,
        Source::Tree,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Source::Status => "status",
            Source::Meminfo => "meminfo",
            Source::Cgroup => "cgroup",
            Source::Nvml => "nvml",
            Source::Pdh => "pdh",
            Source::Dxgi => "dxgi",
            Source::Commit => "commit",
            Source::Tree => "tree",
        }
    }

    pub fn from_name(name: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One value of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelinePoint {
    /// Seconds since the command was started, on one monotonic clock.
    pub t_s: f64,
    pub scope: Scope,
    pub source: Source,
    /// The observer's metric name (`vm_rss`, `mem_available`, `current`, `process_used`).
    pub reading: String,
    pub value: f64,
    pub unit: Unit,
}

/// Writes timeline points to a new file as they come, one flush per sample, so what was seen
/// is on disk even if pinscope is killed.
pub struct TimelineWriter {
    out: csv::Writer<File>,
    path: PathBuf,
}

impl TimelineWriter {
    /// Creates `path` (never replacing a file) and writes the header.
    pub fn create(policy: &super::OutputPolicy, path: &Path) -> Result<TimelineWriter, Error> {
        let file = policy.create_new(path)?;
        let mut w = TimelineWriter {
            out: csv::Writer::from_writer(file),
            path: path.to_path_buf(),
        };
        w.record(TIMELINE_HEADER.map(String::from))?;
        Ok(w)
    }

    fn record(&mut self, cells: [String; 6]) -> Result<(), Error> {
        self.out
            .write_record(&cells)
            .map_err(|e| Error::Output(format!("writing {}: {e}", self.path.display())))
    }

    /// Writes one sample's points and flushes them.
    pub fn write(&mut self, points: &[TimelinePoint]) -> Result<(), Error> {
        for p in points {
            self.record([
                format!("{:.3}", p.t_s),
                p.scope.cell(),
                p.source.name().into(),
                p.reading.clone(),
                p.value.to_string(),
                p.unit.name().into(),
            ])?;
        }
        self.out.flush().map_err(|e| Error::io(&self.path, e))
    }
}

/// Reads a timeline CSV written by [`TimelineWriter`].
pub fn read_timeline(path: &Path) -> Result<Vec<TimelinePoint>, Error> {
    read_csv_rows(
        path,
        &TIMELINE_HEADER,
        "an observer timeline's",
        "a timeline row",
        point,
    )
}

/// Reads a CSV of observe's whose header must be `header` (`what` names the file kind in the
/// refusal), each record parsed by `parse` (`row` names the row kind when it fails).
pub(crate) fn read_csv_rows<T>(
    path: &Path,
    header: &[&str],
    what: &str,
    row: &str,
    parse: fn(&csv::StringRecord) -> Option<T>,
) -> Result<Vec<T>, Error> {
    let bytes = crate::input::read_input(path, &crate::input::SAMPLES_CSV)?;
    let bad = |reason: String| Error::BadResults {
        path: path.to_path_buf(),
        reason,
    };
    let mut r = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let found = r.headers().map_err(|e| bad(e.to_string()))?;
    if found.iter().ne(header.iter().copied()) {
        return Err(bad(format!(
            "its header is not {what} ({})",
            header.join(",")
        )));
    }
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| bad(e.to_string()))?;
        let line = i + 2;
        out.push(parse(&rec).ok_or_else(|| bad(format!("line {line} is not {row}")))?);
    }
    Ok(out)
}

fn point(rec: &csv::StringRecord) -> Option<TimelinePoint> {
    Some(TimelinePoint {
        t_s: rec.get(0)?.parse().ok().filter(|t: &f64| t.is_finite())?,
        scope: Scope::from_cell(rec.get(1)?)?,
        source: Source::from_name(rec.get(2)?)?,
        reading: rec.get(3)?.to_string(),
        value: rec.get(4)?.parse().ok()?,
        unit: Unit::from_name(rec.get(5)?)?,
    })
}

/// How the observed command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "ended_by")]
pub enum Ending {
    /// It exited with this status.
    Exit { code: i32 },
    /// A signal ended it (the shell's status is 128 + signal).
    Signal { signal: i32 },
    /// The OS gave no status (neither a code nor a signal).
    Unknown,
}

impl Ending {
    /// The exit status pinscope ends with: the command's, 128 + N for signal N, as shells say.
    pub fn exit_status(self) -> i32 {
        match self {
            Ending::Exit { code } => code,
            Ending::Signal { signal } => 128 + signal,
            Ending::Unknown => 1,
        }
    }
}

/// An observer of the run that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unavailable {
    pub observer: Source,
    pub reason: String,
}

/// Where CUPTI (for the allocation-event library) was found, or what is missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CuptiRecord {
    pub found: Option<PathBuf>,
    /// How it was found (`--cupti`, `CUDA_PATH`, the command's Python environment).
    pub found_via: Option<String>,
    /// What is missing and how to get it, when not found.
    pub missing: Option<String>,
    /// Every folder looked in, in order.
    pub searched: Vec<PathBuf>,
}

/// The CUPTI injection library of an observed run: whether it was given to the command, and
/// what it sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventsRecord {
    /// The library named in the command's `CUDA_INJECTION64_PATH`, when pinscope named it.
    pub library: Option<PathBuf>,
    /// Why it was not given to the command (one sentence), when it was not.
    pub not_injected: Option<String>,
    /// Processes whose library connected to pinscope.
    pub processes: u64,
    /// Events received (all written to the events CSV).
    pub events: u64,
    /// Events the library dropped because its connection to pinscope was full.
    pub dropped: u64,
}

/// Everything about an observed run that is not a timeline value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedSidecar {
    pub schema_version: u32,
    pub pinscope_version: String,
    pub started_at: String,
    pub finished_at: String,
    /// The observed command and its arguments.
    pub command: Vec<String>,
    /// pinscope's own command line.
    pub command_line: Vec<String>,
    pub ending: Ending,
    /// Signals pinscope received while observing (`SIGINT`, `SIGTERM` forwarded, …).
    pub signals_received: Vec<String>,
    pub machine: Machine,
    /// Time between samples.
    pub interval_ms: u64,
    pub samples: u64,
    /// Most processes seen in the tree at once.
    pub max_processes: u64,
    pub unavailable: Vec<Unavailable>,
    pub cupti: CuptiRecord,
    /// The injection library and what it sent (absent in sidecars older than it: nothing sent).
    #[serde(default)]
    pub events: EventsRecord,
    /// Notes of reads that failed part-way (a process gone mid-read is not one).
    pub notes: Vec<String>,
    /// The files of this run, by name (in the same folder).
    pub timeline_file: String,
    pub events_file: String,
}

impl ObservedSidecar {
    pub const SCHEMA_VERSION: u32 = 1;

    pub fn read(path: &Path) -> Result<ObservedSidecar, Error> {
        let bytes = crate::input::read_input(path, &crate::input::SIDECAR_JSON)?;
        serde_json::from_slice(&bytes).map_err(|e| Error::BadResults {
            path: path.to_path_buf(),
            reason: format!("not an observed run's sidecar ({e})"),
        })
    }
}

/// The stem shared by an observed run's files, from any of them (`x.timeline.csv` → `x`).
pub fn observed_stem(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    [TIMELINE_SUFFIX, OBSERVED_SUFFIX, EVENTS_SUFFIX]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .map(|stem| path.with_file_name(stem))
}

/// `stem` + `suffix` as a path.
pub fn with_suffix(stem: &Path, suffix: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: f64, scope: Scope, reading: &str, value: f64) -> TimelinePoint {
        TimelinePoint {
            t_s: t,
            scope,
            source: Source::Status,
            reading: reading.into(),
            value,
            unit: Unit::Bytes,
        }
    }

    #[test]
    fn timeline_round_trips_and_never_replaces_a_file() {
        let d = tempfile::tempdir().expect("dir");
        let path = d.path().join("x.timeline.csv");
        let policy = super::super::OutputPolicy::default();
        let mut w = TimelineWriter::create(&policy, &path).expect("create");
        let points = vec![
            p(0.0, Scope::Process(42), "vm_rss", 4096.0),
            p(0.1, Scope::Tree, "vm_rss", 8192.0),
            TimelinePoint {
                source: Source::Meminfo,
                ..p(0.1, Scope::Machine, "mem_available", 1e9)
            },
        ];
        w.write(&points).expect("write");
        drop(w);
        assert_eq!(read_timeline(&path).expect("read"), points);
        let again = TimelineWriter::create(&policy, &path);
        assert!(again.is_err(), "an existing timeline is never replaced");
    }

    #[test]
    fn a_foreign_csv_is_refused_with_a_sentence() {
        let d = tempfile::tempdir().expect("dir");
        let path = d.path().join("x.timeline.csv");
        std::fs::write(&path, "a,b\n1,2\n").expect("write");
        let e = read_timeline(&path).expect_err("not a timeline");
        assert!(e.to_string().contains("header"), "{e}");
        std::fs::write(
            &path,
            TIMELINE_HEADER.join(",") + "\nx,1,status,vm_rss,1,bytes\n",
        )
        .expect("write");
        let e = read_timeline(&path).expect_err("bad time");
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn every_source_has_its_own_name_and_round_trips_through_the_csv() {
        for s in Source::ALL {
            assert_eq!(Source::from_name(s.name()), Some(s));
        }
        let names: std::collections::BTreeSet<_> = Source::ALL.map(Source::name).into();
        assert_eq!(names.len(), Source::ALL.len());
        let d = tempfile::tempdir().expect("dir");
        let path = d.path().join("w.timeline.csv");
        let policy = super::super::OutputPolicy::default();
        let mut w = TimelineWriter::create(&policy, &path).expect("create");
        let windows = |source, scope, reading: &str, value| TimelinePoint {
            source,
            ..p(1.5, scope, reading, value)
        };
        let points = vec![
            windows(Source::Pdh, Scope::Process(4242), "process_shared", 4096.0),
            windows(Source::Pdh, Scope::Tree, "process_shared", 4096.0),
            windows(Source::Pdh, Scope::Machine, "adapter_shared", 8192.0),
            windows(Source::Dxgi, Scope::Machine, "nonlocal_budget", 1e10),
            windows(Source::Commit, Scope::Machine, "commit_charge", 2e9),
        ];
        w.write(&points).expect("write");
        drop(w);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.contains("1.500,4242,pdh,process_shared,4096,bytes"),
            "{text}"
        );
        assert!(
            text.contains("1.500,,commit,commit_charge,2000000000,bytes"),
            "{text}"
        );
        assert_eq!(read_timeline(&path).expect("read back"), points);
    }

    /// `docs/observe.md`'s table of what `observe` records has a row for every source.
    #[test]
    fn the_docs_table_names_every_source() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/observe.md");
        let doc = std::fs::read_to_string(path).expect("docs/observe.md is readable");
        for s in Source::ALL {
            let row = format!("\n| `{}`: ", s.name());
            assert!(doc.contains(&row), "docs/observe.md has no row {row:?}");
        }
    }

    #[test]
    fn exit_status_is_the_shells() {
        assert_eq!(Ending::Exit { code: 7 }.exit_status(), 7);
        assert_eq!(Ending::Signal { signal: 2 }.exit_status(), 130);
        assert_eq!(Ending::Signal { signal: 15 }.exit_status(), 143);
    }

    #[test]
    fn stem_of_each_file() {
        let want = Some(PathBuf::from("r/a-b"));
        assert_eq!(observed_stem(Path::new("r/a-b.timeline.csv")), want);
        assert_eq!(observed_stem(Path::new("r/a-b.observed.json")), want);
        assert_eq!(observed_stem(Path::new("r/a-b.csv")), None);
        assert_eq!(
            with_suffix(Path::new("r/a-b"), EVENTS_SUFFIX),
            PathBuf::from("r/a-b.events.csv")
        );
    }
}
