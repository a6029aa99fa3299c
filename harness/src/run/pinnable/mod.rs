//! The measured pin budget: how much this machine lets a process pin, measured in a child process
//! (a failed pin can poison the process that made it) under a deadline and a byte cap. The parent
//! re-runs pinscope as `budget-child` with a [`Plan`], reads the lines the child writes as they
//! come ([`deadline`]), kills it when the deadline passes, and builds the [`BudgetRecord`].
//! Read in this order: [`search`] (the searches, generic over the pin call) → `steps` (the child's
//! GPU steps) → [`deadline`] (the child under a deadline) → [`record`] (what is written).

pub mod deadline;
pub mod record;
pub mod search;
mod steps;

pub use deadline::{ChildEnd, run_with_deadline};
pub use record::{
    Bounds, BudgetRecord, ChildLine, Found, GpuName, Hold, Plan, ProbeKind, ProbeResult,
    Recoverable, SCHEMA_VERSION, Safe, SafeAmount,
};

use crate::units::GIB;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The hidden command the parent runs the probe child as.
pub const CHILD_COMMAND: &str = "budget-child";

/// The rule of [`bounds`], as the record states it.
pub const LIMIT_RULE: &str = "min(--cap, A − max(A / 4, 2 GiB)), A = min(MemAvailable, cgroup memory.max − memory.current); --cap alone where neither can be read";

/// The byte cap in force: never pin so much that the rest of the machine, or of the job's cgroup,
/// runs out of memory (past a cgroup's memory.max the kernel kills the pinning process: pinned
/// pages are charged to it).
pub fn bounds(
    cap_bytes: u64,
    mem_available_bytes: Option<u64>,
    cgroup_headroom_bytes: Option<u64>,
) -> Bounds {
    let usable = match (mem_available_bytes, cgroup_headroom_bytes) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    };
    let limit_bytes = match usable {
        Some(a) => cap_bytes.min(a.saturating_sub((a / 4).max(2 * GIB))),
        None => cap_bytes,
    };
    Bounds {
        cap_bytes,
        mem_available_bytes,
        cgroup_headroom_bytes,
        limit_bytes,
        rule: LIMIT_RULE.into(),
    }
}

/// When the child starts no new pin: the deadline less a quarter of it (at most 30 s), the time a
/// pin already under way may take to finish before the parent kills the child.
pub fn child_deadline(deadline: Duration) -> Duration {
    deadline - (deadline / 4).min(Duration::from_secs(30))
}

/// What the parent gathered from the child.
#[derive(Debug, Default)]
pub struct Gathered {
    pub gpu: Option<GpuName>,
    pub holds: Vec<Hold>,
    pub probes: Vec<ProbeResult>,
    pub failed: Option<String>,
    /// Lines that were not the child's record lines (it writes nothing else on stdout).
    pub stray_lines: u64,
}

impl Gathered {
    fn take(&mut self, line: &str) {
        match serde_json::from_str::<ChildLine>(line) {
            Ok(ChildLine::Opened { gpu }) => self.gpu = Some(gpu),
            Ok(ChildLine::Hold(h)) => self.holds.push(h),
            Ok(ChildLine::Probe(p)) => self.probes.push(*p),
            Ok(ChildLine::Failed { sentence }) => self.failed = Some(sentence),
            Err(_) => self.stray_lines += 1,
        }
    }

    /// Every probe of `plan` that the child did not report, as ended by the deadline.
    fn complete(&mut self, plan: &Plan) {
        for &hold_percent in &plan.hold_percents {
            for &kind in &plan.kinds {
                let done = |p: &ProbeResult| p.kind == kind && p.hold_percent == hold_percent;
                if self.probes.iter().any(done) {
                    continue;
                }
                let found = match kind {
                    ProbeKind::Registrations => Found::Ranges(0),
                    _ => Found::Bytes(0),
                };
                self.probes.push(ProbeResult {
                    kind,
                    hold_percent,
                    found,
                    ended: search::Ended::Deadline,
                    tries: 0,
                    seconds: 0.0,
                    after_refusal: None,
                });
            }
        }
    }
}

/// Runs `plan` in a child process of `exe` (pinscope itself) and kills it after `deadline`.
pub fn measure(
    exe: &Path,
    plan: &Plan,
    deadline: Duration,
) -> Result<(Gathered, ChildEnd), crate::Error> {
    let json = serde_json::to_string(plan).map_err(|e| {
        crate::Error::System(format!("the probe's plan could not be written ({e})"))
    })?;
    let mut cmd = Command::new(exe);
    cmd.args([CHILD_COMMAND, "--plan", &json]);
    let mut gathered = Gathered::default();
    let end = run_with_deadline(cmd, deadline, |line| gathered.take(line)).map_err(|e| {
        crate::Error::System(format!(
            "the probe could not be started as a child process of {} ({e})",
            exe.display()
        ))
    })?;
    let exited_badly = matches!(end, ChildEnd::Exited { code } if code != Some(0));
    if gathered.failed.is_none() && exited_badly {
        gathered.failed = Some(end.sentence());
    }
    if gathered.failed.is_none() {
        gathered.complete(plan);
    }
    Ok((gathered, end))
}

/// The child's side: runs `plan`, writing each line as JSON on standard output as soon as it is
/// known. Exit status 0 when the GPU was opened, 1 when not (the `Failed` line says why).
pub fn child_main(plan: &Plan) -> i32 {
    use std::io::Write;
    let mut code = 0;
    let mut out = std::io::stdout().lock();
    steps::run_plan(plan, &mut |line| {
        if matches!(line, ChildLine::Failed { .. }) {
            code = 1;
        }
        if let Ok(text) = serde_json::to_string(line) {
            // The parent reads line by line; a closed pipe means it is gone, and so is the point.
            let _ = writeln!(out, "{text}").and_then(|()| out.flush());
        }
    });
    code
}

#[cfg(test)]
mod tests;
