//! The samples file as the views (`report`, `compare`) read it: streamed in blocks of
//! [`BLOCK_BYTES`], each block's lines split on every core, and only the series a view reads
//! kept: the bandwidth samples (`bw_gbs`) per case and lane, and the hold-after-free timelines
//! (`timeline:*`) per case, and each observer's reading before the case allocated anything
//! (`phase:*` at index `before`, the baseline a timeline is drawn against). The other series
//! (the other phases, `event_ms`, `wall_ms`, `setup:*`, about 85% of a real run's lines) are
//! checked (field count, schema version) and dropped.
//!
//! Memory bound: two blocks (the one being split and the unfinished line carried over), plus
//! 8 B per bandwidth sample, 16 B per timeline point and each case key once, whatever the
//! file's size and its other series.

use super::schema::{
    BANDWIDTH_SERIES, EVENT_TIME_SERIES, Lane, PHASE_PREFIX, SCHEMA_VERSION, SETUP_PREFIX,
    SampleIndex, Series, TIMELINE_PREFIX, WALL_TIME_SERIES,
};
use crate::Error;
use crate::accounting::{ReadingFacts, ReadingName};
use crate::probe::Moment;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

/// Bytes read from the samples file at a time.
pub const BLOCK_BYTES: usize = 16 << 20;
/// The snapshot whose readings are kept: before the case allocated anything.
const KEPT_PHASE: Moment = Moment::Before;

/// Timeline points of one case, by reading (`observer.metric`).
pub type Timelines = BTreeMap<Box<str>, Timeline>;

/// One reading's points during the hold after free.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// What the reading is (what it counts, its noise, its words), known from its name when
    /// the series is read.
    pub facts: ReadingFacts,
    /// (ms after the free, value).
    pub points: Vec<(f64, f64)>,
}

impl Timeline {
    /// The empty timeline of reading `metric`.
    pub fn of(metric: &str) -> Timeline {
        Timeline {
            facts: ReadingFacts::of(metric),
            points: Vec::new(),
        }
    }
}

/// Appends the point `(t_ms, value)` to reading `metric`'s timeline in `t`.
fn push_point(t: &mut Timelines, metric: &str, t_ms: f64, value: f64) {
    match t.get_mut(metric) {
        Some(line) => line.points.push((t_ms, value)),
        None => {
            let mut line = Timeline::of(metric);
            line.points.push((t_ms, value));
            t.insert(metric.into(), line);
        }
    }
}
/// Readings of one case before it allocated anything: metric -> value.
pub type Baseline = BTreeMap<Box<str>, f64>;

/// The raw samples a view reads, by case key (each key stored once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    bandwidth: HashMap<Box<str>, Vec<(Lane, Vec<f64>)>>,
    timelines: HashMap<Box<str>, Timelines>,
    before: HashMap<Box<str>, Baseline>,
}

impl Samples {
    /// True when no bandwidth sample and no timeline point was kept.
    pub fn is_empty(&self) -> bool {
        self.bandwidth.is_empty() && self.timelines.is_empty()
    }

    /// Every case key that has a kept series.
    pub fn case_keys(&self) -> impl Iterator<Item = &str> {
        self.bandwidth
            .keys()
            .chain(self.timelines.keys())
            .chain(self.before.keys())
            .map(|k| &**k)
    }

    /// The bandwidth samples (GB/s) of one case and lane, in file order.
    pub fn bandwidth(&self, case_key: &str, lane: Lane) -> &[f64] {
        self.bandwidth
            .get(case_key)
            .and_then(|v| v.iter().find(|(l, _)| *l == lane))
            .map_or(&[], |(_, s)| s.as_slice())
    }

    /// How many bandwidth samples were kept, over every case.
    pub fn bandwidth_count(&self) -> usize {
        self.bandwidth
            .values()
            .flat_map(|v| v.iter().map(|(_, s)| s.len()))
            .sum()
    }

    /// Every case's timelines.
    pub fn timelines(&self) -> impl Iterator<Item = (&str, &Timelines)> {
        self.timelines.iter().map(|(k, t)| (k.as_ref(), t))
    }

    /// Each observer's reading before `case_key` allocated anything (`phase:*` at `before`).
    pub fn before(&self, case_key: &str) -> Option<&Baseline> {
        self.before.get(case_key)
    }

    pub fn push_before(&mut self, case_key: &str, metric: &str, value: f64) {
        let case = match self.before.get_mut(case_key) {
            Some(c) => c,
            None => self.before.entry(case_key.into()).or_default(),
        };
        case.insert(metric.into(), value);
    }

