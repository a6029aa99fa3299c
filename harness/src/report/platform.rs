//! The platform comparison: two or more runs (typically native Windows/WDDM against WSL2 on the
//! same machine) side by side — bandwidth per strategy, what each memory observer saw after
//! allocation and after free (unavailable observers say so, they are never drawn as zero), the
//! pinned ceiling and the largest device allocation, and each claim with each platform's verdict.
//!
//! Used by `compare --html` and by `report` when its runs come from different platforms.
//!
//! Size: just over 500 lines: one page (the platform comparison), section by section.

use super::chart::{self, Bars, Figure, MAX_CATEGORIES};
use super::html::{escape, table};
use super::labels::{case_memory_words, case_words, direction_key};
use super::platform_answer::ceiling;
use super::plot_accounting::device_held;
use crate::accounting::{Metric, ObserverId, Phase};
use crate::platform::{GpuDriverModel, Platform, Recorded};
use crate::results::{Lane, ResultSet, Row};
use std::collections::HashMap;
use std::fmt::Write;

/// The platform a run says it ran on, as the platform page tells runs apart: native Windows by
/// its driver model (named `windows-wddm`, `windows-tcc`, as claims name it), any other platform
/// by its family (`wsl2`, `linux`…).
#[derive(Debug, Clone, PartialEq, Eq)]
enum RunPlatform {
    /// Native Windows with a recorded driver model.
    Windows(Recorded<GpuDriverModel>),
    Family(Recorded<Platform>),
}

impl RunPlatform {
    fn of(s: &ResultSet) -> RunPlatform {
        let (p, model) = s
            .rows
            .first()
            .map(|r| (r.machine.platform.clone(), r.machine.driver_model.clone()))
            .or_else(|| {
                s.sidecar.as_ref().map(|c| {
                    let m = c.machine.gpu.as_ref().map(|g| g.driver_model.clone());
                    (c.machine.platform.clone(), m.unwrap_or_default())
                })
            })
            .unwrap_or_default();
        if p.is(Platform::Windows) && model.is_recorded() {
            RunPlatform::Windows(model)
        } else {
            RunPlatform::Family(p)
        }
    }
}

impl std::fmt::Display for RunPlatform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunPlatform::Windows(m) => write!(f, "windows-{}", m.text().to_ascii_lowercase()),
            RunPlatform::Family(p) => write!(f, "{p}"),
        }
    }
}

/// The name of the platform a run says it ran on ([`RunPlatform`]).
pub fn platform_of(s: &ResultSet) -> String {
    RunPlatform::of(s).to_string()
}

/// Whether the runs come from more than one platform.
pub fn platforms_differ(sets: &[ResultSet]) -> bool {
    let p: Vec<RunPlatform> = sets.iter().map(RunPlatform::of).collect();
    p.iter().any(|x| *x != p[0])
}

/// A banner naming the synthetic runs, if any.
pub fn synthetic_banner(sets: &[ResultSet]) -> Option<String> {
    let names: Vec<String> = sets
        .iter()
        .filter(|s| s.is_synthetic())
        .map(|s| s.path.display().to_string())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "<div class=\"banner synthetic\">SYNTHETIC DATA — not a measurement. {} made up from a real run's files to test this page; the numbers say nothing about any real platform.</div>\n",
            escape(&names.join(", "))
        )
    })
}

fn run_name(labels: &[String], i: usize, s: &ResultSet) -> String {
    let l = labels[i].trim();
    let p = platform_of(s);
    if l.is_empty() { p } else { format!("{l} {p}") }
}

fn find<'a>(s: &'a ResultSet, key: &str, lane: Lane) -> Option<&'a Row> {
    s.rows.iter().find(|r| r.case_key == key && r.lane == lane)
}

