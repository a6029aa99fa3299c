//! CSV writing (one flush per case) and reading (columns looked up by name, schema checked).
//!
//! Size: over 500 lines: writer and reader of both CSV files (results and samples) with their
//! located error messages; they share the column list and the header lookup.

use super::schema::*;
use super::sidecar::{samples_path, sidecar_path};
use crate::Error;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The fixed leading columns of the results CSV, in order. Accounting columns follow them:
/// `d_<phase>_<metric>_mib` for each of [`ACCOUNTING_PHASES`] × [`ACCOUNTING_METRICS`], then
/// `max_alloc_held_mib`, `max_alloc_free_mib`, `pinned_ceiling_mib`, `stopped_by`.
pub const BASE_COLUMNS: &[&str] = &[
    "schema_version",
    "run_id",
    "started_at",
    "host_name",
    "platform",
    "os",
    "driver_model",
    "gpu",
    "driver_version",
    "pcie_link",
    "scenario",
    "case_label",
    "case_index",
    "case_key",
    "lane",
    "host",
    "flags",
    "engine",
    "direction",
    "mode",
    "size_bytes",
    "chunk_bytes",
    "ring",
    "streams",
    "threads",
    "batch",
    "axes",
    "status",
    "samples",
    "outliers",
    "bw_median_gbs",
    "bw_min_gbs",
    "bw_max_gbs",
    "bw_spread_pct",
    "time_median_ms",
    "time_min_ms",
    "time_max_ms",
    "wall_median_ms",
    "verified",
    "alloc_ms",
    "register_ms",
    "unregister_ms",
    "free_ms",
    "pinned_bytes",
    "device_bytes",
];

