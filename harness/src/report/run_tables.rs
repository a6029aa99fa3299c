//! The report's tables about the runs rather than their numbers: the machines, the memory
//! observers, the scenarios as run, the failed and skipped cases, the claims, probes and derived
//! results the sidecars hold, and the nvbandwidth reference.

use super::html::{self, escape};
use super::{CaseRow, NvbandwidthSeries, max_alloc_detail, para, section, settings_table};
use crate::results::{
    ClaimStatus, ClaimVerdict, ObserverStatus, ProbeName, ProbeRecord, ResultSet, Row, Sidecar,
};
use std::fmt::Write;

pub(super) fn machines(out: &mut String, sets: &[ResultSet], labels: &[String]) {
    section(out, "machines", "Machines");
    let head = [
        "run",
        "file",
        "host",
        "platform",
        "os",
        "kernel",
        "cpu",
        "RAM",
        "gpu",
        "driver",
        "CUDA",
        "driver model",
        "PCIe",
        "evidence",
    ];
    let rows: Vec<Vec<String>> = sets
        .iter()
        .zip(labels)
        .map(|(s, l)| {
            let file = s.path.display().to_string();
            match &s.sidecar {
                Some(c) => {
                    let m = &c.machine;
                    let g = m.gpu.clone().unwrap_or_default();
                    let k = m.key();
                    vec![
                        l.trim().to_string(),
                        file,
                        m.host_name.clone(),
                        m.platform.to_string(),
                        m.os.clone(),
                        m.kernel.clone(),
                        format!("{} ({} threads)", m.cpu, m.cpu_threads),
                        crate::units::format_size(m.ram_bytes),
                        g.name.clone(),
                        g.driver_version.clone(),
                        g.cuda_driver_version.clone(),
                        g.driver_model.to_string(),
                        k.pcie_link,
                        m.platform_evidence.join("; "),
                    ]
                }
                None => {
                    let k = s
                        .rows
                        .first()
                        .map(|r| (*r.machine).clone())
                        .unwrap_or_default();
                    vec![
                        l.trim().to_string(),
                        file,
                        k.host_name,
                        k.platform.to_string(),
                        k.os,
                        "(no sidecar)".into(),
                        String::new(),
                        String::new(),
                        k.gpu,
                        k.driver_version,
                        String::new(),
                        k.driver_model.to_string(),
                        k.pcie_link,
                        String::new(),
                    ]
                }
            }
        })
        .collect();
    out.push_str(&html::table(&head, &rows, &|_| ""));
    out.push_str(&settings_table::settings_table(sets, labels));
    out.push_str("</section>\n");
}

/// A table row: its CSS class (empty for none) and its cells.
type ClassedRow = (&'static str, Vec<String>);

/// What a section holding one table says: its anchor and heading, the table's column heads,
/// and the note given in place of a table without rows.
struct TableText {
    id: &'static str,
    title: &'static str,
    head: &'static [&'static str],
    empty: &'static str,
}

impl TableText {
    /// The section: `lead` (when there are rows) and the table of `rows`, each row its CSS
    /// class (empty for none) and its cells; or only the note when there are no rows.
    fn write(&self, out: &mut String, lead: Option<&str>, rows: &[ClassedRow]) {
        section(out, self.id, self.title);
        if rows.is_empty() {
            para(out, self.empty);
        } else {
            if let Some(lead) = lead {
                para(out, lead);
            }
            let cells: Vec<Vec<String>> = rows.iter().map(|(_, c)| c.clone()).collect();
            out.push_str(&html::table(self.head, &cells, &|i| rows[i].0));
        }
        out.push_str("</section>\n");
    }
}

const OBSERVERS: TableText = TableText {
    id: "observers",
    title: "Memory observers",
    head: &["run", "observer", "state", "why not"],
    empty: "No observer list was recorded (no sidecar).",
};

pub(super) fn observers(out: &mut String, sets: &[ResultSet], labels: &[String]) {
    let rows = sidecar_rows(sets, labels, |c| &c.observers, observer_cells);
    let unavailable = rows.iter().filter(|(class, _)| !class.is_empty()).count();
    let lead = format!(
        "{unavailable} of {} observers were unavailable; their columns are empty and their bars missing.",
        rows.len()
    );
    OBSERVERS.write(out, Some(&lead), &rows);
}

