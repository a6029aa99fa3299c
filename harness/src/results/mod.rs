//! Results files: schema, writers (flushed per case, sidecar written atomically) and readers.

pub mod call_code;
mod columns;
mod csv_read;
#[cfg(test)]
mod csv_tests;
mod csv_write;
mod duplicates;
mod failure;
#[cfg(test)]
pub mod fixtures;
mod node_folder;
mod observed;
mod observed_events;
mod output;
mod result_set;
mod samples;
mod schema;
mod sidecar;

pub use columns::{Column, SAMPLE_COLUMNS, base_columns, column, columns};
pub use csv_read::{read_rows, read_rows_from, read_samples};
pub use csv_write::ResultsWriter;
pub use duplicates::{Duplicate, duplicates};
pub use node_folder::*;
pub use observed::*;
pub use observed_events::*;
pub use output::*;
pub use result_set::ResultSet;
pub use samples::*;
pub use schema::*;
pub use sidecar::*;
