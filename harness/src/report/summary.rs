//! The console summary `pinscope run` prints per scenario: the table, the answer in plain words,
//! derived results and claims.

use super::labels::fit_left;
use crate::results::{Device, Row, Samples, Sidecar};
use crate::scenario::Scenario;
use crate::units::format_size;

/// `samples`: the run's per-sample series, on which the plain words judge latency differences.
pub fn summary_text(
    scenario: &Scenario,
    rows: &[Row],
    samples: &Samples,
    sidecar: &Sidecar,
) -> String {
    let mut s = format!("\n{} — {}\n", scenario.name, scenario.description);
    s.push_str(&format!(
        "{:<4} {:<34} {:<5} {:>10} {:>12} {:>14} {:>4} {:>8}  {}\n",
        "#", "case", "lane", "size", "median", "spread | p99", "n", "verified", "status"
    ));
    for r in rows {
        let mut title = if r.axes.is_empty() {
            r.case_label.clone()
        } else {
            format!("{} {}", r.case_label, r.axes.joined(" "))
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
            "{:<4} {} {:<5} {:>10} {:>12} {:>14} {:>4} {:>8}  {}\n",
            r.case_index,
            fit_left(&title, 34),
            r.lane.name(),
            format_size(r.size_bytes),
            median,
            spread,
            r.samples,
            r.verified,
            r.status.to_field()
        ));
    }
    let answer = super::answer::console_lines(rows, samples);
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
            // The formula beside the value, so a sum over cases is never read as one case's.
            if let Some(d) = scenario.derived.iter().find(|d| &d.text == k) {
                s.push_str(&format!("      = {}\n", d.formula()));
            }
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
        let text = summary_text(
            &scenario,
            &[],
            &Samples::default(),
            &Sidecar::empty_for_tests(),
        );
        assert!(!text.contains("results:"), "{text}");
    }

    /// A derived value that sums several cases says so beside its value.
    #[test]
    fn a_derived_sum_shows_its_formula_beside_the_value() {
        let scenario = crate::scenario::parse(
            "s.toml",
            "name = \"s\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\n[[case]]\nlabel = \"b\"\n\
             [[derived]]\ntext = \"load time\"\ncases = [\"a\", \"b\"]\nmetric = \"time_median_ms\"\n\
             scale = 0.001\nunit = \"s\"\n",
        )
        .expect("valid scenario");
        let mut sidecar = Sidecar::empty_for_tests();
        sidecar.derived = vec![("load time".into(), "1.39 s".into())];
        let text = summary_text(&scenario, &[], &Samples::default(), &sidecar);
        assert!(
            text.contains(
                "  load time: 1.39 s\n      = time_median_ms of `a` + `b`, summed, × 0.001, in s\n"
            ),
            "{text}"
        );
    }

    /// A case named in a wide script (CJK: two columns a character) keeps the table's columns
    /// aligned, and a label too long for its column is cut with `…`.
    #[test]
    fn wide_and_long_case_names_keep_the_columns_aligned() {
        let scenario = crate::scenario::parse(
            "s.toml",
            "name = \"s\"\ndescription = \"d\"\n[[case]]\nlabel = \"a\"\n",
        )
        .expect("valid scenario");
        let row = |label: &str| Row {
            case_label: label.into(),
            ..Row::default()
        };
        let rows = [
            row("pinned"),
            row("固定内存"),
            row(&"长".repeat(40)),
            row(&"x".repeat(300)),
        ];
        let text = summary_text(
            &scenario,
            &rows,
            &Samples::default(),
            &Sidecar::empty_for_tests(),
        );
        let lane_column: Vec<usize> = text
            .lines()
            .skip(2)
            .take(rows.len() + 1)
            .map(|l| {
                let at = l
                    .find(" h2d ")
                    .unwrap_or_else(|| l.find(" lane ").expect("lane"));
                super::super::labels::display_width(&l[..at])
            })
            .collect();
        assert!(
            lane_column.iter().all(|c| *c == lane_column[0]),
            "{lane_column:?}\n{text}"
        );
        assert!(text.contains('…'));
    }
}
