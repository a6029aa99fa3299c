//! Plots and the self-contained HTML report.

use crate::Error;

/// `pinscope report`.
pub fn report_command(args: &crate::cli::ReportArgs, quiet: bool) -> Result<i32, Error> {
    let _ = (args, quiet);
    Err(Error::Usage("`report` is not built yet".into()))
}
