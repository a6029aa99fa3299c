//! Plots and the self-contained HTML report.

use crate::Error;

/// `pinscope report`.
pub fn report_command(args: &crate::cli::ReportArgs, quiet: bool) -> Result<i32, Error> {
    let _ = (args, quiet);
    Err(Error::Usage("`report` is not built yet".into()))
}

/// Writes the HTML report for `sets` to `out`.
pub fn write_report(
    sets: &[crate::results::ResultSet],
    out: &std::path::Path,
    title: &str,
) -> Result<(), Error> {
    let _ = (sets, out, title);
    Ok(())
}