/// Every (case, lane) in first-seen order over the runs, with the first row seen.
fn identities(sets: &[ResultSet]) -> Vec<&Row> {
    let mut seen = std::collections::HashSet::new();
    sets.iter()
        .flat_map(|s| &s.rows)
        .filter(|r| seen.insert((r.case_key.as_str(), r.lane)))
        .collect()
}

/// Whether run `s` had one of `observers` available (`true` at the first that was), else why
/// the last it recorded was not; `None` when it recorded none of them.
fn observer_state(s: &ResultSet, observers: &[ObserverId]) -> Option<(bool, String)> {
    let c = s.sidecar.as_ref()?;
    let mut found = None;
    for o in observers {
        if let Some(st) = c.observers.iter().find(|x| x.observer == *o) {
            if st.available {
                return Some((true, String::new()));
            }
            found = Some((false, st.reason.clone().unwrap_or_default()));
        }
    }
    found
}

/// The metrics the page lists, in [`Metric::READER_ORDER`]: a metric whose observers no run's
/// sidecar names (an observer newer than every run) is left out rather than listed as "not
/// recorded" everywhere; runs without sidecars list every metric.
fn listed_metrics(sets: &[ResultSet]) -> Vec<Metric> {
    let any_sidecar = sets.iter().any(|s| s.sidecar.is_some());
    Metric::READER_ORDER
        .into_iter()
        .filter(|m| {
            !any_sidecar
                || sets.iter().any(|s| {
                    observer_state(s, &m.observers()).is_some()
                        || s.rows.iter().any(|r| {
                            Phase::ALL
                                .into_iter()
                                .any(|p| r.accounting_value(p, *m).is_some())
                        })
                })
        })
        .collect()
}

/// The platform sections as HTML.
pub fn platform_sections(sets: &[ResultSet], labels: &[String]) -> String {
    let mut out = String::new();
    let names: Vec<String> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| run_name(labels, i, s))
        .collect();
    let _ = writeln!(
        out,
        "<section id=\"platforms\">\n<h2>Platforms side by side: {}</h2>",
        escape(&names.join(" vs "))
    );
    out.push_str(&super::platform_answer::platform_answer(sets, &names));
    machine_table(&mut out, sets, &names);
    bandwidth(&mut out, sets, &names);
    observers(&mut out, sets, &names);
    headroom(&mut out, sets, &names);
    out.push_str(&super::latency::platform_section(sets, &names));
    claims(&mut out, sets, &names);
    out.push_str("</section>\n");
    out
}

fn machine_table(out: &mut String, sets: &[ResultSet], names: &[String]) {
    let mut head = vec!["".to_string()];
    head.extend(names.iter().cloned());
    let field = |f: &dyn Fn(&ResultSet) -> String, name: &str| {
        let mut row = vec![name.to_string()];
        row.extend(sets.iter().map(f));
        row
    };
    let key = |s: &ResultSet| {
        s.rows
            .first()
            .map(|r| (*r.machine).clone())
            .unwrap_or_default()
    };
    let rows = vec![
        field(&platform_of, "platform"),
        field(&|s| key(s).os, "OS"),
        field(&|s| key(s).driver_model.to_string(), "driver model"),
        field(&|s| key(s).gpu, "GPU"),
        field(&|s| key(s).driver_version, "driver"),
        field(&|s| key(s).pcie_link, "PCIe link"),
        field(
            &|s| {
                s.sidecar
                    .as_ref()
                    .map(|c| {
                        format!(
                            "{} threads, {} RAM",
                            c.machine.cpu_threads,
                            crate::units::format_size(c.machine.ram_bytes)
                        )
                    })
                    .unwrap_or_default()
            },
            "CPU, RAM",
        ),
        field(&|s| s.path.display().to_string(), "file"),
    ];
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    out.push_str("<h3>The machines</h3>\n");
    out.push_str(&table(&h, &rows, &|_| ""));
}

