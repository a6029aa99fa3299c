//! Results files: schema, writers (flushed per case, sidecar written atomically) and readers.

mod csvio;
mod node_folder;
mod outcome;
mod output;
mod samples;
mod schema;
mod sidecar;

pub use csvio::*;
pub use node_folder::*;
pub use outcome::*;
pub use output::*;
pub use samples::*;
pub use schema::*;
pub use sidecar::*;
