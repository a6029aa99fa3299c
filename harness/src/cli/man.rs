//! `pinscope man`: the manual pages, one per command (pinscope(1), pinscope-run(1), …,
//! pinscope-scenarios-show(1)), rendered from the same definition as `--help`.

use clap::Args;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, roman};
use std::path::{Path, PathBuf};

use crate::Error;

#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// The command whose page to print (`run`, `scenarios show`); none: pinscope(1).
    #[arg(value_name = "COMMAND", conflicts_with = "out_dir")]
    pub command: Vec<String>,
    /// Write every page (pinscope.1, pinscope-run.1, …) into this folder instead (created if
    /// missing), e.g. `pinscope man --out-dir ~/.local/share/man/man1`.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// One manual page: its file name (`pinscope-run.1`) and its roff source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub file_name: String,
    pub roff: String,
}

/// Prints one page, or writes them all into `--out-dir`.
pub fn man_command(args: &ManArgs) -> Result<i32, Error> {
    use clap::CommandFactory;
    let pages = pages(super::Cli::command());
    let policy = crate::results::OutputPolicy::default();
    let Some(dir) = &args.out_dir else {
        let page = page_of(&pages, &args.command)?;
        super::write_output(&policy, Path::new("-"), page.roff.as_bytes())?;
        return Ok(0);
    };
    for page in &pages {
        policy.write(&dir.join(&page.file_name), page.roff.as_bytes())?;
    }
    Ok(0)
}

/// The page of `pinscope WORDS…` (`[]`: pinscope(1)).
fn page_of<'a>(pages: &'a [Page], words: &[String]) -> Result<&'a Page, Error> {
    let name = std::iter::once("pinscope")
        .chain(words.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    let file_name = format!("{name}.1");
    pages
        .iter()
        .find(|p| p.file_name == file_name)
        .ok_or_else(|| {
            let known: Vec<&str> = pages.iter().map(|p| p.file_name.as_str()).collect();
            Error::Usage(format!(
                "`{}` has no manual page: the pages are {}",
                crate::input::escape_text(&words.join(" ")),
                known.join(", ")
            ))
        })
}

/// Every page: the program's, then each visible command's (and their commands'), depth first.
/// `help` gets none: it is not a command a page could say more about than pinscope(1) does.
pub fn pages(root: clap::Command) -> Vec<Page> {
    let mut root = root.disable_help_subcommand(true);
    root.build();
    let mut out = Vec::new();
    collect(&root, None, &mut out);
    out
}

fn collect(cmd: &clap::Command, parent: Option<&str>, out: &mut Vec<Page>) {
    // No date (the same binary renders the same pages); `\&` (nothing, in roff) holds its place
    // in `.TH`, where an empty argument would shift the source and manual left by one.
    let man = Man::new(cmd.clone())
        .date("\\&")
        .source(format!("pinscope {}", env!("CARGO_PKG_VERSION")))
        .manual("pinscope manual");
    out.push(Page {
        file_name: man.get_filename(),
        roff: render(&man, cmd, parent),
    });
    let name = display_name(cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, Some(name), out);
    }
}

fn display_name(cmd: &clap::Command) -> &str {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
}

/// One of clap_mangen's section renderers.
type Section = fn(&Man, &mut dyn std::io::Write) -> std::io::Result<()>;

/// clap_mangen's sections, with the after-help text as sections of its own (examples kept as
/// written) and a SEE ALSO naming the page of the command above.
fn render(man: &Man, cmd: &clap::Command, parent: Option<&str>) -> String {
    let mut page = Vec::new();
    let mut parts: Vec<Section> = vec![
        Man::render_title,
        Man::render_name_section,
        Man::render_synopsis_section,
        Man::render_description_section,
    ];
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        parts.push(Man::render_options_section);
    }
    if cmd.get_subcommands().any(|c| !c.is_hide_set()) {
        parts.push(Man::render_subcommands_section);
    }
    let mut extra = Roff::new();
    if let Some(text) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
        after_help_sections(&text.to_string(), &mut extra);
    }
    if let Some(parent) = parent {
        extra
            .control("SH", ["SEE ALSO"])
            .text([roman(format!("{parent}(1)"))]);
    }
    if cmd.get_version().is_some() {
        extra
            .control("SH", ["VERSION"])
            .text([roman(format!("v{}", env!("CARGO_PKG_VERSION")))]);
    }
    for part in parts {
        // Writing into a Vec cannot fail.
        let _ = part(man, &mut page);
    }
    let _ = extra.to_writer(&mut page);
    ascii_roff(&String::from_utf8_lossy(&page))
}

