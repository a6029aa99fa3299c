//! `pinscope scenarios`: the scenarios shipped inside the binary, with the question each answers;
//! `pinscope scenarios show NAME` prints one, to start a new file from.

use super::{ScenariosAction, ScenariosArgs};
use crate::Error;
use crate::scenario::shipped::{self, Shipped};
use std::path::Path;

/// `pinscope scenarios [show NAME]`.
pub fn scenarios_command(args: &ScenariosArgs) -> Result<i32, Error> {
    match &args.action {
        None => super::print_out(&listing()?)?,
        Some(ScenariosAction::Show { name }) => super::print_out(one(name)?.text)?,
    }
    Ok(0)
}

/// The shipped scenario `name` names (as `NAME`, `NAME.toml` or `scenarios/NAME.toml`).
fn one(name: &str) -> Result<Shipped, Error> {
    let arg = Path::new(name);
    shipped::named_by(arg).ok_or_else(|| {
        Error::Usage(match shipped::closest(arg) {
            Some(near) => format!(
                "`{name}` is not a shipped scenario: did you mean `{}`? (`pinscope scenarios` lists them)",
                near.name
            ),
            None => format!(
                "`{name}` is not a shipped scenario: `pinscope scenarios` lists them"
            ),
        })
    })
}

/// One line per shipped scenario (name, then the question its `description` states), then how
/// to use them.
fn listing() -> Result<String, Error> {
    use std::fmt::Write;
    let all: Vec<Shipped> = shipped::all().collect();
    let width = all.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for s in &all {
        let parsed = crate::scenario::parse(&s.shown_path(), s.text)?;
        let _ = writeln!(out, "{:width$}  {}", s.name, parsed.description);
    }
    let _ = writeln!(
        out,
        "\n{} scenarios shipped with pinscope {}. `pinscope plan NAME` shows a scenario's cases, \
         `pinscope run NAME` runs it, `pinscope scenarios show NAME > mine.toml` starts a new \
         file from it (a file of that name in the current folder is used before a shipped one).",
        all.len(),
        env!("CARGO_PKG_VERSION")
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_every_shipped_scenario_with_its_question() {
        let text = listing().expect("the shipped scenarios parse");
        for s in shipped::all() {
            let line = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(s.name))
                .unwrap_or_else(|| panic!("{} is listed", s.name));
            assert!(line.len() > s.name.len() + 10, "{line}");
        }
    }

    #[test]
    fn show_takes_a_name_and_refuses_an_unknown_one_with_a_suggestion() {
        assert_eq!(
            one("scenarios/quick.toml").map(|s| s.name).ok(),
            Some("quick")
        );
        let e = one("quik").expect_err("not shipped").to_string();
        assert!(e.contains("did you mean `quick`"), "{e}");
        assert_eq!(Error::Usage(String::new()).exit_code(), 2);
    }
}
