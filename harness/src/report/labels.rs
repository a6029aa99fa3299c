//! Labels as a person would say them: "pinned, copy engine, H2D" rather than
//! `alloc/none/copy/direct h2d`. Every label names the direction and the lane, so a series or a
//! bar never mixes the one-way copy with a lane of a bidirectional one.

use crate::results::{Lane, Row};
use crate::scenario::{CaseKey, Direction, HostKind, Words};
use crate::units::format_size;

/// The direction and lane in words: `H2D`, `D2H`, `bidirectional, H2D lane`, `bidirectional, both
/// lanes summed`.
pub fn direction_words(r: &Row) -> &'static str {
    match (r.direction == Direction::Bidirectional, r.lane) {
        (true, Lane::H2d) => "bidirectional, H2D lane",
        (true, Lane::D2h) => "bidirectional, D2H lane",
        (true, Lane::Sum) | (false, Lane::Sum) => "bidirectional, both lanes summed",
        (false, Lane::H2d) => "H2D",
        (false, Lane::D2h) => "D2H",
        (_, Lane::Device) => "inside device memory",
    }
}

/// The short direction key a series is checked against (`h2d`, `d2h`, `bidir-h2d`, …).
pub fn direction_key(r: &Row) -> String {
    if r.direction == Direction::Bidirectional {
        format!("bidir-{}", r.lane.name())
    } else {
        r.lane.name().to_string()
    }
}

