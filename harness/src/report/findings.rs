//! The findings of a report as data: per run and scenario, what the page's answer says — each
//! direction's fastest way and what it holds, the way holding the least page-locked memory near
//! it, plain pageable copies, the staging ring; what the largest pinned case did to each memory
//! observer; the latency finding; the claims — typed as the page computes them, and the page's
//! sentences beside them. `pinscope report --format json` writes it; the HTML page renders the
//! same values.

use super::answer::{self, LaneAnswer, NEAR_FASTEST};
use super::labels::strategy_words;
use super::latency::LatencyFinding;
use crate::compare::{MemoryFinding, PinCost};
use crate::results::{ClaimStatus, ClaimVerdict, Lane, ResultSet, Row};
use serde::Serialize;

/// The version of the findings' JSON layout; a change that removes or renames a field raises it.
pub const FINDINGS_SCHEMA: u32 = 1;

/// Every run's findings, in the page's order.
#[derive(Debug, Clone, Serialize)]
pub struct Findings {
    pub pinscope_version: &'static str,
    pub schema_version: u32,
    /// What "near the fastest" means for `least_memory`: a share of the fastest's bandwidth.
    pub near_fastest_share: f64,
    pub runs: Vec<RunFindings>,
}

/// One results file's findings.
#[derive(Debug, Clone, Serialize)]
pub struct RunFindings {
    /// The run's label on the page (`A`, `B`, …, or a node's name in a fleet; `A` when the page
    /// has one run and names none).
    pub run: String,
    pub file: String,
    pub scenarios: Vec<ScenarioFindings>,
}

/// What one run says about one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioFindings {
    pub scenario: String,
    pub host_to_gpu: Option<LaneFindings>,
    pub gpu_to_host: Option<LaneFindings>,
    /// What allocating the most page-locked memory did to each observer (the finding `compare`
    /// states for the same file); absent when no observer recorded a number.
    pub memory: Option<PinCost>,
    pub latency: LatencyFinding,
    pub claims: Vec<ClaimVerdict>,
    /// The page's sentences for this run and scenario, in order.
    pub sentences: Vec<Said>,
}

/// One direction's answer ([`LaneAnswer`]) as data.
#[derive(Debug, Clone, Serialize)]
pub struct LaneFindings {
    pub fastest: CaseRef,
    /// The way holding the least page-locked memory within the near-fastest share, if one holds
    /// less than the fastest.
    pub least_memory: Option<Share>,
    /// The fastest plain pageable copy, with how many times slower it is than the fastest.
    pub pageable: Option<Penalty>,
    /// The fastest staging ring, with its share of the fastest's bandwidth.
    pub staging_ring: Option<Share>,
    /// How many ways were compared in this direction.
    pub compared: usize,
}

/// A case the answer names: its label, the strategy in the page's words, its size, median
/// bandwidth (GB/s = 1e9 B/s) and the page-locked bytes it holds.
#[derive(Debug, Clone, Serialize)]
pub struct CaseRef {
    pub case: String,
    pub strategy: String,
    pub size_bytes: u64,
    pub bw_median_gbs: f64,
    pub pinned_bytes: u64,
}

/// A case and its bandwidth as a share of the fastest's (0.97: 97%).
#[derive(Debug, Clone, Serialize)]
pub struct Share {
    #[serde(flatten)]
    pub case: CaseRef,
    pub share_of_fastest: f64,
}

/// A case and how many times slower than the fastest it is.
#[derive(Debug, Clone, Serialize)]
pub struct Penalty {
    #[serde(flatten)]
    pub case: CaseRef,
    pub times_slower: f64,
}

/// One sentence of the page's answer.
#[derive(Debug, Clone, Serialize)]
pub struct Said {
    pub topic: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<ClaimStatus>,
}

/// The findings of `sets`, each labelled as the page labels it.
pub fn findings(sets: &[ResultSet], labels: &[String]) -> Findings {
    let names = super::run_tables::scenario_names(sets);
    let runs = sets
        .iter()
        .zip(labels)
        .map(|(s, label)| RunFindings {
            run: match label.trim() {
                "" => "A".to_string(),
                l => l.to_string(),
            },
            file: s.path.display().to_string(),
            scenarios: names
                .iter()
                .filter_map(|name| scenario_findings(s, name))
                .collect(),
        })
        .collect();
    Findings {
        pinscope_version: env!("CARGO_PKG_VERSION"),
        schema_version: FINDINGS_SCHEMA,
        near_fastest_share: NEAR_FASTEST,
        runs,
    }
}

/// What run `s` says about scenario `name`, if it has rows of it.
fn scenario_findings(s: &ResultSet, name: &str) -> Option<ScenarioFindings> {
    let mine: Vec<&Row> = s.rows.iter().filter(|r| &*r.scenario == name).collect();
    if mine.is_empty() {
        return None;
    }
    let one_gpu = Row::one_gpu_view(mine.iter().copied());
    let memory = MemoryFinding::of_rows(std::slice::from_ref(&one_gpu))
        .and_then(|f| f.runs.into_iter().flatten().next())
        .filter(PinCost::observed);
    let claims = s
        .sidecar
        .iter()
        .flat_map(|c| &c.claims)
        .filter(|v| v.scenario == name)
        .cloned()
        .collect();
    let sentences = answer::answer(&mine, &s.samples, s.sidecar.as_ref(), name)
        .into_iter()
        .map(|l| Said {
            topic: l.topic,
            text: l.text,
            verdict: l.verdict,
        })
        .collect();
    Some(ScenarioFindings {
        scenario: name.to_string(),
        host_to_gpu: LaneAnswer::of(&one_gpu, Lane::H2d).map(|a| lane_findings(&a)),
        gpu_to_host: LaneAnswer::of(&one_gpu, Lane::D2h).map(|a| lane_findings(&a)),
        memory,
        latency: LatencyFinding::of(&one_gpu, &s.samples),
        claims,
        sentences,
    })
}

fn lane_findings(a: &LaneAnswer<'_>) -> LaneFindings {
    let share = |r: &Row| Share {
        case: case_ref(r),
        share_of_fastest: a.share(r),
    };
    LaneFindings {
        fastest: case_ref(a.fastest),
        least_memory: a.least_memory.map(share),
        pageable: a.pageable.map(|p| Penalty {
            case: case_ref(p),
            times_slower: a.times_slower(p),
        }),
        staging_ring: a.ring.map(share),
        compared: a.compared,
    }
}

fn case_ref(r: &Row) -> CaseRef {
    CaseRef {
        case: r.case_label.clone(),
        strategy: strategy_words(r),
        size_bytes: r.size_bytes,
        bw_median_gbs: r.bw_median_gbs.unwrap_or(0.0),
        pinned_bytes: r.pinned_bytes,
    }
}
