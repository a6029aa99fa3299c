//! A seeded bootstrap of medians. The generator is splitmix64 with a fixed seed, so a report built
//! twice from the same files shows the same intervals.

use super::sample::{Sample, quantile_of_sorted};

/// The fixed seed of every bootstrap (reports are reproducible).
pub const SEED: u64 = 0x5EED_0FB0_0757_A7A7;
/// The most resamples behind one interval of [`super::compare`] (see [`adaptive_ratio_ci`]).
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// Resamples of the first stage of [`adaptive_ratio_ci`]; each further stage doubles them.
pub const FIRST_STAGE_RESAMPLES: usize = 1_000;
/// Half-width, in binomial standard deviations of the order-statistic index, of the band in which
/// more resamples could still move a percentile endpoint (3.29: two-sided 99.9%).
pub const ENDPOINT_BAND_Z: f64 = 3.29;
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

/// Draws resamples (with replacement) of one sample and gives their medians. A resample is kept
/// as a count per source value, drawn with the same `Rng::below` stream as drawing the values,
/// and its median is read off by walking the values in sorted order: the number
/// `median_in_place` gives for the drawn values, without a selection over them (the
/// selection was half of `compare`'s time).
struct Resampler<'a> {
    values: &'a [f64],
    /// Indices of `values`, smallest value first.
    order: Vec<usize>,
    counts: Vec<u32>,
}

impl<'a> Resampler<'a> {
    fn new(values: &'a [f64]) -> Self {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        Resampler {
            values,
            order,
            counts: vec![0; values.len()],
        }
    }

    fn median(&mut self, rng: &mut Rng) -> f64 {
        let n = self.values.len();
        if n == 0 {
            return f64::NAN;
        }
        self.counts.fill(0);
        for _ in 0..n {
            self.counts[rng.below(n)] += 1;
        }
        // 0-based ranks of the middle value(s) of the resample.
        let upper_rank = n / 2;
        let lower_rank = if !n.is_multiple_of(2) {
            upper_rank
        } else {
            upper_rank - 1
        };
        let mut seen = 0usize;
        let mut lower = None;
        for &j in &self.order {
            seen += self.counts[j] as usize;
            if lower.is_none() && seen > lower_rank {
                lower = Some(self.values[j]);
            }
            if seen > upper_rank {
                let upper = self.values[j];
                return match lower {
                    Some(l) if n.is_multiple_of(2) => (l + upper) / 2.0,
                    _ => upper,
                };
            }
        }
        f64::NAN
    }
}

fn percentile_interval(mut stats: Vec<f64>, confidence: f64) -> (f64, f64) {
    stats.retain(|v| v.is_finite());
    if stats.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    stats.sort_unstable_by(f64::total_cmp);
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
    two_medians_ci(base, other, resamples, confidence, |mb, mo| mo / mb)
}

/// Percentile interval of `combine(median(base*), median(other*))` over `resamples` resamples
/// that draw both samples again with replacement, base first: the one resampling loop behind
/// the ratio and the difference intervals.
fn two_medians_ci(
    base: &Sample,
    other: &Sample,
    resamples: usize,
    confidence: f64,
    combine: impl Fn(f64, f64) -> f64,
) -> (f64, f64) {
    let mut rng = Rng::new(SEED);
    let mut bb = Resampler::new(base.values());
    let mut ob = Resampler::new(other.values());
    let stats: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            let mb = bb.median(&mut rng);
            let mo = ob.median(&mut rng);
            combine(mb, mo)
        })
        .collect();
    percentile_interval(stats, confidence)
}

/// A percentile interval from a bootstrap that stopped as soon as its endpoints' sides of 1 were
/// settled, with the resamples it took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StagedInterval {
    pub lo: f64,
    pub hi: f64,
    pub resamples: usize,
}

/// [`bootstrap_ratio_ci`] in stages of [`FIRST_STAGE_RESAMPLES`], doubling, up to
/// `max_resamples`: it stops after a stage when each endpoint's side of 1 (`lo > 1`, `hi < 1`:
/// all a verdict reads) is the same across the band of order statistics the endpoint could
/// still move to with more resamples ([`ENDPOINT_BAND_Z`]), or after the first stage when
/// `settled` (the verdict does not read the interval, e.g. the ratio is inside the noise).
/// The resamples are the same stream as [`bootstrap_ratio_ci`]'s, so a case that needs all of
/// them gets exactly its interval.
pub fn adaptive_ratio_ci(
    base: &Sample,
    other: &Sample,
    max_resamples: usize,
    confidence: f64,
    settled: bool,
) -> StagedInterval {
    let mut rng = Rng::new(SEED);
    let (b, o) = (base.values(), other.values());
    let mut bb = Resampler::new(b);
    let mut ob = Resampler::new(o);
    let max = max_resamples.max(1);
    let mut ratios: Vec<f64> = Vec::with_capacity(FIRST_STAGE_RESAMPLES.min(max));
    let mut finite: Vec<f64> = Vec::new();
    let mut stage = FIRST_STAGE_RESAMPLES.min(max);
    loop {
        while ratios.len() < stage {
            let mb = bb.median(&mut rng);
            let mo = ob.median(&mut rng);
            ratios.push(mo / mb);
        }
        let alpha = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
        let tails = Tails::of(&ratios, &mut finite, alpha);
        let (lo, hi) = match &tails {
            None => (f64::NAN, f64::NAN),
            Some(t) => (t.quantile(alpha), t.quantile(1.0 - alpha)),
        };
        let done = stage >= max
            || settled
            || tails.is_some_and(|t| {
                t.side_settled(alpha, |v| v > 1.0) && t.side_settled(1.0 - alpha, |v| v < 1.0)
            });
        if done {
            return StagedInterval {
                lo,
                hi,
                resamples: ratios.len(),
            };
        }
        stage = (stage * 2).min(max);
    }
}

