//! The platform page's opening: the answer in plain words, measured on each platform — what
//! holding the largest page-locked allocation booked in each memory observer (and what stayed
//! after the free), the pinned ceilings, the bandwidth of each strategy against the first
//! platform, and the claims whose verdict differs between platforms.
//!
//! Every number comes from the runs' rows and sidecars; an observer a platform does not have is
//! said to be not observable there, never 0.

use super::html::escape;
use super::labels::case_words;
use crate::compare::MemoryFinding;
use crate::results::{ClaimStatus, ProbeName, ResultSet};
use crate::units::format_size;
use std::fmt::Write;

/// Most strategies one bandwidth sentence names; the rest are in the table below it.
pub const MAX_RATIOS: usize = 12;

/// The opening section as HTML: a heading and one list item per finding.
pub fn platform_answer(sets: &[ResultSet], names: &[String]) -> String {
    let mut items: Vec<String> = pin_booking(sets, names);
    items.extend(ceilings(sets, names));
    items.extend(bandwidth_ratios(sets, names));
    items.extend(super::latency::platform_sentences(sets, names));
    items.push(differing_claims(sets, names));
    let mut out = String::from(
        "<div id=\"platform-answer\">\n<h3>The answer, platform by platform</h3>\n<ul>\n",
    );
    for i in items {
        let _ = writeln!(out, "<li>{}</li>", escape(&i));
    }
    out.push_str("</ul>\n</div>\n");
    out
}

/// One sentence per platform: what holding the largest page-locked allocation cost there
/// ([`MemoryFinding`], the finding `compare` states too), and what stayed after the free.
fn pin_booking(sets: &[ResultSet], names: &[String]) -> Vec<String> {
    match MemoryFinding::of(sets) {
        Some(finding) => finding.lines(names),
        None => vec!["No run held page-locked memory with its memory observed.".into()],
    }
}

/// The pinned ceiling of each platform (a ceiling at the probe's cap says so) and the largest
/// device allocation with only the pin case's host memory held.
fn ceilings(sets: &[ResultSet], names: &[String]) -> Vec<String> {
    let per: Vec<String> = sets
        .iter()
        .zip(names)
        .map(|(s, n)| {
            let top = s
                .rows
                .iter()
                .filter(|r| r.pinned_ceiling_mib.is_some())
                .max_by(|a, b| a.pinned_ceiling_mib.total_cmp_some(b.pinned_ceiling_mib));
            match (top, ceiling(s)) {
                (Some(r), Some(v)) if r.pinned_ceiling_at_cap() == Some(true) => {
                    format!("{n} ≥ {v:.0} MiB (the probe's limit, not the machine's)")
                }
                (_, Some(v)) => format!("{n} {v:.0} MiB"),
                (_, None) => format!("{n} not probed"),
            }
        })
        .collect();
    let mut out = vec![format!(
        "Pinned ceiling (most page-locked memory the probe obtained): {}.",
        per.join("; ")
    )];
    if let Some(case) = MemoryFinding::of(sets) {
        let held: Vec<String> = sets
            .iter()
            .zip(names)
            .filter_map(|(s, n)| {
                let r = s.rows.iter().find(|r| r.case_key == case.case_key)?;
                let host = r.max_alloc_host_only_mib()?;
                let free = r
                    .max_alloc_free_mib
                    .map_or(String::new(), |f| format!(", {f:.0} MiB after the free"));
                Some(format!("{n} {host:.0} MiB{free}"))
            })
            .collect();
        if !held.is_empty() {
            out.push(format!(
                "Largest device allocation with only {}'s {} page-locked held: {}.",
                case.case_label,
                format_size(case.pinned_bytes),
                held.join("; ")
            ));
        }
    }
    out
}

/// Pinned ceiling (most MiB the probe could pin) of a run.
pub(super) fn ceiling(s: &ResultSet) -> Option<f64> {
    let from_rows = s
        .rows
        .iter()
        .filter_map(|r| r.pinned_ceiling_mib)
        .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
    from_rows.or_else(|| {
        s.sidecar.as_ref().and_then(|c| {
            c.probes
                .iter()
                .find(|p| p.name == ProbeName::PinnedCeiling)
                .map(|p| p.value)
        })
    })
}

trait TotalCmpSome {
    fn total_cmp_some(&self, o: Option<f64>) -> std::cmp::Ordering;
}

impl TotalCmpSome for Option<f64> {
    fn total_cmp_some(&self, o: Option<f64>) -> std::cmp::Ordering {
        self.unwrap_or(f64::MIN).total_cmp(&o.unwrap_or(f64::MIN))
    }
}

/// One sentence per platform after the first: each strategy's median bandwidth as a ratio of
/// the first platform's.
fn bandwidth_ratios(sets: &[ResultSet], names: &[String]) -> Vec<String> {
    let Some(base) = sets.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (s, n) in sets.iter().zip(names).skip(1) {
        let mut parts = Vec::new();
        for b in base
            .rows
            .iter()
            .filter(|r| r.status.is_ok() && !r.measures_time())
        {
            let Some(bb) = b.bw_median_gbs.filter(|v| *v > 0.0) else {
                continue;
            };
            let other = s
                .rows
                .iter()
                .find(|r| r.case_key == b.case_key && r.lane == b.lane && r.status.is_ok());
            if let Some(ob) = other.and_then(|r| r.bw_median_gbs) {
                parts.push(format!(
                    "{} {:.2}× ({ob:.1} against {bb:.1} GB/s)",
                    case_words(b),
                    ob / bb
                ));
            }
        }
        if parts.is_empty() {
            out.push(format!("{n} and {} share no measured case.", names[0]));
            continue;
        }
        let more = parts.len().saturating_sub(MAX_RATIOS);
        parts.truncate(MAX_RATIOS);
        let mut t = format!(
            "Bandwidth on {n} against {} (median GB/s, per strategy): {}",
            names[0],
            parts.join("; ")
        );
        if more > 0 {
            let _ = write!(t, "; {more} more in the table below");
        }
        t.push('.');
        out.push(t);
    }
    out
}

/// The claims checked on more than one platform whose verdicts differ, with each verdict.
fn differing_claims(sets: &[ResultSet], names: &[String]) -> String {
    let mut order: Vec<(&str, &str)> = Vec::new();
    let mut verdicts: Vec<Vec<Option<ClaimStatus>>> = Vec::new();
    for (i, s) in sets.iter().enumerate() {
        for c in s.sidecar.iter().flat_map(|c| &c.claims) {
            let key = (c.scenario.as_str(), c.text.as_str());
            let at = match order.iter().position(|k| *k == key) {
                Some(at) => at,
                None => {
                    order.push(key);
                    verdicts.push(vec![None; sets.len()]);
                    order.len() - 1
                }
            };
            verdicts[at][i] = Some(c.verdict);
        }
    }
    let differ: Vec<String> = order
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| {
            let seen: Vec<ClaimStatus> = v.iter().flatten().copied().collect();
            seen.len() > 1 && seen.iter().any(|x| *x != seen[0])
        })
        .map(|((_, text), v)| {
            let each: Vec<String> = v
                .iter()
                .zip(names)
                .map(|(v, n)| format!("{} on {n}", v.map_or("not checked", ClaimStatus::name)))
                .collect();
            format!("“{text}”: {}", each.join(", "))
        })
        .collect();
    if differ.is_empty() {
        "Every claim checked on more than one platform got the same verdict on each.".into()
    } else {
        format!("Claims whose verdict differs: {}.", differ.join("; "))
    }
}
