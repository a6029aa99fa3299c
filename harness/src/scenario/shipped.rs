//! The scenarios shipped inside the binary: every `harness/scenarios/*.toml`, embedded by the
//! crate's build script. A scenario argument that names no file but names one of them (`NAME`,
//! `NAME.toml` or `scenarios/NAME.toml`, the path the repository's documents use) loads it, so an
//! installed `pinscope` runs `pinscope plan ollama-like` from any folder.

use std::path::{Component, Path};

/// (name, TOML text) of every shipped scenario, sorted by name; the name is the file stem.
const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_scenarios.rs"));

/// One shipped scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shipped {
    /// The file stem, also the scenario's `name`.
    pub name: &'static str,
    /// The file's text, as shipped.
    pub text: &'static str,
}

impl Shipped {
    /// How the scenario is named in messages, reports and sidecars: the path the repository's
    /// documents and the published runs use.
    pub fn shown_path(&self) -> String {
        format!("scenarios/{}.toml", self.name)
    }
}

/// Every shipped scenario, sorted by name.
pub fn all() -> impl Iterator<Item = Shipped> {
    SHIPPED.iter().map(|&(name, text)| Shipped { name, text })
}

/// The shipped scenario called `name` exactly.
pub fn find(name: &str) -> Option<Shipped> {
    all().find(|s| s.name == name)
}

/// The name an argument would give a shipped scenario: `NAME`, `NAME.toml`, or
/// `scenarios/NAME.toml` (with `/` or, on Windows, `\`). Another folder or an absolute path
/// gives none.
fn name_in(arg: &Path) -> Option<&str> {
    let parts: Vec<Component> = arg.components().collect();
    let file = match parts.as_slice() {
        [Component::Normal(f)] => f,
        [Component::Normal(dir), Component::Normal(f)] if *dir == "scenarios" => f,
        _ => return None,
    };
    let file = file.to_str()?;
    Some(file.strip_suffix(".toml").unwrap_or(file))
}

/// The shipped scenario an argument names ([`name_in`]).
pub fn named_by(arg: &Path) -> Option<Shipped> {
    name_in(arg).and_then(find)
}

/// Whether `arg` has the shape of a shipped scenario's name, whether or not one is called so.
pub fn is_name_shaped(arg: &Path) -> bool {
    name_in(arg).is_some()
}

/// The shipped scenario whose name is closest to what `arg` would name, when one is close enough
/// to be a likely typo.
pub fn closest(arg: &Path) -> Option<Shipped> {
    let stem = name_in(arg)?;
    all()
        .map(|s| (strsim::jaro_winkler(stem, s.name), s))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_file_of_the_crate_is_shipped_under_its_file_stem() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("harness/scenarios")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| p.file_stem().expect("stem").to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let shipped: Vec<&str> = all().map(|s| s.name).collect();
        assert_eq!(shipped, on_disk);
        let text = std::fs::read_to_string(dir.join("quick.toml")).expect("quick.toml");
        assert_eq!(find("quick").map(|s| s.text), Some(text.as_str()));
    }

    #[test]
    fn every_shipped_scenario_is_valid_and_named_as_its_file() {
        for s in all() {
            let parsed = super::super::parse(&s.shown_path(), s.text)
                .unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert_eq!(parsed.name, s.name, "the `name` inside {}", s.shown_path());
            assert!(
                !parsed.description.is_empty(),
                "{} states its question",
                s.name
            );
        }
    }

    #[test]
    fn an_argument_names_a_shipped_scenario_by_name_file_or_repository_path() {
        for arg in ["quick", "quick.toml", "scenarios/quick.toml"] {
            assert_eq!(
                named_by(Path::new(arg)).map(|s| s.name),
                Some("quick"),
                "{arg}"
            );
        }
        for arg in [
            "other/quick.toml",
            "/scenarios/quick.toml",
            "quick.tom",
            "nope",
            "",
        ] {
            assert_eq!(named_by(Path::new(arg)), None, "{arg}");
        }
    }

    #[test]
    fn a_near_miss_suggests_the_shipped_name() {
        let near = closest(Path::new("scenarios/olama-like.toml")).map(|s| s.name);
        assert_eq!(near, Some("ollama-like"));
        assert_eq!(closest(Path::new("zzzz.toml")), None);
        assert_eq!(closest(Path::new("elsewhere/olama-like.toml")), None);
        assert!(is_name_shaped(Path::new("zzzz")) && !is_name_shaped(Path::new("a/b/c.toml")));
    }
}
