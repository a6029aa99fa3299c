//! `pinscope plan`: validates and expands scenarios without a GPU and prints their tables.

use super::{PlanArgs, print_out};
use crate::Error;
use crate::scenario::{DeviceFree, plan_summary, plan_table_for};

/// `pinscope plan`: loads every file, prints the table of each valid one to stdout and the
/// problems of each invalid one to stderr; the last invalid file's problems become the error.
/// With `quiet`, one summary line per scenario ([`plan_summary`]) instead of the table.
pub fn plan_command(args: &PlanArgs, quiet: bool) -> Result<i32, Error> {
    let allow = args.input.allow_pinned.fraction();
    let ram = Some(crate::platform::ram_bytes()).filter(|&b| b > 0);
    // `--device-free SIZE`, else what NVML says is free on device 0 now, else unknown.
    let device_free = match args.device_free.as_deref() {
        Some(text) => Some(DeviceFree::given(text)?),
        None => crate::probe::nvml_memory().map(|(free, total)| DeviceFree::reported(free, total)),
    };
    let mut failed: Option<Error> = None;
    let mut first = true;
    for path in &args.input.scenarios {
        match args.input.load(path) {
            Ok(s) => {
                super::note_shipped(path, &s);
                let text = if quiet {
                    format!("{}\n", plan_summary(&s, ram, allow, device_free.as_ref()))
                } else if first {
                    plan_table_for(&s, ram, allow, device_free.clone())
                } else {
                    format!("\n{}", plan_table_for(&s, ram, allow, device_free.clone()))
                };
                first = false;
                print_out(&text)?;
                if !quiet {
                    print_out(&s.workload_lines())?;
                }
            }
            Err(e) => {
                if let Some(prev) = failed.replace(e) {
                    eprintln!("error: {prev}");
                }
            }
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(0),
    }
}
