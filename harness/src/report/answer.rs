//! "In plain words": the answer a scenario gives, first on the page. Per direction: the fastest
//! way and the page-locked memory it holds, the way that holds the least page-locked memory
//! within 5% of the fastest, and how much slower plain pageable copies are; what the largest
//! pinned case did to each memory observer; and the claims held and not held.

use super::labels::strategy_words;
use crate::results::{ClaimStatus, Device, Lane, Row, Samples, Sidecar, Status};
use crate::scenario::{Direction, HostKind, Mode};
use crate::units::format_size;

/// One sentence of the answer, with the word that starts it (`Host → GPU`, `Memory`, `Claims`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    pub topic: String,
    pub text: String,
    /// The claim's verdict, on claim lines.
    pub verdict: Option<ClaimStatus>,
}

fn sentence(topic: &str, text: String) -> Sentence {
    Sentence {
        topic: topic.into(),
        text,
        verdict: None,
    }
}

fn bw(r: &Row) -> f64 {
    r.bw_median_gbs.unwrap_or(0.0)
}

fn named(r: &Row) -> String {
    format!(
        "{} ({}, {})",
        r.case_label,
        strategy_words(r),
        format_size(r.size_bytes)
    )
}

/// The one-way transfers of `lane` that finished with a bandwidth: the cases the answer compares.
/// CPU-side access (cpu-read/cpu-write) is a different question; it is answered only when it is
/// all the scenario measured in this direction.
fn lane_pool<'r>(rows: &[&'r Row], lane: Lane) -> Vec<&'r Row> {
    let ok: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.lane == lane && r.status.is_ok() && r.bw_median_gbs.is_some())
        .filter(|r| r.direction != Direction::Bidirectional && !r.measures_time())
        .collect();
    let transfers: Vec<&Row> = ok.iter().copied().filter(|r| !r.engine.is_cpu()).collect();
    if transfers.is_empty() { ok } else { transfers }
}

/// What one direction's one-way transfers say, computed once for the page's sentences and the
/// findings' data (`report --format json`, which the index of published reports reads): the fastest case, the case holding the least page-locked memory within 5% of
/// it, plain pageable copies, and the fastest staging ring.
#[derive(Debug, Clone, Copy)]
pub struct LaneAnswer<'r> {
    pub fastest: &'r Row,
    /// The way that holds the least page-locked memory within [`NEAR_FASTEST`] of the fastest,
    /// if one holds less than the fastest does.
    pub least_memory: Option<&'r Row>,
    /// How many ways were compared (a lone case has no "least memory" to look for).
    pub compared: usize,
    /// The fastest plain pageable copy (direct mode, pageable host memory).
    pub pageable: Option<&'r Row>,
    /// The fastest staging-ring case.
    pub ring: Option<&'r Row>,
}

/// The fastest of `rows` (the last of equals).
fn fastest_of<'r>(rows: impl Iterator<Item = &'r Row>) -> Option<&'r Row> {
    rows.max_by(|a, b| bw(a).total_cmp(&bw(b)))
}

/// How close to the fastest a way must come to count as "as fast" (a share of its bandwidth).
pub const NEAR_FASTEST: f64 = 0.95;

