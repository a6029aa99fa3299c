//! The comparison as plain data: runs, the machine fields that differ, and one entry per
//! (case, lane) with each run's median, ratio to the baseline, CI and verdict. Exporters only
//! format this.

use super::memory::{HostPhase, MemoryFinding};
use crate::accounting;
use crate::results::{Lane, ResultSet, Row, Sidecar, Status};
use crate::scenario::{Direction, Engine};
use crate::stats::{self, Sample, VerdictRule};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// One run (results file) in the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// `A`, `B`, `C`… in command-line order; `A` is the baseline.
    pub label: String,
    pub path: String,
    pub run_id: String,
    pub started_at: String,
    /// The run was interrupted or ended early: it holds only the cases that finished.
    pub partial: bool,
    /// Made up for tests or demonstrations ([`ResultSet::is_synthetic`]), not a measurement.
    #[serde(skip)]
    pub synthetic: bool,
}

/// A machine field whose value is not the same in every run, or that some run does not know.
#[derive(Debug, Clone, Serialize)]
pub struct MachineDiff {
    pub field: String,
    /// One value per run, in run order (`None` when the run does not know it).
    pub values: Vec<Option<String>>,
}

impl MachineDiff {
    /// The known values are not all the same (an unknown value is no difference).
    pub fn differs(&self) -> bool {
        let mut known = self.values.iter().flatten();
        known.next().is_some_and(|first| known.any(|v| v != first))
    }
}

/// One run's result for one case and lane.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// How the case ended (JSON: `ok`, `failed: …` or `skipped: …`, as the CSV writes it).
    #[serde(serialize_with = "status_field")]
    pub status: Status,
    /// Median bandwidth, GB/s (1e9 B/s): from the raw samples when present, else the CSV median.
    pub median_gbs: Option<f64>,
    /// Rows whose number is a time (latency modes, empty kernel, pointer chase): the median
    /// time, µs (the CSV's `lat_p50_us`; the chase's is per load). Lower is better.
    pub time_p50_us: Option<f64>,
    /// Raw bandwidth samples the median and CI were computed from (0 = CSV median only).
    pub samples: usize,
    /// Against the baseline run (`None` for the baseline itself, or when either side has no
    /// bandwidth, e.g. a failed case).
    pub change: Option<stats::Comparison>,
    /// Accounting deltas (MiB), aligned with [`Comparison::accounting_columns`].
    pub accounting: Vec<Option<f64>>,
    /// Where the run recorded what the case's host memory alone cost.
    pub host_phase: HostPhase,
}

/// One case and lane across all runs.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub case_key: String,
    pub case_label: String,
    pub scenario: String,
    pub lane: Lane,
    /// The case's direction (a bidirectional case has three lanes).
    #[serde(skip)]
    pub direction: Direction,
    pub size_bytes: u64,
    /// The case's number is a time, not a bandwidth ([`Row::measures_time`]): its table shows
    /// times, and its verdict still reads faster when the time went down.
    pub measures_time: bool,
    /// One per run, in run order; `None` where the run does not have this case.
    pub cells: Vec<Option<Cell>>,
}

impl Entry {
    /// Labels of the runs that have this case, when not all of them do.
    pub fn present_in(&self, runs: &[RunInfo]) -> Option<Vec<String>> {
        if self.cells.iter().all(Option::is_some) {
            return None;
        }
        Some(
            self.cells
                .iter()
                .zip(runs)
                .filter(|(c, _)| c.is_some())
                .map(|(_, r)| r.label.clone())
                .collect(),
        )
    }
}

