//! The page of an observed run (`pinscope observe`): first, in plain words, what each observer
//! saw over the process tree (its peak and when, its change from the start) and who pinned what
//! (from the injection library's events: [`who`]); then what each library held over time and
//! one timeline plot per observer; then what could not be observed and why.

pub mod compare;
mod holders;
mod who;

use super::chart::{self, Figure, Line, XAxis, downsample};
use super::html::{escape, page};
use crate::results::{AllocEvent, Ending, ObservedSidecar, Scope, Source, TimelinePoint};
use crate::units::format_size;
use std::collections::BTreeMap;

/// Most points drawn per line.
const MAX_POINTS: usize = 2000;

/// One series of the timeline: an observer's reading over the tree (or the machine).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub source: Source,
    pub reading: String,
    pub unit: crate::results::Unit,
    /// (seconds, value), in time order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// The words a reader knows this reading by.
    pub fn label(&self) -> String {
        let known = match (self.source, self.reading.as_str()) {
            (Source::Status, "vm_rss") => "VmRSS",
            (Source::Status, "rss_shmem") => "RssShmem",
            (Source::Status, "vm_lck") => "VmLck",
            (Source::Status, "vm_pin") => "VmPin",
            (Source::Meminfo, "mem_available") => "MemAvailable",
            (Source::Cgroup, "current") => "cgroup memory.current",
            (Source::Cgroup, "peak") => "cgroup memory.peak",
            (Source::Cgroup, "max") => "cgroup memory.max",
            (Source::Nvml, "process_used") => "NVML device memory",
            (Source::Nvml, "device_free") => {
                "free GPU memory (NVML; what cudaMemGetInfo calls free)"
            }
            (Source::Pdh, "process_dedicated") => "dedicated GPU memory",
            (Source::Pdh, "process_shared") => "shared GPU memory",
            (Source::Pdh, "process_total_committed") => "GPU memory committed",
            (Source::Pdh, "adapter_dedicated") => "dedicated GPU memory of the adapters",
            (Source::Pdh, "adapter_shared") => "shared GPU memory of the adapters",
            (Source::Dxgi, "nonlocal_budget") => "DXGI shared (NON_LOCAL) budget",
            (Source::Dxgi, "nonlocal_usage") => "DXGI shared (NON_LOCAL) usage of pinscope itself",
            (Source::Commit, "commit_charge") => "commit charge",
            (Source::Commit, "commit_limit") => "commit limit",
            (Source::Tree, "processes") => "processes in the tree",
            _ => "",
        };
        if known.is_empty() {
            format!("{} {}", self.source.name(), self.reading)
        } else {
            known.to_string()
        }
    }

    /// A reading of what is left (MemAvailable, free GPU memory): its extreme is its lowest point.
    pub fn falls(&self) -> bool {
        self.source == Source::Meminfo
            || (self.source == Source::Nvml && self.reading == "device_free")
    }

    fn value_text(&self, v: f64) -> String {
        match self.unit {
            crate::results::Unit::Bytes => format_size(v.max(0.0) as u64),
            _ => format!("{v}"),
        }
    }

    /// The plain-words line: the peak and when, and the change from the first reading (for
    /// `MemAvailable`, which falls as memory is taken, the lowest point).
    pub fn sentence(&self) -> Option<String> {
        let &(_, first) = self.points.first()?;
        let falls = self.falls();
        let pick = |a: &&(f64, f64), b: &&(f64, f64)| a.1.total_cmp(&b.1);
        let &(t, v) = if falls {
            self.points.iter().min_by(pick)?
        } else {
            // The first time the peak was reached.
            self.points.iter().rev().max_by(pick)?
        };
        let change = v - first;
        let sign = if change < 0.0 { "−" } else { "+" };
        let delta = self.value_text(change.abs());
        let what = if falls { "fell to" } else { "peaked at" };
        Some(format!(
            "{} {what} {} at {t:.1} s ({sign}{delta} from its first reading).",
            self.label(),
            self.value_text(v),
        ))
    }
}

