//! The observed page's "who pinned what": sentences and a plot made from [`Holders`] — the peak
//! of page-locked memory, each library's peak by kind, what was never freed, the largest pin
//! and what every observer did across it, the failed calls and dropped events — or, without
//! events, one sentence saying why there are none.

use super::Series;
use super::holders::{Held, Holder, Holders, library_name};
use crate::report::chart::{self, Figure, Line, XAxis, downsample};
use crate::results::{AllocEvent, CallKind, ObservedSidecar, Source, Unit};
use crate::units::format_size;

/// Most points drawn per line.
const MAX_POINTS: usize = 2000;

fn holder_text((library, kind): &Holder) -> String {
    format!("{library} {}", kind.word())
}

/// "a, b and c".
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => items.join(""),
    }
}

/// Why there are no events, when there are none.
fn no_events(sidecar: &ObservedSidecar) -> String {
    let e = &sidecar.events;
    if let Some(why) = &e.not_injected {
        return format!("{why}.");
    }
    if e.library.is_some() {
        return "The injection library was given to the command, but no process of it sent an allocation event: none initialised CUDA, or none allocated (if CUPTI could not be used in a process, that process said so on its standard error).".into();
    }
    match &sidecar.cupti.missing {
        Some(m) => format!("{m}."),
        None => "Who allocated what was not recorded in this run.".into(),
    }
}

/// The "who pinned what" sentences.
pub fn sentences(
    sidecar: &ObservedSidecar,
    events: &[AllocEvent],
    holders: &Holders,
    series: &[Series],
) -> Vec<String> {
    if events.is_empty() {
        return vec![no_events(sidecar)];
    }
    let mut out = Vec::new();
    match &holders.page_locked_peak {
        Some(p) => out.push(format!(
            "Page-locked host memory (pinned and registered) held through CUDA peaked at {} at {:.1} s.",
            format_size(p.bytes),
            p.t_s
        )),
        None => out.push("The command page-locked no host memory through CUDA.".into()),
    }
    let mut peaks: Vec<(&Holder, u64, f64)> = holders
        .peaks
        .iter()
        .filter(|(_, p)| p.bytes > 0)
        .map(|(h, p)| (h, p.bytes, p.t_s))
        .collect();
    peaks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !peaks.is_empty() {
        let items: Vec<String> = peaks
            .iter()
            .map(|(h, b, t)| format!("{} {} (at {t:.1} s)", holder_text(h), format_size(*b)))
            .collect();
        out.push(format!(
            "Held at its peak, by calling library and kind: {}.",
            items.join("; ")
        ));
    }
    out.extend(pins_by_size(events));
    out.push(never_freed(holders));
    if let Some(pin) = &holders.largest_pin {
        out.push(largest_pin(pin, series));
    }
    if let Some(f) = holders.failed.iter().max_by_key(|e| e.bytes) {
        out.push(format!(
            "{} call(s) failed; the largest, {} of {} by {} at {:.1} s, returned CUresult {}.",
            holders.failed.len(),
            f.call.name(),
            format_size(f.bytes),
            library_name(f),
            f.time_ns as f64 / 1e9,
            f.result
        ));
    }
    if sidecar.events.dropped > 0 {
        out.push(format!(
            "{} allocation events were dropped (the connection to pinscope was full), so the sums above miss them.",
            sidecar.events.dropped
        ));
    }
    out
}

/// Most (library, process, thread, size) groups the pins sentence names.
const PIN_GROUPS: usize = 8;

/// Every successful pin and registration, grouped by calling library, process, thread and size,
/// largest first: "libtorch_cuda.so 1 × 1 GiB (process 523, its main thread), 2 × 8 MiB
/// (process 523, thread 554)" — a DataLoader's pinned batches come from another thread.
fn pins_by_size(events: &[AllocEvent]) -> Option<String> {
    let mut groups: std::collections::BTreeMap<(String, u32, u32, u64), u64> = Default::default();
    for e in events
        .iter()
        .filter(|e| e.result == 0 && matches!(e.call, CallKind::HostAlloc | CallKind::HostRegister))
    {
        *groups
            .entry((library_name(e), e.pid, e.tid, e.bytes))
            .or_default() += 1;
    }
    let mut list: Vec<_> = groups.into_iter().collect();
    list.sort_by(|a, b| b.0.3.cmp(&a.0.3).then(a.0.cmp(&b.0)));
    let more = list.len().saturating_sub(PIN_GROUPS);
    let items: Vec<String> = list
        .iter()
        .take(PIN_GROUPS)
        .map(|((lib, pid, tid, bytes), n)| {
            let thread = if pid == tid {
                "its main thread".to_string()
            } else {
                format!("thread {tid}")
            };
            format!(
                "{lib} {n} × {} (process {pid}, {thread})",
                format_size(*bytes)
            )
        })
        .collect();
    if items.is_empty() {
        return None;
    }
    let tail = if more > 0 {
        format!("; and {more} more groups")
    } else {
        String::new()
    };
    Some(format!(
        "Pins and registrations by calling library, size and thread: {}{tail}.",
        items.join("; ")
    ))
}