fn bandwidth(out: &mut String, sets: &[ResultSet], names: &[String]) {
    let ids: Vec<&Row> = identities(sets)
        .into_iter()
        .filter(|r| (r.bw_median_gbs.is_some() && !r.measures_time()) || !r.status.is_ok())
        .collect();
    let title = "Bandwidth per strategy, platform by platform".to_string();
    if ids.is_empty() {
        out.push_str(&Figure::omitted(&title, "No case has a bandwidth in any run.").to_html());
        return;
    }
    let shown = &ids[..ids.len().min(MAX_CATEGORIES)];
    let values: Vec<Vec<Option<f64>>> = shown
        .iter()
        .map(|id| {
            sets.iter()
                .map(|s| {
                    find(s, &id.case_key, id.lane)
                        .filter(|r| r.status.is_ok())
                        .and_then(|r| r.bw_median_gbs)
                })
                .collect()
        })
        .collect();
    let bars = Bars {
        title: title.clone(),
        x_desc: "median GB/s (1e9 B/s)".into(),
        series: names.to_vec(),
        categories: shown.iter().map(|r| case_words(r)).collect(),
        values,
        digits: 1,
        missing: "not measured".into(),
        ..Bars::default()
    };
    let mut caption = "One group per case and lane, one bar per platform. \"not measured\": the run lacks the case or it did not finish.".to_string();
    if ids.len() > shown.len() {
        let _ = write!(
            caption,
            " {} more are in the table below.",
            ids.len() - shown.len()
        );
    }
    let data = vec![
        ("plot", "platform-bandwidth".to_string()),
        (
            "series-directions",
            shown
                .iter()
                .map(|r| direction_key(r))
                .collect::<Vec<_>>()
                .join("|"),
        ),
    ];
    out.push_str(&Figure::from_svg(title, caption, chart::hbars(&bars), data).to_html());
}

fn fmt_mib(v: Option<f64>, available: Option<&(bool, String)>) -> String {
    match (v, available) {
        (Some(v), _) => format!("{v:+.0}"),
        (None, Some((false, _))) => "unavailable".into(),
        (None, _) => "not recorded".into(),
    }
}

fn observers(out: &mut String, sets: &[ResultSet], names: &[String]) {
    out.push_str(
        "<h3>What each platform's memory observers saw (MiB, against before allocation)</h3>\n",
    );
    // Cases that hold memory, once per case (memory belongs to the case, not the lane).
    let mut seen = std::collections::HashSet::new();
    let cases: Vec<&Row> = identities(sets)
        .into_iter()
        .filter(|r| !r.accounting.is_empty() || r.pinned_bytes > 0)
        .filter(|r| seen.insert(r.case_key.as_str()))
        .take(MAX_CATEGORIES)
        .collect();
    if cases.is_empty() {
        out.push_str("<p class=\"omitted\">No run recorded accounting deltas.</p>\n");
        return;
    }
    out.push_str(&availability(sets, names));
    let scale = super::plot_accounting::page_scale(sets.iter().flat_map(|s| &s.rows));
    for metric in listed_metrics(sets) {
        let any_value = sets.iter().any(|s| {
            s.rows.iter().any(|r| {
                r.accounting_value(Phase::Alloc, metric).is_some()
                    || r.accounting_value(Phase::Free, metric).is_some()
            })
        });
        if !any_value {
            let _ = writeln!(
                out,
                "<h4>{}</h4>\n<p class=\"omitted\">Unavailable on every platform here: {}.</p>",
                escape(metric.declaration().label),
                escape(&names.join(", "))
            );
            continue;
        }
        let seen = ObserverView {
            sets,
            names,
            cases: &cases,
            metric,
            states: sets
                .iter()
                .map(|s| observer_state(s, &metric.observers()))
                .collect(),
        };
        out.push_str(&seen.figure(scale));
        out.push_str(&seen.table());
    }
}

