//! `pinscope compare`: checks `--noise`, loads the runs, writes the comparison in the chosen
//! format (standard output unless `-o`), and with `--fail-on` exits 4 when a verdict matches.

use super::{CompareArgs, CompareFormat, CompareOutput, FailOn, write_output};
use crate::Error;
use crate::compare::{Comparison, build, exporter, load_all, results_inputs};
use crate::report::render_compare_html;
use crate::results::{Inputs, OutputPolicy};
use crate::stats::Verdict;
use std::io::IsTerminal;

/// The exit status of `compare --fail-on` when a case's verdict matched.
pub const EXIT_FAIL_ON: i32 = 4;

/// `pinscope compare`.
pub fn compare_command(args: &CompareArgs, quiet: bool) -> Result<i32, Error> {
    if !(0.0..1.0).contains(&args.noise) {
        return Err(Error::Usage(format!(
            "--noise {} is outside 0..1; write a fraction such as 0.02 for 2%",
            args.noise
        )));
    }
    if let Some(status) = super::observe::compare_observed(args, quiet)? {
        return Ok(status);
    }
    if let Some(status) = super::budget_compare::compare_budgets(args, quiet)? {
        return Ok(status);
    }
    let mut read = Inputs::default();
    for p in &args.results {
        read.add_results(p);
    }
    let policy = OutputPolicy::new(read, args.force);
    // A bad output path is refused before any input is read.
    for path in std::iter::once(&args.output).chain(&args.html) {
        super::check_output(&policy, path)?;
    }
    let inputs = results_inputs(&args.results, quiet)?;
    if inputs.len() < 2 {
        return Err(Error::Usage(
            "compare needs at least two results CSVs (samples files are read with their CSV)"
                .into(),
        ));
    }
    let sets = load_all(&inputs)?;
    if !quiet {
        for d in crate::results::duplicates(&sets) {
            eprintln!("note: {d}");
        }
    }
    let cmp = build(&sets, args.noise);
    // Runs that share no case cannot be compared: say so instead of printing two lists.
    for (i, r) in cmp.runs.iter().enumerate().skip(1) {
        let shared = cmp.entries.iter().any(|e| {
            e.cells.first().is_some_and(Option::is_some)
                && e.cells.get(i).is_some_and(Option::is_some)
        });
        if !shared {
            return Err(Error::Usage(format!(
                "{} and {} have no case in common (cases match by case_key and lane): compare runs of the same scenario",
                inputs[0].display(),
                r.path
            )));
        }
    }
    let to_stdout = args.output.as_os_str() == "-";
    let text = match args.format {
        CompareOutput::Html => render_compare_html(&cmp, &sets)?,
        other => {
            let color = to_stdout
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none();
            exporter(text_format(other), color).render(&cmp)
        }
    };
    write_output(&policy, &args.output, text.as_bytes())?;
    if !to_stdout && !quiet {
        eprintln!("wrote {}", args.output.display());
    }
    if let Some(path) = &args.html {
        let page = render_compare_html(&cmp, &sets)?;
        write_output(&policy, path, page.as_bytes())?;
        if !quiet && path.as_os_str() != "-" {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(args.fail_on.map_or(0, |gate| gate_status(&cmp, gate)))
}

/// The text format of a `--format` value other than `html`.
fn text_format(output: CompareOutput) -> CompareFormat {
    match output {
        CompareOutput::Table | CompareOutput::Html => CompareFormat::Table,
        CompareOutput::Markdown => CompareFormat::Markdown,
        CompareOutput::Csv => CompareFormat::Csv,
        CompareOutput::Json => CompareFormat::Json,
    }
}

/// [`EXIT_FAIL_ON`] with one line on stderr per matching case, or 0 when none matches; one more
/// line counts the cases with too few samples for a verdict, which the gate does not count.
fn gate_status(cmp: &Comparison, gate: FailOn) -> i32 {
    let wanted = |v: Verdict| match gate {
        FailOn::Slower => v == Verdict::Slower,
        FailOn::Faster => v == Verdict::Faster,
        FailOn::Change => matches!(v, Verdict::Slower | Verdict::Faster),
    };
    let found = cmp.verdicts_matching(wanted);
    for m in &found {
        let run = cmp.runs.get(m.run).map_or("?", |r| r.label.as_str());
        eprintln!(
            "fail-on: {} {} ({}) in run {run} is {} than in the baseline",
            m.entry.case_label,
            m.entry.lane.name(),
            m.entry.scenario,
            m.verdict.name()
        );
    }
    let uncounted = cmp.verdicts_matching(|v| v == Verdict::TooFewSamples).len();
    if uncounted > 0 {
        eprintln!(
            "fail-on: {uncounted} case(s) had fewer than {} raw samples a side: too few samples for a verdict, not counted",
            cmp.rule.min_samples
        );
    }
    if found.is_empty() { 0 } else { EXIT_FAIL_ON }
}
