//! Expectations a scenario states about its own results, checked after a run.
//!
//! A claim names a metric of one case (`metric`, `case`), a comparison (`op`) and a bound, either
//! absolute or relative to another quantity, and the platforms it applies to. After a run each
//! claim is `held`, `not held` (with the measured value) or `not applicable here` (with why).

mod status;

use crate::platform::{DriverModel, GpuDriverModel, Machine, Platform};
use crate::results::{ClaimStatus, ClaimVerdict, Row};
use crate::scenario::Scenario;
pub use crate::scenario::{
    Claim, ClaimMetric, Derived, Op, PlatformTag, Reference, RowMetric, Unit,
};

/// The value of a metric in a result row (`None` when not measured or not observable).
pub fn metric_value(row: &Row, metric: ClaimMetric) -> Option<f64> {
    match metric {
        ClaimMetric::Row(m) => row_value(row, m),
        ClaimMetric::Accounting(phase, m) => row.accounting_value(phase, m),
    }
}

/// The value of a row metric: its column, or what it is made from.
fn row_value(r: &Row, metric: RowMetric) -> Option<f64> {
    use RowMetric::*;
    match metric {
        BwMedianGbs => r.bw_median_gbs,
        TimeMedianMs => r.time_median_ms,
        WallMedianMs => r.wall_median_ms,
        AllocMs => r.alloc_ms,
        RegisterMs => r.register_ms,
        UnregisterMs => r.unregister_ms,
        FreeMs => r.free_ms,
        MaxAllocHeldMib => r.max_alloc_held_mib,
        MaxAllocHostMib => r.max_alloc_host_mib,
        MaxAllocFreeMib => r.max_alloc_free_mib,
        MaxAllocDropMib => Some(r.max_alloc_free_mib? - r.max_alloc_host_only_mib()?),
        PinnedCeilingMib => r.pinned_ceiling_mib,
        LatMinUs => r.lat_min_us,
        LatP50Us => r.lat_p50_us,
        LatP90Us => r.lat_p90_us,
        LatP99Us => r.lat_p99_us,
        LatEventP50Us => r.lat_event_p50_us,
        OutOfMemory => status::out_of_memory(r),
        MismatchedCopies => status::mismatched_copies(r),
    }
}

/// The platforms a claim can be limited to that describe `machine`: its platform family, and
/// native Windows with the GPU's driver model.
pub fn platform_tags(machine: &Machine) -> Vec<PlatformTag> {
    let model = machine.gpu.as_ref().and_then(|g| g.driver_model.known());
    let windows_with = |m: DriverModel| {
        machine.platform.is(Platform::Windows) && model == Some(GpuDriverModel::Windows(m))
    };
    PlatformTag::ALL
        .into_iter()
        .filter(|tag| match tag {
            PlatformTag::Linux => machine.platform.is(Platform::Linux),
            PlatformTag::Wsl2 => machine.platform.is(Platform::Wsl2),
            PlatformTag::Windows => machine.platform.is(Platform::Windows),
            PlatformTag::WindowsWddm => windows_with(DriverModel::Wddm),
            PlatformTag::WindowsTcc => windows_with(DriverModel::Tcc),
        })
        .collect()
}

/// What a machine is, in the words of claims: `linux`, `other`, `windows/windows-wddm` (native
/// Windows also with its GPU's driver model).
fn machine_words(machine: &Machine) -> String {
    let p = &machine.platform;
    match machine.gpu.as_ref().filter(|_| p.is(Platform::Windows)) {
        Some(g) => format!("{p}/windows-{}", g.driver_model),
        None => p.to_string(),
    }
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
    let words = machine_words(machine);
    scenario
        .claims
        .iter()
        .map(|c| {
            let (verdict, detail) = judge(c, rows, &tags, &words);
            ClaimVerdict {
                scenario: scenario.name.clone(),
                text: c.text.clone(),
                verdict,
                detail,
            }
        })
        .collect()
}

