//! Pinned churn (`mode = "churn"`): every sample is one cycle — allocate (or register) a host
//! buffer of `size`, wait `pause`, copy it (H2D into a cleared device buffer, or D2H into the
//! cleared host buffer), check every word, free the buffer. WSL2 users reported copies that
//! returned success after heavy pinned alloc/free churn and left the device buffer zero
//! (19 of 20 copies with a 5 ms pause); the row counts such copies:
//! `failed: data mismatch in k of N copies` ([`crate::results::Cause::WrongCopies`]).
//!
//! The copy is timed with events around `cuMemcpyAsync` through [`Timer`] (not gated: one copy per
//! sample, and the allocation before it is the point of the experiment).

use super::*;
use crate::measure::{Stopwatch, Streams, Timer};
use std::time::Duration;

/// What one cycle gave.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cycle {
    /// Copy time (events), ms.
    pub copy_ms: f64,
    /// Allocation (+ registration) to free, ms.
    pub wall_ms: f64,
    pub alloc_ms: f64,
    pub free_ms: f64,
    /// Words that differ from the pattern after the copy.
    pub bad_words: u64,
}

/// Counts copies and the copies whose data was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tally {
    pub copies: u32,
    pub bad_copies: u32,
    /// Wrong words of the first bad copy, for the record.
    pub first_bad_words: Option<u64>,
}

impl Tally {
    pub fn record(&mut self, c: &Cycle) {
        self.copies += 1;
        if c.bad_words > 0 {
            self.bad_copies += 1;
            self.first_bad_words.get_or_insert(c.bad_words);
        }
    }
    pub fn verified(&self, lane: Lane) -> Verified {
        if self.bad_copies == 0 {
            Verified::Yes
        } else {
            Verified::Copies {
                lane,
                bad_copies: self.bad_copies,
                copies: self.copies,
            }
        }
    }
}

/// One cycle's work, so the counting can be tested with a fake.
pub trait CycleOps {
    fn cycle(&mut self, index: u32) -> Result<Cycle, CudaError>;
}

/// Runs one cycle and counts it.
pub fn run_cycle(
    ops: &mut dyn CycleOps,
    index: u32,
    tally: &mut Tally,
) -> Result<Cycle, CudaError> {
    let c = ops.cycle(index)?;
    tally.record(&c);
    Ok(c)
}

/// The real cycle on the GPU.
struct GpuCycle<'a> {
    case: &'a Case,
    device: &'a DeviceBuffer,
    result: &'a DeviceBuffer,
    stream: &'a Stream,
    gpu: &'a Gpu<'a>,
    h2d: bool,
    pause: Duration,
    seed: u32,
}

impl CycleOps for GpuCycle<'_> {
    fn cycle(&mut self, index: u32) -> Result<Cycle, CudaError> {
        let size = self.case.size as usize;
        // A new pattern every cycle, so data left from an earlier copy fails the check too.
        let seed = self.seed ^ index.wrapping_mul(0x9E37_79B9);
        let wall = Stopwatch::start();
        let mut host = host_buffer(self.case, size)?;
        let alloc_ms = host.alloc_ms + host.register_ms.unwrap_or(0.0);
        if self.h2d {
            crate::cuda::fill_pattern(host.as_mut_slice(), 0, seed);
            self.device.memset(self.stream, 0)?;
        } else {
            crate::cuda::fill_zero(host.as_mut_slice());
            self.gpu
                .kernels
                .write(self.stream, self.device, size, seed)?;
        }
        self.stream.synchronize()?;
        std::thread::sleep(self.pause);
        let streams = std::slice::from_ref(self.stream);
        let timer = Timer::start(self.gpu, streams, Streams::Forked, false)?;
        if self.h2d {
            self.stream.copy_h2d(self.device, 0, &host, 0, size)?;
        } else {
            self.stream.copy_d2h(&host, 0, self.device, 0, size)?;
        }
        let copy_ms = timer.finish(streams)?.event_ms(0)?;
        let bad_words = if self.h2d {
            self.gpu
                .kernels
                .verify(self.stream, self.device, size, seed, self.result)?
                .0
        } else {
            crate::cuda::check_pattern(host.as_slice(), 0, seed).0
        };
        let (_, free_ms) = host.free()?;
        Ok(Cycle {
            copy_ms,
            wall_ms: wall.ms(),
            alloc_ms,
            free_ms,
            bad_words,
        })
    }
}

pub struct Churn {
    case: Case,
    device: DeviceBuffer,
    result: DeviceBuffer,
    stream: Stream,
    h2d: bool,
    seed: u32,
    tally: Tally,
    alloc_ms: Vec<f64>,
    free_ms: Vec<f64>,
    pause: Duration,
}