    pub fn push_bandwidth(&mut self, case_key: &str, lane: Lane, value: f64) {
        let lanes = match self.bandwidth.get_mut(case_key) {
            Some(l) => l,
            None => self.bandwidth.entry(case_key.into()).or_default(),
        };
        match lanes.iter_mut().find(|(l, _)| *l == lane) {
            Some((_, v)) => v.push(value),
            None => lanes.push((lane, vec![value])),
        }
    }

    pub fn push_timeline(&mut self, case_key: &str, metric: &str, t_ms: f64, value: f64) {
        let case = match self.timelines.get_mut(case_key) {
            Some(c) => c,
            None => self.timelines.entry(case_key.into()).or_default(),
        };
        push_point(case, metric, t_ms, value);
    }

    /// The samples of `rows` that a view reads (what [`Samples::read`] keeps of a file).
    pub fn from_rows<'r>(rows: impl IntoIterator<Item = &'r super::SampleRow>) -> Samples {
        let mut out = Samples::default();
        for r in rows {
            match (&r.series, r.lane, r.t_ms) {
                (Series::Bandwidth, Some(lane), _) => {
                    out.push_bandwidth(&r.case_key, lane, r.value);
                }
                (Series::Timeline(reading), _, Some(t)) => {
                    out.push_timeline(&r.case_key, &reading.to_string(), t, r.value);
                }
                (Series::Phase(reading), _, _) if r.index == SampleIndex::Phase(KEPT_PHASE) => {
                    out.push_before(&r.case_key, &reading.to_string(), r.value);
                }
                _ => {}
            }
        }
        out
    }

    /// Forgets the timelines (a view of bandwidth only).
    pub fn drop_timelines(&mut self) {
        self.timelines.clear();
        self.before.clear();
    }

    /// Appends the runs of one piece (read from further down the file) after what is here:
    /// one map look-up per run of lines with the same key, not one per line.
    fn append_runs(&mut self, runs: Vec<CaseRun>) {
        for run in runs {
            let CaseRun {
                key,
                bandwidth,
                timelines,
                before,
                ..
            } = run;
            if !before.is_empty() {
                merge_into(&mut self.before, &*key, before, |mine, more| {
                    mine.extend(more)
                });
            }
            if !timelines.is_empty() {
                merge_into(&mut self.timelines, &*key, timelines, |mine, more| {
                    for (m, line) in more {
                        match mine.get_mut(&m) {
                            Some(mine) => mine.points.extend(line.points),
                            None => {
                                mine.insert(m, line);
                            }
                        }
                    }
                });
            }
            if !bandwidth.is_empty() {
                merge_into(&mut self.bandwidth, key, bandwidth, |mine, more| {
                    for (lane, values) in more {
                        match mine.iter_mut().find(|(l, _)| *l == lane) {
                            Some((_, v)) => v.extend(values),
                            None => mine.push((lane, values)),
                        }
                    }
                });
            }
        }
    }

    /// Reads the bandwidth and timeline series of a samples file (see the module's doc).
    pub fn read(path: &Path) -> Result<Samples, Error> {
        let size = crate::input::check_input(path, &crate::input::STREAMED_SAMPLES_CSV)?;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        // A small file gets a small buffer: zeroing 16 MiB for each of a fleet's 1 000 files of
        // 0.5 MB was half of a fleet report's time.
        let first = usize::try_from(size.saturating_add(1))
            .map_or(BLOCK_BYTES, |n| n.clamp(4096, BLOCK_BYTES));
        let mut buf = vec![0u8; first];
        let mut filled = 0usize;
        let mut cols: Option<Columns> = None;
        let mut line = 1u64;
        let mut out = Samples::default();
        loop {
            if filled == buf.len() && buf.len() < BLOCK_BYTES {
                // The file grew while it was read.
                buf.resize((buf.len() * 2).min(BLOCK_BYTES), 0);
            } else if filled == buf.len() {
                // A whole block without a line end: far over the longest line a samples file
                // may have, so the file is refused rather than held in memory.
                return Err(long_line(path, line));
            }
            let n = file
                .read(&mut buf[filled..])
                .map_err(|e| Error::io(path, e))?;
            let end = filled + n;
            let done = n == 0;
            // Whole lines only, except at the end of the file.
            let cut = if done {
                end
            } else {
                match memchr::memrchr(b'\n', &buf[..end]) {
                    Some(i) => i + 1,
                    None => {
                        filled = end;
                        continue;
                    }
                }
            };
            let mut text = &buf[..cut];
            if cols.is_none() {
                let (c, rest) = Columns::from_header(path, text)?;
                cols = Some(c);
                text = rest;
                line += 1;
            }
            if let Some(c) = &cols {
                let (runs, lines) = read_block(path, c, text, line)?;
                out.append_runs(runs);
                line += lines;
            }
            if done {
                return Ok(out);
            }
            buf.copy_within(cut..end, 0);
            filled = end - cut;
        }
    }
}

