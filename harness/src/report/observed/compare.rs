//! Observed runs side by side (`pinscope compare` given `.timeline.csv` or `.observed.json`
//! files): the same program before and after a change (`pin_memory=False`, a smaller pool), each
//! finding of its page as one line — how it ended, the peak of page-locked memory, each library's
//! peak by kind, what was never freed, the largest pin, the failed calls, each observer's peak —
//! computed once into [`ObservedComparison`] and rendered as a text table, Markdown, CSV, JSON or
//! an HTML page.

use super::holders::{Holder, Holders};
use super::{Series, series_of, shell_words};
use crate::report::html::{escape, page};
use crate::results::{AllocEvent, Ending, ObservedSidecar, Source, TimelinePoint, Unit};
use crate::units::format_size;
use serde::Serialize;
use std::collections::BTreeSet;

/// One observed run, as read from its files.
pub struct ObservedRun<'a> {
    /// The name the comparison shows: the file stem.
    pub name: String,
    pub sidecar: &'a ObservedSidecar,
    pub points: &'a [TimelinePoint],
    pub events: &'a [AllocEvent],
}

/// What a line counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Bytes,
    Count,
}

/// One finding across the runs; `None` where a run has no reading of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedLine {
    pub what: String,
    pub measure: Measure,
    pub values: Vec<Option<f64>>,
}

/// A compared run's identity: its name, command and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRun {
    pub name: String,
    pub command: String,
    pub ending: Ending,
    pub started_at: String,
}

/// The comparison: the runs (the first is the baseline) and one line per finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservedComparison {
    pub runs: Vec<ComparedRun>,
    pub lines: Vec<ComparedLine>,
}

impl ObservedComparison {
    /// Every finding of every run, lined up: holders and observers that only some runs have get
    /// `None` in the others.
    pub fn of(runs: &[ObservedRun]) -> ObservedComparison {
        let holders: Vec<Holders> = runs.iter().map(|r| Holders::of(r.events)).collect();
        let series: Vec<Vec<Series>> = runs.iter().map(|r| series_of(r.points)).collect();
        let mut lines = vec![bytes_line(
            "page-locked host memory at its peak (pinned + registered)",
            &holders,
            |h| h.page_locked_peak.as_ref().map(|p| p.bytes),
        )];
        let all: BTreeSet<Holder> = holders
            .iter()
            .flat_map(|h| h.peaks.keys().cloned())
            .collect();
        for holder in &all {
            let what = format!("{} {} at its peak", holder.0, holder.1.word());
            lines.push(bytes_line(&what, &holders, |h| {
                Some(h.peaks.get(holder).map_or(0, |p| p.bytes))
            }));
        }
        lines.push(bytes_line("never freed before exit", &holders, |h| {
            Some(h.never_freed.values().map(|l| l.bytes).sum())
        }));
        lines.push(bytes_line("the largest pin", &holders, |h| {
            h.largest_pin.as_ref().map(|e| e.bytes)
        }));
        lines.push(ComparedLine {
            what: "allocation calls that failed".into(),
            measure: Measure::Count,
            values: holders
                .iter()
                .map(|h| Some(h.failed.len() as f64))
                .collect(),
        });
        lines.extend(observer_lines(&series));
        ObservedComparison {
            runs: runs.iter().map(compared_run).collect(),
            lines,
        }
    }
}

fn compared_run(r: &ObservedRun) -> ComparedRun {
    ComparedRun {
        name: r.name.clone(),
        command: shell_words(&r.sidecar.command),
        ending: r.sidecar.ending,
        started_at: r.sidecar.started_at.clone(),
    }
}

fn bytes_line(
    what: &str,
    holders: &[Holders],
    value: impl Fn(&Holders) -> Option<u64>,
) -> ComparedLine {
    ComparedLine {
        what: what.into(),
        measure: Measure::Bytes,
        values: holders.iter().map(|h| value(h).map(|b| b as f64)).collect(),
    }
}

/// Each observer's extreme over the run (its peak; MemAvailable's lowest point), per run.
fn observer_lines(series: &[Vec<Series>]) -> Vec<ComparedLine> {
    let keys: BTreeSet<(Source, String)> = series
        .iter()
        .flatten()
        .map(|s| (s.source, s.reading.clone()))
        .collect();
    keys.into_iter()
        .filter_map(|(source, reading)| {
            let found: Vec<Option<&Series>> = series
                .iter()
                .map(|run| {
                    run.iter()
                        .find(|s| s.source == source && s.reading == reading)
                })
                .collect();
            let any = found.iter().flatten().next()?;
            let falls = any.falls();
            let values = found
                .iter()
                .map(|s| {
                    let v = (*s)?.points.iter().map(|p| p.1);
                    if falls {
                        v.reduce(f64::min)
                    } else {
                        v.reduce(f64::max)
                    }
                })
                .collect();
            Some(ComparedLine {
                what: format!(
                    "{} at its {}",
                    any.label(),
                    if falls { "lowest" } else { "peak" }
                ),
                measure: if any.unit == Unit::Bytes {
                    Measure::Bytes
                } else {
                    Measure::Count
                },
                values,
            })
        })
        .collect()
}