/// The verdict on `c`, on a machine described by `tags` and `words` ([`machine_words`]).
fn judge(c: &Claim, rows: &[Row], tags: &[PlatformTag], words: &str) -> (ClaimStatus, String) {
    const NA: ClaimStatus = ClaimStatus::NotApplicable;
    if !c.platforms.is_empty() && !c.platforms.iter().any(|p| tags.contains(p)) {
        let names: Vec<&str> = c.platforms.iter().map(|p| p.name()).collect();
        return (
            NA,
            format!("applies to {}; this machine is {words}", names.join(", ")),
        );
    }
    let subject = rows_of(rows, &c.case);
    if subject.is_empty() {
        return (NA, format!("case `{}` did not run", c.case));
    }
    let mut worst: Option<(f64, f64)> = None;
    for r in &subject {
        if !r.status.is_ok() && !c.metric.reads_status() {
            return (NA, format!("case `{}` {}", c.case, r.status.to_field()));
        }
        let Some(v) = metric_value(r, c.metric) else {
            return (
                NA,
                format!("{} was not observable here for `{}`", c.metric, c.case),
            );
        };
        let reference = match &c.relative_to {
            None => 1.0,
            Some(Reference::PinnedBytes) => in_unit(r.pinned_bytes, c.metric),
            Some(Reference::Size) => in_unit(r.size_bytes, c.metric),
            Some(other @ Reference::Case { label, metric }) => {
                let refs = rows_of(rows, label);
                match refs
                    .first()
                    .filter(|r| r.status.is_ok())
                    .and_then(|r| metric_value(r, *metric))
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

/// A number of bytes in the unit of `metric`: MiB for a metric in MiB, else bytes.
fn in_unit(bytes: u64, metric: ClaimMetric) -> f64 {
    let bytes = bytes as f64;
    if metric.unit() == Unit::Mib {
        bytes / (1u64 << 20) as f64
    } else {
        bytes
    }
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
        match metric_value(r, d.metric) {
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
    use crate::results;

    /// Every row metric that names a column reads that column, in that column's unit.
    #[test]
    fn row_metrics_read_their_columns() {
        let row = Row {
            bw_median_gbs: Some(1.0),
            time_median_ms: Some(2.0),
            wall_median_ms: Some(3.0),
            alloc_ms: Some(4.0),
            register_ms: Some(5.0),
            unregister_ms: Some(6.0),
            free_ms: Some(7.0),
            max_alloc_held_mib: Some(8.0),
            max_alloc_host_mib: Some(9.0),
            max_alloc_free_mib: Some(10.0),
            pinned_ceiling_mib: Some(11.0),
            lat_min_us: Some(12.0),
            lat_p50_us: Some(13.0),
            lat_p90_us: Some(14.0),
            lat_p99_us: Some(15.0),
            lat_event_p50_us: Some(16.0),
            ..Row::default()
        };
        let mut seen = Vec::new();
        for m in RowMetric::ALL {
            let value = metric_value(&row, ClaimMetric::Row(m));
            let Some(c) = results::column(m.name()) else {
                assert!(
                    matches!(
                        m,
                        RowMetric::MaxAllocDropMib
                            | RowMetric::OutOfMemory
                            | RowMetric::MismatchedCopies
                    ),
                    "`{m}` is not a column"
                );
                continue;
            };
            assert_eq!(value, c.number(&row), "{m}");
            assert!(value.is_some() && !seen.contains(&value), "{m}");
            seen.push(value);
            let unit = match m.unit() {
                Unit::GbPerS => "GB/s",
                Unit::Ms => "ms",
                Unit::Us => "µs",
                Unit::Mib => "MiB",
                Unit::Count => "",
            };
            assert_eq!(c.unit, unit, "{m}");
        }
        let drop = ClaimMetric::parse("max_alloc_drop_mib").expect("a metric");
        let (free, host) = (row.max_alloc_free_mib, row.max_alloc_host_mib);
        assert_eq!(
            metric_value(&row, drop),
            Some(free.unwrap() - host.unwrap())
        );
        assert_eq!(ClaimMetric::parse("bw_min_gbs"), None, "not a claim metric");
    }
}
