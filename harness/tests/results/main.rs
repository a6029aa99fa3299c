//! Results as the tools read them: `compare` and `report` on recorded and published runs, the
//! rendered pages and tables, the terminal summary, fleet runs, claims and derived values, and
//! the probe API the runner records with. One test binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;
#[path = "../fixtures/results/devfixture.rs"]
mod devfixture;

mod claims;
mod compare_report;
mod fleet;
mod probe_api;
mod published;
mod report_plots;
mod report_render;
mod summary;
