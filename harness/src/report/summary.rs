//! The console summary `pinscope run` prints per scenario: the table, the answer in plain words,
//! derived results and claims.

use crate::results::{Device, Lane, Row, Sidecar, Status};
use crate::scenario::Scenario;
use crate::scenario::{Direction, HostKind, Mode};
use crate::units::format_size;

pub fn summary_text(scenario: &Scenario, rows: &[Row], sidecar: &Sidecar) -> String {
    let mut s = format!("\n{} — {}\n", scenario.name, scenario.description);
    s.push_str(&format!(
        "{:<4} {:<34} {:<5} {:>10} {:>12} {:>14} {:>4} {:>8}  {}\n",
        "#", "case", "lane", "size", "median", "spread | p99", "n", "verified", "status"
    ));
    for r in rows {
        let mut title = if r.axes.is_empty() {
            r.case_label.clone()
        } else {
            format!("{} {}", r.case_label, r.axes.replace(';', " "))
        };
        if r.placement().is_some() {
            let d = r.device.map(|d| d.to_string()).unwrap_or_default();
            let code = match (r.device, r.gpus_at_once) {
                (Some(Device::All), n) => format!("[all/{n}] "),
                (_, n) if n <= 1 => format!("[gpu{d}] "),
                (_, n) => format!("[gpu{d}/{n}] "),
            };
            title = code + &title;
        }
        // A latency row shows its time (p50, p99); a 4-byte copy's GB/s would read 0.00.
        let (median, spread) = super::latency::time_cells(r).unwrap_or_else(|| {
            (
                r.bw_median_gbs
                    .map_or("-".into(), |v| format!("{v:.2} GB/s")),
                r.bw_spread_pct.map_or("-".into(), |v| format!("{v:.1}%")),
            )
        });
        s.push_str(&format!(
            "{:<4} {:<34} {:<5} {:>10} {:>12} {:>14} {:>4} {:>8}  {}\n",
            r.case_index,
            truncate(&title, 34),
            r.lane.name(),
            format_size(r.size_bytes),
            median,
            spread,
            r.samples,
            r.verified,
            r.status.to_field()
        ));
    }
    // With several GPUs the plain-words answer is about one GPU alone (the first); the lines
    // after it say what running them all at once changes.
    let one_gpu: Vec<Row> = Row::one_gpu_view(rows).into_iter().cloned().collect();
    let mut answer = answer_lines(&one_gpu);
    answer.extend(multi_gpu_lines(rows));
    if !answer.is_empty() {
        s.push_str("\nin plain words:\n");
        for l in answer {
            s.push_str(&format!("  {l}\n"));
        }
    }
    if !sidecar.derived.is_empty() {
        s.push_str("\nderived:\n");
        for (k, v) in &sidecar.derived {
            s.push_str(&format!("  {k}: {v}\n"));
        }
    }
    if !sidecar.claims.is_empty() {
        s.push_str("\nclaims:\n");
        for c in &sidecar.claims {
            s.push_str(&format!("  [{}] {} — {}\n", c.verdict, c.text, c.detail));
        }
    }
    if sidecar.partial {
        s.push_str("\nthe run was interrupted: the files hold every case that finished\n");
    }
    s
}

fn row_title(r: &Row) -> String {
    r.title()
}