/// Adds `more` to what `map` holds for `key`: merged into the entry there with `merge`, or
/// inserted under `key` when there is none. `key` is a `&str` (copied only when inserted) or an
/// owned `Box<str>` (moved in), so a look-up that finds its entry allocates nothing.
#[inline]
fn merge_into<K, V>(map: &mut HashMap<Box<str>, V>, key: K, more: V, merge: impl FnOnce(&mut V, V))
where
    K: std::borrow::Borrow<str> + Into<Box<str>>,
{
    match map.get_mut(key.borrow()) {
        Some(mine) => merge(mine, more),
        None => {
            map.insert(key.into(), more);
        }
    }
}

fn long_line(path: &Path, line: u64) -> Error {
    let kind = &crate::input::STREAMED_SAMPLES_CSV;
    Error::Input {
        path: path.to_path_buf(),
        reason: format!(
            "line {line} runs on for more than {} without a line end; lines of {} are limited to {}: is it the right file?",
            crate::units::format_size(BLOCK_BYTES as u64),
            kind.what,
            crate::units::format_size(kind.max_line.unwrap_or(0))
        ),
    }
}

/// Where each needed column is in the file's header.
struct Columns {
    count: usize,
    version: usize,
    /// [`SCHEMA_VERSION`] as a file writes it.
    version_text: String,
    key: usize,
    lane: usize,
    series: usize,
    /// Absent in a file without phase readings; then no baseline is kept.
    index: Option<usize>,
    t_ms: usize,
    value: usize,
}

impl Columns {
    /// The header's columns, and the text after the header line.
    fn from_header<'t>(path: &Path, text: &'t [u8]) -> Result<(Columns, &'t [u8]), Error> {
        let end = memchr::memchr(b'\n', text).map_or(text.len(), |i| i + 1);
        let names: Vec<&str> = std::str::from_utf8(&text[..end])
            .unwrap_or("")
            .trim_end_matches(['\r', '\n'])
            .split(',')
            .map(|s| s.trim().trim_matches('"'))
            .collect();
        let idx = |col: &str| {
            names
                .iter()
                .position(|n| *n == col)
                .ok_or_else(|| Error::BadResults {
                    path: path.to_path_buf(),
                    reason: format!("it has no `{col}` column (is it a pinscope samples CSV?)"),
                })
        };
        let cols = Columns {
            count: names.len(),
            version: idx("schema_version")?,
            version_text: SCHEMA_VERSION.to_string(),
            key: idx("case_key")?,
            lane: idx("lane")?,
            series: idx("series")?,
            index: idx("index").ok(),
            t_ms: idx("t_ms")?,
            value: idx("value")?,
        };
        Ok((cols, &text[end..]))
    }
}

/// Reads whole lines `text`, whose first line is line `first` of the file, in pieces on every
/// core; the kept samples in file order and the number of lines.
fn read_block(
    path: &Path,
    cols: &Columns,
    text: &[u8],
    first: u64,
) -> Result<(Vec<CaseRun>, u64), Error> {
    let pieces = split_at_lines(text, rayon::current_num_threads() * 4);
    let parts: Vec<(Piece, u64)> = pieces.par_iter().map(|p| read_piece(cols, p)).collect();
    let mut out = Vec::new();
    let mut line = first;
    for (part, lines) in parts {
        match part {
            Ok(runs) => out.extend(runs),
            Err((at, why)) => {
                return Err(Error::BadResults {
                    path: path.to_path_buf(),
                    reason: format!("line {}: {why}", line + at),
                });
            }
        }
        line += lines;
    }
    Ok((out, line - first))
}

