//! Results files: schema, writers (flushed per case, sidecar written atomically) and readers.

mod csvio;
mod outcome;
mod output;
mod schema;
mod sidecar;

pub use csvio::*;
pub use outcome::*;
pub use output::*;
pub use schema::*;
pub use sidecar::*;
