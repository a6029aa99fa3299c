//! Scenarios: TOML files describing transfer experiments. Parsed in two stages — raw TOML with
//! source spans (`raw`), then a validated [`Scenario`] (`validate`) — and expanded into cases
//! (`expand`).

mod model;
pub use model::*;

use crate::Error;
use std::path::Path;

/// Reads, validates and expands one scenario file.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    Err(Error::Usage(format!(
        "{}: scenario parsing is not built yet",
        path.display()
    )))
}

/// `pinscope plan`: validate and print the expanded case table.
pub fn plan_command(args: &crate::cli::PlanArgs) -> Result<i32, Error> {
    for p in &args.scenarios {
        load(p)?;
    }
    Ok(0)
}