/// `text` cut into about `n` pieces, each ending at a line end.
fn split_at_lines(text: &[u8], n: usize) -> Vec<&[u8]> {
    let want = (text.len() / n.max(1)).max(64 * 1024);
    let mut out = Vec::new();
    let mut rest = text;
    while rest.len() > want {
        let cut = memchr::memchr(b'\n', &rest[want..]).map_or(rest.len(), |i| want + i + 1);
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// The kept samples of consecutive lines with the same case key (a samples file lists each
/// case's lines together, so a piece has about one run per case).
#[derive(Debug, Default)]
struct CaseRun {
    key: Box<str>,
    /// The key's field as written (before unquoting and trimming): the next line's key is
    /// compared with it byte for byte, without checking its text again.
    raw_key: Vec<u8>,
    bandwidth: Vec<(Lane, Vec<f64>)>,
    timelines: Timelines,
    before: Baseline,
}

impl CaseRun {
    fn push_bandwidth(&mut self, lane: Lane, value: f64) {
        match self.bandwidth.iter_mut().find(|(l, _)| *l == lane) {
            Some((_, v)) => v.push(value),
            None => self.bandwidth.push((lane, vec![value])),
        }
    }

    fn push_timeline(&mut self, metric: &str, t_ms: f64, value: f64) {
        push_point(&mut self.timelines, metric, t_ms, value);
    }
}

/// What one piece of lines gave: its runs of kept samples, or the failing line (0-based in the
/// piece) and why.
type Piece = Result<Vec<CaseRun>, (u64, String)>;

/// One piece of whole lines: its kept samples, or the failing line (0-based in the piece) and
/// why; and the number of lines in it.
fn read_piece(cols: &Columns, text: &[u8]) -> (Piece, u64) {
    let mut runs: Vec<CaseRun> = Vec::new();
    let mut fields: Vec<Cow<'_, [u8]>> = Vec::with_capacity(cols.count);
    let mut n = 0u64;
    // Lines found with memchr: a byte-by-byte split was a third of the whole read.
    let mut start = 0usize;
    let ends = memchr::memchr_iter(b'\n', text).map(|i| i + 1).chain(
        text.last()
            .is_some_and(|&b| b != b'\n')
            .then_some(text.len()),
    );
    for end in ends {
        let raw = &text[start..end];
        start = end;
        let at = n;
        n += 1;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if let Err(why) =
            split_fields(line, &mut fields).and_then(|()| take(cols, &fields, &mut runs))
        {
            return (Err((at, why)), n + remaining_lines(text, raw));
        }
    }
    (Ok(runs), n)
}

fn remaining_lines(text: &[u8], failed: &[u8]) -> u64 {
    let off = failed.as_ptr() as usize - text.as_ptr() as usize + failed.len();
    memchr::memchr_iter(b'\n', &text[off..]).count() as u64
}

/// Splits one CSV line into its fields; quoted fields (`"a,b"`, `""` for a quote) are
/// unquoted. A quoted field that runs past the line's end is refused: a samples file holds one
/// sample per line.
fn split_fields<'l>(line: &'l [u8], out: &mut Vec<Cow<'l, [u8]>>) -> Result<(), String> {
    out.clear();
    let mut i = 0;
    loop {
        if line.get(i) != Some(&b'"') {
            // Unquoted fields are short: a plain scan beats memchr's set-up per call.
            match line[i..].iter().position(|&b| b == b',') {
                Some(k) => {
                    out.push(Cow::Borrowed(&line[i..i + k]));
                    i += k + 1;
                    continue;
                }
                None => {
                    out.push(Cow::Borrowed(&line[i..]));
                    return Ok(());
                }
            }
        }
        let (field, end) = quoted(line, i + 1)?;
        out.push(field);
        match line.get(end) {
            None => return Ok(()),
            Some(b',') => i = end + 1,
            Some(_) => return Err("it has text after a quoted field's closing quote".into()),
        }
    }
}

/// The quoted field whose text starts at `from` (after its opening quote), and where its
/// closing quote ends.
fn quoted(line: &[u8], from: usize) -> Result<(Cow<'_, [u8]>, usize), String> {
    let mut owned: Option<Vec<u8>> = None;
    let mut j = from;
    loop {
        let Some(k) = memchr::memchr(b'"', &line[j..]) else {
            return Err("a quoted field does not end on its line".into());
        };
        let q = j + k;
        if line.get(q + 1) == Some(&b'"') {
            // `""` stands for one quote.
            owned
                .get_or_insert_with(Vec::new)
                .extend_from_slice(&line[j..=q]);
            j = q + 2;
            continue;
        }
        let field = match owned {
            Some(mut o) => {
                o.extend_from_slice(&line[j..q]);
                Cow::Owned(o)
            }
            None => Cow::Borrowed(&line[from..q]),
        };
        return Ok((field, q + 1));
    }
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("").trim()
}

/// Which kept series a line holds, by its `series` (and `index`) field.
enum Kept<'l> {
    Bandwidth,
    Timeline(&'l str),
    Before(&'l str),
}

/// The kept series of a line, `None` for one a view does not read, or why its series (or a
/// reading's snapshot) names nothing pinscope writes. Compared as bytes; a reading's name and
/// snapshot are checked as text.
fn kept_series<'l>(
    cols: &Columns,
    fields: &'l [Cow<'_, [u8]>],
) -> Result<Option<Kept<'l>>, String> {
    let series = fields[cols.series].trim_ascii();
    if series == BANDWIDTH_SERIES.as_bytes() {
        return Ok(Some(Kept::Bandwidth));
    }
    if let Some(reading) = series.strip_prefix(TIMELINE_PREFIX.as_bytes()) {
        return Ok(Some(Kept::Timeline(reading_name(series, reading)?)));
    }
    if let Some(reading) = series.strip_prefix(PHASE_PREFIX.as_bytes()) {
        let reading = reading_name(series, reading)?;
        let index = match cols.index {
            Some(i) => SampleIndex::parse(text(fields[i].trim_ascii()))?,
            None => return Ok(None),
        };
        return Ok((index == SampleIndex::Phase(KEPT_PHASE)).then_some(Kept::Before(reading)));
    }
    let dropped = [EVENT_TIME_SERIES, WALL_TIME_SERIES].map(str::as_bytes);
    if dropped.contains(&series) || series.starts_with(SETUP_PREFIX.as_bytes()) {
        return Ok(None);
    }
    Series::parse(text(series)).map(|_| None)
}

