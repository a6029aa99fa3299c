//! The latency finding of one run's rows, computed once: per direction the smallest pinned copy,
//! what pageable memory changes at that size (a [`Difference`] with its interval and verdict) and
//! what the size curve determines ([`FitFinding`]: the fit with its bandwidth, or the fixed cost
//! alone with the reason no bandwidth is given); the copy call, the launch and its waits, the
//! launch rate and the zero-copy read. The console's plain words, the report page's answer, the
//! size curve's legend and the platform table render this value; none phrases it on its own.

use super::{copies, fit_rows};
use crate::results::{Lane, Row, Samples};
use crate::scenario::{Engine, HostKind, Mode, Wait};
use crate::stats::bootstrap_median_diff_ci;
use crate::stats::{DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Sample, SizeFit};
use serde::Serialize;

/// Distinct sizes a fit `T(V) = a + V / b` needs before its bandwidth `b` is stated: two sizes
/// always lie on some line, so only a third can show that the times follow one.
pub const MIN_FIT_SIZES: usize = 3;

/// The smallest latency difference stated as a fact, µs. The host-observed latency of one H200
/// VM moves between levels about 1 µs apart from one process to the next and between minutes
/// (docs/latency.md): the same 4-byte pinned H2D copy read 5.63 µs in one published run and
/// 6.33 µs in another four minutes later. Cases of one run are measured one after another, not
/// side by side, so a difference below this is within that drift, however narrow its interval.
pub const NOISE_FLOOR_US: f64 = 1.0;

/// The smallest latency difference stated as a fact, as a share of the base median: what the
/// floor becomes for copies long enough that 1 µs is less than 2% of them.
pub const NOISE_FLOOR_SHARE: f64 = 0.02;

/// A time one row measured: its size and host-clock median (and p99 where kept), µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timed {
    pub bytes: u64,
    pub p50_us: f64,
    pub p99_us: Option<f64>,
}

impl Timed {
    fn of(r: &Row) -> Option<Timed> {
        Some(Timed {
            bytes: r.size_bytes,
            p50_us: r.lat_p50_us?,
            p99_us: r.lat_p99_us,
        })
    }
}

/// What a [`Difference`] lets a report say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DiffVerdict {
    /// The interval leaves out 0 and the difference is at least the noise floor.
    Differs,
    /// The difference is below the noise floor: no difference within noise.
    BelowFloor,
    /// The interval holds 0: no difference within noise.
    IntervalHoldsZero,
    /// At least the noise floor, but no per-sample times to draw an interval from.
    NoInterval,
}

/// The difference of two medians, `other − base`, with the bootstrap interval of the samples
/// where they were read, and what it lets a report say.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    /// The base's median, µs.
    pub base_us: f64,
    /// The other's median, µs.
    pub other_us: f64,
    /// The [`DEFAULT_CONFIDENCE`] percentile-bootstrap interval of `other − base`, µs, from the
    /// per-sample times; `None` when either row has none.
    pub interval_us: Option<(f64, f64)>,
    /// The smallest difference stated as a fact here: [`NOISE_FLOOR_US`] or
    /// [`NOISE_FLOOR_SHARE`] of the base, whichever is larger.
    pub floor_us: f64,
    pub verdict: DiffVerdict,
}

impl Difference {
    /// `other − base` of two time rows, its interval from `samples`.
    pub fn of(base: &Row, other: &Row, samples: &Samples) -> Option<Difference> {
        let (base_us, other_us) = (base.lat_p50_us?, other.lat_p50_us?);
        let interval_us = time_sample(base, samples)
            .zip(time_sample(other, samples))
            .map(|(b, o)| bootstrap_median_diff_ci(&b, &o, DEFAULT_RESAMPLES, DEFAULT_CONFIDENCE));
        Some(Difference::judged(base_us, other_us, interval_us))
    }

    /// The difference of two medians and its verdict against the noise floor.
    pub fn judged(base_us: f64, other_us: f64, interval_us: Option<(f64, f64)>) -> Difference {
        let floor_us = NOISE_FLOOR_US.max(NOISE_FLOOR_SHARE * base_us.abs());
        let d = other_us - base_us;
        let verdict = match interval_us {
            _ if d.abs() < floor_us => DiffVerdict::BelowFloor,
            Some((lo, hi)) if lo <= 0.0 && hi >= 0.0 => DiffVerdict::IntervalHoldsZero,
            Some(_) => DiffVerdict::Differs,
            None => DiffVerdict::NoInterval,
        };
        Difference {
            base_us,
            other_us,
            interval_us,
            floor_us,
            verdict,
        }
    }

