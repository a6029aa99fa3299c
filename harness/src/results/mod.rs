//! Results files: schema, writers (flushed per case, sidecar written atomically) and readers.

mod csvio;
mod duplicates;
mod failure;
#[cfg(test)]
pub mod fixtures;
mod node_folder;
mod output;
mod samples;
mod schema;
mod sidecar;

pub use csvio::*;
pub use duplicates::{Duplicate, duplicates};
pub use node_folder::*;
pub use output::*;
pub use samples::*;
pub use schema::*;
pub use sidecar::*;