/// Every column of the results CSV, in order.
pub fn columns() -> Vec<String> {
    let mut cols: Vec<String> = BASE_COLUMNS.iter().map(|s| s.to_string()).collect();
    for p in ACCOUNTING_PHASES {
        for m in ACCOUNTING_METRICS {
            cols.push(format!("d_{p}_{m}_mib"));
        }
    }
    cols.push("max_alloc_held_mib".into());
    cols.push("max_alloc_free_mib".into());
    cols.push("pinned_ceiling_mib".into());
    cols.push("stopped_by".into());
    cols
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

fn row_fields(r: &Row) -> Vec<String> {
    let m = &r.machine;
    let mut f = vec![
        SCHEMA_VERSION.to_string(),
        r.run_id.clone(),
        r.started_at.clone(),
        m.host_name.clone(),
        m.platform.clone(),
        m.os.clone(),
        m.driver_model.clone(),
        m.gpu.clone(),
        m.driver_version.clone(),
        m.pcie_link.clone(),
        r.scenario.clone(),
        r.case_label.clone(),
        r.case_index.to_string(),
        r.case_key.clone(),
        r.lane.name().into(),
        r.host.clone(),
        r.flags.clone(),
        r.engine.clone(),
        r.direction.clone(),
        r.mode.clone(),
        r.size_bytes.to_string(),
        r.chunk_bytes.to_string(),
        r.ring.to_string(),
        r.streams.to_string(),
        r.threads.to_string(),
        r.batch.to_string(),
        r.axes.clone(),
        r.status.to_field(),
        r.samples.to_string(),
        r.outliers.to_string(),
        opt(r.bw_median_gbs),
        opt(r.bw_min_gbs),
        opt(r.bw_max_gbs),
        opt(r.bw_spread_pct),
        opt(r.time_median_ms),
        opt(r.time_min_ms),
        opt(r.time_max_ms),
        opt(r.wall_median_ms),
        r.verified.clone(),
        opt(r.alloc_ms),
        opt(r.register_ms),
        opt(r.unregister_ms),
        opt(r.free_ms),
        r.pinned_bytes.to_string(),
        r.device_bytes.to_string(),
    ];
    for p in ACCOUNTING_PHASES {
        for m in ACCOUNTING_METRICS {
            f.push(opt(r.accounting_value(p, m)));
        }
    }
    f.push(opt(r.max_alloc_held_mib));
    f.push(opt(r.max_alloc_free_mib));
    f.push(opt(r.pinned_ceiling_mib));
    f.push(r.stopped_by.clone());
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
    pub fn create(path: &Path) -> Result<Self, Error> {
        let samples_path = samples_path(path);
        // Both checked before either is created: nothing is written when one is refused.
        super::check_output_path(path)?;
        super::check_output_path(&samples_path)?;
        let mut rows = csv::Writer::from_writer(super::create_output_file(path)?);
        rows.write_record(columns())
            .map_err(|e| csv_error(path, e))?;
        let mut samples = csv::Writer::from_writer(super::create_output_file(&samples_path)?);
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
                .write_record([
                    SCHEMA_VERSION.to_string(),
                    s.case_key.clone(),
                    s.lane.clone(),
                    s.series.clone(),
                    s.index.clone(),
                    opt(s.t_ms),
                    format!("{}", s.value),
                ])
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

/// Reads a results CSV written by this or a compatible pinscope.
pub fn read_rows(path: &Path) -> Result<Vec<Row>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    read_rows_from(path, &bytes)
}

/// Reads results CSV text; `path` is only used in messages.
pub fn read_rows_from(path: &Path, bytes: &[u8]) -> Result<Vec<Row>, Error> {
    let mut rdr = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
    let header = rdr.headers().map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: format!("it is not a readable CSV ({e})"),
    })?;
    let h = Header::new(path, header);
    let sv = h.idx("schema_version").map_err(|_| Error::BadResults {
        path: path.to_path_buf(),
        reason: "it has no `schema_version` column, so it is not a pinscope results CSV".into(),
    })?;
    let ix: Vec<usize> = BASE_COLUMNS
        .iter()
        .map(|c| h.idx(c))
        .collect::<Result<_, _>>()?;
    let acct: Vec<(String, String, Option<usize>)> = ACCOUNTING_PHASES
        .iter()
        .flat_map(|p| ACCOUNTING_METRICS.iter().map(move |m| (*p, *m)))
        .map(|(p, m)| {
            let col = format!("d_{p}_{m}_mib");
            (
                p.to_string(),
                m.to_string(),
                h.names.iter().position(|n| *n == col),
            )
        })
        .collect();
    let held = h.names.iter().position(|n| n == "max_alloc_held_mib");
    let freed = h.names.iter().position(|n| n == "max_alloc_free_mib");
    let ceiling = h.names.iter().position(|n| n == "pinned_ceiling_mib");
    // Added after schema 1 was published: files without it read as empty.
    let stopped_by = h.names.iter().position(|n| n == "stopped_by");

    let mut out = Vec::new();
    let mut rec = csv::StringRecord::new();
    loop {
        // Where the record starts; its line is counted from there only when a message needs it.
        let byte = rdr.position().byte();
        let more = rdr.read_record(&mut rec).map_err(|e| Error::BadResults {
            path: path.to_path_buf(),
            reason: format!("it is not a well-formed CSV ({e})"),
        })?;
        if !more {
            break;
        }
        let line = || line_at(bytes, byte);
        let get = |i: usize| rec.get(i).unwrap_or("").trim();
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
        let col = |name: &str| -> &str {
            let k = BASE_COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
            get(ix[k])
        };
        let num = |name: &str| -> Result<u64, Error> {
            col(name).parse().map_err(|_| {
                bad(
                    path,
                    line(),
                    format!("`{name}` is `{}`, not a whole number", col(name)),
                )
            })
        };
        let float = |name: &str| -> Result<Option<f64>, Error> {
            let s = col(name);
            if s.is_empty() {
                return Ok(None);
            }
            let v = s
                .parse::<f64>()
                .map_err(|_| bad(path, line(), format!("`{name}` is `{s}`, not a number")))?;
            // Bandwidths, times and spreads are never negative, infinite or NaN.
            if !v.is_finite() || v < 0.0 {
                return Err(bad(
                    path,
                    line(),
                    format!("`{name}` is `{s}`: it must be a finite number, 0 or more"),
                ));
            }
            Ok(Some(v))
        };
        let small = |name: &str| -> Result<u32, Error> {
            u32::try_from(num(name)?)
                .map_err(|_| bad(path, line(), format!("`{name}` is too large")))
        };
        let mut accounting = Vec::new();
        for (p, m, i) in &acct {
            if let Some(i) = i {
                let s = get(*i);
                if !s.is_empty() {
                    let v = s
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| {
                            bad(
                                path,
                                line(),
                                format!("`d_{p}_{m}_mib` is `{s}`, not a finite number"),
                            )
                        })?;
                    accounting.push((p.clone(), m.clone(), v));
                }
            }
        }
        let optf = |i: Option<usize>| -> Result<Option<f64>, Error> {
            match i.map(get).filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(s) => s
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map(Some)
                    .ok_or_else(|| bad(path, line(), format!("`{s}` is not a finite number"))),
            }
        };
        out.push(Row {
            run_id: col("run_id").into(),
            started_at: col("started_at").into(),
            machine: MachineKey {
                host_name: col("host_name").into(),
                platform: col("platform").into(),
                os: col("os").into(),
                driver_model: col("driver_model").into(),
                gpu: col("gpu").into(),
                driver_version: col("driver_version").into(),
                pcie_link: col("pcie_link").into(),
            },
            scenario: col("scenario").into(),
            case_label: col("case_label").into(),
            case_index: num("case_index")? as usize,
            case_key: col("case_key").into(),
            lane: Lane::parse(col("lane")).ok_or_else(|| {
                bad(
                    path,
                    line(),
                    format!("`lane` is `{}`, not h2d, d2h or sum", col("lane")),
                )
            })?,
            host: col("host").into(),
            flags: col("flags").into(),
            engine: col("engine").into(),
            direction: col("direction").into(),
            mode: col("mode").into(),
            size_bytes: num("size_bytes")?,
            chunk_bytes: num("chunk_bytes")?,
            ring: small("ring")?,
            streams: small("streams")?,
            threads: small("threads")?,
            batch: small("batch")?,
            axes: col("axes").into(),
            status: Status::from_field(col("status")).ok_or_else(|| {
                bad(
                    path,
                    line(),
                    format!(
                        "`status` is `{}`, not ok / failed: … / skipped: …",
                        col("status")
                    ),
                )
            })?,
            samples: small("samples")?,
            outliers: small("outliers")?,
            bw_median_gbs: float("bw_median_gbs")?,
            bw_min_gbs: float("bw_min_gbs")?,
            bw_max_gbs: float("bw_max_gbs")?,
            bw_spread_pct: float("bw_spread_pct")?,
            time_median_ms: float("time_median_ms")?,
            time_min_ms: float("time_min_ms")?,
            time_max_ms: float("time_max_ms")?,
            wall_median_ms: float("wall_median_ms")?,
            verified: col("verified").into(),
            alloc_ms: float("alloc_ms")?,
            register_ms: float("register_ms")?,
            unregister_ms: float("unregister_ms")?,
            free_ms: float("free_ms")?,
            pinned_bytes: num("pinned_bytes")?,
            device_bytes: num("device_bytes")?,
            accounting,
            max_alloc_held_mib: optf(held)?,
            max_alloc_free_mib: optf(freed)?,
            pinned_ceiling_mib: optf(ceiling)?,
            stopped_by: stopped_by.map(|i| get(i).to_string()).unwrap_or_default(),
        });
    }
    Ok(out)
}

