//! `pinscope compare`: checks `--noise`, loads the runs, prints the comparison in the chosen
//! format and writes the HTML page if asked.

use super::CompareArgs;
use crate::Error;
use crate::compare::{build, exporter, load_all, results_inputs};
use crate::report::render_compare_html;
use crate::results::{Inputs, OutputPolicy};
use std::io::IsTerminal;

/// `pinscope compare`.
pub fn compare_command(args: &CompareArgs, quiet: bool) -> Result<i32, Error> {
    if !(0.0..1.0).contains(&args.noise) {
        return Err(Error::Usage(format!(
            "--noise {} is outside 0..1; write a fraction such as 0.02 for 2%",
            args.noise
        )));
    }
    let mut read = Inputs::default();
    for p in &args.results {
        read.add_results(p);
    }
    let policy = OutputPolicy::new(read, args.force);
    if let Some(path) = &args.html {
        // A bad output path is refused before any input is read.
        policy.check(path)?;
    }
    let inputs = results_inputs(&args.results, quiet)?;
    if inputs.len() < 2 {
        return Err(Error::Usage(
            "compare needs at least two results CSVs (samples files are read with their CSV)"
                .into(),
        ));
    }
    let sets = load_all(&inputs)?;
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
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let text = exporter(args.format, color).render(&cmp);
    print!("{text}");
    if let Some(path) = &args.html {
        let page = render_compare_html(&cmp, &sets)?;
        policy.write(path, page.as_bytes())?;
        if !quiet {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(0)
}