/// Several runs side by side, the first being the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<RunInfo>,
    pub machine_diffs: Vec<MachineDiff>,
    /// Notes for the reader (partial runs, missing sidecars).
    pub notes: Vec<String>,
    /// The rule every verdict follows (noise threshold, interval); its fields stand at the top
    /// level of the JSON.
    #[serde(flatten)]
    pub rule: VerdictRule,
    /// `d_<phase>_<metric>_mib` columns that at least one run has a value for.
    pub accounting_columns: Vec<String>,
    /// The phase and metric of each of [`Self::accounting_columns`].
    #[serde(skip)]
    pub accounting_keys: Vec<(accounting::Phase, accounting::Metric)>,
    /// In first-seen order: baseline cases first, then cases only later runs have.
    pub entries: Vec<Entry>,
    /// What the largest page-locked allocation cost in each run (the finding `report` states
    /// too); `None` when no run held page-locked memory with its memory observed.
    pub memory: Option<MemoryFinding>,
}

impl Comparison {
    /// Entries missing from at least one run, with the labels of the runs that have them.
    pub fn partial_entries(&self) -> Vec<(&Entry, Vec<String>)> {
        self.entries
            .iter()
            .filter_map(|e| e.present_in(&self.runs).map(|p| (e, p)))
            .collect()
    }
}

