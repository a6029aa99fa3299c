//! `pinscope plan`: validates and expands scenarios without a GPU and prints their tables.

use super::PlanArgs;
use crate::Error;
use crate::scenario::{DeviceFree, load, plan_summary, plan_table_for};

/// Physical RAM in bytes, if the OS tells.
fn ram_bytes() -> Option<u64> {
    use sysinfo::{MemoryRefreshKind, RefreshKind, System};
    let sys = System::new_with_specifics(
        RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    Some(sys.total_memory()).filter(|&b| b > 0)
}

/// `pinscope plan`: loads every file, prints the table of each valid one to stdout and the
/// problems of each invalid one to stderr; the last invalid file's problems become the error.
/// With `quiet`, one summary line per scenario ([`plan_summary`]) instead of the table.
pub fn plan_command(args: &PlanArgs, quiet: bool) -> Result<i32, Error> {
    let allow = args.input.allow_pinned;
    if !(allow > 0.0 && allow <= 0.9) {
        return Err(Error::Usage(format!(
            "--allow-pinned must be above 0 and at most 0.9, not {allow}"
        )));
    }
    let ram = ram_bytes();
    // `--device-free SIZE`, else what NVML says is free on device 0 now, else unknown.
    let device_free = match args.device_free.as_deref() {
        Some(text) => Some(DeviceFree::given(text)?),
        None => crate::probe::nvml_memory().map(|(free, total)| DeviceFree::reported(free, total)),
    };
    let mut failed: Option<Error> = None;
    let mut first = true;
    for path in &args.input.scenarios {
        match load(path) {
            Ok(s) if quiet => println!("{}", plan_summary(&s, ram, allow)),
            Ok(s) => {
                if !first {
                    println!();
                }
                first = false;
                print!("{}", plan_table_for(&s, ram, allow, device_free.clone()));
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
