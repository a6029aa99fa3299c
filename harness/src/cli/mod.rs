//! Command-line interface (clap derive). `main_with_args` is the whole program: parse, dispatch,
//! print an error as one sentence, return the exit code.

pub mod compare;
pub mod info;
pub mod plan;
pub mod report;
pub mod run;
pub mod scenarios;

pub use crate::compare::Format as CompareFormat;
pub use compare::compare_command;
pub use info::info_command;
pub use plan::plan_command;
pub use report::report_command;
pub use run::run_command;
pub use scenarios::scenarios_command;

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  pinscope scenarios/quick.toml                 run a scenario (same as `pinscope run ...`)
  pinscope plan scenarios/ollama-like.toml      show the cases a scenario expands to, no GPU needed
  pinscope info                                 this machine, its GPU and which memory observers work
  pinscope compare windows.csv wsl2.csv         the same scenario on two machines, side by side
  pinscope report results/*.csv -o reports/my-machine/index.html";

#[derive(Debug, Parser)]
#[command(
    name = "pinscope",
    bin_name = "pinscope",
    version,
    about = "Measures host<->GPU transfer strategies and what each costs in memory (Windows WDDM, WSL2, Linux).",
    after_help = EXAMPLES
)]
pub struct Cli {
    /// Print only errors and the final summary (`plan`: one line per scenario).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios on the GPU and write results (CSV + samples CSV + JSON + HTML report).
    Run(RunArgs),
    /// Validate scenarios and print the cases they expand to, with memory needs and a time estimate.
    Plan(PlanArgs),
    /// Describe this machine: platform, GPU, driver, memory observers.
    Info(InfoArgs),
    /// Put results from several runs (machines) side by side with statistics.
    Compare(CompareArgs),
    /// Render a self-contained HTML report from results files.
    Report(ReportArgs),
    /// List the scenarios shipped inside pinscope with the question each answers.
    Scenarios(ScenariosArgs),
}

#[derive(Debug, Args, Clone)]
pub struct ScenariosArgs {
    #[command(subcommand)]
    pub action: Option<ScenariosAction>,
}

#[derive(Debug, Subcommand, Clone)]
pub enum ScenariosAction {
    /// Print one shipped scenario's file (to start a new scenario from).
    Show {
        /// The scenario's name, as `pinscope scenarios` lists it.
        name: String,
    },
}

/// What `run` and `plan` both take: the scenario files, and how much RAM their cases may pin.
#[derive(Debug, Args, Clone)]
pub struct ScenarioArgs {
    /// Scenario files (TOML), or names of shipped scenarios (`pinscope scenarios` lists them).
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// Largest fraction of physical RAM a case may pin (up to 0.9).
    #[arg(long, default_value_t = 0.5)]
    pub allow_pinned: f64,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Directory for the results files (created if missing).
    #[arg(long, short, default_value = "results")]
    pub out: PathBuf,
    /// GPU(s): a CUDA device ordinal (default 0), a list such as 0,1, or all. With several GPUs
    /// every case runs on each GPU alone, then on all of them at once (per-GPU and summed
    /// bandwidth). Overrides a scenario's `devices`.
    #[arg(long)]
    pub device: Option<String>,
    /// Replace the host name with a stable hash in every output.
    #[arg(long)]
    pub anonymize: bool,
    /// Cap for the pinned-ceiling probe (e.g. `16GiB`; default min(50% of RAM, 16 GiB)).
    #[arg(long)]
    pub pinned_cap: Option<String>,
    /// Run sweeps larger than the case limit without asking.
    #[arg(long)]
    pub yes: bool,
    /// Give up on a case after this long (e.g. `10m`; more than 0).
    #[arg(long, default_value = "10m")]
    pub case_timeout: String,
    /// Allow managed-memory oversubscription cases (can hang the GPU on some machines).
    #[arg(long)]
    pub allow_oversubscription: bool,
    /// Let cases with `guard = false` allocate past free device memory (plain cuMemAlloc, never
    /// managed memory): on Linux the allocation fails, under WDDM with sysmem fallback it spills.
    #[arg(long)]
    pub allow_vram_overflow: bool,
    /// Do not write the HTML report next to the CSV.
    #[arg(long)]
    pub no_report: bool,
    /// Run only cases whose label contains this text.
    #[arg(long)]
    pub only: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Free device memory to plan against (e.g. `23GiB`); default: what NVML reports here.
    #[arg(long)]
    pub device_free: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct InfoArgs {
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: u32,
    /// Replace the host name with a stable hash.
    #[arg(long)]
    pub anonymize: bool,
    /// Also run the probes (max allocatable device memory, pinned ceiling).
    #[arg(long)]
    pub probe: bool,
    /// Cap for the pinned-ceiling probe.
    #[arg(long)]
    pub pinned_cap: Option<String>,
    /// Print JSON instead of text (only JSON on stdout; same exit code as without it).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Results CSVs; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// Relative change below which a difference is "no change" (0.02 = 2%).
    #[arg(long, default_value_t = 0.02)]
    pub noise: f64,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
    /// Also write the comparison as a self-contained HTML page.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Replace an output file even when it is read-only (an input is never replaced).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Results CSVs (their .json and .samples.csv are read from beside them; a .samples.csv given
    /// with its CSV, as `results/*.csv` does, is skipped with a note).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Output HTML file.
    #[arg(long, short, default_value = "report/index.html")]
    pub output: PathBuf,
    /// nvbandwidth `-j` output to show as a reference series.
    #[arg(long)]
    pub nvbandwidth: Vec<PathBuf>,
    /// Page title.
    #[arg(long)]
    pub title: Option<String>,
    /// Replace the output file even when it is read-only (an input is never replaced).
    #[arg(long)]
    pub force: bool,
}

const SUBCOMMANDS: &[&str] = &[
    "run",
    "plan",
    "info",
    "compare",
    "report",
    "scenarios",
    "help",
];

/// `pinscope scenarios/x.toml` means `pinscope run scenarios/x.toml`.
fn insert_implicit_run(mut args: Vec<OsString>) -> Vec<OsString> {
    let first = args
        .iter()
        .skip(1)
        .position(|a| !a.to_string_lossy().starts_with('-'))
        .map(|i| i + 1);
    if let Some(i) = first {
        let a = args[i].to_string_lossy();
        if !SUBCOMMANDS.contains(&a.as_ref()) {
            args.insert(i, OsString::from("run"));
        }
    }
    args
}

/// Parses `args` (including the program name), runs, and returns the process exit code.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args = insert_implicit_run(args.into_iter().collect());
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match dispatch(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

fn dispatch(cli: &Cli) -> Result<i32, crate::Error> {
    match &cli.command {
        Command::Run(a) => run_command(a, cli.quiet),
        Command::Plan(a) => plan_command(a, cli.quiet),
        Command::Info(a) => info_command(a),
        Command::Compare(a) => compare_command(a, cli.quiet),
        Command::Report(a) => report_command(a, cli.quiet),
        Command::Scenarios(a) => scenarios_command(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn bare_path_means_run() {
        let a = insert_implicit_run(os(&["pinscope", "scenarios/quick.toml"]));
        assert_eq!(a, os(&["pinscope", "run", "scenarios/quick.toml"]));
        let a = insert_implicit_run(os(&["pinscope", "-q", "x.toml"]));
        assert_eq!(a, os(&["pinscope", "-q", "run", "x.toml"]));
        let a = insert_implicit_run(os(&["pinscope", "plan", "x.toml"]));
        assert_eq!(a, os(&["pinscope", "plan", "x.toml"]));
        let a = insert_implicit_run(os(&["pinscope", "--version"]));
        assert_eq!(a, os(&["pinscope", "--version"]));
    }
}
