//! Runs scenarios: for each case, allocate, observe, transfer, verify, free, record.

use crate::Error;
use crate::cli::{InfoArgs, RunArgs};

/// `pinscope run`.
pub fn run_command(args: &RunArgs, quiet: bool) -> Result<i32, Error> {
    let _ = (args, quiet);
    Err(Error::NoGpu("the GPU runner is not built yet".into()))
}

/// `pinscope info`.
pub fn info_command(args: &InfoArgs) -> Result<i32, Error> {
    let _ = args;
    Err(Error::NoGpu("`info` is not built yet".into()))
}
