//! Change detection between two samples of a higher-is-better quantity (bandwidth): a verdict
//! needs the whole confidence interval on one side of 1 *and* a ratio beyond the noise threshold.

use super::bootstrap::{DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, adaptive_ratio_ci};
use super::sample::Sample;
use serde::Serialize;

/// What a comparison concluded, for a quantity where higher is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Faster,
    Slower,
    NoChange,
    /// No confidence interval (fewer than two raw samples on a side): no verdict is given.
    Undecided,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::Undecided => "n/a",
        }
    }
}

/// `other` against `base`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// median(other) / median(base).
    pub ratio: f64,
    /// 95% percentile-bootstrap interval of the ratio; `None` when either side has fewer than two
    /// values (then the verdict is `Undecided`: a verdict needs the interval).
    pub ci: Option<(f64, f64)>,
    pub verdict: Verdict,
    /// Bootstrap resamples behind `ci` (0 without one): fewer than the rule's most when the
    /// verdict was settled early (see [`adaptive_ratio_ci`]).
    pub resamples: usize,
}

/// The rule every verdict follows: the relative change treated as no change, and the bootstrap
/// interval of the ratio of medians that must exclude 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VerdictRule {
    /// Relative change treated as no change (0.02 = 2%).
    pub noise: f64,
    /// Two-sided confidence of the interval.
    pub confidence: f64,
    /// The most bootstrap resamples behind one interval; a case stops earlier once its
    /// verdict is settled (see [`adaptive_ratio_ci`]).
    pub resamples: usize,
}

impl VerdictRule {
    /// The rule with this noise threshold and pinscope's interval ([`DEFAULT_CONFIDENCE`],
    /// [`DEFAULT_RESAMPLES`]).
    pub fn with_noise(noise: f64) -> VerdictRule {
        VerdictRule {
            noise,
            confidence: DEFAULT_CONFIDENCE,
            resamples: DEFAULT_RESAMPLES,
        }
    }

    /// `other` against `base`: `Faster` needs the whole CI above 1 and `ratio > 1 + noise`;
    /// `Slower` needs the whole CI below 1 and `ratio < 1 - noise`; without an interval (fewer
    /// than two values on a side) it is `Undecided`; anything else is `NoChange`.
    pub fn compare(&self, base: &Sample, other: &Sample) -> Comparison {
        let ratio = other.median() / base.median();
        // Inside the noise (or no finite ratio) the verdict is `NoChange` whatever the interval.
        let settled = !ratio.is_finite() || (ratio - 1.0).abs() <= self.noise;
        let staged = (base.len() >= 2 && other.len() >= 2)
            .then(|| adaptive_ratio_ci(base, other, self.resamples, self.confidence, settled));
        let ci = staged.map(|s| (s.lo, s.hi));
        let (above, below) = match ci {
            Some((lo, hi)) => (lo > 1.0, hi < 1.0),
            None => (false, false),
        };
        let verdict = if ci.is_none() {
            Verdict::Undecided
        } else if !ratio.is_finite() {
            Verdict::NoChange
        } else if above && ratio > 1.0 + self.noise {
            Verdict::Faster
        } else if below && ratio < 1.0 - self.noise {
            Verdict::Slower
        } else {
            Verdict::NoChange
        };
        Comparison {
            ratio,
            ci,
            verdict,
            resamples: staged.map_or(0, |s| s.resamples),
        }
    }
}

/// Compares two bandwidth samples under [`VerdictRule::with_noise`]: `noise` is the relative
/// change treated as no change (0.02 = 2%).
pub fn compare(base: &Sample, other: &Sample, noise: f64) -> Comparison {
    VerdictRule::with_noise(noise).compare(base, other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sample::sample_of;

    #[test]
    fn identical_is_no_change() {
        let a = sample_of(&[10.0, 10.1, 9.9, 10.05, 9.95]);
        let c = compare(&a, &a, 0.02);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert_eq!(c.ratio, 1.0);
        let (lo, hi) = c.ci.expect("ci");
        assert!(lo <= 1.0 && hi >= 1.0);
    }

    #[test]
    fn clear_shift_is_faster_or_slower() {
        let a = sample_of(&[10.0, 10.1, 9.9, 10.05, 9.95, 10.02]);
        let b = sample_of(&[12.0, 12.1, 11.9, 12.05, 11.95, 12.02]);
        assert_eq!(compare(&a, &b, 0.02).verdict, Verdict::Faster);
        assert_eq!(compare(&b, &a, 0.02).verdict, Verdict::Slower);
        // Significant but inside the noise threshold.
        assert_eq!(compare(&a, &b, 0.5).verdict, Verdict::NoChange);
    }

    #[test]
    fn single_values_have_no_ci_and_no_verdict() {
        let c = compare(&sample_of(&[10.0]), &sample_of(&[11.0]), 0.02);
        assert_eq!(c.ci, None);
        assert_eq!(c.verdict, Verdict::Undecided);
        let c = compare(&sample_of(&[10.0]), &sample_of(&[10.1]), 0.02);
        assert_eq!(c.verdict, Verdict::Undecided);
    }
}