/// The table of the observers behind each accounting metric: per platform available, or
/// unavailable with why, or not recorded.
fn availability(sets: &[ResultSet], names: &[String]) -> String {
    let mut head = vec!["observer".to_string()];
    head.extend(names.iter().cloned());
    let rows: Vec<Vec<String>> = listed_metrics(sets)
        .iter()
        .map(|m| {
            let obs = m.observers();
            let label = m.declaration().label;
            let names: Vec<&str> = obs.iter().map(|o| o.name()).collect();
            let mut row = vec![format!("{label} [{}]", names.join(" or "))];
            row.extend(sets.iter().map(|s| match observer_state(s, &obs) {
                Some((true, _)) => "available".to_string(),
                Some((false, why)) => format!("unavailable: {why}"),
                None => "not recorded".into(),
            }));
            row
        })
        .collect();
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    table(&h, &rows, &|_| "")
}

/// What one accounting metric's observers saw on each platform, for the cases that hold memory.
struct ObserverView<'a> {
    sets: &'a [ResultSet],
    names: &'a [String],
    cases: &'a [&'a Row],
    metric: Metric,
    /// Per run: whether its observer was available (with why not), if the run recorded it.
    states: Vec<Option<(bool, String)>>,
}

impl ObserverView<'_> {
    /// Run `s`'s row of case `c`, if it has the case.
    fn row_of<'r>(s: &'r ResultSet, c: &Row) -> Option<&'r Row> {
        s.rows.iter().find(|r| r.case_key == c.case_key)
    }

    /// Bars per case: each platform's change after allocation and after free, on the page's
    /// shared scale.
    fn figure(&self, scale: Option<(f64, f64)>) -> String {
        let metric = self.metric;
        let mut series = Vec::new();
        for n in self.names {
            series.push(format!("{n}: after allocation"));
            series.push(format!("{n}: after free + hold"));
        }
        let values: Vec<Vec<Option<f64>>> = self
            .cases
            .iter()
            .map(|c| {
                self.sets
                    .iter()
                    .flat_map(|s| {
                        let r = Self::row_of(s, c);
                        [
                            r.and_then(|r| r.accounting_value(Phase::Alloc, metric)),
                            r.and_then(|r| r.accounting_value(Phase::Free, metric)),
                        ]
                    })
                    .collect()
            })
            .collect();
        let unavailable: Vec<&str> = self
            .names
            .iter()
            .zip(&self.states)
            .filter(|(_, st)| matches!(st, Some((false, _))))
            .map(|(n, _)| n.as_str())
            .collect();
        let title = metric.declaration().label.to_string();
        let mut caption = format!(
            "Signed change in MiB after allocation and first touch, and at the end of the hold after free. \"unavailable\": the platform has no such observer (not zero). {}{}",
            super::plot_accounting::SHARED_SCALE,
            super::plot_accounting::DEVICE_HELD
        );
        if !unavailable.is_empty() {
            let _ = write!(caption, " Unavailable on: {}.", unavailable.join(", "));
        }
        let bars = Bars {
            title: title.clone(),
            x_desc: "change against before allocation (MiB)".into(),
            series,
            categories: self
                .cases
                .iter()
                .map(|r| format!("{}{}", case_memory_words(r), device_held(r)))
                .collect(),
            values,
            digits: 0,
            missing: "unavailable".into(),
            x_range: scale,
            ..Bars::default()
        };
        Figure::from_svg(
            title,
            caption,
            chart::hbars(&bars),
            chart::plot_kind(format!("platform-observer-{metric}")),
        )
        .to_html()
    }

    /// The same numbers as a table, folded.
    fn table(&self) -> String {
        let mut head = vec!["case".to_string()];
        for n in self.names {
            head.push(format!("{n} after alloc"));
            head.push(format!("{n} after free"));
        }
        let rows: Vec<Vec<String>> = self
            .cases
            .iter()
            .map(|c| {
                let mut row = vec![case_memory_words(c)];
                for (s, st) in self.sets.iter().zip(&self.states) {
                    let r = Self::row_of(s, c);
                    for phase in [Phase::Alloc, Phase::Free] {
                        row.push(fmt_mib(
                            r.and_then(|r| r.accounting_value(phase, self.metric)),
                            st.as_ref(),
                        ));
                    }
                }
                row
            })
            .collect();
        let h: Vec<&str> = head.iter().map(String::as_str).collect();
        format!(
            "<details><summary>the numbers</summary>\n{}</details>\n",
            table(&h, &rows, &|_| "")
        )
    }
}

