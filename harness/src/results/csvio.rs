//! CSV writing (one flush per case) and reading (columns looked up by name, schema checked).
//!
//! Size: over 500 lines: writer and reader of both CSV files (results and samples) with their
//! located error messages; they share the column list and the header lookup.

use super::samples::Samples;
use super::schema::*;
use super::sidecar::{samples_path, sidecar_path};
use crate::Error;
use crate::accounting;
use crate::platform::{Recorded, RecordedName};
use crate::scenario::{Axes, HostFlags, HostKind};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A field of a [`Row`], as a column reads and writes it.
enum Field<'a> {
    Text(&'a mut String),
    /// Text most rows of a file share: a row read with the previous row's value keeps it.
    Shared(&'a mut Arc<str>),
    /// A whole number of bytes or an index.
    Whole(&'a mut u64),
    Index(&'a mut usize),
    /// A count that fits in 32 bits.
    Small(&'a mut u32),
    /// A measured value: empty, or finite and 0 or more.
    Measured(&'a mut Option<f64>),
    /// A probe's value in MiB: empty, or finite (of either sign).
    Mib(&'a mut Option<f64>),
    Lane(&'a mut Lane),
    Status(&'a mut Status),
    /// A typed value written as a name ([`Cell`]).
    Cell(&'a mut dyn Cell),
}

/// A typed field written as text and read back from it.
trait Cell {
    fn text(&self) -> String;
    /// The value of `s`, or the values the column may hold.
    fn set(&mut self, s: &str) -> Result<(), String>;
}

fn one_of<T: Named>() -> String {
    T::ALL
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl<T: Named> Cell for T {
    fn text(&self) -> String {
        self.name().into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = T::from_name(s).ok_or_else(one_of::<T>)?;
        Ok(())
    }
}

/// Empty for `None`.
impl<T: Named> Cell for Option<T> {
    fn text(&self) -> String {
        self.map(|v| v.name()).unwrap_or_default().into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = match s {
            "" => None,
            s => Some(T::from_name(s).ok_or_else(one_of::<T>)?),
        };
        Ok(())
    }
}

/// `device` for `None` (device engines have no host buffer).
impl Cell for Option<HostKind> {
    fn text(&self) -> String {
        host_name(*self).into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = match s {
            "device" => None,
            s => Some(s.parse::<HostKind>().map_err(|_| {
                let names: Vec<&str> = HostKind::ALL.iter().map(|h| h.name()).collect();
                format!("{}, device", names.join(", "))
            })?),
        };
        Ok(())
    }
}

impl Cell for HostFlags {
    fn text(&self) -> String {
        self.label()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = HostFlags::from_label(s)
            .ok_or_else(|| format!("none or {} joined by +", HostFlags::NAMES.join(", ")))?;
        Ok(())
    }
}

/// Any text: what this version does not know is kept as read.
impl<T: RecordedName> Cell for Recorded<T> {
    fn text(&self) -> String {
        Recorded::text(self).into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = Recorded::read(s);
        Ok(())
    }
}

/// `key=value;...`, each key a case key.
impl Cell for Axes {
    fn text(&self) -> String {
        self.to_string()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = Axes::parse(s)?;
        Ok(())
    }
}

/// Empty for `None`.
impl Cell for Option<Device> {
    fn text(&self) -> String {
        self.map(|d| d.to_string()).unwrap_or_default()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = match s {
            "" => None,
            s => Some(Device::parse(s).ok_or("a GPU's ordinal or all")?),
        };
        Ok(())
    }
}

/// One column of the results CSV: its name, the unit of its values (empty when it has none) and
/// the field of [`Row`] it holds. Reading and writing go through the same field, so a new column
/// is one entry in [`HEAD`] or [`TAIL`] (and its line in the README, which a test checks).
pub struct Column {
    pub name: &'static str,
    pub unit: &'static str,
    field: for<'a> fn(&'a mut Row) -> Field<'a>,
}

/// `col!(name, unit, Kind, field)`: the column `name` (values in `unit`, empty when it has none)
/// holding `Field::Kind` of the [`Row`] field `field` (a path such as `machine.os`).
macro_rules! col {
    ($name:literal, $unit:literal, machine.$field:ident) => {
        Column {
            name: $name,
            unit: $unit,
            field: |r| Field::Text(&mut Arc::make_mut(&mut r.machine).$field),
        }
    };
    ($name:literal, $unit:literal, $kind:ident, machine.$field:ident) => {
        Column {
            name: $name,
            unit: $unit,
            field: |r| Field::$kind(&mut Arc::make_mut(&mut r.machine).$field),
        }
    };
    ($name:literal, $unit:literal, $kind:ident, $($field:ident).+) => {
        Column {
            name: $name,
            unit: $unit,
            field: |r| Field::$kind(&mut r.$($field).+),
        }
    };
}

/// The leading columns, in order (after `schema_version`, which every file starts with and which
/// is checked on its own). Every file has them.
const HEAD: &[Column] = &[
    col!("run_id", "", Shared, run_id),
    col!("started_at", "", Shared, started_at),
    col!("host_name", "", machine.host_name),
    col!("platform", "", Cell, machine.platform),
    col!("os", "", machine.os),
    col!("driver_model", "", Cell, machine.driver_model),
    col!("gpu", "", machine.gpu),
    col!("driver_version", "", machine.driver_version),
    col!("pcie_link", "", machine.pcie_link),
    col!("scenario", "", Shared, scenario),
    col!("case_label", "", Text, case_label),
    col!("case_index", "", Index, case_index),
    col!("case_key", "", Text, case_key),
    col!("lane", "", Lane, lane),
    col!("host", "", Cell, host),
    col!("flags", "", Cell, flags),
    col!("engine", "", Cell, engine),
    col!("direction", "", Cell, direction),
    col!("mode", "", Cell, mode),
    col!("size_bytes", "B", Whole, size_bytes),
    col!("chunk_bytes", "B", Whole, chunk_bytes),
    col!("ring", "", Small, ring),
    col!("streams", "", Small, streams),
    col!("threads", "", Small, threads),
    col!("batch", "", Small, batch),
    col!("axes", "", Cell, axes),
    col!("status", "", Status, status),
    col!("samples", "", Small, samples),
    col!("outliers", "", Small, outliers),
    col!("bw_median_gbs", "GB/s", Measured, bw_median_gbs),
    col!("bw_min_gbs", "GB/s", Measured, bw_min_gbs),
    col!("bw_max_gbs", "GB/s", Measured, bw_max_gbs),
    col!("bw_spread_pct", "%", Measured, bw_spread_pct),
    col!("time_median_ms", "ms", Measured, time_median_ms),
    col!("time_min_ms", "ms", Measured, time_min_ms),
    col!("time_max_ms", "ms", Measured, time_max_ms),
    col!("wall_median_ms", "ms", Measured, wall_median_ms),
    col!("verified", "", Cell, verified),
    col!("alloc_ms", "ms", Measured, alloc_ms),
    col!("register_ms", "ms", Measured, register_ms),
    col!("unregister_ms", "ms", Measured, unregister_ms),
    col!("free_ms", "ms", Measured, free_ms),
    col!("pinned_bytes", "B", Whole, pinned_bytes),
    col!("device_bytes", "B", Whole, device_bytes),
];

/// The columns after the accounting family, in order. Files written before a column existed
/// lack it: it reads as empty (`gpus_at_once` as 1).
const TAIL: &[Column] = &[
    col!("max_alloc_held_mib", "MiB", Mib, max_alloc_held_mib),
    col!("max_alloc_free_mib", "MiB", Mib, max_alloc_free_mib),
    col!("pinned_ceiling_mib", "MiB", Mib, pinned_ceiling_mib),
    col!("stopped_by", "", Cell, stopped_by),
    col!("device", "", Cell, device),
    col!("gpus_at_once", "", Small, gpus_at_once),
    col!("lat_min_us", "µs", Measured, lat_min_us),
    col!("lat_p50_us", "µs", Measured, lat_p50_us),
    col!("lat_p90_us", "µs", Measured, lat_p90_us),
    col!("lat_p99_us", "µs", Measured, lat_p99_us),
    col!("lat_event_p50_us", "µs", Measured, lat_event_p50_us),
    col!("max_alloc_host_mib", "MiB", Mib, max_alloc_host_mib),
    col!("pinned_ceiling_cap_mib", "MiB", Mib, pinned_ceiling_cap_mib),
    col!("wait", "", Cell, wait),
];

/// The fixed leading columns of the results CSV, in order: `schema_version` and [`HEAD`].
/// Accounting columns follow them, `d_<phase>_<metric>_mib` for each phase and metric
/// ([`crate::accounting::columns`]), then [`TAIL`]; the late phases' come last.
pub fn base_columns() -> Vec<&'static str> {
    std::iter::once("schema_version")
        .chain(HEAD.iter().map(|c| c.name))
        .collect()
}

/// Every column of the results CSV, in order.
pub fn columns() -> Vec<String> {
    let mut cols: Vec<String> = base_columns().into_iter().map(String::from).collect();
    let family = |late: bool| {
        accounting::columns()
            .filter(move |(p, _)| p.is_late() == late)
            .map(|(p, m)| accounting::column(p, m))
    };
    cols.extend(family(false));
    cols.extend(TAIL.iter().map(|c| c.name.to_string()));
    cols.extend(family(true));
    cols
}

/// The column named `name` among the fixed ones (not the accounting family).
pub fn column(name: &str) -> Option<&'static Column> {
    HEAD.iter().chain(TAIL).find(|c| c.name == name)
}

impl Column {
    /// The column's value in `row` when it holds a number (a measured value, a probe's MiB).
    pub fn number(&self, row: &Row) -> Option<f64> {
        let mut r = row.clone();
        match (self.field)(&mut r) {
            Field::Measured(v) | Field::Mib(v) => *v,
            Field::Whole(v) => Some(*v as f64),
            Field::Small(v) => Some(f64::from(*v)),
            Field::Index(v) => Some(*v as f64),
            Field::Text(_)
            | Field::Shared(_)
            | Field::Lane(_)
            | Field::Status(_)
            | Field::Cell(_) => None,
        }
    }

    /// The column's value in `row` as the CSV writes it.
    fn write(&self, row: &mut Row) -> String {
        match (self.field)(row) {
            Field::Text(s) => s.clone(),
            Field::Shared(s) => s.to_string(),
            Field::Whole(v) => v.to_string(),
            Field::Index(v) => v.to_string(),
            Field::Small(v) => v.to_string(),
            Field::Measured(v) | Field::Mib(v) => opt(*v),
            Field::Lane(l) => l.name().into(),
            Field::Status(s) => s.to_field(),
            Field::Cell(c) => c.text(),
        }
    }

    /// Reads `s` into `row`; the reason on a bad value.
    fn read(&self, row: &mut Row, s: &str) -> Result<(), String> {
        let name = self.name;
        let whole = || -> Result<u64, String> {
            s.parse()
                .map_err(|_| format!("`{name}` is `{s}`, not a whole number"))
        };
        match (self.field)(row) {
            Field::Text(t) => *t = s.into(),
            Field::Shared(t) => {
                if **t != *s {
                    *t = s.into();
                }
            }
            Field::Whole(v) => *v = whole()?,
            Field::Index(v) => *v = whole()? as usize,
            Field::Small(v) => {
                *v = u32::try_from(whole()?).map_err(|_| format!("`{name}` is too large"))?;
            }
            Field::Measured(v) => {
                *v = if s.is_empty() {
                    None
                } else {
                    let x = s
                        .parse::<f64>()
                        .map_err(|_| format!("`{name}` is `{s}`, not a number"))?;
                    // Bandwidths, times and spreads are never negative, infinite or NaN.
                    if !x.is_finite() || x < 0.0 {
                        return Err(format!(
                            "`{name}` is `{s}`: it must be a finite number, 0 or more"
                        ));
                    }
                    Some(x)
                }
            }
            Field::Mib(v) => {
                *v = if s.is_empty() {
                    None
                } else {
                    Some(
                        s.parse::<f64>()
                            .ok()
                            .filter(|x| x.is_finite())
                            .ok_or_else(|| format!("`{s}` is not a finite number"))?,
                    )
                }
            }
            Field::Lane(l) => {
                *l = Lane::parse(s)
                    .ok_or_else(|| format!("`lane` is `{s}`, not h2d, d2h, sum or device"))?;
            }
            Field::Status(st) => {
                *st = Status::from_field(s)
                    .ok_or_else(|| format!("`status` is `{s}`, not ok / failed: … / skipped: …"))?;
            }
            Field::Cell(c) => {
                c.set(s)
                    .map_err(|names| format!("`{name}` is `{s}`, not one of {names}"))?;
            }
        }
        Ok(())
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

fn row_fields(r: &Row) -> Vec<String> {
    let mut r = r.clone();
    let mut f = vec![SCHEMA_VERSION.to_string()];
    f.extend(HEAD.iter().map(|c| c.write(&mut r)));
    let family = |r: &Row, late: bool| -> Vec<String> {
        accounting::columns()
            .filter(|(p, _)| p.is_late() == late)
            .map(|(p, m)| opt(r.accounting_value(p, m)))
            .collect()
    };
    f.extend(family(&r, false));
    f.extend(TAIL.iter().map(|c| c.write(&mut r)));
    f.extend(family(&r, true));
    f
}

fn csv_error(p: &Path, e: csv::Error) -> Error {
    Error::io(p, std::io::Error::other(e))
}

/// Writes result rows as cases finish; every `write_case` ends with a flush to disk, so a run
/// that dies keeps every finished case.
pub struct ResultsWriter {
    path: PathBuf,
    rows: csv::Writer<File>,
    samples_path: PathBuf,
    samples: csv::Writer<File>,
}

impl ResultsWriter {
    /// Creates `path` and its samples file, both new: an existing file is never replaced.
    pub fn create(path: &Path) -> Result<Self, Error> {
        Self::create_with(path, &super::OutputPolicy::default())
    }

    /// [`ResultsWriter::create`] under the output policy of a command (the files it reads).
    pub fn create_with(path: &Path, policy: &super::OutputPolicy) -> Result<Self, Error> {
        let samples_path = samples_path(path);
        // Both checked before either is created: nothing is written when one is refused.
        policy.check(path)?;
        policy.check(&samples_path)?;
        let mut rows = csv::Writer::from_writer(policy.create_new(path)?);
        rows.write_record(columns())
            .map_err(|e| csv_error(path, e))?;
        let mut samples = csv::Writer::from_writer(policy.create_new(&samples_path)?);
        samples
            .write_record(SAMPLE_COLUMNS)
            .map_err(|e| csv_error(&samples_path, e))?;
        let mut w = Self {
            path: path.to_path_buf(),
            rows,
            samples_path,
            samples,
        };
        w.flush()?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one case's rows and raw samples, then flushes both files to disk.
    pub fn write_case(&mut self, rows: &[Row], samples: &[SampleRow]) -> Result<(), Error> {
        for r in rows {
            self.rows
                .write_record(row_fields(r))
                .map_err(|e| Error::io(&self.path, std::io::Error::other(e)))?;
        }
        for s in samples {
            self.samples
                .write_record(sample_fields(s))
                .map_err(|e| Error::io(&self.samples_path, std::io::Error::other(e)))?;
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.rows.flush().map_err(|e| Error::io(&self.path, e))?;
        self.samples
            .flush()
            .map_err(|e| Error::io(&self.samples_path, e))?;
        self.rows
            .get_ref()
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))?;
        self.samples
            .get_ref()
            .sync_data()
            .map_err(|e| Error::io(&self.samples_path, e))?;
        Ok(())
    }
}

pub const SAMPLE_COLUMNS: [&str; 7] = [
    "schema_version",
    "case_key",
    "lane",
    "series",
    "index",
    "t_ms",
    "value",
];

/// Finds each named column in a header, or says which one is missing.
struct Header {
    path: PathBuf,
    names: Vec<String>,
}

impl Header {
    fn new(path: &Path, rec: &csv::StringRecord) -> Self {
        Self {
            path: path.to_path_buf(),
            names: rec.iter().map(|s| s.trim().to_string()).collect(),
        }
    }
    fn idx(&self, col: &str) -> Result<usize, Error> {
        self.names
            .iter()
            .position(|n| n == col)
            .ok_or_else(|| Error::BadResults {
                path: self.path.clone(),
                reason: format!("it has no `{col}` column (is it a pinscope results CSV?)"),
            })
    }
}

/// The 1-based line of the record that the csv reader says starts at byte offset `byte`. After
/// a CRLF line the reader's offset (and its own line count) points at the `\n` of the line before,
/// which put errors on CRLF files one line too early; line ends are skipped first.
fn line_at(bytes: &[u8], byte: u64) -> u64 {
    let mut start = usize::try_from(byte).unwrap_or(usize::MAX).min(bytes.len());
    while bytes.get(start).is_some_and(|c| matches!(c, b'\r' | b'\n')) {
        start += 1;
    }
    1 + bytes
        .get(..start)
        .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count()) as u64
}

fn bad(path: &Path, line: u64, reason: String) -> Error {
    Error::BadResults {
        path: path.to_path_buf(),
        reason: format!("line {line}: {reason}"),
    }
}

/// A CSV reader over `bytes` and its header.
fn open_csv<'b>(path: &Path, bytes: &'b [u8]) -> Result<(csv::Reader<&'b [u8]>, Header), Error> {
    let mut rdr = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
    let header = rdr.headers().map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: format!("it is not a readable CSV ({e})"),
    })?;
    let h = Header::new(path, header);
    Ok((rdr, h))
}

/// Calls `each` with every record after the header and a function giving its 1-based line.
fn for_each_record(
    path: &Path,
    rdr: &mut csv::Reader<&[u8]>,
    bytes: &[u8],
    mut each: impl FnMut(&csv::StringRecord, &dyn Fn() -> u64) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut rec = csv::StringRecord::new();
    loop {
        // Where the record starts; its line is counted from there only when a message needs it.
        let byte = rdr.position().byte();
        let more = rdr.read_record(&mut rec).map_err(|e| Error::BadResults {
            path: path.to_path_buf(),
            reason: format!("it is not a well-formed CSV ({e})"),
        })?;
        if !more {
            return Ok(());
        }
        each(&rec, &|| line_at(bytes, byte))?;
    }
}

/// Reads a results CSV written by this or a compatible pinscope.
pub fn read_rows(path: &Path) -> Result<Vec<Row>, Error> {
    let bytes = crate::input::read_input(path, &crate::input::RESULTS_CSV)?;
    read_rows_from(path, &bytes)
}

/// Reads results CSV text; `path` is only used in messages.
pub fn read_rows_from(path: &Path, bytes: &[u8]) -> Result<Vec<Row>, Error> {
    let (mut rdr, h) = open_csv(path, bytes)?;
    let sv = h.idx("schema_version").map_err(|_| Error::BadResults {
        path: path.to_path_buf(),
        reason: "it has no `schema_version` column, so it is not a pinscope results CSV".into(),
    })?;
    let head: Vec<usize> = HEAD
        .iter()
        .map(|c| h.idx(c.name))
        .collect::<Result<_, _>>()?;
    let acct: Vec<(accounting::Phase, accounting::Metric, Option<usize>)> = accounting::columns()
        .map(|(p, m)| {
            let col = accounting::column(p, m);
            (p, m, h.names.iter().position(|n| *n == col))
        })
        .collect();
    // Added after schema 1 was published: files without them read as the blank row's values.
    let tail: Vec<Option<usize>> = TAIL
        .iter()
        .map(|c| h.names.iter().position(|n| n == c.name))
        .collect();

    let wait_col = TAIL.iter().position(|c| c.name == "wait").unwrap_or(0);
    let mut out: Vec<Row> = Vec::new();
    let mut scratch = Vec::with_capacity(acct.len());
    for_each_record(path, &mut rdr, bytes, |rec, line| {
        // Text from a file anyone may have written: escaped before it reaches a terminal.
        let get = |i: usize| crate::input::escape_text(rec.get(i).unwrap_or("").trim());
        let version = get(sv);
        if version != SCHEMA_VERSION.to_string() {
            let line = line();
            return Err(Error::BadResults {
                path: path.to_path_buf(),
                reason: format!(
                    "line {line} has schema_version `{version}`, this pinscope reads version {SCHEMA_VERSION}; re-run the scenario or use the pinscope that wrote it"
                ),
            });
        }
        let accounting =
            read_accounting(&acct, &get, &mut scratch).map_err(|why| bad(path, line(), why))?;
        // A file without `gpus_at_once` was measured one GPU at a time.
        let mut row = Row {
            gpus_at_once: 1,
            accounting,
            ..Row::default()
        };
        // The shared texts start as the previous row's: read as the same, they stay shared.
        if let Some(prev) = out.last() {
            row.run_id = Arc::clone(&prev.run_id);
            row.started_at = Arc::clone(&prev.started_at);
            row.scenario = Arc::clone(&prev.scenario);
        }
        let cells = HEAD.iter().zip(head.iter().map(|&i| Some(i)));
        let late = TAIL.iter().zip(tail.iter().copied());
        for (c, i) in cells.chain(late) {
            let Some(i) = i else { continue };
            let s = get(i);
            let s = s.as_ref();
            if s.is_empty() && TAIL.iter().any(|t| t.name == c.name) {
                continue;
            }
            c.read(&mut row, s).map_err(|why| bad(path, line(), why))?;
        }
        if tail[wait_col].is_none() {
            row.wait = wait_before_its_column(&row);
        }
        if let Some(prev) = out.last()
            && prev.machine == row.machine
        {
            row.machine = Arc::clone(&prev.machine);
        }
        out.push(row);
        Ok(())
    })?;
    Ok(out)
}

/// A row's accounting deltas: the family's columns the file has (`acct`), those not empty.
/// Gathered in `scratch` and copied at its length: a growing Vec kept up to twice the room, the
/// largest part of a row's memory.
fn read_accounting<'s>(
    acct: &[(accounting::Phase, accounting::Metric, Option<usize>)],
    get: &impl Fn(usize) -> std::borrow::Cow<'s, str>,
    scratch: &mut Vec<(accounting::Phase, accounting::Metric, f64)>,
) -> Result<Vec<(accounting::Phase, accounting::Metric, f64)>, String> {
    scratch.clear();
    for (p, m, i) in acct {
        let Some(i) = i else { continue };
        let s = get(*i);
        let s = s.as_ref();
        if s.is_empty() {
            continue;
        }
        let v = s
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                format!(
                    "`{}` is `{s}`, not a finite number",
                    accounting::column(*p, *m)
                )
            })?;
        scratch.push((*p, *m, v));
    }
    Ok(scratch.to_vec())
}

/// The `wait` of a row from a file written before the `wait` column: latency rows waited as
/// their case key's `,wait=<name>` suffix says ([`crate::scenario::Case::key`] writes it for
/// every wait but the default), else with `stream`.
fn wait_before_its_column(row: &Row) -> Option<crate::scenario::Wait> {
    use crate::scenario::{Mode, Wait};
    if row.mode != Mode::Latency {
        return None;
    }
    let named = row
        .case_key
        .rsplit_once(",wait=")
        .and_then(|(_, w)| Wait::parse(w));
    Some(named.unwrap_or(Wait::Stream))
}

/// The fields of one samples-file line, in [`SAMPLE_COLUMNS`] order.
fn sample_fields(s: &SampleRow) -> [String; 7] {
    [
        SCHEMA_VERSION.to_string(),
        s.case_key.clone(),
        s.lane.map_or("", Lane::name).to_string(),
        s.series.to_string(),
        s.index.to_string(),
        opt(s.t_ms),
        format!("{}", s.value),
    ]
}

/// Reads the long-form samples file that belongs to a results CSV.
pub fn read_samples(path: &Path) -> Result<Vec<SampleRow>, Error> {
    let bytes = crate::input::read_input(path, &crate::input::SAMPLES_CSV)?;
    let (mut rdr, h) = open_csv(path, &bytes)?;
    let ix: Vec<usize> = SAMPLE_COLUMNS
        .iter()
        .map(|c| h.idx(c))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for_each_record(path, &mut rdr, &bytes, |rec, line| {
        let get = |k: usize| crate::input::escape_text(rec.get(ix[k]).unwrap_or("").trim());
        if get(0) != SCHEMA_VERSION.to_string() {
            return Err(bad(
                path,
                line(),
                format!("schema_version `{}` is not {SCHEMA_VERSION}", get(0)),
            ));
        }
        let t_ms = match get(5).as_ref() {
            "" => None,
            s => Some(
                s.parse()
                    .map_err(|_| bad(path, line(), format!("t_ms `{s}` is not a number")))?,
            ),
        };
        let value = get(6)
            .parse()
            .map_err(|_| bad(path, line(), format!("value `{}` is not a number", get(6))))?;
        let lane = match get(2).as_ref() {
            "" => None,
            l => Some(Lane::parse(l).ok_or_else(|| {
                bad(
                    path,
                    line(),
                    format!("lane `{l}` is not h2d, d2h, sum, device or empty"),
                )
            })?),
        };
        let series = Series::parse(&get(3)).map_err(|why| bad(path, line(), why))?;
        let index = SampleIndex::parse(&get(4)).map_err(|why| bad(path, line(), why))?;
        out.push(SampleRow {
            case_key: get(1).into(),
            lane,
            series,
            index,
            t_ms,
            value,
        });
        Ok(())
    })?;
    Ok(out)
}

/// A results CSV with its sidecar and samples, as `compare` and `report` consume it.
#[derive(Debug, Clone)]
pub struct ResultSet {
    pub path: PathBuf,
    pub rows: Vec<Row>,
    /// The series the views read (bandwidth samples, timelines); see [`Samples`].
    pub samples: Samples,
    /// `None` when the sidecar is missing (a CSV alone can still be compared).
    pub sidecar: Option<super::Sidecar>,
}

impl ResultSet {
    /// Loads `x.csv`, and `x.samples.csv` / `x.json` beside it when present.
    /// A samples file or sidecar that belongs to another run is refused: its run id (sidecar)
    /// or its case keys (samples) must be those of the CSV.
    pub fn load(path: &Path) -> Result<ResultSet, Error> {
        let sp = samples_path(path);
        // The samples file is usually 50 times the CSV: read it beside the rows.
        let (rows, samples) = rayon::join(
            || read_rows(path),
            || {
                if sp.exists() {
                    Samples::read(&sp)
                } else {
                    Ok(Samples::default())
                }
            },
        );
        let (rows, samples) = (rows?, samples?);
        check_samples_belong(path, &rows, &sp, &samples)?;
        let jp = sidecar_path(path);
        let sidecar = if jp.exists() {
            Some(super::Sidecar::read(&jp)?)
        } else {
            None
        };
        if let Some(s) = &sidecar {
            check_sidecar_belongs(path, &rows, &jp, s)?;
        }
        Ok(ResultSet {
            path: path.to_path_buf(),
            rows,
            samples,
            sidecar,
        })
    }

    /// True when the run that wrote it did not finish (interrupted or ended early).
    pub fn is_partial(&self) -> bool {
        self.sidecar.as_ref().is_some_and(|s| s.partial)
    }

    /// A run made up for tests or demonstrations says so (`SYNTHETIC`, any case) in its file
    /// name, run id or host name.
    pub fn is_synthetic(&self) -> bool {
        let marked = |t: &str| t.to_ascii_uppercase().contains("SYNTHETIC");
        marked(&self.path.display().to_string())
            || self
                .rows
                .first()
                .is_some_and(|r| marked(&r.run_id) || marked(&r.machine.host_name))
            || self
                .sidecar
                .as_ref()
                .is_some_and(|c| marked(&c.run_id) || marked(&c.machine.host_name))
    }

    /// The raw bandwidth samples (GB/s) of one case and lane.
    pub fn bandwidth_samples(&self, case_key: &str, lane: Lane) -> &[f64] {
        self.samples.bandwidth(case_key, lane)
    }
}

/// Refuses a sidecar whose run id is not the run id of the CSV's rows.
fn check_sidecar_belongs(
    csv: &Path,
    rows: &[Row],
    json: &Path,
    sidecar: &super::Sidecar,
) -> Result<(), Error> {
    let ids: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| &*r.run_id)
        .filter(|id| !id.is_empty())
        .collect();
    if ids.is_empty() || ids.contains(sidecar.run_id.as_str()) {
        return Ok(());
    }
    let ids: Vec<&str> = ids.into_iter().collect();
    Err(Error::BadResults {
        path: json.to_path_buf(),
        reason: format!(
            "it belongs to run {}, but {} holds run {}: move the sidecar away or put the CSV of its run beside it",
            sidecar.run_id,
            csv.display(),
            ids.join(", ")
        ),
    })
}

/// Refuses a samples file with samples of a case the CSV does not have (it was written by
/// another run: its intervals would silently be computed from the wrong numbers, or not at all).
fn check_samples_belong(
    csv: &Path,
    rows: &[Row],
    path: &Path,
    samples: &Samples,
) -> Result<(), Error> {
    let keys: std::collections::HashSet<&str> = rows.iter().map(|r| r.case_key.as_str()).collect();
    match samples.case_keys().find(|k| !keys.contains(k)) {
        None => Ok(()),
        Some(key) => Err(Error::BadResults {
            path: path.to_path_buf(),
            reason: format!(
                "it holds samples of case `{}`, which {} does not have, so it belongs to another run: move it away or put the CSV of its run beside it",
                key,
                csv.display()
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every results CSV under `reports/` (the published runs and their comparisons).
    fn published() -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("reports/").flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "csv")
                    && !p.to_string_lossy().ends_with(".samples.csv")
                {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// The rows written back under the file's own header (older files lack later columns).
    fn rewritten(header: &csv::StringRecord, rows: &[Row]) -> Vec<u8> {
        let all = columns();
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(header).unwrap();
        for r in rows {
            let fields = row_fields(r);
            let cells: Vec<&str> = header
                .iter()
                .map(|name| {
                    let i = all.iter().position(|c| c == name).expect("known column");
                    fields[i].as_str()
                })
                .collect();
            w.write_record(cells).unwrap();
        }
        w.into_inner().unwrap()
    }

    /// Fails naming `path` and its first differing line unless `again` is `bytes`.
    fn assert_written_back(path: &Path, again: &[u8], bytes: &[u8]) {
        assert!(
            again == bytes,
            "{} differs when written back:\n{}",
            path.display(),
            String::from_utf8_lossy(again)
                .lines()
                .zip(String::from_utf8_lossy(bytes).lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("written {a}\n   file {b}"))
                .unwrap_or_default()
        );
    }

    /// Every samples file under `reports/`.
    fn published_samples() -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("reports/").flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.to_string_lossy().ends_with(".samples.csv") {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// Every published samples file, read into typed rows (lane, series with its observer,
    /// index with its snapshot) and written back by the writer's own field function, gives the
    /// same bytes; the views' streamed read loads it too.
    #[test]
    fn published_samples_are_read_and_written_back_byte_for_byte() {
        let files = published_samples();
        let mut checked = 0;
        let mut typed_before = 0;
        for sp in files {
            let samples = read_samples(&sp).unwrap_or_else(|e| panic!("{e}"));
            typed_before += samples
                .iter()
                .filter(|s| {
                    matches!(s.series, Series::Phase(_))
                        && s.index == SampleIndex::Phase(crate::probe::Moment::Before)
                })
                .count();
            Samples::read(&sp).unwrap_or_else(|e| panic!("{e}"));
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(SAMPLE_COLUMNS).unwrap();
            for s in &samples {
                w.write_record(sample_fields(s)).unwrap();
            }
            assert_written_back(&sp, &w.into_inner().unwrap(), &std::fs::read(&sp).unwrap());
            checked += 1;
        }
        assert!(checked >= 20, "only {checked} samples files");
        assert!(typed_before > 1000, "{typed_before} readings before a case");
    }

    /// A series or snapshot that names nothing pinscope writes is refused with the file, the
    /// line and the name, never kept as text.
    #[test]
    fn unknown_series_and_snapshots_are_refused_with_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.samples.csv");
        let head = "schema_version,case_key,lane,series,index,t_ms,value\n1,k,,phase:cuda.used,before,0,1\n";
        for (line, needle) in [
            ("1,k,,phase:gpu.used,before,0,1", "observer `gpu`"),
            ("1,k,,phase:cuda.used,touched,0,1", "index `touched`"),
            ("1,k,,bandwidth,0,,1", "series `bandwidth`"),
        ] {
            std::fs::write(&p, format!("{head}{line}\n")).unwrap();
            let e = read_samples(&p).expect_err(line).to_string();
            assert!(e.contains("x.samples.csv") && e.contains("line 3"), "{e}");
            assert!(e.contains(needle), "{e}");
            let e = Samples::read(&p).expect_err(line).to_string();
            assert!(e.contains("x.samples.csv") && e.contains("line 3"), "{e}");
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn published_results_are_read_and_written_back_byte_for_byte() {
        let files = published();
        assert!(files.len() >= 20, "{files:?}");
        for p in files {
            let bytes = std::fs::read(&p).unwrap();
            let rows = read_rows_from(&p, &bytes).unwrap_or_else(|e| panic!("{e}"));
            let mut rdr = csv::Reader::from_reader(bytes.as_slice());
            let header = rdr.headers().unwrap().clone();
            assert_written_back(&p, &rewritten(&header, &rows), &bytes);
        }
    }

    /// The run, the machine and the scenario are held once for all the rows that repeat them.
    #[test]
    fn rows_share_the_texts_they_repeat() {
        let p = published()
            .into_iter()
            .find(|p| p.to_string_lossy().contains("h200-headline"))
            .expect("a published h200-headline run");
        let rows = read_rows(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(rows.len() > 2);
        for r in &rows[1..] {
            assert!(Arc::ptr_eq(&r.run_id, &rows[0].run_id));
            assert!(Arc::ptr_eq(&r.started_at, &rows[0].started_at));
            assert!(Arc::ptr_eq(&r.scenario, &rows[0].scenario));
            assert!(Arc::ptr_eq(&r.machine, &rows[0].machine));
        }
        // A row that differs gets its own value; the next row shares it again.
        let mut text = std::fs::read_to_string(&p).unwrap();
        let second = text.match_indices('\n').nth(1).unwrap().0 + 1;
        let host = &rows[1].machine.host_name;
        let at = second + text[second..].find(host.as_str()).unwrap();
        text.replace_range(at..at + host.len(), "other-host");
        let rows = read_rows_from(&p, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows[1].machine.host_name, "other-host");
        assert_eq!(rows[2].machine.host_name, *host);
        assert!(!Arc::ptr_eq(&rows[1].machine, &rows[0].machine));
        assert!(!Arc::ptr_eq(&rows[2].machine, &rows[0].machine));
        assert!(Arc::ptr_eq(&rows[3].machine, &rows[2].machine));
    }
}
