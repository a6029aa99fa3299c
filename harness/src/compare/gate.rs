//! The verdicts a CI gate looks at (`compare --fail-on`): which (case, lane, run) have a chosen
//! verdict against the baseline.

use super::{Comparison, Entry};
use crate::stats::Verdict;

/// One case of a later run whose verdict against the baseline matched.
#[derive(Debug, Clone, Copy)]
pub struct Match<'a> {
    pub entry: &'a Entry,
    /// Index of the run in [`Comparison::runs`] (never 0, the baseline).
    pub run: usize,
    pub verdict: Verdict,
}

impl Comparison {
    /// Every (case, lane, later run) whose verdict satisfies `wanted`, in table order.
    pub fn verdicts_matching(&self, wanted: impl Fn(Verdict) -> bool) -> Vec<Match<'_>> {
        let mut out = Vec::new();
        for entry in &self.entries {
            for (run, cell) in entry.cells.iter().enumerate().skip(1) {
                let verdict = cell
                    .as_ref()
                    .and_then(|c| c.change.as_ref())
                    .map(|c| c.verdict);
                if let Some(verdict) = verdict.filter(|&v| wanted(v)) {
                    out.push(Match {
                        entry,
                        run,
                        verdict,
                    });
                }
            }
        }
        out
    }
}
