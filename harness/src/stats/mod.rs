//! A small statistics library: a checked [`Sample`], outlier flags (never dropped), a seeded
//! bootstrap, change detection that needs both significance and a noise threshold, latency
//! percentiles and the size-curve fit `T(V) = a + V / b`.
//!
//! Everything here is deterministic: the bootstrap uses a fixed seed, so the same inputs give the
//! same confidence interval in every report.
//!
//! This is the only statistics code: the measurement stopping rule (`measure`), the CSV rows
//! (`Row::from_outcome` in `run/outcome.rs`), the fixtures and `compare` all use it.

mod bootstrap;
mod change;
mod latency;
mod sample;

pub use bootstrap::{
    DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, ENDPOINT_BAND_Z, FIRST_STAGE_RESAMPLES, Rng, SEED,
    StagedInterval, adaptive_ratio_ci, bootstrap_median_ci, bootstrap_median_diff_ci,
    bootstrap_ratio_ci,
};
pub use change::{Comparison, Verdict, VerdictRule, compare};
pub use latency::{FitError, Percentiles, SizeFit, SizePoint, fit_size_curve, percentiles};
pub use sample::{
    MAD_SCALE, OUTLIER_MADS, Sample, SampleError, Summary, median, relative_spread, summarize,
};
