//! `pinscope compare A.json B.json` on pin-budget records (`pinscope budget --json`): two
//! machines, or one machine before and after a change (a driver, `vm.max_map_count`, a cgroup
//! limit), side by side — each kind's safe amount, then every probe at every hold level with what
//! ended it and whether a refused pin left the process usable. `pinscope report` on such records
//! writes the same table as a page that first answers, per record, what is safe to pin.

use super::{CompareArgs, CompareOutput, ReportArgs, ReportFormat};
use crate::Error;
use crate::results::{Inputs, OutputPolicy};
use crate::run::pinnable::search::Ended;
use crate::run::pinnable::{BudgetRecord, Found, ProbeKind, ProbeResult, SafeAmount};
use crate::units::format_size;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One line of the comparison: what, and each record's cell (`None`: not measured there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetLine {
    pub what: String,
    pub cells: Vec<Option<String>>,
}

/// The records compared (the first is the baseline), one line per safe amount and probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetComparison {
    pub records: Vec<String>,
    pub lines: Vec<BudgetLine>,
}

/// Whether every input is a `.json` file that is not an observed run's: budget records.
fn budget_inputs(paths: &[PathBuf]) -> bool {
    paths.iter().all(|p| {
        p.extension().is_some_and(|e| e == "json") && crate::results::observed_stem(p).is_none()
    })
}

