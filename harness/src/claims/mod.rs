//! Expectations a scenario states about its own results, checked after a run.
//!
//! A claim names a metric of one case (`metric`, `case`), a comparison (`op`) and a bound, either
//! absolute or relative to another quantity, and the platforms it applies to. After a run each
//! claim is `held`, `not held` (with the measured value) or `not applicable here` (with why).

mod status;

use crate::platform::Machine;
use crate::results::{self, ClaimStatus, ClaimVerdict, Row};
use crate::scenario::{CLAIM_COLUMNS, Scenario};
pub use crate::scenario::{Claim, Derived, Op};

/// The value of a named metric in a result row (`None` when not measured or not observable):
/// the column of that name ([`CLAIM_COLUMNS`] lists those a claim may name), the accounting
/// family `d_<phase>_<metric>_mib`, or `max_alloc_drop_mib` (free minus host memory only held).
pub fn metric_value(row: &Row, metric: &str) -> Option<f64> {
    if metric == "max_alloc_drop_mib" {
        return Some(row.max_alloc_free_mib? - row.max_alloc_host_only_mib()?);
    }
    // Read from the row's status: a failure is the answer these metrics are about.
    if matches!(metric, "out_of_memory" | "mismatched_copies") {
        return status::status_metric(row, metric);
    }
    if let Some((phase, m)) = crate::accounting::parse_column(metric) {
        return row.accounting_value(phase, m);
    }
    if !CLAIM_COLUMNS.contains(&metric) {
        return None;
    }
    results::column(metric)?.number(row)
}

/// The platform names a claim can be restricted to that describe this machine.
pub fn platform_tags(machine: &Machine) -> Vec<String> {
    let mut v = vec![machine.platform.clone()];
    if let Some(g) = machine
        .gpu
        .as_ref()
        .filter(|_| machine.platform == "windows")
    {
        v.push(format!("windows-{}", g.driver_model));
    }
    v
}

fn rows_of<'a>(rows: &'a [Row], label: &str) -> Vec<&'a Row> {
    let mut v: Vec<&Row> = rows.iter().filter(|r| r.case_label == label).collect();
    // One lane per case: the first (h2d, d2h, or h2d of a bidirectional case).
    v.dedup_by(|a, b| a.case_key == b.case_key);
    v
}

/// Checks every claim of `scenario` against the rows of a run on `machine`.
pub fn evaluate(scenario: &Scenario, rows: &[Row], machine: &Machine) -> Vec<ClaimVerdict> {
    let tags = platform_tags(machine);
    scenario
        .claims
        .iter()
        .map(|c| {
            let (verdict, detail) = judge(c, rows, &tags);
            ClaimVerdict {
                scenario: scenario.name.clone(),
                text: c.text.clone(),
                verdict,
                detail,
            }
        })
        .collect()
}

fn judge(c: &Claim, rows: &[Row], tags: &[String]) -> (ClaimStatus, String) {
    const NA: ClaimStatus = ClaimStatus::NotApplicable;
    if !c.platforms.is_empty() && !c.platforms.iter().any(|p| tags.contains(p)) {
        return (
            NA,
            format!(
                "applies to {}; this machine is {}",
                c.platforms.join(", "),
                tags.join("/")
            ),
        );
    }
    let subject = rows_of(rows, &c.case);
    if subject.is_empty() {
        return (NA, format!("case `{}` did not run", c.case));
    }
    let mut worst: Option<(f64, f64)> = None;
    for r in &subject {
        if !r.status.is_ok() && !status::judged_on_failure(&c.metric) {
            return (NA, format!("case `{}` {}", c.case, r.status.to_field()));
        }
        let Some(v) = metric_value(r, &c.metric) else {
            return (
                NA,
                format!("{} was not observable here for `{}`", c.metric, c.case),
            );
        };
        let reference = match c.relative_to.as_deref() {
            None => 1.0,
            Some("pinned_bytes") | Some("size") => {
                let bytes = if c.relative_to.as_deref() == Some("size") {
                    r.size_bytes
                } else {
                    r.pinned_bytes
                } as f64;
                if c.metric.ends_with("_mib") {
                    bytes / (1u64 << 20) as f64
                } else {
                    bytes
                }
            }
            Some(other) => {
                let Some((label, metric)) = other.split_once('.') else {
                    return (NA, format!("bad reference `{other}`"));
                };
                let refs = rows_of(rows, label);
                match refs
                    .first()
                    .filter(|r| r.status.is_ok())
                    .and_then(|r| metric_value(r, metric))
                {
                    Some(v) => v,
                    None => return (NA, format!("reference `{other}` was not measured")),
                }
            }
        };
        let bound = c.factor * reference;
        if !c.op.holds(v, bound) {
            return (
                ClaimStatus::NotHeld,
                format!("{} = {v:.3}, needs {} {bound:.3}", c.metric, c.op.name()),
            );
        }
        worst = Some((v, bound));
    }
    let (v, bound) = worst.unwrap_or((0.0, 0.0));
    (
        ClaimStatus::Held,
        format!("{} = {v:.3} {} {bound:.3}", c.metric, c.op.name()),
    )
}