/// Non-ASCII characters (`→`, `…`) as roff's `\[uXXXX]` escapes: troff reads its input as
/// Latin-1 unless a preprocessor converts it, and not every man does.
fn ascii_roff(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// The after-help text is paragraphs, each headed `Heading:`. A heading alone on its line starts
/// a block kept as written (examples lined up in columns: no fill); a heading followed by text
/// starts running text, which man fills to the reader's width.
fn after_help_sections(text: &str, roff: &mut Roff) {
    for para in text.trim().split("\n\n") {
        let (first, rest) = para.split_once('\n').unwrap_or((para, ""));
        if let Some(heading) = first.trim_end().strip_suffix(':') {
            roff.control("SH", [heading.to_uppercase().as_str()]);
            roff.control("nf", []);
            for line in rest.lines() {
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
        } else if let Some((heading, body)) = para.split_once(": ") {
            roff.control("SH", [heading.to_uppercase().as_str()]);
            roff.text([roman(body.split_whitespace().collect::<Vec<_>>().join(" "))]);
        } else {
            roff.control("PP", []);
            roff.text([roman(para.split_whitespace().collect::<Vec<_>>().join(" "))]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Page> {
        use clap::CommandFactory;
        pages(super::super::Cli::command())
    }

    #[test]
    fn every_visible_command_has_a_page_and_help_has_none() {
        let names: Vec<String> = all().into_iter().map(|p| p.file_name).collect();
        for want in [
            "pinscope.1",
            "pinscope-run.1",
            "pinscope-plan.1",
            "pinscope-man.1",
            "pinscope-model.1",
            "pinscope-observe.1",
            "pinscope-scenarios.1",
            "pinscope-scenarios-show.1",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    }

    #[test]
    fn examples_are_not_filled_and_exit_status_is_a_section() {
        let top = &all()[0];
        assert_eq!(top.file_name, "pinscope.1");
        let nf = top
            .roff
            .find(".SH EXAMPLES\n.nf\n")
            .expect("examples block");
        let fi = top.roff[nf..].find("\n.fi\n").expect("block ends") + nf;
        assert!(top.roff[nf..fi].contains("pinscope plan"), "{}", top.roff);
        assert!(top.roff.contains(".SH \"EXIT STATUS\"\n"), "{}", top.roff);
        assert!(!top.roff.contains(".SH EXTRA"), "{}", top.roff);
    }

    #[test]
    fn a_command_page_has_its_options_and_points_back() {
        let pages = all();
        let run = page_of(&pages, &["run".to_string()]).expect("run page");
        assert!(run.roff.contains("\\-\\-out\\-dir"), "{}", run.roff);
        assert!(run.roff.contains("\\-\\-allow\\-pinned"), "{}", run.roff);
        assert!(
            run.roff.contains(".SH \"SEE ALSO\"\npinscope(1)"),
            "{}",
            run.roff
        );
        let show = page_of(&pages, &["scenarios".into(), "show".into()]).expect("show page");
        assert!(
            show.roff.contains("pinscope\\-scenarios(1)"),
            "{}",
            show.roff
        );
    }

    #[test]
    fn pages_are_ascii_with_unicode_escapes() {
        assert_eq!(ascii_roff("host→device …"), "host\\[u2192]device \\[u2026]");
        assert!(all().iter().all(|p| p.roff.is_ascii()));
    }

    #[test]
    fn an_unknown_command_is_refused_with_the_pages_there_are() {
        let pages = all();
        page_of(&pages, &["rn".to_string()])
            .expect_err("no such page")
            .assert_bad_input("pinscope-run.1");
    }
}