/// Reads the long-form samples file that belongs to a results CSV.
pub fn read_samples(path: &Path) -> Result<Vec<SampleRow>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut rdr = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let header = rdr.headers().map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: format!("it is not a readable CSV ({e})"),
    })?;
    let h = Header::new(path, header);
    let ix: Vec<usize> = SAMPLE_COLUMNS
        .iter()
        .map(|c| h.idx(c))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    let mut rec = csv::StringRecord::new();
    loop {
        let byte = rdr.position().byte();
        let more = rdr.read_record(&mut rec).map_err(|e| Error::BadResults {
            path: path.to_path_buf(),
            reason: format!("it is not a well-formed CSV ({e})"),
        })?;
        if !more {
            break;
        }
        let line = || line_at(&bytes, byte);
        let get = |k: usize| rec.get(ix[k]).unwrap_or("").trim();
        if get(0) != SCHEMA_VERSION.to_string() {
            return Err(bad(
                path,
                line(),
                format!("schema_version `{}` is not {SCHEMA_VERSION}", get(0)),
            ));
        }
        let t_ms = match get(5) {
            "" => None,
            s => Some(
                s.parse()
                    .map_err(|_| bad(path, line(), format!("t_ms `{s}` is not a number")))?,
            ),
        };
        let value = get(6)
            .parse()
            .map_err(|_| bad(path, line(), format!("value `{}` is not a number", get(6))))?;
        out.push(SampleRow {
            case_key: get(1).into(),
            lane: get(2).into(),
            series: get(3).into(),
            index: get(4).into(),
            t_ms,
            value,
        });
    }
    Ok(out)
}

/// A results CSV with its sidecar and samples, as `compare` and `report` consume it.
#[derive(Debug, Clone)]
pub struct ResultSet {
    pub path: PathBuf,
    pub rows: Vec<Row>,
    pub samples: Vec<SampleRow>,
    /// `None` when the sidecar is missing (a CSV alone can still be compared).
    pub sidecar: Option<super::Sidecar>,
}

impl ResultSet {
    /// Loads `x.csv`, and `x.samples.csv` / `x.json` beside it when present.
    pub fn load(path: &Path) -> Result<ResultSet, Error> {
        let rows = read_rows(path)?;
        let sp = samples_path(path);
        let samples = if sp.exists() {
            read_samples(&sp)?
        } else {
            Vec::new()
        };
        let jp = sidecar_path(path);
        let sidecar = if jp.exists() {
            Some(super::Sidecar::read(&jp)?)
        } else {
            None
        };
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

    /// The raw bandwidth samples (GB/s) of one case and lane.
    pub fn bandwidth_samples(&self, case_key: &str, lane: Lane) -> Vec<f64> {
        self.samples
            .iter()
            .filter(|s| s.case_key == case_key && s.lane == lane.name() && s.series == "bw_gbs")
            .map(|s| s.value)
            .collect()
    }
}

/// Appends text to a file, creating it (used for logs beside results).
pub fn append_line(path: &Path, line: &str) -> Result<(), Error> {
    super::check_output_path(path)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    writeln!(f, "{line}").map_err(|e| Error::io(path, e))
}
