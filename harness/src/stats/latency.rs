//! Latency statistics: the order statistics a latency row carries ([`Percentiles`]) and the
//! size-curve fit `T(V) = a + V / b` over the medians of several sizes ([`SizeFit`]).

use super::Sample;

/// The order statistics of a set of latencies, in the unit of the values given.
///
/// Percentiles are type-7 quantiles ([`Sample::quantile`]): with 1000 samples, p99 lies between
/// the 990th and the 991st smallest value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// [`Percentiles`] of a slice; `None` when it is empty or holds a value that is not finite.
pub fn percentiles(v: &[f64]) -> Option<Percentiles> {
    let s = Sample::new(v.to_vec()).ok()?;
    Some(Percentiles {
        min: s.min(),
        p50: s.quantile(0.5),
        p90: s.quantile(0.9),
        p99: s.quantile(0.99),
        max: s.max(),
    })
}

/// One point of a size curve: bytes per transfer and the median time of one transfer (µs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizePoint {
    pub bytes: u64,
    pub median_us: f64,
}

/// The fit `T(V) = a + V / b` of a size curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SizeFit {
    /// `a`: the fixed cost of one transfer, µs (what a zero-byte transfer would take).
    pub fixed_us: f64,
    /// `b`: the bandwidth the large sizes approach, GB/s (1e9 B/s).
    pub bandwidth_gbs: f64,
    /// Sizes (points) the fit used.
    pub points: usize,
}

impl SizeFit {
    /// `a · b`, bytes: the size at which a transfer reaches half of `b` (the fixed cost and the
    /// streaming time are equal there). `None` when the fixed cost came out negative.
    pub fn half_bandwidth_bytes(&self) -> Option<f64> {
        // µs × GB/s = 1e-6 s × 1e9 B/s = 1e3 B.
        (self.fixed_us > 0.0).then_some(self.fixed_us * self.bandwidth_gbs * 1e3)
    }

    /// The time (µs) the fit predicts for `bytes`.
    pub fn predict_us(&self, bytes: u64) -> f64 {
        self.fixed_us + bytes as f64 / (self.bandwidth_gbs * 1e3)
    }
}

/// Why a size curve could not be fitted; the text is one sentence for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error(
        "a size curve needs at least two different sizes with a finite, positive median time; this one has {0}"
    )]
    TooFewSizes(usize),
    #[error(
        "the median times do not grow with the size, so no bandwidth can be fitted (slope {slope_us_per_byte} µs per byte)"
    )]
    NoGrowth { slope_us_per_byte: f64 },
}

