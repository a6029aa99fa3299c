//! Change detection between two samples of a higher-is-better quantity (bandwidth): a verdict
//! needs the whole confidence interval on one side of 1 *and* a ratio beyond the noise threshold.

use super::bootstrap::{DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, adaptive_ratio_ci};
use super::sample::Sample;
use serde::Serialize;

/// What a comparison concluded, for a quantity where higher is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The whole interval above 1 and the ratio above `1 + noise`.
    Faster,
    /// The whole interval below 1 and the ratio below `1 - noise`.
    Slower,
    /// The ratio is inside the noise threshold.
    WithinNoise,
    /// The ratio is beyond the noise threshold but the interval includes 1.
    Inconclusive,
    /// Fewer raw samples on a side than [`VerdictRule::min_samples`]: the ratio and the interval
    /// are information, not a verdict.
    TooFewSamples,
    /// No interval (fewer than two raw samples on a side, or no finite ratio): no verdict.
    Undecided,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "no difference within noise",
            Verdict::Inconclusive => "interval includes 1",
            Verdict::TooFewSamples => "too few samples",
            Verdict::Undecided => "n/a",
        }
    }

    /// Every verdict, in the order the pages count them.
    pub const ALL: [Verdict; 6] = [
        Verdict::Faster,
        Verdict::Slower,
        Verdict::WithinNoise,
        Verdict::Inconclusive,
        Verdict::TooFewSamples,
        Verdict::Undecided,
    ];
}

/// The fewest raw samples a side needs for a verdict. Below it a 95% interval of a median rests
/// on the sample's extremes: a distribution-free 95% interval of a median is the whole range of
/// the sample up to 8 values and first excludes the smallest and largest at 9, and a percentile
/// bootstrap of 3 values against 3 excludes the true ratio about twice as often as its 95% says
/// (`three_samples_a_side_miss_twice_as_often_as_the_interval_says` below).
pub const MIN_VERDICT_SAMPLES: usize = 10;

/// `other` against `base`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// median(other) / median(base).
    pub ratio: f64,
    /// 95% percentile-bootstrap interval of the ratio; `None` when either side has fewer than two
    /// values (then the verdict is `Undecided`: a verdict needs the interval). Shown also when
    /// the verdict is `TooFewSamples`, as information.
    pub ci: Option<(f64, f64)>,
    pub verdict: Verdict,
    /// Bootstrap resamples behind `ci` (0 without one): fewer than the rule's most when the
    /// verdict was settled early (see [`adaptive_ratio_ci`]).
    pub resamples: usize,
}

/// The rule every verdict follows: the raw samples each side needs, the relative change treated
/// as no difference, and the bootstrap interval of the ratio of medians that must exclude 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VerdictRule {
    /// Relative change treated as no difference (0.02 = 2%).
    pub noise: f64,
    /// The fewest raw samples each side needs for a verdict ([`MIN_VERDICT_SAMPLES`]).
    pub min_samples: usize,
    /// Two-sided confidence of the interval.
    pub confidence: f64,
    /// The most bootstrap resamples behind one interval; a case stops earlier once its
    /// verdict is settled (see [`adaptive_ratio_ci`]).
    pub resamples: usize,
}

impl VerdictRule {
    /// The rule with this noise threshold and pinscope's interval ([`DEFAULT_CONFIDENCE`],
    /// [`DEFAULT_RESAMPLES`], [`MIN_VERDICT_SAMPLES`]).
    pub fn with_noise(noise: f64) -> VerdictRule {
        VerdictRule {
            noise,
            min_samples: MIN_VERDICT_SAMPLES,
            confidence: DEFAULT_CONFIDENCE,
            resamples: DEFAULT_RESAMPLES,
        }
    }

