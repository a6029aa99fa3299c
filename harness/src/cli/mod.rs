//! Command-line interface (clap derive). `main_with_args` is the whole program: parse, dispatch,
//! print an error as one sentence, return the exit code.

pub mod budget;
mod budget_compare;
mod budget_record;
pub mod check;
pub mod compare;
pub mod info;
mod load_child;
pub mod man;
pub mod model;
pub mod observe;
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
  pinscope scenarios                            the scenarios shipped inside pinscope
  pinscope info                                 this machine, its GPU and which memory observers work
  pinscope compare windows.csv wsl2.csv         the same scenario on two machines, side by side
  pinscope report results/*.csv -o reports/my-machine/index.html

Exit status: 0 done, 2 bad input or usage, 3 no usable GPU or driver, 4 `compare --fail-on`
found a matching change, 124 a case ran past --case-timeout, 130 interrupted, 1 anything else.";

/// The usage line, which also says that a bare scenario runs it.
const USAGE: &str = "pinscope [OPTIONS] <COMMAND>
       pinscope <SCENARIO>...   (a scenario file or shipped name: same as `pinscope run`)";

#[derive(Debug, Parser)]
#[command(
    name = "pinscope",
    bin_name = "pinscope",
    version,
    about = "Measures host<->GPU transfer strategies and what each costs in memory (Windows WDDM, WSL2, Linux).",
    override_usage = USAGE,
    after_help = EXAMPLES
)]
pub struct Cli {
    /// `-q` before the command, as older command lines wrote it: the command's own `-q`.
    #[arg(long, short, hide = true)]
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
    /// A health verdict for one GPU in seconds: link, bandwidth, data, NUMA, clocks (exit 1 on a failed check).
    Check(check::CheckArgs),
    /// The measured pin budget: the largest single pin, the total, the registrations, with device
    /// memory held, and whether a refused pin leaves the process usable (in a child, under a deadline).
    Budget(budget::BudgetArgs),
    /// The probe child of `budget` (run by it, not by hand).
    #[command(name = "budget-child", hide = true)]
    BudgetChild(budget::BudgetChildArgs),
    /// List the scenarios shipped inside pinscope with the question each answers.
    Scenarios(ScenariosArgs),
    /// Print a shell completion script (e.g. `pinscope completions bash > pinscope.bash`).
    Completions(CompletionsArgs),
    /// A model file's tensor table (GGUF, safetensors) by layer and type, and its page-cache state.
    Model(model::ModelArgs),
    /// Print a manual page (roff: `pinscope man run | man -l -`); `--out-dir` writes them all.
    Man(man::ManArgs),
    /// Run a program and record what every memory observer saw of it and its child processes.
    Observe(observe::ObserveArgs),
    /// (internal) One `load-register` load, run by a case as a child process it can kill.
    #[command(name = "load-register-child", hide = true)]
    LoadRegisterChild(load_child::LoadChildArgs),
}

#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
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
    /// Largest fraction of physical RAM a case may pin (above 0, at most 0.9).
    #[arg(
        long,
        value_name = "FRACTION",
        default_value = "0.5",
        allow_negative_numbers = true
    )]
    pub allow_pinned: crate::scenario::AllowPinned,
    /// A GGUF or safetensors model file: each case with `layers = N` moves the bytes of N of its
    /// layers instead of its `size` (replaces the scenario's `model`; `pinscope model FILE`
    /// shows them).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Measure every case N times (its measure.min_samples and max_samples become N; latency
    /// cases keep measure.samples): a file load is then N loads, and the answer gives each way's
    /// median and range.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
}

impl ScenarioArgs {
    /// Loads the scenario at `path` and applies `--model` and `--repeat` to it.
    pub fn load(&self, path: &std::path::Path) -> Result<crate::scenario::Scenario, crate::Error> {
        let mut s = crate::scenario::load(path)?;
        if let Some(m) = &self.model {
            s.use_model(m)?;
        }
        if let Some(n) = self.repeat {
            s.measure_each(n);
        }
        Ok(s)
    }
}

/// `--format` of `info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InfoFormat {
    Text,
    Json,
}

/// `--format` of `compare`: the text formats of the comparison, or its HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareOutput {
    Table,
    Markdown,
    Csv,
    Json,
    Html,
}

/// `--format` of `report`: the page, or its findings as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Html,
    Json,
}

/// `--fail-on` of `compare`: which verdict against the baseline makes it exit 4 (`change`:
/// slower or faster). The values carry no doc comments: clap would switch `compare --help` to
/// its long layout for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Slower,
    Faster,
    Change,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Folder for the results files (created if missing).
    #[arg(
        long = "out-dir",
        value_name = "DIR",
        alias = "out",
        short_alias = 'o',
        default_value = "results"
    )]
    pub out_dir: PathBuf,
    /// GPU(s): a CUDA device ordinal (default 0), a list such as 0,1, or all. With several GPUs
    /// every case runs on each GPU alone, then on all of them at once (per-GPU and summed
    /// bandwidth). Overrides a scenario's `devices`.
    #[arg(long, allow_hyphen_values = true)]
    pub device: Option<String>,
    /// Replace the host name with a stable hash in every output.
    #[arg(long)]
    pub anonymize: bool,
    /// Cap for the pinned-ceiling probe (e.g. `16GiB`; default min(50% of RAM, 16 GiB)).
    #[arg(long, allow_hyphen_values = true)]
    pub pinned_cap: Option<String>,
    /// Run scenarios that expand to more than 2000 cases (refused without it).
    #[arg(long)]
    pub yes: bool,
    /// Give up on a case after this long: a number and a unit, us, ms, s, m or h (e.g. `10m`,
    /// `1h`; more than 0).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = crate::scenario::DEFAULT_CASE_TIMEOUT_TEXT,
        allow_hyphen_values = true
    )]
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
    /// Print only errors and one summary line per scenario (no progress).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Free device memory to plan against (e.g. `23GiB`); default: what NVML reports here.
    #[arg(long, allow_hyphen_values = true)]
    pub device_free: Option<String>,
    /// Print one summary line per scenario instead of its table of cases.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args, Clone)]
pub struct InfoArgs {
    /// The GPU to describe: one CUDA device ordinal, as `run --device` takes it.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub device: String,
    /// Replace the host name with a stable hash.
    #[arg(long)]
    pub anonymize: bool,
    /// Also run the probes (max allocatable device memory, pinned ceiling).
    #[arg(long)]
    pub probe: bool,
    /// Cap for the pinned-ceiling probe.
    #[arg(long, allow_hyphen_values = true)]
    pub pinned_cap: Option<String>,
    /// Output format on stdout: `json` prints only JSON there (same exit code as `text`).
    #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
    pub format: InfoFormat,
    /// Same as `--format json`.
    #[arg(long, hide = true)]
    pub json: bool,
    /// A record of `pinscope budget --json -o FILE`: shown beside the live predictor (the
    /// measured safe amounts, and when they were measured).
    #[arg(long, value_name = "FILE")]
    pub budget: Option<std::path::PathBuf>,
}

impl InfoArgs {
    /// Whether JSON was asked for (`--format json` or `--json`).
    pub fn wants_json(&self) -> bool {
        self.json || self.format == InfoFormat::Json
    }
}

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Results CSVs; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// Relative change below which a difference is "no change" (0.02 = 2%).
    #[arg(long, default_value_t = 0.02, allow_negative_numbers = true)]
    pub noise: f64,
    /// What to write: a table, Markdown, CSV, JSON, or a self-contained HTML page.
    #[arg(long, value_enum, default_value_t = CompareOutput::Table)]
    pub format: CompareOutput,
    /// File to write it to (`-`: standard output).
    #[arg(long, short, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
    /// Also write the HTML page to this file (older spelling of `--format html -o FILE`).
    #[arg(long, hide = true, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Replace an output file even when it is read-only (an input is never replaced).
    #[arg(long)]
    pub force: bool,
    /// Exit with status 4 when a case's verdict against the baseline is this (`change`: slower or
    /// faster), for CI gates.
    #[arg(long, value_enum, value_name = "VERDICT")]
    pub fail_on: Option<FailOn>,
    /// Do not print notes on skipped inputs or the `wrote …` line.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Results CSVs (their .json and .samples.csv are read from beside them; a .samples.csv given
    /// with its CSV, as `results/*.csv` does, is skipped with a note), or folders: the CSVs in
    /// them and their subfolders; a subfolder with `steps.json` is a node of a fleet run
    /// (scripts/slurm/pinscope-fleet.sbatch) and gets a line in the page's node table.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// File to write (`-`: standard output); with `--format json`, standard output unless given.
    #[arg(
        long,
        short,
        value_name = "FILE",
        default_value = "report/index.html",
        default_value_if("format", "json", "-")
    )]
    pub output: PathBuf,
    /// `html`: the page; `json`: what the page answers, as data (per run and scenario: each
    /// direction's fastest way and what it holds, the memory and latency findings, the claims,
    /// the page's sentences).
    #[arg(long, value_enum, default_value = "html")]
    pub format: ReportFormat,
    /// nvbandwidth `-j` output to show as a reference series.
    #[arg(long)]
    pub nvbandwidth: Vec<PathBuf>,
    /// Page title.
    #[arg(long)]
    pub title: Option<String>,
    /// Replace the output file even when it is read-only (an input is never replaced).
    #[arg(long)]
    pub force: bool,
    /// Do not print notes on skipped inputs or the `wrote …` line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `pinscope scenarios/x.toml` means `pinscope run scenarios/x.toml`: an argument that names no
/// command (nor `help`) is a scenario.
fn insert_implicit_run(mut args: Vec<OsString>) -> Vec<OsString> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let is_command = |a: &str| a == "help" || cmd.find_subcommand(a).is_some();
    let first = args
        .iter()
        .skip(1)
        .position(|a| a == "--" || !a.to_string_lossy().starts_with('-'))
        .map(|i| i + 1);
    // `pinscope -- x.toml`: everything after `--` is a scenario, so `run` goes before it.
    if let Some(i) = first.filter(|&i| args[i] == "--") {
        args.insert(i, OsString::from("run"));
        return args;
    }
    if let Some(i) = first {
        let a = args[i].to_string_lossy();
        if !is_command(&a) {
            args.insert(i, OsString::from("run"));
        }
    }
    args
}

/// The command `word` was probably meant to be, when it is no command, no file and no shipped
/// scenario but is one or two edits away from a command (`comapre`).
fn mistyped_command(word: &std::ffi::OsStr) -> Option<String> {
    use clap::CommandFactory;
    let w = word.to_str()?;
    let path = std::path::Path::new(w);
    if w.starts_with('-') || path.exists() || crate::scenario::shipped::named_by(path).is_some() {
        return None;
    }
    let cmd = Cli::command();
    if w == "help" || cmd.find_subcommand(w).is_some() {
        return None;
    }
    cmd.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name())
        .map(|name| (strsim::damerau_levenshtein(w, name), name))
        .filter(|&(d, _)| d <= 2)
        .min()
        .map(|(_, name)| name.to_string())
}

/// Parses `args` (including the program name), runs, and returns the process exit code.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    let first = args
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    if let Some((word, meant)) = first.and_then(|w| Some((w, mistyped_command(w)?))) {
        eprintln!(
            "error: `{}` is not a command, a scenario file or a shipped scenario: did you mean `pinscope {meant}`?",
            crate::input::escape_text(&word.to_string_lossy())
        );
        return 2;
    }
    let args = insert_implicit_run(args);
    if let Some(help) = help_of_help(&args) {
        // A closed standard output is no failure of `help`.
        let _ = print_out(&help);
        return 0;
    }
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
        // The reader of the output went away (`pinscope plan x | head -1`): it has what it
        // wanted, so pinscope ends quietly, as `head` expects of the commands before it.
        Err(e) if e.is_closed_output() => 0,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// `pinscope help --help` (or `-h`): clap answers it with an error; this is the help of `help`.
fn help_of_help(args: &[OsString]) -> Option<String> {
    use clap::CommandFactory;
    let rest = args.get(1..)?;
    let is_help_flag = |a: &OsString| a == "--help" || a == "-h";
    if rest.first()? != "help" || !rest[1..].iter().any(is_help_flag) {
        return None;
    }
    let mut cmd = Cli::command();
    cmd.build();
    let help = cmd.find_subcommand_mut("help")?;
    Some(help.render_help().to_string())
}

fn dispatch(cli: &Cli) -> Result<i32, crate::Error> {
    match &cli.command {
        Command::Run(a) => run_command(a, cli.quiet || a.quiet),
        Command::Plan(a) => plan_command(a, cli.quiet || a.quiet),
        Command::Info(a) => info_command(a),
        Command::Check(a) => check::check_command(a),
        Command::Budget(a) => budget::budget_command(a),
        Command::BudgetChild(a) => budget::budget_child_command(a),
        Command::Compare(a) => compare_command(a, cli.quiet || a.quiet),
        Command::Report(a) => report_command(a, cli.quiet || a.quiet),
        Command::Scenarios(a) => scenarios_command(a),
        Command::Completions(a) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(a.shell, &mut cmd, "pinscope", &mut script);
            write_output(&Default::default(), std::path::Path::new("-"), &script)?;
            Ok(0)
        }
        Command::Man(a) => man::man_command(a),
        Command::Model(a) => model::model_command(a),
        Command::Observe(a) => observe::observe_command(a, cli.quiet || a.quiet),
        Command::LoadRegisterChild(a) => load_child::load_child_command(a),
    }
}

/// The fields the JSON documents of `info` and `check` open with.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Envelope {
    pinscope_version: &'static str,
    /// The exit status the command ends with.
    exit_code: i32,
    /// Why no GPU could be used, when none could.
    gpu_unavailable: Option<String>,
}

impl Envelope {
    pub(crate) fn new(exit_code: i32, gpu_unavailable: Option<String>) -> Envelope {
        Envelope {
            pinscope_version: env!("CARGO_PKG_VERSION"),
            exit_code,
            gpu_unavailable,
        }
    }
}

/// Writes a command's output to standard output. A reader that closed it comes back as an error
/// [`crate::Error::is_closed_output`] knows, which [`main_with_args`] ends on with exit 0.
pub(crate) fn print_out(text: &str) -> Result<(), crate::Error> {
    write_output(
        &Default::default(),
        std::path::Path::new("-"),
        text.as_bytes(),
    )
}

/// A note on stderr when a scenario argument written as a file (`scenarios/quick.toml`) names no
/// file here and the copy shipped inside pinscope was read instead: a missing edited copy is
/// not hidden. A bare name (`quick`) asks for the shipped copy and gets no note.
pub(crate) fn note_shipped(arg: &std::path::Path, s: &crate::scenario::Scenario) {
    if s.shipped && arg.as_os_str() != s.name.as_str() {
        eprintln!(
            "note: {} does not exist here: using the copy of `{}` shipped with pinscope {}",
            arg.display(),
            s.name,
            env!("CARGO_PKG_VERSION")
        );
    }
}

/// Checks an output path under `policy` before any work; `-` (standard output) always passes.
pub fn check_output(
    policy: &crate::results::OutputPolicy,
    path: &std::path::Path,
) -> Result<(), crate::Error> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    policy.check(path)
}

/// Writes `bytes` to `path` (atomically, under `policy`: never over an input, a read-only file
/// only when forced), or to standard output when `path` is `-`.
pub fn write_output(
    policy: &crate::results::OutputPolicy,
    path: &std::path::Path,
    bytes: &[u8],
) -> Result<(), crate::Error> {
    use std::io::Write;
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|()| out.flush())
            .map_err(|e| crate::Error::io(path, e));
    }
    policy.write(path, bytes)
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