/// `None` when the inputs are not all `.json` files (another comparison then).
pub fn compare_budgets(args: &CompareArgs, quiet: bool) -> Result<Option<i32>, Error> {
    if !budget_inputs(&args.results) {
        return Ok(None);
    }
    if args.fail_on.is_some() {
        return Err(Error::Usage(
            "--fail-on judges results CSVs; pin-budget records have no verdicts: leave it out"
                .into(),
        ));
    }
    let outputs: Vec<&Path> = std::iter::once(&args.output)
        .chain(&args.html)
        .map(PathBuf::as_path)
        .collect();
    let (policy, records) = read_records(&args.results, args.force, &outputs)?;
    let cmp = BudgetComparison::of(&records);
    let text = match args.format {
        CompareOutput::Json => serde_json::to_string_pretty(&cmp).unwrap_or_default() + "\n",
        CompareOutput::Html => cmp.html(),
        _ => cmp.markdown(),
    };
    super::write_output(&policy, &args.output, text.as_bytes())?;
    if !quiet && args.output.as_os_str() != "-" {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(Some(0))
}

/// `pinscope report` on pin-budget records: a page that answers first, per record, what is safe
/// to pin and whether a refusal was met, then the records side by side and each one whole.
/// `None` when the inputs are not all budget records' files (another page then).
pub fn report_budgets(args: &ReportArgs, quiet: bool) -> Result<Option<i32>, Error> {
    if !budget_inputs(&args.results) || !args.nvbandwidth.is_empty() {
        return Ok(None);
    }
    let (policy, records) = read_records(&args.results, args.force, &[args.output.as_path()])?;
    let cmp = BudgetComparison::of(&records);
    let text = match args.format {
        ReportFormat::Json => {
            let answers: Vec<String> = records.iter().map(|(n, r)| headline(n, r)).collect();
            let v = serde_json::json!({ "answers": answers, "comparison": cmp });
            serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
        }
        ReportFormat::Html => {
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| "pinscope: pin budget".into());
            budget_page(&records, &cmp, &title)
        }
    };
    super::write_output(&policy, &args.output, text.as_bytes())?;
    if !quiet && args.output.as_os_str() != "-" {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(Some(0))
}

/// The page: a headline per record, the table, each record as `pinscope budget` prints it.
fn budget_page(records: &[(String, BudgetRecord)], cmp: &BudgetComparison, title: &str) -> String {
    use crate::report::html::{escape, page};
    let mut body = format!("<h1>{}</h1>\n", escape(title));
    for (name, r) in records {
        body.push_str(&format!(
            "<p class=\"answer\">{}</p>\n",
            escape(&headline(name, r))
        ));
    }
    body.push_str(&format!(
        "<p class=\"note\">Rule: {}</p>\n",
        escape(&records_rule(records))
    ));
    body.push_str("<h2>Every probe at every hold level</h2>\n");
    body.push_str(&cmp.table_html());
    for (name, r) in records {
        body.push_str(&format!(
            "<h2>{}</h2>\n<pre style=\"white-space: pre-wrap\">{}</pre>\n",
            escape(name),
            escape(&super::budget::text_of(r))
        ));
    }
    page(title, &body)
}

/// The safe-amount rule the records state (they come from one pinscope, or say theirs).
fn records_rule(records: &[(String, BudgetRecord)]) -> String {
    let mut rules: Vec<&str> = records.iter().map(|(_, r)| r.safe.rule.as_str()).collect();
    rules.dedup();
    rules.join(" / ")
}

/// One record's answer: what is safe to pin, what ended the probes, what a refusal left.
fn headline(name: &str, r: &BudgetRecord) -> String {
    use super::budget::{recoverable_words, safe_words};
    let s = &r.safe;
    let mut out = format!(
        "{name}: safe to pin {} in total, {} in one cuMemHostAlloc, {} in one cuMemHostRegister, and {} registrations",
        safe_words(ProbeKind::Total, s.total_bytes),
        safe_words(ProbeKind::HostAlloc, s.host_alloc_bytes),
        safe_words(ProbeKind::HostRegister, s.host_register_bytes),
        safe_words(ProbeKind::Registrations, s.registrations),
    );
    let refused: Vec<&ProbeResult> = r
        .probes
        .iter()
        .filter(|p| matches!(p.ended, Ended::Refused { .. }))
        .collect();
    if refused.is_empty() {
        out.push_str(&format!(
            ". No pin was refused within the cap of {} and the deadline of {:.0} s (\"≥\": the machine allows more), so whether a refused pin leaves a process usable was not exercised here.",
            format_size(r.bounds.limit_bytes),
            r.deadline_s
        ));
    } else {
        let after: Vec<String> = refused
            .iter()
            .map(|p| {
                let then = p
                    .after_refusal
                    .as_ref()
                    .map_or("not checked", |a| recoverable_words(a.recoverable));
                format!(
                    "{} at {}% held: usable after: {then}",
                    p.kind.title(),
                    p.hold_percent
                )
            })
            .collect();
        out.push_str(&format!(". Refused: {}.", after.join("; ")));
    }
    if let Some(b) = r.predictor.host_alloc_bytes {
        out.push_str(&format!(
            " The live predictor said {} when it was measured.",
            format_size(b)
        ));
    }
    out
}

/// The output policy for `paths` as inputs (every output checked first, before any input is
/// read), then each record with its name.
fn read_records(
    paths: &[PathBuf],
    force: bool,
    outputs: &[&Path],
) -> Result<(OutputPolicy, Vec<(String, BudgetRecord)>), Error> {
    let mut read = Inputs::default();
    for p in paths {
        read.add(p, "pin-budget record");
    }
    let policy = OutputPolicy::new(read, force);
    for path in outputs {
        super::check_output(&policy, path)?;
    }
    let records = paths
        .iter()
        .map(|p| read_record(p))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((policy, records))
}

fn read_record(path: &Path) -> Result<(String, BudgetRecord), Error> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{shown} could not be read ({e})")))?;
    let record: BudgetRecord = serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "{shown} is not a pin-budget record ({e}): give results CSVs, observed runs, or records of `pinscope budget --json -o FILE`"
        ))
    })?;
    let name = record.gpu.as_ref().map_or_else(
        || format!("{} (no GPU)", record.host),
        |g| format!("{}, {}", g.name, record.time),
    );
    Ok((name, record))
}

fn safe_cell(a: Option<SafeAmount>, bytes: bool) -> Option<String> {
    let a = a?;
    let n = if bytes {
        format_size(a.value)
    } else {
        a.value.to_string()
    };
    Some(format!(
        "{}{n} (at {}% held)",
        if a.at_least { "≥ " } else { "" },
        a.hold_percent
    ))
}