    /// `other − base`, µs.
    pub fn delta_us(&self) -> f64 {
        self.other_us - self.base_us
    }

    /// True when the report states the difference as a fact (with its interval or saying it has
    /// none); false for "no difference within noise".
    pub fn is_stated(&self) -> bool {
        matches!(self.verdict, DiffVerdict::Differs | DiffVerdict::NoInterval)
    }
}

/// The host-clock time of each sample of a row, µs, from its bandwidth samples (size / rate);
/// `None` when the row kept none (an empty kernel's rate is 0).
fn time_sample(r: &Row, samples: &Samples) -> Option<Sample> {
    let bytes = r.size_bytes as f64;
    let times: Vec<f64> = samples
        .bandwidth(&r.case_key, r.lane)
        .iter()
        .map(|gbs| bytes / (gbs * 1e3))
        .collect();
    if times.is_empty() || !times.iter().all(|t| t.is_finite() && *t > 0.0) {
        return None;
    }
    Sample::new(times).ok()
}

/// Why a size curve's fit gives no bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NoBandwidth {
    /// Distinct sizes with a measured median.
    pub sizes: usize,
    /// The largest of them, bytes.
    pub largest_bytes: u64,
    /// `n½ = a·b` of the fit over them, bytes; `None` without a fit or with `a ≤ 0`.
    pub half_bytes: Option<f64>,
}

/// What a size curve of copies determines.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum FitFinding {
    /// The fit over [`MIN_FIT_SIZES`] sizes or more, some of them past `n½ = a·b`: the fixed
    /// cost `a` and the bandwidth `b`.
    Bandwidth {
        fit: SizeFit,
        /// Sizes above `n½`.
        past_half: usize,
    },
    /// The fixed cost alone, bounded by the smallest size's median (what a copy of that size
    /// takes, its streaming time included), and why no bandwidth is given.
    FixedOnly { smallest: Timed, why: NoBandwidth },
}

impl FitFinding {
    /// The finding of the time rows of one series (one strategy and direction); `None` unless
    /// two sizes or more have a median time (one size is not a curve).
    pub fn of(rows: &[&Row]) -> Option<FitFinding> {
        let smallest = rows
            .iter()
            .filter_map(|r| Timed::of(r))
            .min_by_key(|t| t.bytes)?;
        let mut sizes: Vec<u64> = rows
            .iter()
            .filter(|r| r.lat_p50_us.is_some_and(|t| t.is_finite() && t > 0.0))
            .map(|r| r.size_bytes)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() < 2 {
            return None;
        }
        let fit = fit_rows(rows.iter().copied());
        let half_bytes = fit.and_then(|f| f.half_bandwidth_bytes());
        let past_half = half_bytes.map_or(0, |h| sizes.iter().filter(|&&s| s as f64 > h).count());
        Some(match fit {
            Some(fit) if sizes.len() >= MIN_FIT_SIZES && past_half > 0 => {
                FitFinding::Bandwidth { fit, past_half }
            }
            _ => FitFinding::FixedOnly {
                smallest,
                why: NoBandwidth {
                    sizes: sizes.len(),
                    largest_bytes: sizes.last().copied().unwrap_or(smallest.bytes),
                    half_bytes,
                },
            },
        })
    }

    /// The fit, when it determines a bandwidth.
    pub fn bandwidth_fit(&self) -> Option<&SizeFit> {
        match self {
            FitFinding::Bandwidth { fit, .. } => Some(fit),
            FitFinding::FixedOnly { .. } => None,
        }
    }
}

/// One direction's copies: the smallest pinned copy, pageable memory at that size and the size
/// curve of the pinned copies (when they were measured at two sizes or more).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CopyFinding {
    pub lane: Lane,
    pub smallest: Timed,
    /// Pageable − pinned at the smallest size.
    pub pageable: Option<Difference>,
    /// The pinned copies' size curve, when they were measured at two sizes or more.
    pub fit: Option<FitFinding>,
}

/// An empty kernel launched and waited for with cuStreamSynchronize, and the launch call alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Launch {
    pub with_sync: Timed,
    pub call_alone_us: Option<f64>,
}

