//! `pinscope report`: loads the runs (and nvbandwidth references), renders the page, writes it.

use super::ReportArgs;
use crate::Error;
use crate::compare::{load_all, results_inputs};
use crate::report::{load_nvbandwidth, render_report};

/// `pinscope report`.
pub fn report_command(args: &ReportArgs, quiet: bool) -> Result<i32, Error> {
    let inputs = results_inputs(&args.results, quiet)?;
    let sets = load_all(&inputs)?;
    let mut nvb = Vec::new();
    for p in &args.nvbandwidth {
        nvb.extend(load_nvbandwidth(p)?);
    }
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| "pinscope report".into());
    let page = render_report(&sets, &nvb, &title)?;
    super::write_output(&args.output, page.as_bytes())?;
    if !quiet && args.output.as_os_str() != "-" {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(0)
}
