//! The console summary `pinscope run` prints per scenario: the table, the answer in plain words,
//! derived results and claims.

use crate::results::{Device, Row, Sidecar, Status};
use crate::scenario::Scenario;
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
    let answer = super::answer::console_lines(rows);
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