/// One footprint and order of the pointer chase: ns per dependent load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChaseLoad {
    /// In order (a 128-byte stride), or one random cycle.
    pub in_order: bool,
    pub bytes: u64,
    pub ns: f64,
}

/// The zero-copy read: the smallest footprint in order, and the slowest where it is another.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Chase {
    pub first: ChaseLoad,
    pub slowest: Option<ChaseLoad>,
}

/// The latency finding of one GPU's rows; each part present only when its rows finished.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyFinding {
    /// H2D, then D2H.
    pub copies: Vec<CopyFinding>,
    /// The copy call alone (pinned, H2D, nothing waiting on it).
    pub copy_call: Option<Timed>,
    pub launch: Option<Launch>,
    /// Blocking-sync context − spin context, an empty kernel each.
    pub blocking_over_spin: Option<Difference>,
    /// One launch of a batch launched back to back, µs.
    pub launch_rate_us: Option<f64>,
    pub chase: Option<Chase>,
}

impl LatencyFinding {
    /// The finding of `rows` (one GPU's: see [`Row::one_gpu_view`]), differences judged on the
    /// per-sample times in `samples`.
    pub fn of(rows: &[&Row], samples: &Samples) -> LatencyFinding {
        let copy_call = copies(rows, Mode::Enqueue, HostKind::Alloc, Lane::H2d)
            .first()
            .and_then(|r| Timed::of(r));
        let launch = empty(rows, Mode::Latency, Some(Wait::Stream)).and_then(|r| {
            Some(Launch {
                with_sync: Timed::of(r)?,
                call_alone_us: empty(rows, Mode::Enqueue, None).and_then(|c| c.lat_p50_us),
            })
        });
        let blocking_over_spin = empty(rows, Mode::Latency, Some(Wait::Spin))
            .zip(empty(rows, Mode::Latency, Some(Wait::Blocking)))
            .and_then(|(s, b)| Difference::of(s, b, samples));
        LatencyFinding {
            copies: [Lane::H2d, Lane::D2h]
                .into_iter()
                .filter_map(|lane| copy_finding(rows, lane, samples))
                .collect(),
            copy_call,
            launch,
            blocking_over_spin,
            launch_rate_us: empty(rows, Mode::Direct, None)
                .and_then(|r| r.time_median_ms)
                .map(|ms| ms * 1e3),
            chase: chase(rows),
        }
    }
}

fn copy_finding(rows: &[&Row], lane: Lane, samples: &Samples) -> Option<CopyFinding> {
    let pinned = copies(rows, Mode::Latency, HostKind::Alloc, lane);
    let first = *pinned.first()?;
    let pageable = copies(rows, Mode::Latency, HostKind::Pageable, lane)
        .into_iter()
        .find(|p| p.size_bytes == first.size_bytes)
        .and_then(|p| Difference::of(first, p, samples));
    Some(CopyFinding {
        lane,
        smallest: Timed::of(first)?,
        pageable,
        fit: FitFinding::of(&pinned),
    })
}

/// The first finished empty-kernel row of `mode`, and for `latency` rows of the wait.
fn empty<'r>(rows: &[&'r Row], mode: Mode, wait: Option<Wait>) -> Option<&'r Row> {
    rows.iter()
        .copied()
        .filter(|r| r.status.is_ok() && r.engine == Engine::Empty && r.mode == mode)
        .filter(|r| r.placement().is_none())
        .find(|r| wait.is_none() || r.wait == wait)
}

/// The pointer chase: the smallest footprint, in order first, and the slowest.
fn chase(rows: &[&Row]) -> Option<Chase> {
    let mut chases: Vec<ChaseLoad> = rows
        .iter()
        .filter(|r| r.status.is_ok() && r.engine.is_chase())
        .filter_map(|r| {
            Some(ChaseLoad {
                in_order: r.engine == Engine::Chase,
                bytes: r.size_bytes,
                ns: r.lat_p50_us? * 1e3,
            })
        })
        .collect();
    chases.sort_by_key(|c| (!c.in_order, c.bytes));
    let first = *chases.first()?;
    let slowest = chases
        .iter()
        .copied()
        .max_by(|a, b| a.ns.total_cmp(&b.ns))
        .filter(|w| (w.in_order, w.bytes) != (first.in_order, first.bytes));
    Some(Chase { first, slowest })
}

#[cfg(test)]
mod tests;
