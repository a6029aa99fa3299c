//! H2D and D2H at the same time on two streams (both copy engines busy). From page-locked
//! memory both directions are timed in one round, each over the middle copies of its stream
//! while the other stream's copies before and after (parts of a buffer) keep the opposite
//! direction busy for the whole measured span (when the events show one direction was not covered, each is timed in a
//! round of its own with the other given more copies); the sum lane is the sum of the two
//! rates. From pageable memory both run once together, timed by the wall clock.

use super::*;
use crate::cuda::Event;
use crate::measure::{Streams, Timer};

pub struct Bidirectional {
    up_host: HostBuffer,
    down_host: HostBuffer,
    up_dev: DeviceBuffer,
    down_dev: DeviceBuffer,
    /// `[up, down]`: H2D on the first, D2H on the second.
    streams: [Stream; 2],
    seed: u32,
    size: usize,
    setup: SetupTimes,
    /// Wall time of the rounds of the last sample, ms.
    last_wall_ms: f64,
}

/// The two host buffers, before the device buffers exist.
pub struct BidirectionalHost {
    up_host: HostBuffer,
    down_host: HostBuffer,
    seed: u32,
    size: usize,
    setup: SetupTimes,
}

impl BidirectionalHost {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let up_host = host_buffer(case, size)?;
        let down_host = host_buffer(case, size)?;
        let setup = SetupTimes::of_all(&[&up_host, &down_host]);
        Ok(Self {
            up_host,
            down_host,
            seed: seed_for(case),
            size,
            setup,
        })
    }
}

impl HostSide for BidirectionalHost {
    fn touch(&mut self) {
        touch_host_end(&mut self.up_host, true, self.seed);
        touch_host_end(&mut self.down_host, false, self.seed);
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        for h in [&self.up_host, &self.down_host] {
            footprint_of(h, &mut fp);
        }
        fp
    }

    /// Both device buffers: the H2D destination zeroed, the D2H source given the pattern.
    fn add_device(self: Box<Self>, gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        let BidirectionalHost {
            up_host,
            down_host,
            seed,
            size,
            setup,
        } = *self;
        let t = Bidirectional {
            up_host,
            down_host,
            up_dev: DeviceBuffer::new(size)?,
            down_dev: DeviceBuffer::new(size)?,
            streams: [Stream::new()?, Stream::new()?],
            seed,
            size,
            setup,
            last_wall_ms: 0.0,
        };
        let up = &t.streams[0];
        t.up_dev.memset(up, 0)?;
        gpu.kernels.write(up, &t.down_dev, size, seed)?;
        up.synchronize()?;
        Ok(Box::new(t))
    }
}

/// Stream index of the H2D direction.
const UP: usize = 0;
/// Stream index of the D2H direction.
const DOWN: usize = 1;

impl Bidirectional {
    /// One direction's time for `batch` copies while the other direction stays busy for the
    /// whole span (as nvbandwidth's bidirectional tests do): the other stream is given more
    /// copies, and if it still ends first the round is repeated with more, so the measured lane
    /// never runs alone. Both streams are held by the spin gate until everything is queued.
    fn sample_lane(&mut self, gpu: &Gpu, measured: usize, batch: u32) -> Result<f64, CudaError> {
        let other = 1 - measured;
        // A quarter more copies and one covers directions whose rates differ by up to ~25%
        // (H2D and D2H on one link); more only when the events say it was not enough.
        for others in [batch + batch / 4 + 1, 2 * batch + 1, 4 * batch + 1] {
            let mut count = [batch; 2];
            count[other] = others;
            let timer = Timer::start(gpu, &self.streams, Streams::Each, true)?;
            self.enqueue(count)?;
            let span = timer.finish(&self.streams)?;
            self.last_wall_ms += span.wall_ms;
            let covered = span.end_offset_ms(other)? >= span.end_offset_ms(measured)?
                && span.start_offset_ms(other)? <= span.start_offset_ms(measured)? + START_SKEW_MS;
            if covered {
                return span.event_ms(measured);
            }
        }
        Err(CudaError::new(
            "bidirectional",
            "the opposite direction finished before the measured one even with 4× its copies",
        ))
    }

    /// Both directions in one round: on each stream a lead-in copy of a sixteenth of the buffer,
    /// the `batch` measured copies between two events, then `batch / 3` whole copies and half a
    /// buffer more. The lead-in has the opposite stream copying before a measured copy starts
    /// (both are released by the same spin gate); the tail keeps it copying until the measured
    /// copies end when the two directions' rates differ by up to a third (half a copy for one).
    /// The pads are parts of copies, not whole ones, so a sample costs about 1.6 measured spans
    /// of wall time instead of 3. The (H2D ms, D2H ms) of the measured copies, or `None` when
    /// the events show a measured span was not covered by the opposite stream's copies.
    fn sample_both(&mut self, gpu: &Gpu, batch: u32) -> Result<Option<(f64, f64)>, CudaError> {
        let marks = [
            [Event::new()?, Event::new()?],
            [Event::new()?, Event::new()?],
        ];
        let timer = Timer::start(gpu, &self.streams, Streams::Each, true)?;
        self.enqueue_part(pad_bytes(self.size, 16))?;
        for (m, s) in marks.iter().zip(&self.streams) {
            m[0].record(s)?;
        }
        self.enqueue([batch; 2])?;
        for (m, s) in marks.iter().zip(&self.streams) {
            m[1].record(s)?;
        }
        self.enqueue([batch / 3; 2])?;
        self.enqueue_part(pad_bytes(self.size, 2))?;
        let span = timer.finish(&self.streams)?;
        self.last_wall_ms += span.wall_ms;
        for (measured, other) in [(UP, DOWN), (DOWN, UP)] {
            let covered = span.start_offset_ms(other)?
                <= span.offset_ms(&marks[measured][0])? + START_SKEW_MS
                && span.end_offset_ms(other)? >= span.offset_ms(&marks[measured][1])?;
            if !covered {
                return Ok(None);
            }
        }
        let [up, down] = &marks;
        Ok(Some((
            up[0].elapsed_ms(&up[1])?,
            down[0].elapsed_ms(&down[1])?,
        )))
    }

