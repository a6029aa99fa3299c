//! pinscope: measures host↔GPU transfer strategies and what each costs in memory, on native
//! Windows (WDDM), WSL2 and Linux.
//!
//! Read top-down: [`cli`] → [`scenario`] → [`run`] ([`strategy`], [`measure`], [`cuda`]) →
//! [`probe`] → [`results`] → [`stats`] / [`compare`] / [`report`].

pub mod accounting;
pub mod claims;
pub mod cli;
pub mod compare;
pub mod cuda;
pub mod error;
pub mod health;
pub mod input;
pub mod measure;
pub mod modelfile;
pub mod observe;
pub mod platform;
pub mod probe;
pub mod report;
pub mod results;
pub mod run;
pub mod scenario;
pub mod stats;
pub mod strategy;
pub mod units;

/// File helpers for the unit tests, the same file the integration tests use.
#[cfg(test)]
#[path = "../tests/common/files.rs"]
pub(crate) mod test_files;

/// The GGUF and safetensors writer of the tests, the file the integration tests use.
#[cfg(test)]
#[path = "../tests/common/model_files.rs"]
pub(crate) mod test_models;

pub use error::Error;