/// The answer to "which way is fastest and what does it cost", per direction, in sentences.
pub fn answer_lines(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for lane in [Lane::H2d, Lane::D2h] {
        let ok: Vec<&Row> = rows
            .iter()
            .filter(|r| r.lane == lane && r.status.is_ok() && r.bw_median_gbs.is_some())
            .filter(|r| !r.engine.is_cpu() && !r.measures_time())
            .filter(|r| r.direction != Direction::Bidirectional)
            .collect();
        let bw = |r: &Row| r.bw_median_gbs.unwrap_or(0.0);
        let Some(best) = ok.iter().copied().max_by(|a, b| bw(a).total_cmp(&bw(b))) else {
            continue;
        };
        let dir = if lane == Lane::H2d {
            "host->GPU"
        } else {
            "GPU->host"
        };
        out.push(format!(
            "{dir}: fastest is {} at {:.1} GB/s, holding {} page-locked.",
            row_title(best),
            bw(best),
            format_size(best.pinned_bytes)
        ));
        // The least pinned memory that stays within 5% of the fastest.
        if let Some(frugal) = ok
            .iter()
            .copied()
            .filter(|r| bw(r) >= 0.95 * bw(best) && r.pinned_bytes < best.pinned_bytes)
            .min_by_key(|r| r.pinned_bytes)
        {
            out.push(format!(
                "{dir}: {} reaches {:.0}% of that ({:.1} GB/s) with only {} page-locked.",
                row_title(frugal),
                100.0 * bw(frugal) / bw(best),
                bw(frugal),
                format_size(frugal.pinned_bytes)
            ));
        }
        if let Some(pageable) = ok
            .iter()
            .copied()
            .filter(|r| r.host == Some(HostKind::Pageable) && r.mode == Mode::Direct)
            .max_by(|a, b| bw(a).total_cmp(&bw(b)))
        {
            out.push(format!(
                "{dir}: plain pageable copies ({}) get {:.1} GB/s, {:.1}x slower than the fastest.",
                row_title(pageable),
                bw(pageable),
                bw(best) / bw(pageable).max(1e-9)
            ));
        }
    }
    out.extend(super::device_memory::console_lines(rows));
    let timed: Vec<&Row> = rows.iter().collect();
    out.extend(
        super::latency::sentences(&timed)
            .into_iter()
            .map(|l| format!("latency: {l}")),
    );
    let (failed, skipped) = unfinished_counts(rows);
    if failed + skipped > 0 {
        out.push(format!(
            "{failed} row(s) failed and {skipped} were skipped: see the status column."
        ));
    }
    out
}

/// How many of `rows` failed, and how many were skipped.
pub(crate) fn unfinished_counts<'r>(rows: impl IntoIterator<Item = &'r Row>) -> (usize, usize) {
    rows.into_iter()
        .fold((0, 0), |(failed, skipped), r| match r.status {
            Status::Failed(_) => (failed + 1, skipped),
            Status::Skipped(_) => (failed, skipped + 1),
            Status::Ok => (failed, skipped),
        })
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}

/// What running every GPU at once did: per case and lane, each GPU's bandwidth together against
/// alone, and the sum.
pub fn multi_gpu_lines<R: std::borrow::Borrow<Row>>(rows: &[R]) -> Vec<String> {
    let rows: Vec<&Row> = rows.iter().map(R::borrow).collect();
    let base = |r: &Row| r.base_key().to_string();
    let mut out = Vec::new();
    for all in rows
        .iter()
        .filter(|r| r.device == Some(Device::All) && r.placement().is_some())
    {
        let key = base(all);
        let lane = all.lane;
        let parts: Vec<String> = rows
            .iter()
            .filter(|r| {
                base(r) == key
                    && r.lane == lane
                    && r.device != Some(Device::All)
                    && r.gpus_at_once > 1
            })
            .filter_map(|t| {
                let alone = rows.iter().find(|a| {
                    base(a) == key && a.lane == lane && a.device == t.device && a.gpus_at_once <= 1
                })?;
                let (tb, ab) = (t.bw_median_gbs?, alone.bw_median_gbs?);
                Some(format!(
                    "GPU {} {:.1} of {:.1} GB/s alone ({:.0}%)",
                    t.device.map(|d| d.to_string()).unwrap_or_default(),
                    tb,
                    ab,
                    100.0 * tb / ab
                ))
            })
            .collect();
        let sum = all
            .bw_median_gbs
            .map_or_else(|| all.status.to_field(), |v| format!("{v:.1} GB/s in all"));
        out.push(format!(
            "{} GPUs at once, {} {}: {}; each keeps {}.",
            all.gpus_at_once,
            all.title().split(" [").next().unwrap_or(""),
            lane.name(),
            sum,
            if parts.is_empty() {
                "(no per-GPU figures)".to_string()
            } else {
                parts.join(", ")
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_does_not_print_the_results_line_which_run_prints_once() {
        let scenario = crate::scenario::parse(
            "s.toml",
            "name = \"s\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\n",
        )
        .expect("valid scenario");
        let text = summary_text(&scenario, &[], &Sidecar::empty_for_tests());
        assert!(!text.contains("results:"), "{text}");
    }
}