/// The tree's and the machine's series, in the order the page shows them.
pub fn series_of(points: &[TimelinePoint]) -> Vec<Series> {
    let mut by: BTreeMap<(Source, String), Series> = BTreeMap::new();
    for p in points
        .iter()
        .filter(|p| !matches!(p.scope, Scope::Process(_)))
    {
        by.entry((p.source, p.reading.clone()))
            .or_insert_with(|| Series {
                source: p.source,
                reading: p.reading.clone(),
                unit: p.unit,
                points: Vec::new(),
            })
            .points
            .push((p.t_s, p.value));
    }
    let mut out: Vec<Series> = by.into_values().collect();
    out.sort_by_key(|s| (s.source, reading_rank(&s.reading), s.reading.clone()));
    out
}

/// `/proc/<pid>/status` and PDH readings in the order readers look at them; others after, by
/// name.
fn reading_rank(reading: &str) -> usize {
    [
        "vm_rss",
        "rss_shmem",
        "vm_lck",
        "vm_pin",
        "process_shared",
        "process_dedicated",
        "process_total_committed",
    ]
    .iter()
    .position(|r| *r == reading)
    .unwrap_or(usize::MAX)
}

/// The command as a shell would take it back: arguments with spaces or quotes in single quotes.
fn shell_words(words: &[String]) -> String {
    let quote = |w: &String| {
        if !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
        {
            w.clone()
        } else {
            format!("'{}'", w.replace('\'', "'\\''"))
        }
    };
    words.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// One sentence for the series that never moved (`VmLck and VmPin stayed at 0 B.`), grouped by
/// the value they kept.
fn unmoved_sentences(series: &[&Series]) -> Vec<String> {
    let mut by_value: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in series {
        if let Some(&(_, v)) = s.points.first() {
            by_value.entry(s.value_text(v)).or_default().push(s.label());
        }
    }
    by_value
        .into_iter()
        .map(|(value, labels)| {
            let names = match labels.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => labels.join(""),
            };
            format!("{names} stayed at {value}.")
        })
        .collect()
}

/// "1 process was" / "up to N processes were": how many processes the tree held at most.
fn processes_in_tree(n: u64) -> String {
    if n == 1 {
        "1 process was".into()
    } else {
        format!("up to {n} processes were")
    }
}

/// The page's opening answer: one sentence per series, then who pinned what.
pub fn observed_answer(
    sidecar: &ObservedSidecar,
    series: &[Series],
    events: &[AllocEvent],
) -> Vec<String> {
    let mut out = vec![format!(
        "`{}` {} after {} samples every {} ms; {} in its tree.",
        shell_words(&sidecar.command),
        match sidecar.ending {
            Ending::Exit { code } => format!("exited with status {code}"),
            Ending::Signal { signal } => format!("was ended by signal {signal}"),
            Ending::Unknown => "ended with no status".into(),
        },
        sidecar.samples,
        sidecar.interval_ms,
        processes_in_tree(sidecar.max_processes)
    )];
    let (moved, unmoved): (Vec<&Series>, Vec<&Series>) = series
        .iter()
        .filter(|s| s.source != Source::Tree)
        .partition(|s| s.points.iter().any(|p| p.1 != s.points[0].1));
    out.extend(moved.into_iter().filter_map(Series::sentence));
    out.extend(unmoved_sentences(&unmoved));
    let holders = holders::Holders::of(events);
    out.extend(who::sentences(sidecar, events, &holders, series));
    out
}