impl<'r> LaneAnswer<'r> {
    /// The answer for `lane` over `rows` (one GPU's), if any one-way transfer finished.
    pub fn of(rows: &[&'r Row], lane: Lane) -> Option<LaneAnswer<'r>> {
        let pool = lane_pool(rows, lane);
        let fastest = fastest_of(pool.iter().copied())?;
        let least_memory = pool
            .iter()
            .copied()
            .filter(|r| {
                bw(r) >= NEAR_FASTEST * bw(fastest) && r.pinned_bytes < fastest.pinned_bytes
            })
            .min_by_key(|r| r.pinned_bytes);
        let pageable = fastest_of(
            pool.iter()
                .copied()
                .filter(|r| r.host == Some(HostKind::Pageable) && r.mode == Mode::Direct),
        );
        let ring = fastest_of(pool.iter().copied().filter(|r| r.mode == Mode::Staged));
        Some(LaneAnswer {
            fastest,
            least_memory,
            compared: pool.len(),
            pageable,
            ring,
        })
    }

    /// `r`'s bandwidth as a share of the fastest's.
    pub fn share(&self, r: &Row) -> f64 {
        bw(r) / bw(self.fastest).max(1e-9)
    }

    /// How many times slower than the fastest `r` is (the pageable penalty).
    pub fn times_slower(&self, r: &Row) -> f64 {
        bw(self.fastest) / bw(r).max(1e-9)
    }
}

/// The answer for the rows of one scenario in one run, as the report page says it: the
/// findings, the rows that did not finish (listed below the answer), the claims and the checks
/// the recorded settings decide. `samples` are the run's per-sample series, on which latency
/// differences are judged.
pub fn answer(
    all_rows: &[&Row],
    samples: &Samples,
    sidecar: Option<&Sidecar>,
    scenario: &str,
) -> Vec<Sentence> {
    let mut out = findings(all_rows, samples);
    let (failed, skipped) = unfinished_counts(all_rows.iter().copied());
    if failed + skipped > 0 {
        out.push(sentence(
            "Not finished",
            format!("{failed} row(s) failed and {skipped} were skipped (reasons below)."),
        ));
    }
    if let Some(c) = sidecar {
        out.extend(claim_sentences(c, scenario));
        if let Some(settings) = &c.machine.settings {
            out.extend(settings_checks(settings));
        }
    }
    out
}

/// The findings of the answer as the console says them after its table, `topic: text`: the
/// page's findings, then how many rows did not finish (the table's status column says why).
/// Claims are printed after them in their own list. `samples` as for [`answer`].
pub fn console_lines<R: std::borrow::Borrow<Row>>(rows: &[R], samples: &Samples) -> Vec<String> {
    let rows: Vec<&Row> = rows.iter().map(R::borrow).collect();
    let mut out: Vec<String> = findings(&rows, samples)
        .into_iter()
        .map(|s| format!("{}: {}", s.topic, s.text))
        .collect();
    let (failed, skipped) = unfinished_counts(rows.iter().copied());
    if failed + skipped > 0 {
        out.push(format!(
            "{failed} row(s) failed and {skipped} were skipped: see the status column."
        ));
    }
    out
}

/// What the rows say: per direction the fastest way and its cost, every GPU at once, memory,
/// device memory and latency.
fn findings(all_rows: &[&Row], samples: &Samples) -> Vec<Sentence> {
    // With several GPUs, "fastest" is about one GPU alone (the first); what running them all at
    // once changes gets its own sentences below.
    let one_gpu = Row::one_gpu_view(all_rows.iter().copied());
    let rows = &one_gpu[..];
    let mut out = lane_sentences(rows, Lane::H2d);
    out.extend(lane_sentences(rows, Lane::D2h));
    for line in multi_gpu_lines(all_rows) {
        out.push(sentence("Every GPU at once", line));
    }
    if let Some(m) = super::memory_cost::memory_sentence(rows) {
        out.push(sentence("Memory", m));
    }
    // Device bandwidth, past the card, pinned ceilings with device memory held, churn.
    for (topic, text) in super::device_memory::answer_lines(all_rows) {
        out.push(sentence(&capitalized(&topic), text));
    }
    for line in super::latency::sentences(rows, samples) {
        out.push(sentence("Latency", line));
    }
    for line in super::file_load::sentences(rows, NEAR_FASTEST) {
        out.push(sentence("File load", line));
    }
    out
}

/// `topic` with its first letter upper-case.
fn capitalized(topic: &str) -> String {
    let mut chars = topic.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// One direction's sentences, from its [`LaneAnswer`]: the fastest way, the way that holds the
/// least page-locked memory within 5% of it, and how much slower plain pageable copies are.
fn lane_sentences(rows: &[&Row], lane: Lane) -> Vec<Sentence> {
    let topic = if lane == Lane::H2d {
        "Host → GPU"
    } else {
        "GPU → host"
    };
    let Some(a) = LaneAnswer::of(rows, lane) else {
        return Vec::new();
    };
    let best = a.fastest;
    let mut out = vec![sentence(
        topic,
        format!(
            "fastest is {} at {:.1} GB/s, holding {} page-locked.",
            named(best),
            bw(best),
            format_size(best.pinned_bytes)
        ),
    )];
    match a.least_memory {
        Some(f) => out.push(sentence(
            topic,
            format!(
                "least page-locked memory within {:.0}% of the fastest: {} at {:.1} GB/s ({:.0}%), holding only {}.",
                100.0 * (1.0 - NEAR_FASTEST),
                named(f),
                bw(f),
                100.0 * a.share(f),
                format_size(f.pinned_bytes)
            ),
        )),
        // Nothing holds less than a fastest way that holds nothing.
        None if a.compared > 1 && best.pinned_bytes > 0 => out.push(sentence(
            topic,
            format!(
                "no way that holds less page-locked memory comes within {:.0}% of the fastest.",
                100.0 * (1.0 - NEAR_FASTEST)
            ),
        )),
        None => {}
    }
    if let Some(p) = a.pageable {
        out.push(sentence(
            topic,
            format!(
                "plain pageable copies ({}) reach {:.1} GB/s: the pageable penalty is {:.1}× against the fastest.",
                p.case_label,
                bw(p),
                a.times_slower(p)
            ),
        ));
    }
    out
}

/// The claims of `scenario` the sidecar holds: how many held, did not hold or did not apply, then
/// each judged claim with its detail.
fn claim_sentences(sidecar: &Sidecar, scenario: &str) -> Vec<Sentence> {
    let claims: Vec<_> = sidecar
        .claims
        .iter()
        .filter(|v| v.scenario == scenario)
        .collect();
    if claims.is_empty() {
        return Vec::new();
    }
    let count = |v: ClaimStatus| claims.iter().filter(|c| c.verdict == v).count();
    let mut out = vec![sentence(
        "Claims",
        format!(
            "{} held, {} not held, {} not applicable here.",
            count(ClaimStatus::Held),
            count(ClaimStatus::NotHeld),
            count(ClaimStatus::NotApplicable)
        ),
    )];
    out.extend(
        claims
            .iter()
            .filter(|v| v.verdict.is_judged())
            .map(|v| Sentence {
                topic: "Claim".into(),
                text: format!("{} — {}", v.text, v.detail),
                verdict: Some(v.verdict),
            }),
    );
    out
}

/// The verdicts of `pinscope check` that the recorded settings decide (the link, the clocks and
/// the NUMA placement during the run's own sampling transfer), one sentence each.
fn settings_checks(settings: &crate::platform::Settings) -> Vec<Sentence> {
    crate::health::settings_checks(settings)
        .into_iter()
        .map(|c| {
            let mut text = format!("{}: {}", c.check.title(), c.verdict.name());
            if let Some(m) = &c.measured {
                text.push_str(&format!(" — {m}"));
            }
            if !c.threshold.is_empty() {
                text.push_str(&format!(" (threshold {})", c.threshold));
            }
            if !c.advice.is_empty() {
                text.push_str(&format!("; {}", c.advice));
            }
            sentence("Check", text)
        })
        .collect()
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
