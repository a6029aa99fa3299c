//! The files a user reads: the shipped scenarios, the README's commands, the manual pages and the
//! column lists of the docs, each checked against what the binary does. One test binary, one
//! module per subject.

#[path = "../common/mod.rs"]
mod common;

mod docs_columns;
mod man_pages;
mod readme;
mod scenario_files;