/// One plot per observer: its series over the run.
fn plots(series: &[Series]) -> Vec<Figure> {
    // What is left (free GPU memory) is drawn apart from what is held: its scale is the card's.
    let mut by_source: BTreeMap<(Source, bool), Vec<&Series>> = BTreeMap::new();
    for s in series {
        by_source.entry((s.source, s.falls())).or_default().push(s);
    }
    by_source
        .into_iter()
        .map(|((source, falls), list)| {
            let bytes = list.iter().all(|s| s.unit == crate::results::Unit::Bytes);
            let scale = if bytes { (1u64 << 20) as f64 } else { 1.0 };
            let lines: Vec<Line> = list
                .iter()
                .map(|s| Line {
                    name: s.label(),
                    points: downsample(&s.points, MAX_POINTS)
                        .into_iter()
                        .map(|(x, y)| (x, y / scale, y / scale, y / scale))
                        .collect(),
                })
                .collect();
            let title = if falls && source == Source::Nvml {
                "Free GPU memory (NVML) over the run".to_string()
            } else {
                format!("{} over the run", source_title(source))
            };
            let y = if bytes { "MiB" } else { "count" };
            let svg = chart::lines(&title, "s since the command started", y, &lines, &[], XAxis::Linear);
            let caption = "Each line is one reading of this observer, summed over the command's process tree (or the machine's, for MemAvailable, the cgroup, the adapters, DXGI and the commit charge), at every sample.".to_string();
            Figure::from_svg(title, caption, svg, chart::plot_kind("observed-timeline"))
        })
        .collect()
}

fn source_title(s: Source) -> &'static str {
    match s {
        Source::Status => "/proc/<pid>/status over the process tree",
        Source::Meminfo => "/proc/meminfo",
        Source::Cgroup => "The cgroup",
        Source::Nvml => "NVML device memory of the tree",
        Source::Pdh => "GPU memory of the tree and the adapters (PDH, as Task Manager shows it)",
        Source::Dxgi => "DXGI shared (NON_LOCAL) segment",
        Source::Commit => "The commit charge",
        Source::Tree => "Processes in the tree",
    }
}

/// The whole page.
pub fn observed_page(
    sidecar: &ObservedSidecar,
    points: &[TimelinePoint],
    events: &[AllocEvent],
    title: &str,
) -> String {
    let series = series_of(points);
    let mut body = format!("<h1>{}</h1>\n<section class=\"answer\">\n", escape(title));
    for line in observed_answer(sidecar, &series, events) {
        body.push_str(&format!("<p>{}</p>\n", escape(&line)));
    }
    body.push_str("</section>\n<h2>Timelines</h2>\n");
    let end_s = points.iter().map(|p| p.t_s).fold(0.0, f64::max);
    if let Some(f) = who::figure(&holders::Holders::of(events), end_s) {
        body.push_str(&f.to_html());
    }
    for f in plots(&series) {
        body.push_str(&f.to_html());
    }
    body.push_str("<h2>Not observed</h2>\n<ul>\n");
    for u in &sidecar.unavailable {
        body.push_str(&format!(
            "<li>{}: {}</li>\n",
            escape(u.observer.name()),
            escape(&u.reason)
        ));
    }
    let cupti = match (&sidecar.cupti.found, &sidecar.cupti.missing) {
        (Some(p), _) => format!("CUPTI was found at {}.", p.display()),
        (None, Some(m)) => format!("{m}."),
        (None, None) => "CUPTI was not looked for.".into(),
    };
    let injected = match (&sidecar.events.library, &sidecar.events.not_injected) {
        (Some(_), _) => format!(
            " The injection library was given to the command: {} events from {} process(es). Injection is verified on Linux with a GPU only; under WDDM and WSL2 it is not verified yet.",
            sidecar.events.events, sidecar.events.processes
        ),
        (None, Some(why)) => format!(" {why}."),
        (None, None) => String::new(),
    };
    body.push_str(&format!(
        "<li>allocation events: {}{}</li>\n</ul>\n",
        escape(&cupti),
        escape(&injected)
    ));
    body.push_str(&format!(
        "<p class=\"note\">Machine: {} ({}), observed from {} to {}.</p>\n",
        escape(&sidecar.machine.host_name),
        escape(&sidecar.machine.os),
        escape(&sidecar.started_at),
        escape(&sidecar.finished_at)
    ));
    page(title, &body)
}

#[cfg(test)]
mod tests;
