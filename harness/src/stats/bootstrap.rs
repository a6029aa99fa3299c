//! A seeded bootstrap of medians. The generator is splitmix64 with a fixed seed, so a report built
//! twice from the same files shows the same intervals.

use super::sample::{Sample, median_in_place, quantile_of_sorted};

/// The fixed seed of every bootstrap (reports are reproducible).
pub const SEED: u64 = 0x5EED_0FB0_0757_A7A7;
/// Resamples used by [`super::compare`] and the report.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// Two-sided confidence of the intervals pinscope prints.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// splitmix64 (Steele, Lea & Flood 2014): tiny, fast, and good enough to pick resample indices.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

fn resample_median(rng: &mut Rng, from: &[f64], buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend((0..from.len()).map(|_| from[rng.below(from.len())]));
    median_in_place(buf)
}

fn percentile_interval(mut stats: Vec<f64>, confidence: f64) -> (f64, f64) {
    stats.retain(|v| v.is_finite());
    if stats.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    stats.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    (
        quantile_of_sorted(&stats, alpha),
        quantile_of_sorted(&stats, 1.0 - alpha),
    )
}

/// Percentile bootstrap interval for the ratio of medians `median(other) / median(base)`.
/// Each resample draws both samples again with replacement; resamples whose base median is zero
/// are left out. `confidence` 0.95 gives the 2.5th and 97.5th percentiles.
pub fn bootstrap_ratio_ci(
    base: &Sample,
    other: &Sample,
    resamples: usize,
    confidence: f64,
) -> (f64, f64) {
    let mut rng = Rng::new(SEED);
    let (b, o) = (base.values(), other.values());
    let mut bb = Vec::with_capacity(b.len());
    let mut ob = Vec::with_capacity(o.len());
    let ratios: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            let mb = resample_median(&mut rng, b, &mut bb);
            let mo = resample_median(&mut rng, o, &mut ob);
            mo / mb
        })
        .collect();
    percentile_interval(ratios, confidence)
}

/// Percentile bootstrap interval for the median of one sample.
pub fn bootstrap_median_ci(sample: &Sample, resamples: usize, confidence: f64) -> (f64, f64) {
    let mut rng = Rng::new(SEED);
    let mut buf = Vec::with_capacity(sample.len());
    let medians: Vec<f64> = (0..resamples.max(1))
        .map(|_| resample_median(&mut rng, sample.values(), &mut buf))
        .collect();
    percentile_interval(medians, confidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic "noisy" values around `centre` (±3%).
    fn noisy(centre: f64, n: usize, seed: u64) -> Sample {
        let mut r = Rng::new(seed);
        let v = (0..n)
            .map(|_| centre * (1.0 + ((r.next_u64() % 1000) as f64 / 1000.0 - 0.5) * 0.06))
            .collect();
        Sample::new(v).expect("finite")
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(1);
        assert!((0..10_000).all(|_| r.below(7) < 7));
    }

    #[test]
    fn ratio_ci_contains_true_ratio() {
        let a = noisy(20.0, 30, 1);
        let b = noisy(25.0, 30, 2);
        let (lo, hi) = bootstrap_ratio_ci(&a, &b, DEFAULT_RESAMPLES, 0.95);
        assert!(lo < 1.25 && 1.25 < hi, "({lo}, {hi})");
        assert!(lo > 1.15 && hi < 1.35, "interval too wide: ({lo}, {hi})");
    }

    #[test]
    fn ci_is_deterministic() {
        let a = noisy(20.0, 30, 3);
        let b = noisy(21.0, 30, 4);
        assert_eq!(
            bootstrap_ratio_ci(&a, &b, 2000, 0.95),
            bootstrap_ratio_ci(&a, &b, 2000, 0.95)
        );
        assert_eq!(
            bootstrap_median_ci(&a, 2000, 0.95),
            bootstrap_median_ci(&a, 2000, 0.95)
        );
    }

    #[test]
    fn median_ci_brackets_median() {
        let a = noisy(50.0, 25, 5);
        let (lo, hi) = bootstrap_median_ci(&a, 5000, 0.95);
        assert!(lo <= a.median() && a.median() <= hi);
    }
}