/// An observer's table row after the run: name, state and why it is unavailable (marked
/// `skipped` when it is).
fn observer_cells(o: &ObserverStatus) -> ClassedRow {
    let (class, state) = if o.available {
        ("", "available")
    } else {
        ("skipped", "unavailable")
    };
    let cells = vec![
        o.observer.to_string(),
        state.into(),
        o.reason.clone().unwrap_or_default(),
    ];
    (class, cells)
}

/// One table row per item `items` picks from each run's sidecar: the run's label, then `cells`.
fn sidecar_rows<'s, T: 's>(
    sets: &'s [ResultSet],
    labels: &[String],
    items: impl Fn(&'s Sidecar) -> &'s [T],
    cells: impl Fn(&'s T) -> ClassedRow,
) -> Vec<ClassedRow> {
    let mut rows = Vec::new();
    for (s, l) in sets.iter().zip(labels) {
        for item in s.sidecar.iter().flat_map(&items) {
            let (class, item_cells) = cells(item);
            let mut row = vec![l.trim().to_string()];
            row.extend(item_cells);
            rows.push((class, row));
        }
    }
    rows
}

/// Scenario names in first-seen order over all sets.
pub(super) fn scenario_names(sets: &[ResultSet]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in sets {
        for r in &s.rows {
            if names.last().map(String::as_str) != Some(&*r.scenario)
                && !names.iter().any(|n| **n == *r.scenario)
            {
                names.push(r.scenario.to_string());
            }
        }
        for sc in s.sidecar.iter().flat_map(|c| &c.scenarios) {
            if !names.contains(&sc.name) {
                names.push(sc.name.clone());
            }
        }
    }
    names
}

pub(super) fn scenarios(out: &mut String, sets: &[ResultSet], names: &[String]) {
    section(out, "scenarios", "Scenarios");
    for name in names {
        let rec = sets
            .iter()
            .filter_map(|s| s.sidecar.as_ref())
            .flat_map(|c| &c.scenarios)
            .find(|s| &s.name == name);
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        match rec {
            Some(r) => {
                let _ = writeln!(out, "<p>{}</p>", escape(&r.description));
                let _ = writeln!(
                    out,
                    "<details><summary>{} (TOML as run)</summary>\n<pre>{}</pre></details>",
                    escape(&r.path),
                    escape(&r.text)
                );
            }
            None => para(out, "The scenario text was not recorded (no sidecar)."),
        }
    }
    out.push_str("</section>\n");
}

const FAILURES: TableText = TableText {
    id: "failures",
    title: "Failed and skipped cases",
    head: &["case", "lane", "scenario", "status", "reason"],
    empty: "Every case finished.",
};

pub(super) fn failures(out: &mut String, all: &[CaseRow<'_>], labels: &[String]) {
    let rows: Vec<ClassedRow> = all
        .iter()
        .filter_map(|(set, r)| {
            let (kind, why) = match &r.status {
                crate::results::Status::Failed(w) => ("failed", w.to_string()),
                crate::results::Status::Skipped(w) => ("skipped", w.clone()),
                crate::results::Status::Ok => return None,
            };
            let cells = vec![
                format!("{}{}", labels[*set], r.case_label),
                r.lane.name().into(),
                r.scenario.to_string(),
                kind.into(),
                why,
            ];
            Some((kind, cells))
        })
        .collect();
    let text = if all.is_empty() {
        TableText {
            empty: "The results hold no case rows: no case finished.",
            ..FAILURES
        }
    } else {
        FAILURES
    };
    text.write(out, None, &rows);
}

const CLAIMS: TableText = TableText {
    id: "claims",
    title: "Claims checked",
    head: &["run", "scenario", "claim", "verdict", "detail"],
    empty: "No claims were checked in these runs.",
};

const PROBES: TableText = TableText {
    id: "probes",
    title: "Probes",
    head: &["run", "scenario", "probe", "value", "unit", "detail"],
    empty: "No probes ran in these runs.",
};

const DERIVED: TableText = TableText {
    id: "derived",
    title: "Derived results",
    head: &["run", "result", "value", "how it is computed"],
    empty: "No derived results were recorded.",
};

/// A claim's table row after the run: scenario, claim, verdict and detail, marked `failed` when
/// it did not hold and `skipped` when it did not apply.
fn claim_cells(v: &ClaimVerdict) -> ClassedRow {
    let class = match v.verdict {
        ClaimStatus::Held => "",
        ClaimStatus::NotHeld => "failed",
        ClaimStatus::NotApplicable => "skipped",
    };
    let cells = vec![
        v.scenario.clone(),
        v.text.clone(),
        v.verdict.name().into(),
        v.detail.clone(),
    ];
    (class, cells)
}

/// A probe's table cells after the run: scenario, probe, value, unit and detail. The max-alloc
/// probe's name and detail are made from its case's row (`rows`), so that they say what was held
/// whatever pinscope wrote the sidecar.
fn probe_cells(p: &ProbeRecord, rows: &[Row]) -> Vec<String> {
    let max_alloc = rows
        .iter()
        .find(|r| r.case_key == p.case_key)
        .filter(|_| p.name.is_max_alloc())
        .and_then(|r| {
            let name = if r.max_alloc_host_only_mib().is_some() {
                ProbeName::MaxAllocHostOnly
            } else {
                ProbeName::MaxAllocCaseHeld
            };
            Some((name, max_alloc_detail(r)?))
        });
    let (name, detail) = max_alloc.unwrap_or_else(|| (p.name, p.detail.clone()));
    vec![
        p.scenario.clone(),
        name.to_string(),
        format!("{:.2}", p.value),
        p.unit.clone(),
        detail,
    ]
}

/// The derived results the runs' sidecars hold: run, name, value and how it is computed (the
/// formula of the `[[derived]]` entry in the scenario text the sidecar recorded), so that a sum
/// over cases is never read as one case's value.
fn derived_rows(sets: &[ResultSet], labels: &[String]) -> Vec<ClassedRow> {
    let mut rows = Vec::new();
    for (s, l) in sets.iter().zip(labels) {
        let Some(sidecar) = &s.sidecar else { continue };
        let formulas: Vec<(String, String)> = sidecar
            .scenarios
            .iter()
            .filter_map(|r| crate::scenario::parse(&r.path, &r.text).ok())
            .flat_map(|sc| {
                sc.derived
                    .into_iter()
                    .map(|d| (d.text.clone(), d.formula()))
            })
            .collect();
        for (name, value) in &sidecar.derived {
            let formula = formulas
                .iter()
                .find(|(text, _)| text == name)
                .map_or_else(|| "not recorded".to_string(), |(_, f)| f.clone());
            let cells = vec![l.trim().to_string(), name.clone(), value.clone(), formula];
            rows.push(("", cells));
        }
    }
    rows
}

/// The claims, probes and derived results the runs' sidecars hold.
pub(super) fn sidecar_lists(out: &mut String, sets: &[ResultSet], labels: &[String]) {
    let claims = sidecar_rows(sets, labels, |c| &c.claims, claim_cells);
    CLAIMS.write(out, None, &claims);
    let mut probes = Vec::new();
    for (s, l) in sets.iter().zip(labels) {
        for p in s.sidecar.iter().flat_map(|c| &c.probes) {
            let mut row = vec![l.trim().to_string()];
            row.extend(probe_cells(p, &s.rows));
            probes.push(("", row));
        }
    }
    PROBES.write(out, None, &probes);
    DERIVED.write(out, None, &derived_rows(sets, labels));
}

pub(super) fn reference(out: &mut String, nvb: &[NvbandwidthSeries]) {
    const REFERENCE: TableText = TableText {
        id: "reference",
        title: "Reference: nvbandwidth",
        head: &["test", "result", "buffer", "status", "file"],
        empty: "No nvbandwidth output was given (--nvbandwidth FILE.json).",
    };
    let rows: Vec<ClassedRow> = nvb
        .iter()
        .map(|r| {
            let cells = vec![
                r.testname.clone(),
                r.value_text(),
                r.buffer_size
                    .map(crate::units::format_size)
                    .unwrap_or_else(|| "not recorded".into()),
                r.status.clone(),
                r.source.clone(),
            ];
            ("", cells)
        })
        .collect();
    REFERENCE.write(out, None, &rows);
}