fn probe_cell(p: &ProbeResult) -> String {
    let found = match p.found {
        Found::Bytes(b) => format_size(b),
        Found::Ranges(n) => format!("{n} ranges"),
    };
    let ended = match &p.ended {
        Ended::Refused { .. } => {
            let after = p.after_refusal.as_ref().map_or(String::new(), |r| {
                format!(
                    "; usable after: {}",
                    super::budget::recoverable_words(r.recoverable)
                )
            });
            format!("refused{after}")
        }
        Ended::Cap => "cap".into(),
        Ended::Deadline => "deadline".into(),
    };
    format!("{found} ({ended})")
}

impl BudgetComparison {
    pub fn of(records: &[(String, BudgetRecord)]) -> BudgetComparison {
        let safe = |what: &str, get: &dyn Fn(&BudgetRecord) -> Option<String>| BudgetLine {
            what: what.into(),
            cells: records.iter().map(|(_, r)| get(r)).collect(),
        };
        let mut lines = vec![
            safe("safe: single cuMemHostAlloc", &|r| {
                safe_cell(r.safe.host_alloc_bytes, true)
            }),
            safe("safe: single cuMemHostRegister", &|r| {
                safe_cell(r.safe.host_register_bytes, true)
            }),
            safe("safe: total pinned", &|r| {
                safe_cell(r.safe.total_bytes, true)
            }),
            safe("safe: registrations", &|r| {
                safe_cell(r.safe.registrations, false)
            }),
        ];
        let mut levels: Vec<u8> = records
            .iter()
            .flat_map(|(_, r)| r.probes.iter().map(|p| p.hold_percent))
            .collect();
        levels.sort_unstable();
        levels.dedup();
        for hold in levels {
            for kind in ProbeKind::ALL {
                lines.push(BudgetLine {
                    what: format!("{} with {hold}% of device memory held", kind.title()),
                    cells: records
                        .iter()
                        .map(|(_, r)| {
                            r.probes
                                .iter()
                                .find(|p| p.kind == kind && p.hold_percent == hold)
                                .map(probe_cell)
                        })
                        .collect(),
                });
            }
        }
        BudgetComparison {
            records: records.iter().map(|(n, _)| n.clone()).collect(),
            lines,
        }
    }

    fn header(&self) -> Vec<String> {
        let mut h = vec!["pin budget".to_string()];
        h.extend(
            self.records
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{} ({n})", char::from(b'A' + (i % 26) as u8))),
        );
        h
    }

    fn rows(&self) -> Vec<Vec<String>> {
        self.lines
            .iter()
            .map(|l| {
                std::iter::once(l.what.clone())
                    .chain(
                        l.cells
                            .iter()
                            .map(|c| c.clone().unwrap_or_else(|| "—".into())),
                    )
                    .collect()
            })
            .collect()
    }

    /// A self-contained page with the table.
    pub fn html(&self) -> String {
        let body = format!("<h1>Pin budgets side by side</h1>\n{}", self.table_html());
        crate::report::html::page("pinscope compare: pin budgets", &body)
    }

    /// The table as HTML.
    fn table_html(&self) -> String {
        use crate::report::html::escape;
        let row = |cells: &[String], tag: &str| {
            let inner: String = cells
                .iter()
                .map(|c| format!("<{tag}>{}</{tag}>", escape(c)))
                .collect();
            format!("<tr>{inner}</tr>\n")
        };
        let mut out = String::from("<table>\n");
        out.push_str(&row(&self.header(), "th"));
        for r in self.rows() {
            out.push_str(&row(&r, "td"));
        }
        out.push_str("</table>\n");
        out
    }

    /// A Markdown table (also the plain-text table).
    pub fn markdown(&self) -> String {
        let header = self.header();
        let mut out = format!(
            "| {} |\n|{}\n",
            header.join(" | "),
            "---|".repeat(header.len())
        );
        for r in self.rows() {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        out
    }
}
