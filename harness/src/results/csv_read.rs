//! Reading the results CSV and its samples file: columns looked up by name, the schema checked,
//! every bad value reported with its file and line.

use super::columns::{HEAD, SAMPLE_COLUMNS, TAIL};
use super::schema::*;
use crate::Error;
use crate::accounting;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