fn host_words(r: &Row) -> String {
    let base = match r.host {
        Some(HostKind::Alloc) => "pinned",
        Some(HostKind::Register) => "registered",
        Some(HostKind::Managed) => "managed",
        Some(HostKind::Pageable) => "pageable",
        None => "device memory",
    };
    let flags: Vec<&str> = [
        (r.flags.portable, "portable"),
        (r.flags.mapped, "mapped"),
        (r.flags.write_combined, "write-combined"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    let mut s = if flags.is_empty() {
        base.to_string()
    } else {
        format!("{base} ({})", flags.join(", "))
    };
    match r.mode.declaration().words {
        Words::None => {}
        Words::After(words) => s.push_str(words),
        Words::Instead(words) => s = words.into(),
        Words::StagingRing => s.push_str(&staging_words(r)),
    }
    if let Some(cache) = r.cache {
        s.push_str(&format!(", {cache} cache"));
    }
    s
}

/// The staging ring a row used: ` via 3 × 16 MiB pinned ring, 16 threads`, or ` via a pinned
/// ring` when the row does not say its chunk.
fn staging_words(r: &Row) -> String {
    if r.chunk_bytes == 0 {
        return " via a pinned ring".into();
    }
    let ring = r.ring.max(1);
    let mut s = if ring == 1 {
        format!(" via one {} pinned buffer", format_size(r.chunk_bytes))
    } else {
        format!(" via {ring} × {} pinned ring", format_size(r.chunk_bytes))
    };
    if r.threads > 1 {
        s.push_str(&format!(", {} threads", r.threads));
    }
    s
}

/// Sweep axes the strategy words do not already say (e.g. `measure.warmup=2` → `warmup 2`).
fn extra_axes(r: &Row) -> Vec<String> {
    const SAID: &[CaseKey] = &[
        CaseKey::Direction,
        CaseKey::Size,
        CaseKey::Chunk,
        CaseKey::Ring,
        CaseKey::Threads,
        CaseKey::Host,
        CaseKey::Flags,
        CaseKey::Engine,
        CaseKey::Mode,
    ];
    r.axes
        .iter()
        .filter(|(k, _)| !SAID.contains(k))
        .map(|(k, v)| {
            let k = k.name().rsplit('.').next().unwrap_or(k.name());
            format!("{k} {v}")
        })
        .collect()
}

/// "pinned, copy engine, H2D": the strategy, engine and direction/lane, plus any sweep axis that
/// tells otherwise identical cases apart. The size is not part of it (a series spans sizes).
pub fn strategy_words(r: &Row) -> String {
    let mut parts = vec![host_words(r), r.engine.words().to_string()];
    if r.streams > 1 {
        parts.push(format!("{} streams", r.streams));
    }
    parts.push(direction_words(r).to_string());
    parts.extend(extra_axes(r));
    parts.extend(r.placement());
    parts.join(", ")
}

/// One bar's label: the strategy in words, the size, and the case's own name.
pub fn case_words(r: &Row) -> String {
    format!(
        "{} · {} · {}",
        strategy_words(r),
        format_size(r.size_bytes),
        r.case_label
    )
}

/// The case named for memory plots (memory belongs to the case, not the lane): name, size,
/// strategy without the lane.
pub fn case_memory_words(r: &Row) -> String {
    let mut parts = vec![host_words(r), r.engine.words().to_string()];
    parts.push(if r.direction == Direction::Bidirectional {
        "bidirectional".to_string()
    } else {
        r.lane.name().to_uppercase()
    });
    parts.extend(extra_axes(r));
    parts.extend(r.placement());
    format!(
        "{} · {} · {}",
        r.case_label,
        format_size(r.size_bytes),
        parts.join(", ")
    )
}

pub use crate::units::display_width;

/// `s` cut to at most `cols` columns ([`display_width`]), ending in `…` when cut.
pub fn ellipsize(s: &str, cols: usize) -> String {
    if display_width(s) <= cols {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > cols {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `s` ellipsized to `cols` columns and padded with spaces to exactly `cols` (left-aligned): a
/// text table's cell that stays aligned whatever script it is written in.
pub fn fit_left(s: &str, cols: usize) -> String {
    let mut out = ellipsize(s, cols);
    let pad = cols.saturating_sub(display_width(&out));
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Mode;

    fn row(host: &str, flags: &str, engine: &str, direction: &str, lane: Lane) -> Row {
        Row {
            machine: Default::default(),
            scenario: "s".into(),
            case_label: "c".into(),
            case_key: "k".into(),
            lane,
            host: Some(host.parse().unwrap()),
            flags: crate::scenario::HostFlags::from_label(flags).unwrap(),
            engine: engine.parse().unwrap(),
            direction: direction.parse().unwrap(),
            mode: Mode::Direct,
            size_bytes: 1 << 29,
            ring: 3,
            streams: 1,
            threads: 8,
            batch: 1,
            status: crate::results::Status::Ok,
            device: Some(crate::results::Device::Gpu(0)),
            gpus_at_once: 1,
            ..Row::default()
        }
    }

    #[test]
    fn labels_read_as_words_and_name_the_lane() {
        let r = row("alloc", "none", "copy", "h2d", Lane::H2d);
        assert_eq!(strategy_words(&r), "pinned, copy engine, H2D");
        let b = row("alloc", "none", "copy", "bidirectional", Lane::H2d);
        assert_eq!(
            strategy_words(&b),
            "pinned, copy engine, bidirectional, H2D lane"
        );
        assert_ne!(strategy_words(&r), strategy_words(&b));
        let mut s = row("pageable", "none", "copy", "h2d", Lane::H2d);
        s.mode = Mode::Staged;
        s.chunk_bytes = 16 << 20;
        s.threads = 12;
        s.axes = crate::scenario::Axes::parse("direction=h2d;measure.warmup=2").expect("axes");
        assert_eq!(
            strategy_words(&s),
            "pageable via 3 × 16 MiB pinned ring, 12 threads, copy engine, H2D, warmup 2"
        );
        let w = row("alloc", "write-combined", "cpu-read", "d2h", Lane::D2h);
        assert_eq!(
            strategy_words(&w),
            "pinned (write-combined), CPU reads, D2H"
        );
    }

    /// Each mode's words as its declaration says them, the staging ring in its three shapes.
    #[test]
    fn every_mode_says_itself_after_the_host_memory() {
        let with = |host: &str, mode: Mode, chunk: u64, ring: u32| {
            let mut r = row(host, "none", "copy", "h2d", Lane::H2d);
            (r.mode, r.chunk_bytes, r.ring, r.threads) = (mode, chunk, ring, 1);
            host_words(&r)
        };
        let cases = [
            (with("alloc", Mode::Direct, 0, 3), "pinned"),
            (
                with("pageable", Mode::Staged, 16 << 20, 1),
                "pageable via one 16 MiB pinned buffer",
            ),
            (
                with("pageable", Mode::Staged, 0, 3),
                "pageable via a pinned ring",
            ),
            (
                with("register", Mode::RegisterPerCopy, 1 << 20, 3),
                "registered per copy",
            ),
            (
                with("alloc", Mode::Churn, 0, 3),
                "pinned allocated per copy (churn)",
            ),
            (with("pageable", Mode::Latency, 0, 3), "pageable"),
            (with("alloc", Mode::LatencySync, 0, 3), "pinned"),
            (with("alloc", Mode::Enqueue, 0, 3), "pinned"),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn wide_characters_count_twice_and_long_text_is_cut() {
        assert_eq!(display_width("pinned"), 6);
        assert_eq!(display_width("固定内存"), 8);
        assert_eq!(ellipsize("pinned", 6), "pinned");
        assert_eq!(ellipsize("pinned memory", 6), "pinne…");
        // Each wide character takes two columns: three fit in 7 with the ellipsis.
        assert_eq!(ellipsize("固定内存测试", 7), "固定内…");
        assert_eq!(display_width(&fit_left("固定内存测试", 7)), 7);
        assert_eq!(fit_left("固定", 7), "固定   ");
        assert_eq!(fit_left("ab", 3), "ab ");
    }
}
