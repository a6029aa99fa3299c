//! `pinscope report`: loads the runs (and nvbandwidth references), renders the page, writes it.

use super::{ReportArgs, ReportFormat};
use crate::Error;
use crate::compare::{load_all, results_inputs};
use crate::report::{load_nvbandwidth, render_fleet_report, report_findings};
use crate::results::{Inputs, OutputPolicy, expand_inputs};

/// `pinscope report`.
pub fn report_command(args: &ReportArgs, quiet: bool) -> Result<i32, Error> {
    if let Some(code) = super::observe::report_observed(args, quiet)? {
        return Ok(code);
    }
    if let Some(code) = super::budget_compare::report_budgets(args, quiet)? {
        return Ok(code);
    }
    let mut expanded = expand_inputs(&args.results)?;
    let mut read = Inputs::default();
    for p in args.results.iter().chain(&expanded.results) {
        read.add_results(p);
    }
    for p in &args.nvbandwidth {
        read.add(p, "nvbandwidth file");
    }
    let policy = OutputPolicy::new(read, args.force);
    // A bad output path is refused before any input is read.
    super::check_output(&policy, &args.output)?;
    let inputs = results_inputs(&expanded.results, quiet)?;
    if inputs.is_empty() && expanded.nodes.is_empty() {
        return Err(Error::Usage(format!(
            "there is nothing to report in {}: give results CSVs, or a folder holding them",
            args.results
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    // A node's results file that cannot be used is left out and listed on the page (exit 0).
    let sets = expanded.load(&inputs, load_all)?;
    if let Some(w) = expanded.set_aside_warning() {
        eprintln!("warning: {w}");
    }
    if !quiet {
        for d in crate::results::duplicates(&sets) {
            eprintln!("note: {d}");
        }
    }
    let mut nvb = Vec::new();
    for p in &args.nvbandwidth {
        nvb.extend(load_nvbandwidth(p)?);
    }
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| "pinscope report".into());
    let page = match args.format {
        ReportFormat::Html => render_fleet_report(&sets, &expanded.nodes, &nvb, &title)?,
        ReportFormat::Json => findings_json(&sets, &expanded.nodes)?,
    };
    super::write_output(&policy, &args.output, page.as_bytes())?;
    if !quiet && args.output.as_os_str() != "-" {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(0)
}

/// The findings of the page `report` would write, as pretty JSON with a final newline.
fn findings_json(
    sets: &[crate::results::ResultSet],
    nodes: &[crate::results::NodeFolder],
) -> Result<String, Error> {
    let findings = report_findings(sets, nodes);
    let mut text = serde_json::to_string_pretty(&findings)
        .map_err(|e| Error::Usage(format!("the findings could not be written as JSON: {e}")))?;
    text.push('\n');
    Ok(text)
}
