//! A measured pin-budget record given back to pinscope (`check --budget FILE`, `info --budget
//! FILE`): read and checked once, its safe amounts shown in one line.

use crate::Error;
use crate::run::pinnable::{BudgetRecord, SCHEMA_VERSION as BUDGET_SCHEMA, Safe};
use std::path::{Path, PathBuf};

/// The measured budget `check --budget FILE` judged (and `info --budget FILE` shows).
#[derive(Debug, serde::Serialize)]
pub(super) struct MeasuredBudget {
    pub file: PathBuf,
    /// When it was measured, as the record says.
    pub time: String,
    pub safe: Safe,
}

/// Reads the record `--budget` names; a file that is not one is a usage error.
pub(super) fn measured_budget(path: &Path) -> Result<MeasuredBudget, Error> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Usage(format!(
            "--budget {shown} could not be read ({e}): give a file written by `pinscope budget --json -o FILE`"
        ))
    })?;
    let record: BudgetRecord = serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "--budget {shown} is not a budget record ({e}): give a file written by `pinscope budget --json -o FILE`"
        ))
    })?;
    if record.schema_version != BUDGET_SCHEMA {
        return Err(Error::Usage(format!(
            "--budget {shown} has schema_version {}, this pinscope reads {BUDGET_SCHEMA}: measure again with this pinscope's `budget --json -o FILE`",
            record.schema_version
        )));
    }
    Ok(MeasuredBudget {
        file: path.to_path_buf(),
        time: record.time,
        safe: record.safe,
    })
}

/// One line: the measured record's file, time and safe amounts.
pub(super) fn write_measured_budget(out: &mut String, m: &MeasuredBudget) {
    use std::fmt::Write as _;
    let bytes = |a: Option<crate::run::pinnable::SafeAmount>| {
        a.map_or("not measured".into(), |a| {
            let at_least = if a.at_least { "≥ " } else { "" };
            format!("{at_least}{}", crate::units::format_size(a.value))
        })
    };
    let registrations = m.safe.registrations.map_or("not measured".into(), |a| {
        format!("{}{}", if a.at_least { "≥ " } else { "" }, a.value)
    });
    let _ = writeln!(
        out,
        "measured pin budget ({}, {}): total {}, single cuMemHostAlloc {}, single cuMemHostRegister {}, registrations {registrations}",
        m.file.display(),
        m.time,
        bytes(m.safe.total_bytes),
        bytes(m.safe.host_alloc_bytes),
        bytes(m.safe.host_register_bytes)
    );
}
