//! The node verdict operators read: one severity per check and for the node, the exit code that
//! goes with it, and a one-line reason a drain command can carry.
//!
//! Exit codes follow what Slurm health-check scripts and Kubernetes node-problem-detector custom
//! plugins expect: 0 the node is fine (pass or warn), 1 a problem was found (fail), anything
//! else: the check could not say (here 3: no usable GPU; 2 stays bad usage).

use super::{Amount, Check, CheckResult, Verdict};
use serde::{Serialize, Serializer};

/// The version of `check --json`'s document; raised when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;
/// The longest `reason`, in characters (node-problem-detector cuts a plugin's message at its
/// `max_output_length`, Slurm's node reason is one short line).
pub const REASON_MAX: usize = 120;

/// How bad a check's or the node's outcome is, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The check means nothing here (not WSL2, no NUMA node).
    Skip,
    Pass,
    Warn,
    Fail,
    /// Could not run (no GPU, a value the platform does not give).
    Error,
}

impl Severity {
    /// A check's severity from its verdict.
    pub fn of(v: Verdict) -> Severity {
        match v {
            Verdict::Pass => Severity::Pass,
            Verdict::Warn => Severity::Warn,
            Verdict::Fail => Severity::Fail,
            Verdict::NotRun => Severity::Error,
            Verdict::NotApplicable => Severity::Skip,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Severity::Skip => "skip",
            Severity::Pass => "pass",
            Severity::Warn => "warn",
            Severity::Fail => "fail",
            Severity::Error => "error",
        }
    }

    /// The node's exit status: 0 pass or warn, 1 fail, 3 could not run.
    pub fn exit_code(self) -> i32 {
        match self {
            Severity::Skip | Severity::Pass | Severity::Warn => 0,
            Severity::Fail => 1,
            Severity::Error => 3,
        }
    }

    /// The value of the `pinscope_check_severity` and `pinscope_check_result` gauges.
    pub fn gauge(self) -> i8 {
        match self {
            Severity::Skip => -1,
            Severity::Pass => 0,
            Severity::Warn => 1,
            Severity::Fail => 2,
            Severity::Error => 3,
        }
    }
}

/// The node's severity: `error` when the checks could not run at all (`ran` false: no GPU) or
/// none of them gave a verdict; else the worst of pass, warn and fail. A single check that could
/// not run is `error` in its own entry and names itself there, without making the node `error`.
pub fn node_severity(checks: &[CheckResult], ran: bool) -> Severity {
    let worst = checks
        .iter()
        .map(|c| Severity::of(c.verdict))
        .filter(|s| matches!(s, Severity::Pass | Severity::Warn | Severity::Fail))
        .max();
    match (ran, worst) {
        (true, Some(s)) => s,
        _ => Severity::Error,
    }
}

/// One check as `check --json` writes it: `{name, severity, value, unit, threshold, advice}`,
/// every key present (`null` where nothing was measured).
#[derive(Debug, Serialize)]
pub struct CheckEntry<'a> {
    pub name: Check,
    pub severity: Severity,
    pub value: Option<AmountValue<'a>>,
    pub unit: Option<&'static str>,
    pub threshold: &'a str,
    pub advice: &'a str,
}

impl<'a> CheckEntry<'a> {
    pub fn of(c: &'a CheckResult) -> Self {
        CheckEntry {
            name: c.check,
            severity: Severity::of(c.verdict),
            value: c.measured.as_ref().map(AmountValue),
            unit: c.measured.as_ref().map(Amount::unit),
            threshold: &c.threshold,
            advice: &c.advice,
        }
    }
}

/// An amount's value without its unit: a number, the link as `{generation, width}`, or the list
/// of NUMA nodes.
#[derive(Debug)]
pub struct AmountValue<'a>(pub &'a Amount);

impl Serialize for AmountValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Link {
            generation: u32,
            width: u32,
        }
        match self.0 {
            Amount::GbPerS(v) | Amount::Micros(v) => s.serialize_f64(*v),
            Amount::MismatchedWords(n) | Amount::Bytes(n) => s.serialize_u64(*n),
            Amount::PState(p) => s.serialize_u8(*p),
            Amount::Nodes(n) => n.serialize(s),
            Amount::Link { generation, width } => Link {
                generation: *generation,
                width: *width,
            }
            .serialize(s),
        }
    }
}

impl Amount {
    /// The unit `check --json` names: `gbs` (1e9 B/s), `us`, `bytes`, `words`, `pstate`,
    /// `pcie_link`, `numa_nodes`.
    pub fn unit(&self) -> &'static str {
        match self {
            Amount::GbPerS(_) => "gbs",
            Amount::Link { .. } => "pcie_link",
            Amount::MismatchedWords(_) => "words",
            Amount::Nodes(_) => "numa_nodes",
            Amount::PState(_) => "pstate",
            Amount::Bytes(_) => "bytes",
            Amount::Micros(_) => "us",
        }
    }
}

/// The one-line reason: `pass`, `warn: <check> <value>; …`, `fail: …` (failed checks first), or
/// `<why>` when the checks could not run (`no GPU: …`). Printable ASCII only, at most
/// [`REASON_MAX`] characters, so `scontrol update nodename=… state=drain reason="…"` takes it.
pub fn reason(severity: Severity, checks: &[CheckResult], could_not_run: Option<&str>) -> String {
    let text = match (severity, could_not_run) {
        (Severity::Error, Some(why)) => why.to_string(),
        (Severity::Error, None) => "error: no check could run".to_string(),
        (Severity::Pass | Severity::Skip, _) => "pass".to_string(),
        (Severity::Warn | Severity::Fail, _) => {
            let mut named: Vec<&CheckResult> = checks
                .iter()
                .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn))
                .collect();
            named.sort_by_key(|c| std::cmp::Reverse(Severity::of(c.verdict)));
            let parts: Vec<String> = named.iter().map(|c| one_check(c)).collect();
            format!("{}: {}", severity.name(), parts.join("; "))
        }
    };
    one_line(&text, REASON_MAX)
}

/// `pinned_h2d 20.1 GB/s` (or the bare name when nothing was measured).
fn one_check(c: &CheckResult) -> String {
    let name = c.check.name();
    match &c.measured {
        Some(a) => format!("{name} {a}"),
        None => format!("{name} failed"),
    }
}

/// `text` as printable ASCII on one line, cut to `max` characters (ending `...` when cut).
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            ' '..='~' => out.push(ch),
            'µ' => out.push('u'),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '→' => out.push_str("->"),
            '—' | '–' => out.push('-'),
            c if c.is_whitespace() || c.is_control() => out.push(' '),
            _ => out.push('?'),
        }
    }
    let mut out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.len() > max {
        out.truncate(max.saturating_sub(3));
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests;