fn headroom(out: &mut String, sets: &[ResultSet], names: &[String]) {
    let mut categories = vec!["pinned ceiling: most page-locked memory obtained".to_string()];
    let mut values = vec![sets.iter().map(ceiling).collect::<Vec<_>>()];
    let mut seen = std::collections::HashSet::new();
    for r in identities(sets) {
        if !seen.insert(r.case_key.as_str()) {
            continue;
        }
        let per: Vec<Option<&Row>> = sets
            .iter()
            .map(|s| s.rows.iter().find(|x| x.case_key == r.case_key))
            .collect();
        if per
            .iter()
            .flatten()
            .all(|x| x.max_alloc_host_only_mib().is_none() && x.max_alloc_free_mib.is_none())
        {
            continue;
        }
        categories.push(format!(
            "max device allocation, only host memory held: {}",
            case_memory_words(r)
        ));
        values.push(
            per.iter()
                .map(|x| x.and_then(Row::max_alloc_host_only_mib))
                .collect(),
        );
        categories.push(format!(
            "max device allocation, after free: {}",
            case_memory_words(r)
        ));
        values.push(
            per.iter()
                .map(|x| x.and_then(|x| x.max_alloc_free_mib))
                .collect(),
        );
    }
    let title = "Pinned ceiling and max allocatable device memory".to_string();
    if values.iter().flatten().all(Option::is_none) {
        out.push_str(
            &Figure::omitted(
                &title,
                "No run probed the pinned ceiling or the largest device allocation.",
            )
            .to_html(),
        );
        return;
    }
    let bars = Bars {
        title: title.clone(),
        x_desc: "MiB".into(),
        series: names.to_vec(),
        categories,
        values,
        digits: 0,
        missing: "not probed".into(),
        ..Bars::default()
    };
    out.push_str(
        &Figure::from_svg(
            title,
            "A lower ceiling, or a smaller device allocation while only the host memory is held (no device memory yet), is the platform's cost of pinning.".into(),
            chart::hbars(&bars),
            chart::plot_kind("platform-headroom"),
        )
        .to_html(),
    );
}

fn claims(out: &mut String, sets: &[ResultSet], names: &[String]) {
    out.push_str("<h3>Claims, with each platform's verdict</h3>\n");
    let mut order: Vec<(String, String)> = Vec::new();
    let mut verdicts: HashMap<(String, String), Vec<String>> = HashMap::new();
    for (i, s) in sets.iter().enumerate() {
        for c in s.sidecar.iter().flat_map(|c| &c.claims) {
            let k = (c.scenario.clone(), c.text.clone());
            let v = verdicts.entry(k.clone()).or_insert_with(|| {
                order.push(k);
                vec!["not checked".to_string(); sets.len()]
            });
            v[i] = if c.detail.is_empty() {
                c.verdict.name().to_string()
            } else {
                format!("{} — {}", c.verdict, c.detail)
            };
        }
    }
    if order.is_empty() {
        out.push_str("<p class=\"omitted\">No claims were checked in these runs.</p>\n");
        return;
    }
    let mut head = vec!["scenario".to_string(), "claim".to_string()];
    head.extend(names.iter().cloned());
    let rows: Vec<Vec<String>> = order
        .iter()
        .map(|k| {
            let mut row = vec![k.0.clone(), k.1.clone()];
            row.extend(verdicts[k].iter().cloned());
            row
        })
        .collect();
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    out.push_str(&table(&h, &rows, &|_| ""));
}
