//! The `pinscope` binary as a user meets it: exit codes and one-sentence refusals, the command
//! conventions, `check` and `info`, a newcomer's first commands, what it never overwrites, and
//! every reader of user input under property tests and the malformed-file corpus. One test
//! binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod budget;
mod check;
mod check_prom;
mod cli;
mod cli_convention;
mod file_safety;
mod model;
mod model_load;
mod new_user;
mod observe;
mod observe_inject;
mod plan;
mod report_json;
mod robustness;
