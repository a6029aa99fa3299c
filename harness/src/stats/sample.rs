//! [`Sample`]: a non-empty set of finite values, checked once at construction.

/// Scale that turns a raw MAD into a consistent estimate of the standard deviation for normally
/// distributed data.
pub const MAD_SCALE: f64 = 1.4826;
/// A value is flagged as an outlier when it lies more than this many scaled MADs from the median.
pub const OUTLIER_MADS: f64 = 3.0;

/// Why a [`Sample`] could not be built; the text is one sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SampleError(pub String);

/// A non-empty set of finite measurements. Keeps the values in the order they were taken and a
/// sorted copy for order statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    values: Vec<f64>,
    sorted: Vec<f64>,
}

impl Sample {
    /// Builds a sample; rejects an empty set and any NaN or infinite value.
    pub fn new(values: Vec<f64>) -> Result<Sample, SampleError> {
        if values.is_empty() {
            return Err(SampleError(
                "a sample needs at least one value, and this one is empty".into(),
            ));
        }
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(SampleError(format!(
                "value {} of the sample is {v}, and only finite numbers can be summarised",
                i + 1
            )));
        }
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        Ok(Sample { values, sorted })
    }

    /// The values in the order they were taken.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The values in ascending order.
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a `Sample` is never empty. Present for API symmetry with slices.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn min(&self) -> f64 {
        self.sorted[0]
    }

    pub fn max(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }

    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// The middle value; for an even count, the mean of the two middle values.
    pub fn median(&self) -> f64 {
        median_of_sorted(&self.sorted)
    }

    /// The `q`-quantile (`q` clamped to 0..=1) by linear interpolation between the closest ranks
    /// (Hyndman & Fan type 7, the default of R and NumPy): with `h = (n - 1) q`, the value is
    /// `x[⌊h⌋] + (h - ⌊h⌋) (x[⌊h⌋ + 1] - x[⌊h⌋])` over the sorted values.
    pub fn quantile(&self, q: f64) -> f64 {
        quantile_of_sorted(&self.sorted, q)
    }

    /// The raw median absolute deviation from the median (not scaled by [`MAD_SCALE`]).
    pub fn mad(&self) -> f64 {
        let m = self.median();
        let mut dev: Vec<f64> = self.sorted.iter().map(|v| (v - m).abs()).collect();
        dev.sort_by(f64::total_cmp);
        median_of_sorted(&dev)
    }

    /// MAD / median: a robust relative spread (0.01 = 1%). Zero when the median is zero.
    pub fn relative_spread(&self) -> f64 {
        let m = self.median();
        if m == 0.0 { 0.0 } else { self.mad() / m.abs() }
    }

    /// One flag per value, in the original order: true when the value lies more than
    /// `3 × 1.4826 × MAD` from the median. Values are flagged, never dropped.
    ///
    /// When the MAD is zero (more than half the values are equal) there is no scale to judge by,
    /// and nothing is flagged: this is the one rule for the CSV's `outliers` column, the fixtures
    /// and compare (the CSV has always written 0 there).
    pub fn outlier_flags(&self) -> Vec<bool> {
        let m = self.median();
        let mad = self.mad();
        if mad == 0.0 {
            return vec![false; self.values.len()];
        }
        let limit = OUTLIER_MADS * MAD_SCALE * mad;
        self.values.iter().map(|v| (v - m).abs() > limit).collect()
    }

    pub fn outlier_count(&self) -> usize {
        self.outlier_flags().into_iter().filter(|f| *f).count()
    }
}

/// Median, min, max, relative spread and outlier count of a set of measurements; `None` when
/// the set is empty or holds a value that is not finite. This is what the CSV row carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// MAD / median (0.01 = 1%).
    pub spread: f64,
    pub outliers: usize,
}

/// [`Summary`] of a slice of measurements.
pub fn summarize(v: &[f64]) -> Option<Summary> {
    let s = Sample::new(v.to_vec()).ok()?;
    Some(Summary {
        median: s.median(),
        min: s.min(),
        max: s.max(),
        spread: s.relative_spread(),
        outliers: s.outlier_count(),
    })
}

/// Median of a slice of measurements (`None` when empty or not all finite).
pub fn median(v: &[f64]) -> Option<f64> {
    Sample::new(v.to_vec()).ok().map(|s| s.median())
}

/// MAD / median of a slice (`None` when empty or not all finite): the stopping rule's spread.
pub fn relative_spread(v: &[f64]) -> Option<f64> {
    Sample::new(v.to_vec()).ok().map(|s| s.relative_spread())
}

