//! What a sample is: the times of one batch ([`SampleTimes`]), what one transfer of it moves
//! ([`Moves`], what bandwidth is computed from), what it runs on ([`Gpu`]), and the trait the
//! sampling loop drives ([`Measurable`]; every transfer strategy extends it).

use crate::cuda::{CudaError, Gate, Kernels};
use crate::scenario::Lane;

/// What a sample runs on: the GPU's kernels (the work, and the spin kernel that holds a stream)
/// and the spin gate that holds every stream of a batch until it is queued.
pub struct Gpu<'a> {
    pub kernels: &'a Kernels,
    pub gate: &'a Gate,
}

/// One sample: per-lane time (ms) and host wall time (ms) for `batch` transfers.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleTimes {
    /// Time used for bandwidth, per lane (event time when gated, else wall time).
    pub lanes: Vec<(Lane, f64)>,
    pub wall_ms: f64,
    /// Event time per lane (for the record, even when wall time is the headline).
    pub event_ms: Vec<(Lane, f64)>,
    /// Registration + unregistration time inside the sample (register-per-copy), ms.
    pub register_ms: Option<f64>,
    pub unregister_ms: Option<f64>,
    /// A file load's stages (the file-load modes); `None` for every other sample.
    pub load: Option<LoadStages>,
}

/// Where a file load's time went, ms of the host clock (`None`: the path has no such stage, or
/// cannot tell it apart from another), and the page cache it started from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LoadStages {
    /// Bytes of the file in the page cache when the load started (`None`: not counted).
    pub resident_before: Option<u64>,
    /// Bytes of the file in the page cache once the load was done: the page cache it holds.
    pub resident_after: Option<u64>,
    /// Inside `read`/`pread`: the disk or the page cache, and the first touch of a fresh
    /// destination buffer.
    pub read_ms: Option<f64>,
    /// Copies out of a file mapping: page faults (disk reads when cold), the driver's staging of
    /// pageable memory and the DMA, which one synchronous copy call does together.
    pub fault_ms: Option<f64>,
    /// Registering a mapping for the GPU (`load-register`).
    pub pin_ms: Option<f64>,
    /// The copies to the device that follow the reads (a ring's copies overlap its reads: the
    /// time the host waited for them).
    pub dma_ms: Option<f64>,
    /// `load-cufile`: whether cuFile ran direct or in compatibility mode.
    pub cufile_mode: Option<crate::scenario::CufileMode>,
}

impl SampleTimes {
    /// The one-lane sample of an operation timed by the host clock (`host_ms`, the headline),
    /// with the event time of the operation when one was recorded.
    pub fn host_timed(lane: Lane, host_ms: f64, event_ms: Option<f64>) -> SampleTimes {
        SampleTimes {
            lanes: vec![(lane, host_ms)],
            wall_ms: host_ms,
            event_ms: event_ms.map(|e| (lane, e)).into_iter().collect(),
            register_ms: None,
            unregister_ms: None,
            load: None,
        }
    }
}

/// What one transfer moves: `size` bytes one way, or `size` bytes each way at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Moves {
    OneWay(Lane, u64),
    BothWays(u64),
}

impl Moves {
    /// `size` bytes host-to-device (`h2d`) or device-to-host.
    pub fn one_way(h2d: bool, size: usize) -> Self {
        Moves::OneWay(Lane::one_way(h2d), size as u64)
    }
    /// The lanes reported: the one lane, or h2d + d2h + sum.
    pub fn lanes(self) -> Vec<Lane> {
        match self {
            Moves::OneWay(lane, _) => vec![lane],
            Moves::BothWays(_) => vec![Lane::H2d, Lane::D2h, Lane::Sum],
        }
    }
    /// Bytes moved per transfer on `lane` (the sum lane counts both directions).
    pub fn bytes(self, lane: Lane) -> u64 {
        match (self, lane) {
            (Moves::OneWay(_, size), _) => size,
            (Moves::BothWays(size), Lane::Sum) => 2 * size,
            (Moves::BothWays(size), _) => size,
        }
    }
}

/// What the sampling loop ([`super::run`]) drives: a transfer, allocated and ready, that runs and
/// times a batch of itself on request. The loop watches the first lane of [`Measurable::moves`]
/// for the spread target.
pub trait Measurable {
    /// What one transfer moves.
    fn moves(&self) -> Moves;
    /// Runs `batch` transfers and returns their times, taken with the clocks of
    /// [`crate::measure`] (the event timer, the host stopwatch).
    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError>;
    /// Fills in what the samples left to be taken once sampling is over: `samples` are the ones
    /// kept, oldest first. Latency samples take their device view (event-timed operations) here,
    /// so that nothing but the timed operations runs between samples.
    fn complete(&mut self, _gpu: &Gpu, _samples: &mut [SampleTimes]) -> Result<(), CudaError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_reports_three_lanes_and_the_sum_counts_both_directions() {
        let both = Moves::BothWays(1 << 20);
        assert_eq!(both.lanes(), vec![Lane::H2d, Lane::D2h, Lane::Sum]);
        assert_eq!(both.bytes(Lane::D2h), 1 << 20);
        assert_eq!(both.bytes(Lane::Sum), 2 << 20);
        let one = Moves::one_way(false, 4096);
        assert_eq!(one.lanes(), vec![Lane::D2h]);
        assert_eq!(one.bytes(Lane::D2h), 4096);
    }

    #[test]
    fn a_host_timed_sample_heads_with_the_host_time_and_keeps_the_event_time() {
        let s = SampleTimes::host_timed(Lane::H2d, 0.007, Some(0.005));
        assert_eq!(s.lanes, vec![(Lane::H2d, 0.007)]);
        assert_eq!(s.wall_ms, 0.007);
        assert_eq!(s.event_ms, vec![(Lane::H2d, 0.005)]);
        assert!(
            SampleTimes::host_timed(Lane::D2h, 1.0, None)
                .event_ms
                .is_empty()
        );
    }
}