/// `v` to three significant digits: `1.23`, `12.3`, `123`, `12300`, `0.000123`.
pub fn format_sig3(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    if exp >= 2 {
        let unit = 10f64.powi(exp - 2);
        format!("{:.0}", (v / unit).round() * unit)
    } else {
        let decimals = (2 - exp) as usize;
        let s = format!("{v:.decimals$}");
        // Rounding may carry into a new digit (9.995 → 10.00): keep three significant digits.
        if s.trim_start_matches('-')
            .replace('.', "")
            .trim_start_matches('0')
            .len()
            > 3
        {
            format!("{v:.0$}", decimals.saturating_sub(1))
        } else {
            s
        }
    }
}

/// Computes every `[[derived]]` value of `scenario` from the rows of a run, in file order:
/// (`text`, `"<value to 3 significant digits> <unit>"`), or (`text`, `"not available: …"`) when a
/// case failed, was skipped, did not run or lacks the metric.
pub fn derive(scenario: &Scenario, rows: &[Row]) -> Vec<(String, String)> {
    scenario
        .derived
        .iter()
        .map(|d| (d.text.clone(), derived_value(d, rows)))
        .collect()
}

fn derived_value(d: &Derived, rows: &[Row]) -> String {
    let mut sum = 0.0;
    for label in &d.cases {
        let Some(r) = rows_of(rows, label).into_iter().next() else {
            return format!("not available: case `{label}` was not measured");
        };
        match &r.status {
            crate::results::Status::Ok => {}
            crate::results::Status::Failed(why) => {
                return format!("not available: case `{label}` failed: {why}");
            }
            crate::results::Status::Skipped(why) => {
                return format!("not available: case `{label}` was skipped: {why}");
            }
        }
        match metric_value(r, &d.metric) {
            Some(v) => sum += v,
            None => {
                return format!(
                    "not available: {} of case `{label}` was not measured",
                    d.metric
                );
            }
        }
    }
    let value = if d.invert {
        if sum == 0.0 {
            return format!("not available: the sum of {} is 0", d.metric);
        }
        d.scale / sum
    } else {
        d.scale * sum
    };
    let shown = format_sig3(value);
    if d.unit.is_empty() {
        shown
    } else {
        format!("{shown} {}", d.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::format_sig3;

    #[test]
    fn three_significant_digits() {
        let cases = [
            (1.23456, "1.23"),
            (12.3456, "12.3"),
            (123.456, "123"),
            (12345.6, "12300"),
            (0.000123456, "0.000123"),
            (9.9996, "10.0"),
            (0.99996, "1.00"),
            (-4.5678, "-4.57"),
            (0.0, "0"),
            (55.0, "55.0"),
        ];
        for (v, want) in cases {
            assert_eq!(format_sig3(v), want, "{v}");
        }
    }
}

#[cfg(test)]
mod metric_tests {
    use super::*;

    #[test]
    fn every_claim_metric_is_a_numeric_column_or_derived() {
        let row = Row {
            max_alloc_held_mib: Some(1.0),
            max_alloc_free_mib: Some(3.0),
            ..Row::default()
        };
        for m in CLAIM_COLUMNS {
            if *m == "max_alloc_drop_mib" {
                assert_eq!(metric_value(&row, m), Some(2.0));
                continue;
            }
            if matches!(*m, "out_of_memory" | "mismatched_copies") {
                continue; // read from the status
            }
            let c = results::column(m).unwrap_or_else(|| panic!("`{m}` is not a column"));
            assert!(!c.unit.is_empty(), "`{m}` has no unit");
        }
        assert_eq!(metric_value(&row, "max_alloc_held_mib"), Some(1.0));
        assert_eq!(metric_value(&row, "bw_min_gbs"), None, "not a claim metric");
    }
}
