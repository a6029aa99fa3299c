//! "Small buffers, reused often": pageable data moved through a ring of small pinned staging
//! buffers. H2D: the CPU copies chunk k into a free slot (split over the copy crew) while the
//! DMA of earlier chunks runs; an event per slot says when the slot may be refilled. D2H is the
//! reverse: DMA into slots ahead, the CPU drains each slot once its event completes. Timed by the
//! wall clock (the CPU copy is part of the transfer); event time is kept too.
//!
//! The CPU side decides whether the ring keeps up with the link, so it is built to stay hot
//! (see `cuda::crew`): persistent copy threads that spin between chunks, the caller copying too,
//! and slot events polled rather than slept on. `PINSCOPE_STAGING_COPIER` (`crew`, the default;
//! `rayon`; `scoped`) and `PINSCOPE_EVENT_WAIT` (`spin`, the default; `block`) select the
//! alternatives that were measured against it (docs/methodology.md, staging); they exist for
//! that comparison and are not scenario keys.

use super::*;
use crate::cuda::{CopyCrew, Event};
use crate::measure::{Streams, Timer};
use crate::scenario::HostFlags;

/// The ring: `ring` pinned buffers of `chunk` bytes, an event per slot, and the copier that
/// fills or drains them.
pub struct Staged {
    ring: Vec<HostBuffer>,
    slot_events: Vec<Event>,
    chunk: usize,
    copier: Copier,
    spin_events: bool,
}

/// How the staging memcpy is spread over threads.
enum Copier {
    /// Persistent spinning threads plus the caller (the default).
    Crew(CopyCrew),
    /// A rayon pool (workers park between chunks): the previous implementation.
    Rayon(rayon::ThreadPool, usize),
    /// Fresh scoped threads per chunk.
    Scoped(usize),
}

impl Copier {
    fn from_env(threads: usize) -> Result<Copier, CudaError> {
        let spin = std::env::var("PINSCOPE_CREW_SPIN_US")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(
                crate::cuda::crew::DEFAULT_SPIN,
                std::time::Duration::from_micros,
            );
        match std::env::var("PINSCOPE_STAGING_COPIER").as_deref() {
            Ok("rayon") => Ok(Copier::Rayon(pool(threads)?, threads)),
            Ok("scoped") => Ok(Copier::Scoped(threads)),
            _ => CopyCrew::new(threads, spin)
                .map(Copier::Crew)
                .map_err(|e| CudaError::new("starting copy threads", e.to_string())),
        }
    }

    fn copy(&self, dst: &mut [u8], src: &[u8]) {
        match self {
            Copier::Crew(c) => c.copy(dst, src),
            Copier::Rayon(pool, threads) => split_copy(pool, dst, src, *threads),
            Copier::Scoped(threads) => scoped_copy(dst, src, *threads),
        }
    }
}

impl Staged {
    /// The ring of `slots` pinned buffers of `chunk` bytes, copied through by `threads` threads
    /// (the settings of [`crate::scenario::Route::Staged`]).
    pub fn allocate(
        case: &Case,
        chunk: u64,
        slots: u32,
        threads: u32,
    ) -> Result<OneWayHost<Self>, CudaError> {
        let chunk = chunk as usize;
        let pageable = HostBuffer::pageable(case.size as usize)?;
        let mut alloc_ms = pageable.alloc_ms;
        let mut ring = Vec::new();
        for _ in 0..slots {
            let b = HostBuffer::pinned(chunk, HostFlags::default())?;
            alloc_ms += b.alloc_ms;
            ring.push(b);
        }
        let slot_events = ring
            .iter()
            .map(|_| Event::new())
            .collect::<Result<Vec<_>, _>>()?;
        let how = Staged {
            ring,
            slot_events,
            chunk,
            copier: Copier::from_env(threads as usize)?,
            spin_events: std::env::var("PINSCOPE_EVENT_WAIT").as_deref() != Ok("block"),
        };
        let setup = SetupTimes {
            alloc_ms: Some(alloc_ms),
            ..Default::default()
        };
        Ok(OneWayHost::new(case, pageable, case.streams, setup, how))
    }

    /// `(offset, length)` of each chunk of `size` bytes.
    fn chunks(&self, size: usize) -> Vec<(usize, usize)> {
        (0..size.div_ceil(self.chunk))
            .map(|k| (k * self.chunk, self.chunk.min(size - k * self.chunk)))
            .collect()
    }

