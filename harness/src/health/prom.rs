//! The node verdict as a Prometheus textfile-collector file (text exposition format 0.0.4): every
//! family with its `# HELP` and `# TYPE` lines, every sample labelled with the host and the GPU's
//! UUID (`none` without a GPU), units in the names (`_bytes`, `_gbs`, `_seconds`).

use super::{Amount, CheckResult, Severity};
use std::fmt::Write as _;

/// The pin budget's numbers, as the predictor gave them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BudgetNumbers {
    pub host_alloc_bytes: Option<u64>,
    pub host_register_bytes: Option<u64>,
    pub mappings: Option<u64>,
}

/// What the file holds.
#[derive(Debug)]
pub struct NodeMetrics<'a> {
    pub host: &'a str,
    pub gpu_uuid: Option<&'a str>,
    pub severity: Severity,
    pub seconds: f64,
    pub checks: &'a [CheckResult],
    pub budget: BudgetNumbers,
}

impl Amount {
    /// The metric-name suffixes and values an amount is written as (base units: seconds, bytes;
    /// GB/s = 1e9 B/s); none for a list of NUMA nodes.
    fn series(&self) -> Vec<(&'static str, f64)> {
        match self {
            Amount::GbPerS(v) => vec![("gbs", *v)],
            Amount::Micros(us) => vec![("seconds", us / 1e6)],
            Amount::Bytes(b) => vec![("bytes", *b as f64)],
            Amount::MismatchedWords(n) => vec![("words", *n as f64)],
            Amount::PState(p) => vec![("pstate", f64::from(*p))],
            Amount::Link { generation, width } => vec![
                ("pcie_generation", f64::from(*generation)),
                ("pcie_width", f64::from(*width)),
            ],
            Amount::Nodes(_) => Vec::new(),
        }
    }
}

/// The file's text.
pub fn prometheus_text(m: &NodeMetrics<'_>) -> String {
    let base = format!(
        "host=\"{}\",gpu=\"{}\"",
        label(m.host),
        label(m.gpu_uuid.unwrap_or("none"))
    );
    let mut out = String::new();
    let up = f64::from(u8::from(m.severity != Severity::Error));
    family(
        &mut out,
        "pinscope_check_up",
        "1 when pinscope check ran (pass, warn or fail), 0 when it could not run",
        &[(&base, up)],
    );
    family(
        &mut out,
        "pinscope_check_severity",
        "The node's severity: 0 pass, 1 warn, 2 fail, 3 error (could not run)",
        &[(&base, f64::from(m.severity.gauge()))],
    );
    family(
        &mut out,
        "pinscope_check_duration_seconds",
        "How long pinscope check took",
        &[(&base, m.seconds)],
    );
    let results: Vec<(String, f64)> = m
        .checks
        .iter()
        .map(|c| {
            let labels = format!("{base},check=\"{}\"", c.check.name());
            (labels, f64::from(Severity::of(c.verdict).gauge()))
        })
        .collect();
    let results: Vec<(&str, f64)> = results.iter().map(|(l, v)| (l.as_str(), *v)).collect();
    family(
        &mut out,
        "pinscope_check_result",
        "Each check's severity: -1 skip (not applicable), 0 pass, 1 warn, 2 fail, 3 error (could not run)",
        &results,
    );
    // The pin budget's own families (below) carry its bytes.
    for c in m
        .checks
        .iter()
        .filter(|c| c.check != super::Check::PinBudget)
    {
        for (suffix, value) in c.measured.iter().flat_map(Amount::series) {
            let name = format!("pinscope_check_{}_{suffix}", c.check.name());
            let help = super::one_line(
                &format!("{}: what pinscope check measured", c.check.title()),
                200,
            );
            family(&mut out, &name, &help, &[(&base, value)]);
        }
    }
    budget(&mut out, &base, m.budget);
    out
}

/// The pin budget's families, each only where the predictor gave a number.
fn budget(out: &mut String, base: &str, b: BudgetNumbers) {
    let kinds: Vec<(String, f64)> = [
        ("host_alloc", b.host_alloc_bytes),
        ("host_register", b.host_register_bytes),
    ]
    .iter()
    .filter_map(|(kind, v)| Some((format!("{base},kind=\"{kind}\""), (*v)? as f64)))
    .collect();
    if !kinds.is_empty() {
        let kinds: Vec<(&str, f64)> = kinds.iter().map(|(l, v)| (l.as_str(), *v)).collect();
        family(
            out,
            "pinscope_pin_budget_bytes",
            "Host memory a program can page-lock now, by the live predictor's rule (docs/check.md)",
            &kinds,
        );
    }
    if let Some(n) = b.mappings {
        family(
            out,
            "pinscope_pin_budget_mappings",
            "New memory mappings the process may still create (vm.max_map_count - mappings now - 10%; Linux)",
            &[(base, n as f64)],
        );
    }
}

/// One gauge family: its HELP and TYPE lines, then one sample per label set.
fn family(out: &mut String, name: &str, help: &str, samples: &[(&str, f64)]) {
    let help = help.replace('\\', "\\\\").replace('\n', "\\n");
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    for (labels, value) in samples {
        let _ = writeln!(out, "{name}{{{labels}}} {}", number(*value));
    }
}

/// A sample value as the format writes it (`NaN`, `+Inf`, `-Inf` for the special values).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A label value escaped: backslash, double quote and line feed.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests;