    /// `other` against `base`. Without an interval (fewer than two values on a side, or no
    /// finite ratio) it is `Undecided`; with fewer than `min_samples` values on a side it is
    /// `TooFewSamples` (the interval is still computed, as information); then a ratio inside the
    /// noise is `WithinNoise`; `Faster` needs the whole interval above 1, `Slower` below 1;
    /// anything else is `Inconclusive`.
    pub fn compare(&self, base: &Sample, other: &Sample) -> Comparison {
        let ratio = other.median() / base.median();
        let enough = base.len().min(other.len()) >= self.min_samples;
        let within_noise = (ratio - 1.0).abs() <= self.noise;
        // The verdict reads the interval only with enough samples and a ratio beyond the noise.
        let settled = !enough || !ratio.is_finite() || within_noise;
        let staged = (base.len() >= 2 && other.len() >= 2)
            .then(|| adaptive_ratio_ci(base, other, self.resamples, self.confidence, settled));
        let ci = staged.map(|s| (s.lo, s.hi));
        let verdict = match ci {
            None => Verdict::Undecided,
            Some(_) if !ratio.is_finite() => Verdict::Undecided,
            Some(_) if !enough => Verdict::TooFewSamples,
            Some(_) if within_noise => Verdict::WithinNoise,
            Some((lo, _)) if lo > 1.0 && ratio > 1.0 => Verdict::Faster,
            Some((_, hi)) if hi < 1.0 && ratio < 1.0 => Verdict::Slower,
            Some(_) => Verdict::Inconclusive,
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
/// change treated as no difference (0.02 = 2%).
pub fn compare(base: &Sample, other: &Sample, noise: f64) -> Comparison {
    VerdictRule::with_noise(noise).compare(base, other)
}

#[cfg(test)]
mod tests {
    use super::super::bootstrap::{Rng, bootstrap_ratio_ci};
    use super::*;
    use crate::stats::sample::sample_of;

    /// SYNTHETIC: `n` values around `centre`, ±0.5%.
    fn around(centre: f64, n: usize) -> Sample {
        let v: Vec<f64> = (0..n)
            .map(|i| centre * (1.0 + 0.005 * ((i % 5) as f64 - 2.0) / 2.0))
            .collect();
        sample_of(&v)
    }

    #[test]
    fn identical_is_no_difference_within_noise() {
        let a = around(10.0, 12);
        let c = compare(&a, &a, 0.02);
        assert_eq!(c.verdict, Verdict::WithinNoise);
        assert_eq!(c.verdict.name(), "no difference within noise");
        assert_eq!(c.ratio, 1.0);
        let (lo, hi) = c.ci.expect("the interval is shown with the verdict");
        assert!(lo <= 1.0 && hi >= 1.0);
    }

    #[test]
    fn clear_shift_is_faster_or_slower() {
        let a = around(10.0, MIN_VERDICT_SAMPLES);
        let b = around(12.0, MIN_VERDICT_SAMPLES);
        assert_eq!(compare(&a, &b, 0.02).verdict, Verdict::Faster);
        assert_eq!(compare(&b, &a, 0.02).verdict, Verdict::Slower);
        // Significant but inside the noise threshold.
        assert_eq!(compare(&a, &b, 0.5).verdict, Verdict::WithinNoise);
    }

    #[test]
    fn a_shift_whose_interval_includes_1_is_inconclusive() {
        // SYNTHETIC: two wide samples 5% apart.
        let wide = |centre: f64| {
            let v: Vec<f64> = (0..12)
                .map(|i| centre * (0.7 + 0.6 * f64::from(i) / 11.0))
                .collect();
            sample_of(&v)
        };
        let c = compare(&wide(10.0), &wide(10.5), 0.02);
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
    }

    #[test]
    fn fewer_samples_than_the_rule_give_no_verdict_but_keep_ratio_and_interval() {
        let n = MIN_VERDICT_SAMPLES - 1;
        let c = compare(&around(10.0, n), &around(12.0, MIN_VERDICT_SAMPLES), 0.02);
        assert_eq!(c.verdict, Verdict::TooFewSamples);
        assert!((c.ratio - 1.2).abs() < 1e-9);
        let (lo, hi) = c.ci.expect("the interval, as information");
        assert!(lo > 1.0 && hi > lo, "{lo} {hi}");
        // Inside the noise too: too few samples to say even that.
        let c = compare(&around(10.0, 3), &around(10.0, 3), 0.02);
        assert_eq!(c.verdict, Verdict::TooFewSamples);
    }

    #[test]
    fn single_values_have_no_ci_and_no_verdict() {
        let c = compare(&sample_of(&[10.0]), &sample_of(&[11.0]), 0.02);
        assert_eq!(c.ci, None);
        assert_eq!(c.verdict, Verdict::Undecided);
        let c = compare(&sample_of(&[10.0]), &sample_of(&[10.1]), 0.02);
        assert_eq!(c.verdict, Verdict::Undecided);
    }

    /// How often the 95% interval of two SYNTHETIC samples of `n` values drawn from one
    /// distribution (so the true ratio is 1) excludes 1, over `trials` pairs.
    fn false_verdict_rate(n: usize, trials: usize) -> f64 {
        let mut rng = Rng::new(12345);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut draw = || -> Vec<f64> { (0..n).map(|_| 50.0 * (1.0 + 0.02 * uniform())).collect() };
        let missed = (0..trials)
            .filter(|_| {
                let (a, b) = (draw(), draw());
                let (lo, hi) = bootstrap_ratio_ci(&sample_of(&a), &sample_of(&b), 1000, 0.95);
                lo > 1.0 || hi < 1.0
            })
            .count();
        missed as f64 / trials as f64
    }

    #[test]
    fn three_samples_a_side_miss_twice_as_often_as_the_interval_says() {
        // With 3 values a side the resampled median is one of 3 values, and the interval is about
        // [min / max, max / min]: it misses whenever all of one side lie below the other, 2 in 20.
        let three = false_verdict_rate(3, 400);
        assert!(three > 0.075, "n = 3: {three}");
        let enough = false_verdict_rate(MIN_VERDICT_SAMPLES, 400);
        assert!(enough <= 0.06, "n = {MIN_VERDICT_SAMPLES}: {enough}");
    }
}
