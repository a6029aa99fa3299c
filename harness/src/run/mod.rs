//! Runs scenarios on the GPU. Read in this order: [`runner`] (open the GPU, kernels, observers
//! once) → [`scenario`] (the loop over one scenario's cases, results files, the [`watchdog`]) →
//! [`case`] (one case's phases: guard, allocate, observe, touch, transfer, verify, free, hold) →
//! [`probes`] (max allocatable device memory, pinned ceiling) → [`outcome`] (what a case produced,
//! and the result rows built from it: [`crate::results::Row::from_outcome`]). The console summary
//! is [`crate::report::summary`]; the `run` and `info` commands are in `cli/`.

pub mod case;
pub mod check;
pub mod device_memory;
pub mod fleet;
pub mod outcome;
pub mod pinnable;
pub mod probes;
pub mod runner;
pub mod scenario;
pub mod settings;
pub mod watchdog;

pub use case::{guard, run_case};
pub use check::{CheckPlan, measure_check, measure_check_with};
pub use fleet::Fleet;
pub use outcome::{CaseOutcome, Ceiling, MaxAlloc, RowContext};
pub use probes::{ceiling_cap, ceiling_with_device_held, max_allocatable, pinned_ceiling};
pub use runner::{Runner, open_runner};
pub use scenario::{
    RunOptions, SWEEP_LIMIT, ScenarioOutcome, install_interrupt_handler, run_scenario,
};
pub use settings::{record_settings, record_settings_without_gpu};