/// The order statistics of a stage's finite ratios that its interval and its stopping rule
/// read, in their sorted places: the low and the high tail (each endpoint's neighbours and its
/// [`ENDPOINT_BAND_Z`] band) sorted, the middle only partitioned. A full sort per stage was a
/// sixth of the bootstrap; the values read are the same.
struct Tails<'v> {
    /// The finite ratios; sorted in `..low_end` and `high_start..`.
    v: &'v [f64],
}

impl<'v> Tails<'v> {
    /// `None` when no ratio is finite.
    fn of(ratios: &[f64], finite: &'v mut Vec<f64>, alpha: f64) -> Option<Tails<'v>> {
        finite.clear();
        finite.extend(ratios.iter().copied().filter(|v| v.is_finite()));
        let last = finite.len().checked_sub(1)?;
        let low_end = (band(finite.len(), alpha).1 + 2).min(finite.len());
        let high_start = band(finite.len(), 1.0 - alpha).0.min(last);
        if low_end >= high_start {
            finite.sort_unstable_by(f64::total_cmp);
        } else {
            // Elements equal under `total_cmp` are the same bits: any order of ties reads the same.
            finite.select_nth_unstable_by(high_start, f64::total_cmp);
            finite[high_start..].sort_unstable_by(f64::total_cmp);
            let low = &mut finite[..high_start];
            low.select_nth_unstable_by(low_end - 1, f64::total_cmp);
            low[..low_end].sort_unstable_by(f64::total_cmp);
        }
        Some(Tails { v: finite })
    }

    /// [`quantile_of_sorted`] of the sorted ratios.
    fn quantile(&self, q: f64) -> f64 {
        quantile_of_sorted(self.v, q)
    }

    /// True when `side` gives the same answer for every order statistic the `q` quantile could
    /// move to with more resamples ([`ENDPOINT_BAND_Z`] binomial deviations).
    fn side_settled(&self, q: f64, side: impl Fn(f64) -> bool) -> bool {
        let (first, end) = band(self.v.len(), q);
        side(self.v[first]) == side(self.v[end])
    }
}

/// The first and last index of the order statistics the `q` quantile of `n` (> 0) sorted values
/// could move to with more resamples: ±[`ENDPOINT_BAND_Z`] binomial deviations of its rank.
fn band(n: usize, q: f64) -> (usize, usize) {
    let last = n - 1;
    let centre = q * last as f64;
    let spread = ENDPOINT_BAND_Z * (n as f64 * q * (1.0 - q)).sqrt();
    let first = (centre - spread).floor().max(0.0) as usize;
    let end = ((centre + spread).ceil() as usize).min(last);
    (first, end)
}

/// Percentile bootstrap interval for the difference of medians `median(other) - median(base)`,
/// in the unit of the values. Each resample draws both samples again with replacement.
pub fn bootstrap_median_diff_ci(
    base: &Sample,
    other: &Sample,
    resamples: usize,
    confidence: f64,
) -> (f64, f64) {
    two_medians_ci(base, other, resamples, confidence, |mb, mo| mo - mb)
}

/// Percentile bootstrap interval for the median of one sample.
pub fn bootstrap_median_ci(sample: &Sample, resamples: usize, confidence: f64) -> (f64, f64) {
    let mut rng = Rng::new(SEED);
    let mut resampler = Resampler::new(sample.values());
    let medians: Vec<f64> = (0..resamples.max(1))
        .map(|_| resampler.median(&mut rng))
        .collect();
    percentile_interval(medians, confidence)
}

#[cfg(test)]
mod tests {
    use super::super::sample::median_in_place;
    use super::*;

    /// Deterministic "noisy" values around `centre` (±3%).
    fn noisy(centre: f64, n: usize, seed: u64) -> Sample {
        let mut r = Rng::new(seed);
        let v = (0..n)
            .map(|_| centre * (1.0 + ((r.next_u64() % 1000) as f64 / 1000.0 - 0.5) * 0.06))
            .collect();
        Sample::new(v).expect("finite")
    }