/// A value as the tables write it.
fn cell(measure: Measure, v: Option<f64>) -> String {
    match (measure, v) {
        (_, None) => "—".into(),
        (Measure::Bytes, Some(b)) => format_size(b.max(0.0) as u64),
        (Measure::Count, Some(n)) => format!("{n}"),
    }
}

/// The change of a run against the baseline: "+1.00 GiB", "−12", "same".
fn change(measure: Measure, base: Option<f64>, v: Option<f64>) -> String {
    let (Some(a), Some(b)) = (base, v) else {
        return "—".into();
    };
    if a == b {
        return "same".into();
    }
    let sign = if b > a { "+" } else { "−" };
    format!("{sign}{}", cell(measure, Some((b - a).abs())))
}

fn ending_words(e: Ending) -> String {
    match e {
        Ending::Exit { code } => format!("exit {code}"),
        Ending::Signal { signal } => format!("signal {signal}"),
        Ending::Unknown => "no status".into(),
    }
}

impl ObservedComparison {
    /// The header and the rows of the table: what, each run's value, each later run's change.
    fn table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let mut header = vec!["finding".to_string()];
        header.extend(
            self.runs
                .iter()
                .enumerate()
                .map(|(i, r)| format!("{} ({})", letter(i), r.name)),
        );
        header.extend((1..self.runs.len()).map(|i| format!("{} − A", letter(i))));
        let mut rows = vec![{
            let mut row = vec!["how it ended".to_string()];
            row.extend(self.runs.iter().map(|r| ending_words(r.ending)));
            row.extend((1..self.runs.len()).map(|_| String::new()));
            row
        }];
        for l in &self.lines {
            let mut row = vec![l.what.clone()];
            row.extend(l.values.iter().map(|v| cell(l.measure, *v)));
            let base = l.values.first().copied().flatten();
            row.extend(l.values.iter().skip(1).map(|v| change(l.measure, base, *v)));
            rows.push(row);
        }
        (header, rows)
    }

    /// The runs as a legend: letter, command, start.
    fn legend(&self) -> Vec<String> {
        self.runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let started = r
                    .started_at
                    .get(..16)
                    .unwrap_or(&r.started_at)
                    .replace('T', " ");
                format!("{}: `{}`, started {started} UTC", letter(i), r.command)
            })
            .collect()
    }

    /// A Markdown table (also the plain-text table: it reads as one).
    pub fn markdown(&self) -> String {
        let (header, rows) = self.table();
        let mut out: String = self.legend().iter().map(|l| format!("- {l}\n")).collect();
        out.push('\n');
        out.push_str(&format!("| {} |\n", header.join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
        for r in rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        out
    }

    /// CSV: one line per finding, the raw values (bytes, counts) per run.
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["finding".to_string(), "unit".to_string()];
        header.extend(self.runs.iter().map(|r| r.name.clone()));
        let _ = w.write_record(&header);
        for l in &self.lines {
            let mut rec = vec![l.what.clone(), format!("{:?}", l.measure).to_lowercase()];
            rec.extend(
                l.values
                    .iter()
                    .map(|v| v.map(|x| x.to_string()).unwrap_or_default()),
            );
            let _ = w.write_record(&rec);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    /// A self-contained page with the table.
    pub fn html(&self) -> String {
        let (header, rows) = self.table();
        let mut body = String::from("<h1>Observed runs side by side</h1>\n<ul>\n");
        for l in self.legend() {
            body.push_str(&format!("<li>{}</li>\n", escape(&l)));
        }
        body.push_str("</ul>\n<table>\n<tr>");
        for h in &header {
            body.push_str(&format!("<th>{}</th>", escape(h)));
        }
        body.push_str("</tr>\n");
        for r in rows {
            body.push_str("<tr>");
            for c in r {
                body.push_str(&format!("<td>{}</td>", escape(&c)));
            }
            body.push_str("</tr>\n");
        }
        body.push_str("</table>\n");
        page("pinscope compare: observed runs", &body)
    }
}

fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}