/// Run label for position `i`: A…Z, then R27, R28….
pub fn run_label(i: usize) -> String {
    if i < 26 {
        char::from(b'A' + i as u8).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

/// The settings a run recorded (in its sidecar), if any.
fn settings_of(set: &ResultSet) -> Option<&crate::platform::Settings> {
    set.sidecar.as_ref()?.machine.settings.as_ref()
}

/// The machine fields compared across runs (`None`: the run does not know the field); the
/// recorded settings too when `with_settings` (every run recorded them).
fn machine_fields(set: &ResultSet, with_settings: bool) -> Vec<(&'static str, Option<String>)> {
    let mut fields: Vec<(&'static str, Option<String>)> = base_machine_fields(set)
        .into_iter()
        .map(|(f, v)| (f, Some(v).filter(|v| !v.is_empty())))
        .collect();
    if let Some(settings) = settings_of(set).filter(|_| with_settings) {
        fields.extend(
            settings
                .rows()
                .into_iter()
                .map(|r| (r.label, Some(r.value).filter(|v| !v.is_empty()))),
        );
    }
    fields
}

fn base_machine_fields(set: &ResultSet) -> Vec<(&'static str, String)> {
    let k = set
        .rows
        .first()
        .map(|r| (*r.machine).clone())
        .unwrap_or_else(|| {
            set.sidecar
                .as_ref()
                .map(|s| s.machine.key())
                .unwrap_or_default()
        });
    let m = set.sidecar.as_ref().map(|s| &s.machine);
    vec![
        ("host", k.host_name),
        ("platform", k.platform.to_string()),
        ("os", k.os),
        ("driver model", k.driver_model.to_string()),
        ("driver version", k.driver_version),
        ("gpu", k.gpu),
        ("pcie link", k.pcie_link),
        ("kernel", m.map(|m| m.kernel.clone()).unwrap_or_default()),
        ("cpu", m.map(|m| m.cpu.clone()).unwrap_or_default()),
        (
            "cpu threads",
            m.filter(|m| m.cpu_threads > 0)
                .map(|m| m.cpu_threads.to_string())
                .unwrap_or_default(),
        ),
        (
            "ram",
            m.filter(|m| m.ram_bytes > 0)
                .map(|m| crate::units::format_size(m.ram_bytes))
                .unwrap_or_default(),
        ),
    ]
}

/// A field every row of a run repeats: from the sidecar, else from the first row, else empty.
fn run_field(
    set: &ResultSet,
    in_sidecar: impl Fn(&Sidecar) -> &str,
    in_row: impl Fn(&Row) -> &str,
) -> String {
    set.sidecar
        .as_ref()
        .map(in_sidecar)
        .or_else(|| set.rows.first().map(in_row))
        .unwrap_or_default()
        .to_string()
}

/// Builds the comparison of `sets` (the first is the baseline). Pure: no I/O.
pub fn build(sets: &[ResultSet], noise: f64) -> Comparison {
    let rule = VerdictRule::with_noise(noise);
    let runs: Vec<RunInfo> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| RunInfo {
            label: run_label(i),
            path: s.path.display().to_string(),
            run_id: run_field(s, |c| &c.run_id, |r| &r.run_id),
            started_at: run_field(s, |c| &c.started_at, |r| &r.started_at),
            partial: s.is_partial(),
            synthetic: s.is_synthetic(),
        })
        .collect();
    let with_settings = sets.iter().all(|s| settings_of(s).is_some());
    let machine_diffs = machine_diffs(sets, with_settings);
    let notes = notes(&runs, sets, with_settings);
    let acct_keys: Vec<(accounting::Phase, accounting::Metric)> = accounting::columns()
        .filter(|(p, m)| {
            sets.iter()
                .any(|s| s.rows.iter().any(|r| r.accounting_value(*p, *m).is_some()))
        })
        .collect();
    let accounting_columns: Vec<String> = acct_keys
        .iter()
        .map(|(p, m)| accounting::column(*p, *m))
        .collect();
    let entries = EntryBuilder::new(sets, &rule, &acct_keys).entries();
    let accounting_keys = acct_keys;
    Comparison {
        runs,
        machine_diffs,
        notes,
        rule,
        accounting_columns,
        accounting_keys,
        entries,
        memory: MemoryFinding::of(sets),
    }
}

/// The machine fields whose value is not the same in every run (an unknown value counts: it is
/// named as unknown, not as a difference).
fn machine_diffs(sets: &[ResultSet], with_settings: bool) -> Vec<MachineDiff> {
    let fields: Vec<Vec<(&str, Option<String>)>> = sets
        .iter()
        .map(|s| machine_fields(s, with_settings))
        .collect();
    let Some(f0) = fields.first() else {
        return Vec::new();
    };
    (0..f0.len())
        .filter_map(|j| {
            let values: Vec<Option<String>> = fields.iter().map(|f| f[j].1.clone()).collect();
            values.iter().any(|v| *v != values[0]).then(|| MachineDiff {
                field: f0[j].0.to_string(),
                values,
            })
        })
        .collect()
}

/// Notes for the reader: settings not compared (some run recorded none), partial runs, runs
/// without a sidecar or without raw samples.
fn notes(runs: &[RunInfo], sets: &[ResultSet], with_settings: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let without: Vec<&str> = runs
        .iter()
        .zip(sets)
        .filter(|(_, s)| settings_of(s).is_none())
        .map(|(r, _)| r.label.as_str())
        .collect();
    if !with_settings && without.len() < runs.len() {
        notes.push(format!(
            "Settings (PCIe link under load, clocks, NUMA, HAGS, TDR, CUDA environment) are not compared: run(s) {} recorded none (written by a pinscope that did not record them, or without a sidecar).",
            without.join(", ")
        ));
    }
    for (r, s) in runs.iter().zip(sets) {
        if r.partial {
            notes.push(format!(
                "{} ({}) is a partial run: it holds only the cases that finished before it stopped.",
                r.label, r.path
            ));
        }
        if s.sidecar.is_none() {
            notes.push(format!(
                "{} ({}) has no JSON sidecar beside it, so kernel, CPU and RAM are unknown.",
                r.label, r.path
            ));
        }
        if s.samples.is_empty() {
            notes.push(format!(
                "{} ({}) has no raw samples ({} is missing or empty), so its cases have no confidence interval and no verdict: only the CSV medians are shown.",
                r.label,
                r.path,
                crate::results::samples_path(&s.path).display()
            ));
        }
    }
    notes
}

/// Builds the entries: one per (case, lane) any run has, each run's cell against the baseline.
struct EntryBuilder<'a> {
    sets: &'a [ResultSet],
    rule: &'a VerdictRule,
    acct_keys: &'a [(accounting::Phase, accounting::Metric)],
    /// Per run: (case_key, lane) -> row.
    indexes: Vec<HashMap<(&'a str, Lane), &'a Row>>,
}

impl<'a> EntryBuilder<'a> {
    fn new(
        sets: &'a [ResultSet],
        rule: &'a VerdictRule,
        acct_keys: &'a [(accounting::Phase, accounting::Metric)],
    ) -> Self {
        // Index every run once.
        let indexes = sets
            .iter()
            .map(|s| {
                s.rows
                    .iter()
                    .map(|r| ((r.case_key.as_str(), r.lane), r))
                    .collect()
            })
            .collect();
        EntryBuilder {
            sets,
            rule,
            acct_keys,
            indexes,
        }
    }

    /// In first-seen order: baseline cases first, then cases only later runs have.
    fn entries(&self) -> Vec<Entry> {
        let mut seen = BTreeSet::new();
        let mut keys: Vec<(&Row, (&str, Lane))> = Vec::new();
        for s in self.sets {
            for r in &s.rows {
                let k = (r.case_key.as_str(), r.lane);
                if seen.insert(k) {
                    keys.push((r, k));
                }
            }
        }
        keys.par_iter()
            .map(|(first, k)| self.entry(first, *k))
            .collect()
    }

    /// The entry of `key`, described by the first row that has it.
    fn entry(&self, first: &Row, key: (&str, Lane)) -> Entry {
        let rows: Vec<Option<&Row>> = self
            .indexes
            .iter()
            .map(|ix| ix.get(&key).copied())
            .collect();
        let base = rows[0].and_then(|r| self.sample_of(0, r).0);
        let cells = rows
            .iter()
            .enumerate()
            .map(|(i, row)| row.map(|row| self.cell(i, row, base.as_ref())))
            .collect();
        Entry {
            case_key: first.case_key.clone(),
            case_label: first.title(),
            scenario: first.scenario.to_string(),
            lane: first.lane,
            direction: first.direction,
            size_bytes: first.size_bytes,
            measures_time: first.measures_time(),
            cells,
        }
    }

    /// Run `i`'s cell for `row`, compared with the baseline's sample `base` (not for the
    /// baseline itself).
    fn cell(&self, i: usize, row: &Row, base: Option<&Sample>) -> Cell {
        let (s, raw) = self.sample_of(i, row);
        let change = match (i, base, &s) {
            (1.., Some(b), Some(o)) => Some(self.rule.compare(b, o)),
            _ => None,
        };
        Cell {
            status: row.status.clone(),
            median_gbs: s
                .as_ref()
                .map(Sample::median)
                .filter(|_| row.engine != Engine::Empty),
            time_p50_us: row.time_p50_us(),
            samples: raw,
            change,
            accounting: self
                .acct_keys
                .iter()
                .map(|(p, m)| row.accounting_value(*p, *m))
                .collect(),
            host_phase: HostPhase::of(row),
        }
    }

    /// The raw samples of a finished case of run `i`, or its CSV median as a one-value sample;
    /// with the number of raw samples used.
    fn sample_of(&self, i: usize, row: &Row) -> (Option<Sample>, usize) {
        if !row.status.is_ok() {
            return (None, 0);
        }
        // Nothing moves in an empty kernel, so its bandwidth samples are 0: its verdict comes
        // from the CSV's median time as a rate (one value: the ratio, no interval).
        if row.engine == Engine::Empty {
            let rate = row.time_p50_us().map(|us| 1.0 / us);
            return (rate.and_then(|r| Sample::new(vec![r]).ok()), 0);
        }
        let raw = self.sets[i]
            .bandwidth_samples(&row.case_key, row.lane)
            .to_vec();
        if raw.is_empty() {
            (row.bw_median_gbs.and_then(|m| Sample::new(vec![m]).ok()), 0)
        } else {
            let n = raw.len();
            (Sample::new(raw).ok(), n)
        }
    }
}

fn status_field<S: serde::Serializer>(status: &Status, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&status.to_field())
}