    /// The counted resample's median is the median of the values the same draws pick.
    #[test]
    fn counted_medians_are_the_medians_of_the_drawn_values() {
        for n in [1usize, 2, 3, 4, 17, 18, 30] {
            // Ties included: values repeat every 5.
            let values: Vec<f64> = (0..n).map(|i| ((i * 7) % 5) as f64 + 0.25).collect();
            let mut counted = Resampler::new(&values);
            let (mut r1, mut r2) = (Rng::new(9), Rng::new(9));
            let mut buf = Vec::new();
            for _ in 0..500 {
                buf.clear();
                buf.extend((0..n).map(|_| values[r2.below(n)]));
                assert_eq!(
                    counted.median(&mut r1),
                    median_in_place(&mut buf),
                    "n = {n}"
                );
            }
        }
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
    fn staged_interval_stops_early_when_clear_and_runs_to_the_end_when_not() {
        let a = noisy(20.0, 30, 1);
        let b = noisy(25.0, 30, 2);
        let full = bootstrap_ratio_ci(&a, &b, DEFAULT_RESAMPLES, 0.95);
        let s = adaptive_ratio_ci(&a, &b, DEFAULT_RESAMPLES, 0.95, false);
        assert_eq!(s.resamples, FIRST_STAGE_RESAMPLES);
        assert_eq!(s.lo > 1.0, full.0 > 1.0);
        assert!((s.lo - full.0).abs() < 0.01 && (s.hi - full.1).abs() < 0.01);
        // Shifts that put the lower end near 1 need more stages; whatever a case stops at, its
        // interval is the plain bootstrap's with as many resamples (the same stream).
        let c = noisy(20.0, 30, 3);
        let mut staged = 0;
        for step in 0..40 {
            let shifted = Sample::new(
                c.values()
                    .iter()
                    .map(|v| v * (1.0 + step as f64 * 0.001))
                    .collect(),
            )
            .expect("finite");
            let s = adaptive_ratio_ci(&c, &shifted, DEFAULT_RESAMPLES, 0.95, false);
            assert_eq!(
                (s.lo, s.hi),
                bootstrap_ratio_ci(&c, &shifted, s.resamples, 0.95)
            );
            staged += usize::from(s.resamples > FIRST_STAGE_RESAMPLES);
        }
        assert!(staged > 0, "no shift needed a second stage");
        // A verdict that does not read the interval: one stage.
        let s = adaptive_ratio_ci(&c, &c, DEFAULT_RESAMPLES, 0.95, true);
        assert_eq!(s.resamples, FIRST_STAGE_RESAMPLES);
    }

    /// The tails read the same order statistics a full sort gives, ties and NaN included.
    #[test]
    fn tails_read_what_a_full_sort_reads() {
        let mut r = Rng::new(11);
        let mut finite = Vec::new();
        for n in [1usize, 2, 5, 39, 40, 41, 200, 1000, 1999] {
            // Values with many ties (20 levels) and a few NaN.
            let ratios: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 97 == 13 {
                        f64::NAN
                    } else {
                        0.9 + (r.below(20) as f64) * 0.01
                    }
                })
                .collect();
            let mut sorted: Vec<f64> = ratios.iter().copied().filter(|v| v.is_finite()).collect();
            sorted.sort_by(f64::total_cmp);
            for alpha in [0.025, 0.005, 0.25, 0.5] {
                let t = Tails::of(&ratios, &mut finite, alpha).expect("finite ratios");
                for q in [alpha, 1.0 - alpha] {
                    assert_eq!(t.quantile(q), quantile_of_sorted(&sorted, q), "n {n} q {q}");
                    let (a, b) = band(sorted.len(), q);
                    assert_eq!((t.v[a], t.v[b]), (sorted[a], sorted[b]), "n {n} q {q}");
                }
            }
        }
        assert!(Tails::of(&[f64::NAN], &mut finite, 0.025).is_none());
    }

    #[test]
    fn median_difference_ci_contains_the_shift_and_zero_only_without_one() {
        let a = noisy(20.0, 40, 6);
        let shifted = Sample::new(a.values().iter().map(|v| v + 3.0).collect()).expect("finite");
        let (lo, hi) = bootstrap_median_diff_ci(&a, &shifted, 4000, 0.95);
        assert!(lo < 3.0 && 3.0 < hi && lo > 2.0 && hi < 4.0, "({lo}, {hi})");
        let b = noisy(20.0, 40, 7);
        let (lo, hi) = bootstrap_median_diff_ci(&a, &b, 4000, 0.95);
        assert!(lo < 0.0 && 0.0 < hi, "({lo}, {hi})");
    }

    #[test]
    fn median_ci_brackets_median() {
        let a = noisy(50.0, 25, 5);
        let (lo, hi) = bootstrap_median_ci(&a, 5000, 0.95);
        assert!(lo <= a.median() && a.median() <= hi);
    }
}