impl Churn {
    /// The device buffers of a churn case whose host buffers wait `pause` before each copy.
    pub fn allocate(case: &Case, pause: Duration) -> Result<Self, CudaError> {
        Ok(Self {
            case: case.clone(),
            pause,
            device: DeviceBuffer::new(case.size as usize)?,
            result: DeviceBuffer::new(16)?,
            stream: Stream::new()?,
            h2d: case.direction != Direction::D2h,
            seed: seed_for(case),
            tally: Tally::default(),
            alloc_ms: Vec::new(),
            free_ms: Vec::new(),
        })
    }
    fn lane(&self) -> Lane {
        Lane::one_way(self.h2d)
    }
}

impl Measurable for Churn {
    fn moves(&self) -> Moves {
        Moves::OneWay(self.lane(), self.case.size)
    }
    /// One cycle per sample, whatever `batch` says (the runner asks for 1).
    fn sample(&mut self, gpu: &Gpu, _batch: u32) -> Result<SampleTimes, CudaError> {
        let mut ops = GpuCycle {
            case: &self.case,
            device: &self.device,
            result: &self.result,
            stream: &self.stream,
            gpu,
            h2d: self.h2d,
            pause: self.pause,
            seed: self.seed,
        };
        let index = self.tally.copies;
        let c = run_cycle(&mut ops, index, &mut self.tally)?;
        self.alloc_ms.push(c.alloc_ms);
        self.free_ms.push(c.free_ms);
        let lane = self.lane();
        Ok(SampleTimes {
            lanes: vec![(lane, c.copy_ms)],
            wall_ms: c.wall_ms,
            event_ms: vec![(lane, c.copy_ms)],
            register_ms: None,
            unregister_ms: None,
            load: None,
        })
    }
}

impl Transfer for Churn {
    fn verify(&mut self, _gpu: &Gpu) -> Result<Verified, CudaError> {
        Ok(self.tally.verified(self.lane()))
    }
    fn setup(&self) -> SetupTimes {
        SetupTimes {
            alloc_ms: crate::stats::median(&self.alloc_ms),
            free_ms: crate::stats::median(&self.free_ms),
            ..Default::default()
        }
    }
    fn footprint(&self) -> Footprint {
        // One host buffer at a time, held only during its cycle.
        let mut fp = Footprint {
            device: self.case.size,
            ..Default::default()
        };
        match self.case.host {
            HostKind::Register => fp.registered = self.case.size,
            _ => fp.pinned_alloc = self.case.size,
        }
        fp
    }
    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let setup = self.setup();
        let Churn { device, .. } = *self;
        drop(device);
        Ok(setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies whose data is wrong on the cycles listed, as WSL2 reportedly does after churn.
    struct Fake {
        bad: Vec<u32>,
        fail_at: Option<u32>,
    }

    impl CycleOps for Fake {
        fn cycle(&mut self, index: u32) -> Result<Cycle, CudaError> {
            if self.fail_at == Some(index) {
                return Err(CudaError::driver(
                    "cuMemHostAlloc",
                    cudarc::driver::sys::CUresult::CUDA_ERROR_ALREADY_MAPPED,
                ));
            }
            Ok(Cycle {
                copy_ms: 1.0,
                wall_ms: 6.0,
                bad_words: if self.bad.contains(&index) { 4096 } else { 0 },
                ..Default::default()
            })
        }
    }

    #[test]
    fn every_copy_is_counted_and_bad_ones_are_named() {
        let mut fake = Fake {
            bad: (1..20).collect(),
            fail_at: None,
        };
        let mut t = Tally::default();
        for i in 0..20 {
            run_cycle(&mut fake, i, &mut t).unwrap();
        }
        assert_eq!(t.copies, 20);
        assert_eq!(t.bad_copies, 19);
        assert_eq!(t.first_bad_words, Some(4096));
        assert_eq!(
            t.verified(Lane::H2d),
            Verified::Copies {
                lane: Lane::H2d,
                bad_copies: 19,
                copies: 20
            }
        );
    }

    #[test]
    fn clean_churn_verifies_and_errors_are_not_counted_as_copies() {
        let mut fake = Fake {
            bad: vec![],
            fail_at: Some(3),
        };
        let mut t = Tally::default();
        for i in 0..3 {
            run_cycle(&mut fake, i, &mut t).unwrap();
        }
        let e = run_cycle(&mut fake, 3, &mut t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cuMemHostAlloc failed with CUDA_ERROR_ALREADY_MAPPED"
        );
        assert_eq!((t.copies, t.bad_copies), (3, 0));
        assert_eq!(t.verified(Lane::D2h), Verified::Yes);
    }
}