    /// Waits until slot `slot`'s last DMA is done.
    fn wait_slot(&self, slot: usize) -> Result<(), CudaError> {
        if self.spin_events {
            self.slot_events[slot].spin_wait()
        } else {
            self.slot_events[slot].synchronize()
        }
    }

    fn upload(&mut self, io: &OneWay, streams: &[Stream]) -> Result<(), CudaError> {
        let chunks = self.chunks(io.size);
        let (src, dev) = (&io.host, &io.device);
        let n = self.ring.len();
        for (k, (off, len)) in chunks.into_iter().enumerate() {
            let slot = k % n;
            let stream = &streams[k % streams.len()];
            // The slot's previous DMA must be done before the CPU refills it.
            if k >= n {
                self.wait_slot(slot)?;
            }
            let staging = &mut self.ring[slot];
            self.copier.copy(
                &mut staging.as_mut_slice()[..len],
                &src.as_slice()[off..off + len],
            );
            stream.copy_h2d(dev, off, staging, 0, len)?;
            self.slot_events[slot].record(stream)?;
        }
        Ok(())
    }

    fn download(&mut self, io: &mut OneWay, streams: &[Stream]) -> Result<(), CudaError> {
        let chunks = self.chunks(io.size);
        let n = self.ring.len();
        let dev = &io.device;
        let issue = |k: usize| -> Result<(), CudaError> {
            let (off, len) = chunks[k];
            let stream = &streams[k % streams.len()];
            stream.copy_d2h(&self.ring[k % n], 0, dev, off, len)?;
            self.slot_events[k % n].record(stream)
        };
        for k in 0..n.min(chunks.len()) {
            issue(k)?;
        }
        for k in 0..chunks.len() {
            let (off, len) = chunks[k];
            self.wait_slot(k % n)?;
            let out = &mut io.host.as_mut_slice()[off..off + len];
            self.copier.copy(out, &self.ring[k % n].as_slice()[..len]);
            if k + n < chunks.len() {
                issue(k + n)?;
            }
        }
        Ok(())
    }
}

/// Copies `src` into `dst` in `threads` equal contiguous parts, one task per thread of `pool`.
fn split_copy(pool: &rayon::ThreadPool, dst: &mut [u8], src: &[u8], threads: usize) {
    let n = dst.len().min(src.len());
    let part = n.div_ceil(threads.max(1)).div_ceil(4096).max(1) * 4096;
    pool.scope(|s| {
        for (d, c) in dst[..n].chunks_mut(part).zip(src[..n].chunks(part)) {
            s.spawn(move |_| d.copy_from_slice(c));
        }
    });
}

/// Copies `src` into `dst` in `threads` equal parts on fresh scoped threads (the caller takes one).
fn scoped_copy(dst: &mut [u8], src: &[u8], threads: usize) {
    let n = dst.len().min(src.len());
    let part = n.div_ceil(threads.max(1)).div_ceil(4096).max(1) * 4096;
    std::thread::scope(|s| {
        let mut parts = dst[..n].chunks_mut(part).zip(src[..n].chunks(part));
        let first = parts.next();
        for (d, c) in parts {
            s.spawn(move || d.copy_from_slice(c));
        }
        if let Some((d, c)) = first {
            d.copy_from_slice(c);
        }
    });
}

fn pool(threads: usize) -> Result<rayon::ThreadPool, CudaError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CudaError::new("thread pool", e.to_string()))
}

impl Enqueue for Staged {
    /// Not gated: the CPU takes part (it fills or drains the ring), so the wall clock is the
    /// headline; the event time of the whole batch is kept.
    fn sample(&mut self, rig: Rig<'_, '_>, batch: u32) -> Result<SampleTimes, CudaError> {
        let Rig { io, streams, gpu } = rig;
        let timer = Timer::start(gpu, streams, Streams::Forked, false)?;
        for _ in 0..batch {
            if io.h2d {
                self.upload(io, streams)?;
            } else {
                self.download(io, streams)?;
            }
        }
        timer.finish(streams)?.one_lane(io.lane(), false)
    }

    fn touch(&mut self) {
        for r in &mut self.ring {
            r.as_mut_slice().fill(0);
        }
    }

    fn footprint(&self, fp: &mut Footprint) {
        fp.staging += (self.chunk * self.ring.len()) as u64;
    }

    fn into_buffers(self) -> Vec<HostBuffer> {
        self.ring
    }
}
