//! Every `cargo run --release -- …` line of the README's `sh` blocks runs here as the built binary,
//! from the repository root, with any `-o FILE` written into a temporary folder instead: without a
//! GPU, a command that runs a scenario must stop with the driver sentence and exit 3, `info` may
//! exit 3 after printing what it can, and every other command must succeed. So a newcomer who
//! copies a README command on a fresh clone gets what the README says.

use crate::common;

use clap::CommandFactory;
use common::{no_panic, pinscope, repo};
use predicates::Predicate;
use std::path::Path;

/// The argument lists of the README's `cargo run --release -- …` lines, comments dropped.
fn readme_commands() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let mut in_sh = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        let Some(rest) = line
            .strip_prefix("cargo run --release -- ")
            .filter(|_| in_sh)
        else {
            continue;
        };
        let command = rest.split(" #").next().unwrap_or_default();
        out.push(command.split_whitespace().map(String::from).collect());
    }
    out
}

/// `dir/prefix*suffix` as the shell expands it (sorted); other words as they are.
fn expand(word: &str) -> Vec<String> {
    let Some((head, tail)) = word.split_once('*') else {
        return vec![word.to_string()];
    };
    let (dir, prefix) = head.rsplit_once('/').unwrap_or((".", head));
    let mut names: Vec<String> = std::fs::read_dir(repo().join(dir))
        .expect("the folder of a glob")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix) && n.ends_with(tail))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{word} matches no file");
    names
}

/// Whether the command runs a scenario (`run …`, or a bare scenario).
fn runs_a_scenario(args: &[String]) -> bool {
    let first = args.first().map(String::as_str).unwrap_or_default();
    first == "run"
        || pinscope::cli::Cli::command()
            .find_subcommand(first)
            .is_none()
}

#[test]
fn every_readme_command_works_on_a_fresh_clone_without_a_gpu() {
    let commands = readme_commands();
    assert!(
        commands.len() >= 8,
        "the README's commands were found: {commands:?}"
    );
    let gpu_here = pinscope().arg("info").output().expect("info").status.code() == Some(0);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut ran = 0;
    for args in &commands {
        let mut words: Vec<String> = args.iter().flat_map(|w| expand(w)).collect();
        if let Some(i) = words.iter().position(|w| w == "-o") {
            let name = Path::new(&words[i + 1]).file_name().expect("a file name");
            words[i + 1] = tmp.path().join(name).display().to_string();
        }
        let out = pinscope().args(&words).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        if runs_a_scenario(args) {
            if gpu_here {
                continue; // measuring is not this test's job
            }
            assert_eq!(code, Some(3), "{args:?}: {stderr}");
            assert!(
                stderr.starts_with("error: no NVIDIA driver found"),
                "{args:?}: {stderr}"
            );
        } else if args[0] == "info" {
            assert!(matches!(code, Some(0 | 3)), "{args:?}: {stderr}");
            assert!(String::from_utf8_lossy(&out.stdout).contains("platform:"));
        } else {
            assert_eq!(code, Some(0), "{args:?}: {stderr}");
            assert!(
                !out.stdout.is_empty() || stderr.contains("wrote "),
                "{args:?}"
            );
        }
        assert!(no_panic().eval(&stderr), "{args:?}: {stderr}");
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} commands ran");
    // The report commands wrote their pages into the temporary folder.
    assert!(tmp.path().join("h200.html").is_file());
    assert!(tmp.path().join("ollama-h200.html").is_file());
}

#[test]
fn the_readme_stays_short_and_names_the_two_commands_with_their_time() {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    assert!(
        text.lines().count() <= 200,
        "{} lines",
        text.lines().count()
    );
    assert!(text.contains("cargo run --release -- scenarios/ollama-like.toml"));
    assert!(text.contains("cargo test "));
    assert!(text.contains("minutes"), "how long the two commands take");
    assert!(
        !text.contains("../shared"),
        "nothing outside the repository"
    );
}
