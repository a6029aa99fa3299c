//! The clocks a sample is timed with. [`Stopwatch`]: the host clock, read in milliseconds.
//! [`Timer`]: the one event timing path of a batch on the GPU — events, the spin gate (hold,
//! release, timeout) and the stream fork/join around it. A strategy starts a [`Timer`], enqueues
//! its transfers, and [`Timer::finish`] gives the [`Span`] it turns into [`SampleTimes`].

use super::sample::{Gpu, SampleTimes};
use crate::cuda::{CudaError, Event, Gate, Kernels, Stream};
use crate::scenario::Lane;
use std::time::Instant;

/// The host clock: started once, read as milliseconds since (an `f64`, as samples keep them).
/// Both calls are inlined, so a strategy's timed interval holds nothing but the clock reads.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch(Instant);

impl Stopwatch {
    /// Starts the clock now.
    #[inline]
    pub fn start() -> Stopwatch {
        Stopwatch(Instant::now())
    }
    /// Milliseconds since [`Stopwatch::start`].
    #[inline]
    pub fn ms(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1e3
    }
}

/// How the streams of a batch are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Streams {
    /// One start event on the first stream, which the others wait for; the others are joined
    /// back into the first stream before one end event: one time for the whole batch.
    Forked,
    /// A start and an end event on each stream (bidirectional: one time per direction).
    Each,
}

/// A batch being timed: its events exist, the clock runs, the streams may be held.
pub(crate) struct Timer<'g> {
    gate: Option<(&'g Gate, &'g Kernels)>,
    mode: Streams,
    starts: Vec<Event>,
    ends: Vec<Event>,
    wall: Stopwatch,
}

/// A finished batch: host wall time, and the events to read device times from.
pub(crate) struct Span {
    pub wall_ms: f64,
    starts: Vec<Event>,
    ends: Vec<Event>,
}

impl<'g> Timer<'g> {
    /// Creates the events, starts the wall clock, holds every stream behind the spin gate when
    /// `gated` (so enqueue overhead is not timed), and records the start event(s).
    pub(crate) fn start(
        gpu: &Gpu<'g>,
        streams: &[Stream],
        mode: Streams,
        gated: bool,
    ) -> Result<Timer<'g>, CudaError> {
        let n = match mode {
            Streams::Forked => 1,
            Streams::Each => streams.len(),
        };
        let events = || (0..n).map(|_| Event::new()).collect::<Result<Vec<_>, _>>();
        let (starts, ends) = (events()?, events()?);
        let wall = Stopwatch::start();
        let gate = gated.then_some((gpu.gate, gpu.kernels));
        if let Some((g, k)) = gate {
            for s in streams {
                g.hold(k, s)?;
            }
        }
        match mode {
            Streams::Forked => {
                starts[0].record(&streams[0])?;
                for s in &streams[1..] {
                    s.wait(&starts[0])?;
                }
            }
            Streams::Each => {
                for (e, s) in starts.iter().zip(streams) {
                    e.record(s)?;
                }
            }
        }
        Ok(Timer {
            gate,
            mode,
            starts,
            ends,
            wall,
        })
    }

    /// Records the end event(s) (joining forked streams first), releases the gate, waits for the
    /// batch and stops the wall clock; an expired gate is an error (the batch was not queued in
    /// time, so its event time would include enqueue overhead).
    pub(crate) fn finish(self, streams: &[Stream]) -> Result<Span, CudaError> {
        match self.mode {
            Streams::Forked => {
                let joins: Vec<Event> = streams[1..]
                    .iter()
                    .map(|s| {
                        let e = Event::new()?;
                        e.record(s)?;
                        Ok(e)
                    })
                    .collect::<Result<_, CudaError>>()?;
                for e in &joins {
                    streams[0].wait(e)?;
                }
                self.ends[0].record(&streams[0])?;
            }
            Streams::Each => {
                for (e, s) in self.ends.iter().zip(streams) {
                    e.record(s)?;
                }
            }
        }
        if let Some((g, _)) = self.gate {
            g.release();
        }
        for e in &self.ends {
            e.synchronize()?;
        }
        let wall_ms = self.wall.ms();
        if let Some((g, _)) = self.gate
            && g.timed_out()
        {
            return Err(CudaError::new(
                "spin gate",
                "timed out before the batch was queued",
            ));
        }
        Ok(Span {
            wall_ms,
            starts: self.starts,
            ends: self.ends,
        })
    }
}

impl Span {
    /// Device time of stream `i` (of the whole batch when forked: `i` = 0), ms.
    pub(crate) fn event_ms(&self, i: usize) -> Result<f64, CudaError> {
        self.starts[i].elapsed_ms(&self.ends[i])
    }
    /// Time from the start of stream 0 to the start of stream `i`, ms.
    pub(crate) fn start_offset_ms(&self, i: usize) -> Result<f64, CudaError> {
        self.starts[0].elapsed_ms(&self.starts[i])
    }
    /// Time from the start of stream 0 to `e`, an event recorded on one of the streams, ms.
    pub(crate) fn offset_ms(&self, e: &Event) -> Result<f64, CudaError> {
        self.starts[0].elapsed_ms(e)
    }
    /// Time from the start of stream 0 to the end of stream `i`, ms.
    pub(crate) fn end_offset_ms(&self, i: usize) -> Result<f64, CudaError> {
        self.starts[0].elapsed_ms(&self.ends[i])
    }

    /// The sample of a one-lane batch: event time is the headline when `by_events` (gated,
    /// page-locked copies and kernels), else the wall clock (the CPU takes part); both are kept.
    pub(crate) fn one_lane(&self, lane: Lane, by_events: bool) -> Result<SampleTimes, CudaError> {
        let ev = self.event_ms(0)?;
        Ok(SampleTimes {
            lanes: vec![(lane, if by_events { ev } else { self.wall_ms })],
            wall_ms: self.wall_ms,
            event_ms: vec![(lane, ev)],
            register_ms: None,
            unregister_ms: None,
            load: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stopwatch_reads_milliseconds_since_it_started() {
        let wall = Stopwatch::start();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let first = wall.ms();
        assert!((20.0..10_000.0).contains(&first), "{first} ms");
        assert!(wall.ms() >= first, "the clock never runs backwards");
    }
}
