//! Sampling: warm-up, then samples until the spread target, the sample cap or the time limit.
//! Every raw sample is kept; nothing is dropped.

mod lockstep;
pub use lockstep::{Lockstep, Vote};

use crate::cuda::CudaError;
use crate::scenario::Lane;
use crate::scenario::Measure;
use crate::strategy::{Gpu, SampleTimes, Transfer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// All samples of one case.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub batch: u32,
    pub samples: Vec<SampleTimes>,
    /// Why sampling stopped: `spread`, `max_samples`, `time_limit`, `interrupted`.
    pub stopped_by: String,
}

impl Measured {
    /// Bandwidth samples (GB/s) of a lane, in sample order.
    pub fn bandwidth(&self, lane: Lane, bytes_per_transfer: u64) -> Vec<f64> {
        let bytes = bytes_per_transfer as f64 * f64::from(self.batch);
        self.samples
            .iter()
            .filter_map(|s| s.lanes.iter().find(|(l, _)| *l == lane))
            .map(|(_, ms)| bytes / (ms / 1e3) / crate::units::GB)
            .collect()
    }
    /// Per-transfer times (ms) of a lane: the time bandwidth is computed from.
    pub fn times(&self, lane: Lane) -> Vec<f64> {
        let per = f64::from(self.batch.max(1));
        self.samples
            .iter()
            .filter_map(|s| s.lanes.iter().find(|(l, _)| *l == lane))
            .map(|(_, ms)| ms / per)
            .collect()
    }
    pub fn event_times(&self, lane: Lane) -> Vec<f64> {
        let per = f64::from(self.batch.max(1));
        self.samples
            .iter()
            .filter_map(|s| s.event_ms.iter().find(|(l, _)| *l == lane))
            .map(|(_, ms)| ms / per)
            .collect()
    }
    pub fn wall_times(&self) -> Vec<f64> {
        let per = f64::from(self.batch.max(1));
        self.samples.iter().map(|s| s.wall_ms / per).collect()
    }
}

/// Runs warm-up transfers, then samples `transfer` until the stopping rule says enough.
/// On an error the samples so far are returned with it.
pub fn run(
    transfer: &mut dyn Transfer,
    gpu: &Gpu,
    m: &Measure,
    batch: u32,
    stop: &AtomicBool,
) -> Result<Measured, (CudaError, Measured)> {
    let mut out = Measured {
        batch,
        ..Default::default()
    };
    for _ in 0..m.warmup {
        if let Err(e) = transfer.sample(gpu, batch) {
            return Err((e, out));
        }
    }
    let lane = transfer.lanes()[0];
    let bytes = transfer.bytes(lane);
    let started = Instant::now();
    loop {
        if stop.load(Ordering::SeqCst) {
            out.stopped_by = "interrupted".into();
            break;
        }
        match transfer.sample(gpu, batch) {
            Ok(s) => out.samples.push(s),
            Err(e) => return Err((e, out)),
        }
        let n = out.samples.len() as u32;
        if n < m.min_samples {
            continue;
        }
        if n >= m.max_samples {
            out.stopped_by = "max_samples".into();
            break;
        }
        if crate::stats::relative_spread(&out.bandwidth(lane, bytes))
            .is_some_and(|s| s <= m.target_spread)
        {
            out.stopped_by = "spread".into();
            break;
        }
        if started.elapsed() >= m.time_limit {
            out.stopped_by = "time_limit".into();
            break;
        }
    }
    Ok(out)
}
