//! `pinscope report`: loads the runs (and nvbandwidth references), renders the page, writes it.

use super::ReportArgs;
use crate::Error;
use crate::compare::{load_all, results_inputs};
use crate::report::{load_nvbandwidth, render_report, write_page};

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
    write_page(&args.output, &page)?;
    if !quiet {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(0)
}