    /// Queues one H2D and one D2H copy of the first `bytes` of the buffers.
    fn enqueue_part(&self, bytes: usize) -> Result<(), CudaError> {
        let [up, down] = &self.streams;
        up.copy_h2d(&self.up_dev, 0, &self.up_host, 0, bytes)?;
        down.copy_d2h(&self.down_host, 0, &self.down_dev, 0, bytes)
    }

    /// Queues `count[UP]` H2D and `count[DOWN]` D2H copies, interleaved.
    fn enqueue(&self, count: [u32; 2]) -> Result<(), CudaError> {
        let [up, down] = &self.streams;
        for i in 0..count[UP].max(count[DOWN]) {
            if i < count[UP] {
                up.copy_h2d(&self.up_dev, 0, &self.up_host, 0, self.size)?;
            }
            if i < count[DOWN] {
                down.copy_d2h(&self.down_host, 0, &self.down_dev, 0, self.size)?;
            }
        }
        Ok(())
    }

    /// Pageable memory: the CPU takes part, so both directions are queued once, ungated, and
    /// timed together by the wall clock (event times kept beside it).
    fn sample_together(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let timer = Timer::start(gpu, &self.streams, Streams::Each, false)?;
        self.enqueue([batch; 2])?;
        let span = timer.finish(&self.streams)?;
        let up_ms = span.event_ms(UP)?;
        let down_ms = span.event_ms(DOWN)?;
        let down_start = span.start_offset_ms(DOWN)?;
        let common = up_ms.max(span.end_offset_ms(DOWN)?) - down_start.min(0.0);
        self.last_wall_ms = span.wall_ms;
        Ok(SampleTimes {
            lanes: vec![
                (Lane::H2d, up_ms),
                (Lane::D2h, down_ms),
                (Lane::Sum, span.wall_ms),
            ],
            wall_ms: span.wall_ms,
            event_ms: vec![
                (Lane::H2d, up_ms),
                (Lane::D2h, down_ms),
                (Lane::Sum, common),
            ],
            register_ms: None,
            unregister_ms: None,
            load: None,
        })
    }
}

/// The length of a pad copy: `size / parts` rounded up to whole 4-byte words, at most `size`.
fn pad_bytes(size: usize, parts: usize) -> usize {
    size.div_ceil(parts).next_multiple_of(4).min(size)
}

/// How much later than the measured stream the opposite one may start and still count as busy
/// for the whole span (both are released by the same spin gate), ms.
const START_SKEW_MS: f64 = 0.05;

impl Measurable for Bidirectional {
    fn moves(&self) -> Moves {
        Moves::BothWays(self.size as u64)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        if !self.up_host.is_page_locked() {
            return self.sample_together(gpu, batch);
        }
        self.last_wall_ms = 0.0;
        let (up_ms, down_ms) = match self.sample_both(gpu, batch)? {
            Some(both) => both,
            None => (
                self.sample_lane(gpu, UP, batch)?,
                self.sample_lane(gpu, DOWN, batch)?,
            ),
        };
        // The two directions' rates add up: the sum lane moves 2 × batch × size in the time
        // that gives the sum of both rates.
        let sum_ms = 2.0 / (1.0 / up_ms + 1.0 / down_ms);
        let ev = vec![
            (Lane::H2d, up_ms),
            (Lane::D2h, down_ms),
            (Lane::Sum, sum_ms),
        ];
        Ok(SampleTimes {
            lanes: ev.clone(),
            wall_ms: self.last_wall_ms,
            event_ms: ev,
            register_ms: None,
            unregister_ms: None,
            load: None,
        })
    }
}

impl Transfer for Bidirectional {
    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError> {
        let [up, down] = &self.streams;
        down.synchronize()?;
        match verify_device(gpu, up, &self.up_dev, self.seed, Lane::H2d)? {
            Verified::Yes => Ok(verify_host(&self.down_host, self.seed, Lane::D2h)),
            bad => Ok(bad),
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        for h in [&self.up_host, &self.down_host] {
            footprint_of(h, &mut fp);
        }
        fp.device = 2 * self.size as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let Bidirectional {
            up_host,
            down_host,
            up_dev,
            down_dev,
            setup,
            ..
        } = *self;
        drop((up_dev, down_dev));
        free_all([up_host, down_host], setup)
    }
}

#[cfg(test)]
mod tests {
    use super::pad_bytes;

    #[test]
    fn pad_copies_are_whole_words_and_never_longer_than_the_buffer() {
        assert_eq!(pad_bytes(512 << 20, 16), 32 << 20);
        assert_eq!(pad_bytes(512 << 20, 2), 256 << 20);
        assert_eq!(pad_bytes(100, 16), 8);
        assert_eq!(pad_bytes(4, 16), 4);
        assert_eq!(pad_bytes(2, 2), 2);
    }
}