/// Least-squares fit of `T(V) = a + V / b` to the points, weighting each by `1 / T²` so that
/// every size counts by its relative error: a plain fit over sizes from 4 B to 1 GiB would let
/// the milliseconds of the largest copies decide the microseconds of `a`. Points whose time is
/// not finite and positive are left out.
pub fn fit_size_curve(points: &[SizePoint]) -> Result<SizeFit, FitError> {
    let usable: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.median_us.is_finite() && p.median_us > 0.0)
        .map(|p| (p.bytes as f64, p.median_us))
        .collect();
    let mut sizes: Vec<f64> = usable.iter().map(|(v, _)| *v).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if sizes.len() < 2 {
        return Err(FitError::TooFewSizes(sizes.len()));
    }
    // Weighted normal equations for t = a + c·v with weights w = 1/t².
    let (mut sw, mut swv, mut swt, mut swvv, mut swvt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(v, t) in &usable {
        let w = 1.0 / (t * t);
        sw += w;
        swv += w * v;
        swt += w * t;
        swvv += w * v * v;
        swvt += w * v * t;
    }
    let det = sw * swvv - swv * swv;
    let c = (sw * swvt - swv * swt) / det;
    let a = (swt - c * swv) / sw;
    if !(c.is_finite() && c > 0.0 && a.is_finite()) {
        return Err(FitError::NoGrowth {
            slope_us_per_byte: c,
        });
    }
    Ok(SizeFit {
        fixed_us: a,
        // c µs per byte → 1/c bytes per µs = 1/c × 1e6 B/s = 1e-3 / c GB/s.
        bandwidth_gbs: 1e-3 / c,
        points: usable.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SYNTHETIC points on `T = a + V / b` exactly.
    fn curve(a_us: f64, b_gbs: f64, sizes: &[u64]) -> Vec<SizePoint> {
        sizes
            .iter()
            .map(|&bytes| SizePoint {
                bytes,
                median_us: a_us + bytes as f64 / (b_gbs * 1e3),
            })
            .collect()
    }

    fn sweep() -> Vec<u64> {
        (2..=30).step_by(2).map(|e| 1u64 << e).collect()
    }

    fn close(x: f64, want: f64, rel: f64) -> bool {
        ((x - want) / want).abs() <= rel
    }

    #[test]
    fn percentiles_of_one_to_a_thousand() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        let p = percentiles(&v).expect("finite");
        assert_eq!(p.min, 1.0);
        assert_eq!(p.p50, 500.5);
        assert!((p.p90 - 900.1).abs() < 1e-9, "{}", p.p90);
        assert!((p.p99 - 990.01).abs() < 1e-9, "{}", p.p99);
        assert_eq!(p.max, 1000.0);
    }

    #[test]
    fn percentiles_do_not_depend_on_order_and_see_a_tail() {
        // 990 fast samples and 10 slow ones: p50 and p90 stay fast, p99 sees the tail.
        let mut v = vec![5.0; 990];
        v.extend([500.0; 10]);
        v.reverse();
        let p = percentiles(&v).expect("finite");
        assert_eq!((p.min, p.p50, p.p90), (5.0, 5.0, 5.0));
        assert!(p.p99 > 5.0 && p.p99 < 500.0, "{}", p.p99);
        assert_eq!(p.max, 500.0);
        assert!(percentiles(&[]).is_none());
        assert!(percentiles(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn fit_recovers_a_known_fixed_cost_and_bandwidth() {
        for (a, b) in [(8.0, 25.0), (2.5, 55.0), (40.0, 3.0)] {
            let fit = fit_size_curve(&curve(a, b, &sweep())).expect("fits");
            assert!(close(fit.fixed_us, a, 1e-9), "a {} vs {a}", fit.fixed_us);
            assert!(
                close(fit.bandwidth_gbs, b, 1e-9),
                "b {} vs {b}",
                fit.bandwidth_gbs
            );
            let half = fit.half_bandwidth_bytes().expect("positive a");
            assert!(close(half, a * b * 1e3, 1e-9), "a·b {half}");
            assert!(close(
                fit.predict_us(1 << 20),
                a + (1 << 20) as f64 / (b * 1e3),
                1e-9
            ));
        }
    }

    #[test]
    fn fit_keeps_the_fixed_cost_under_relative_noise() {
        // SYNTHETIC: ±3% alternating noise on every point; a plain least-squares fit would let
        // the 1 GiB point's 3% (≈ 1 ms) swamp a = 10 µs.
        let mut pts = curve(10.0, 20.0, &sweep());
        for (i, p) in pts.iter_mut().enumerate() {
            p.median_us *= if i % 2 == 0 { 1.03 } else { 0.97 };
        }
        let fit = fit_size_curve(&pts).expect("fits");
        assert!(close(fit.fixed_us, 10.0, 0.1), "a {}", fit.fixed_us);
        assert!(
            close(fit.bandwidth_gbs, 20.0, 0.1),
            "b {}",
            fit.bandwidth_gbs
        );
    }

    #[test]
    fn fit_refuses_one_size_and_a_flat_curve() {
        let one = curve(5.0, 10.0, &[4096, 4096]);
        assert_eq!(fit_size_curve(&one), Err(FitError::TooFewSizes(1)));
        let flat: Vec<SizePoint> = [4u64, 64, 1024]
            .iter()
            .map(|&bytes| SizePoint {
                bytes,
                median_us: 7.0,
            })
            .collect();
        assert!(matches!(
            fit_size_curve(&flat),
            Err(FitError::NoGrowth { .. })
        ));
        let bad = vec![
            SizePoint {
                bytes: 4,
                median_us: f64::NAN,
            },
            SizePoint {
                bytes: 8,
                median_us: 3.0,
            },
        ];
        assert_eq!(fit_size_curve(&bad), Err(FitError::TooFewSizes(1)));
    }
}