fn never_freed(holders: &Holders) -> String {
    if holders.never_freed.is_empty() {
        return "Everything allocated through CUDA was freed before the command exited.".into();
    }
    let items: Vec<String> = holders
        .never_freed
        .iter()
        .map(|(h, l)| {
            format!(
                "{} {} ({} allocation{})",
                holder_text(h),
                format_size(l.bytes),
                l.allocations,
                if l.allocations == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!(
        "Never freed before the command exited (the OS took it back at exit): {}.",
        and_list(&items)
    )
}

/// The largest pin and what each observer did across it: the last sample before the call
/// started against the first after it returned.
fn largest_pin(pin: &AllocEvent, series: &[Series]) -> String {
    let end = pin.time_ns as f64 / 1e9;
    let start = end - pin.duration_ns as f64 / 1e9;
    let changes: Vec<String> = series
        .iter()
        .filter(|s| s.unit == Unit::Bytes && s.source != Source::Tree)
        .filter_map(|s| {
            let before = s.points.iter().rev().find(|p| p.0 <= start)?.1;
            let after = s.points.iter().find(|p| p.0 >= end)?.1;
            let d = after - before;
            let sign = if d < 0.0 { "−" } else { "+" };
            Some(format!(
                "{} {sign}{}",
                s.label(),
                format_size(d.abs() as u64)
            ))
        })
        .collect();
    let what = if pin.call == CallKind::HostRegister {
        "registration"
    } else {
        "pin"
    };
    let across = if changes.is_empty() {
        "no observer has a sample on both sides of it".to_string()
    } else {
        format!(
            "from the sample before it to the one after: {}",
            changes.join(", ")
        )
    };
    format!(
        "The largest {what}: {} by {} in process {} at {:.1} s (the call took {:.0} ms, flags {:#x}); {across}.",
        format_size(pin.bytes),
        library_name(pin),
        pin.pid,
        end,
        pin.duration_ns as f64 / 1e6,
        pin.flags
    )
}

/// The plot of what each (library, kind) held over the run; `None` without events.
/// The lines start at 0 s and run to `end_s` (the run's last sample), so this plot's time axis is
/// the observers' plots' axis.
pub fn figure(holders: &Holders, end_s: f64) -> Option<Figure> {
    if holders.steps.is_empty() {
        return None;
    }
    let mib = (1u64 << 20) as f64;
    let lines: Vec<Line> = holders
        .steps
        .iter()
        .map(|(h, steps)| {
            // A step line: each value holds until the next event.
            let mut points = Vec::with_capacity(steps.len() * 2 + 2);
            points.push((0.0, 0.0));
            let mut last = 0.0;
            for &(t, bytes) in steps {
                let y = bytes as f64 / mib;
                points.push((t, last));
                points.push((t, y));
                last = y;
            }
            let t_last = points.last().map_or(0.0, |p| p.0);
            points.push((end_s.max(t_last), last));
            Line {
                name: holder_text(h),
                points: downsample(&points, MAX_POINTS)
                    .into_iter()
                    .map(|(x, y)| (x, y, y, y))
                    .collect(),
            }
        })
        .collect();
    let title = "Held by calling library and kind over the run".to_string();
    let svg = chart::lines(
        &title,
        "s since the command started",
        "MiB",
        &lines,
        &[],
        XAxis::Linear,
    );
    let caption = format!(
        "Bytes each library held through CUDA, by kind ({}), from the allocation and free events of the injection library; a free ends the allocation of the same address in the same process.",
        [Held::Pinned, Held::Registered, Held::Managed, Held::Device]
            .map(Held::word)
            .join(", ")
    );
    Some(Figure::from_svg(
        title,
        caption,
        svg,
        chart::plot_kind("observed-holders"),
    ))
}