pub(crate) fn median_of_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

pub(crate) fn quantile_of_sorted(s: &[f64], q: f64) -> f64 {
    let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
    let h = (s.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

/// Median of an unsorted buffer, reordering it (O(n) with `select_nth_unstable`): the
/// reference the bootstrap's counted resample medians are tested against.
#[cfg(test)]
pub(crate) fn median_in_place(buf: &mut [f64]) -> f64 {
    let n = buf.len();
    let cmp = |a: &f64, b: &f64| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal);
    let (left, mid, _) = buf.select_nth_unstable_by(n / 2, cmp);
    let upper = *mid;
    if n % 2 == 1 {
        upper
    } else {
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// The sample of `v`, for tests that know their values are valid.
#[cfg(test)]
pub(crate) fn sample_of(v: &[f64]) -> Sample {
    Sample::new(v.to_vec()).expect("a test sample is non-empty and finite")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_and_non_finite() {
        assert!(
            Sample::new(vec![])
                .expect_err("rejected")
                .0
                .contains("empty")
        );
        let e = Sample::new(vec![1.0, f64::NAN]).expect_err("rejected");
        assert!(e.0.contains("value 2"), "{e}");
        assert!(Sample::new(vec![f64::INFINITY]).is_err());
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(sample_of(&[3.0, 1.0, 2.0]).median(), 2.0);
        assert_eq!(sample_of(&[4.0, 1.0, 3.0, 2.0]).median(), 2.5);
        assert_eq!(sample_of(&[7.0]).median(), 7.0);
        let mut b = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(median_in_place(&mut b), 2.5);
        let mut b = vec![5.0, 1.0, 3.0];
        assert_eq!(median_in_place(&mut b), 3.0);
    }

    #[test]
    fn min_max_mean_keep_order() {
        let x = sample_of(&[2.0, 9.0, 1.0]);
        assert_eq!((x.min(), x.max(), x.mean()), (1.0, 9.0, 4.0));
        assert_eq!(x.values(), &[2.0, 9.0, 1.0]);
        assert_eq!(x.sorted(), &[1.0, 2.0, 9.0]);
    }

    #[test]
    fn mad_by_hand() {
        // median 3; |dev| = 2,1,0,1,6,3,1 → sorted 0,1,1,1,2,3,6 → MAD 1.
        let x = sample_of(&[1.0, 2.0, 3.0, 4.0, 9.0, 6.0, 2.0]);
        assert_eq!(x.median(), 3.0);
        assert_eq!(x.mad(), 1.0);
        assert!((x.relative_spread() - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn quantiles_interpolate_linearly() {
        let x = sample_of(&[10.0, 20.0, 30.0, 40.0, 50.0]);
        assert_eq!(x.quantile(0.0), 10.0);
        assert_eq!(x.quantile(1.0), 50.0);
        assert_eq!(x.quantile(0.5), 30.0);
        assert_eq!(x.quantile(0.25), 20.0);
        assert!((x.quantile(0.1) - 14.0).abs() < 1e-12);
        assert!((x.quantile(0.975) - 49.0).abs() < 1e-12);
        assert_eq!(x.quantile(2.0), 50.0);
    }

    #[test]
    fn planted_outlier_is_flagged_not_dropped() {
        let v = vec![10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 30.0, 10.05];
        let x = sample_of(&v);
        let flags = x.outlier_flags();
        assert_eq!(flags.len(), v.len());
        assert_eq!(
            flags,
            [false, false, false, false, false, false, true, false]
        );
        assert_eq!(x.outlier_count(), 1);
        assert_eq!(x.len(), 8);
    }

    #[test]
    fn zero_mad_flags_nothing() {
        let x = sample_of(&[10.0, 10.0, 10.0, 10.0, 30.0]);
        assert_eq!(x.mad(), 0.0);
        assert_eq!(x.outlier_count(), 0);
    }

    #[test]
    fn slice_helpers() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(relative_spread(&[10.0, 10.0, 11.0, 9.0, 10.0]), Some(0.0));
        let sp = relative_spread(&[10.0, 12.0, 8.0]).unwrap();
        assert!((sp - 0.2).abs() < 1e-12);
        let sum = summarize(&[2.0, 9.0, 1.0]).unwrap();
        assert_eq!((sum.median, sum.min, sum.max), (2.0, 1.0, 9.0));
        assert!(summarize(&[]).is_none());
    }
}