/// The text of reading `name` (the part of `series` after its prefix), checked to name a
/// reading of a known observer.
fn reading_name<'l>(series: &[u8], name: &'l [u8]) -> Result<&'l str, String> {
    let name = std::str::from_utf8(name)
        .map_err(|_| format!("series `{}` is not UTF-8 text", text(series)))?;
    ReadingName::parts(name)?;
    Ok(name)
}

/// Checks one line's fields and keeps its sample when the series is one a view reads, in the
/// last of `runs` when the line's key is that run's.
fn take(cols: &Columns, fields: &[Cow<'_, [u8]>], runs: &mut Vec<CaseRun>) -> Result<(), String> {
    if fields.len() != cols.count {
        return Err(format!(
            "it has {} fields, the header has {}",
            fields.len(),
            cols.count
        ));
    }
    let version = fields[cols.version].trim_ascii();
    if version != cols.version_text.as_bytes()
        && text(version).parse::<u32>().ok() != Some(SCHEMA_VERSION)
    {
        return Err(format!(
            "schema_version `{}` is not {SCHEMA_VERSION}",
            text(version)
        ));
    }
    let Some(kept) = kept_series(cols, fields)? else {
        return Ok(());
    };
    let run = run_of(&fields[cols.key], runs)?;
    let value_text = fields[cols.value].trim_ascii();
    let value: f64 = std::str::from_utf8(value_text)
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("value `{}` is not a number", text(value_text)))?;
    match kept {
        Kept::Before(metric) => {
            run.before.insert(metric.into(), value);
        }
        Kept::Bandwidth => {
            let lane_text = text(&fields[cols.lane]);
            let lane = Lane::parse(lane_text)
                .ok_or_else(|| format!("lane `{lane_text}` is not h2d, d2h or sum"))?;
            run.push_bandwidth(lane, value);
        }
        Kept::Timeline(metric) => {
            let t = text(&fields[cols.t_ms]);
            // A timeline point without its time cannot be drawn: it is skipped, as before.
            if !t.is_empty() {
                let t_ms = t
                    .parse()
                    .map_err(|_| format!("t_ms `{t}` is not a number"))?;
                run.push_timeline(metric, t_ms, value);
            }
        }
    }
    Ok(())
}

/// The run a line with key field `raw` belongs to: the last one when its key is the same bytes,
/// else a new one (the key checked as text once per run).
fn run_of<'r>(raw: &[u8], runs: &'r mut Vec<CaseRun>) -> Result<&'r mut CaseRun, String> {
    if runs.last().is_none_or(|r| r.raw_key != raw) {
        let key = std::str::from_utf8(raw)
            .map_err(|_| "its case_key is not UTF-8 text".to_string())?
            .trim();
        runs.push(CaseRun {
            key: key.into(),
            raw_key: raw.to_vec(),
            ..CaseRun::default()
        });
    }
    Ok(runs.last_mut().expect("a run was just pushed"))
}

#[cfg(test)]
mod tests;
