//! Results files: schema, writers (flushed per case, sidecar written atomically) and readers.

mod csvio;
#[cfg(test)]
pub mod fixtures;
mod output;
mod schema;
mod sidecar;

pub use csvio::*;
pub use output::*;
pub use schema::*;
pub use sidecar::*;
