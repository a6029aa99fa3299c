//! The staging memcpy's copy crew: persistent threads that stay hot between chunks.
//!
//! Why it exists (measured on an H200 host with 16 CPUs): a 16 MiB staging chunk moves in
//! ~0.3 ms at 55 GB/s, about as long as waking 16 parked threads. With rayon's pool (workers park
//! between chunks) the 3 × 16 MiB ring held 36–54 GB/s and changed from one allocation to the
//! next; a plain C++ ring whose OpenMP threads *spin* between chunks held 53–55 GB/s on every
//! allocation. The crew does what that ring does: `participants - 1` threads spin on a generation
//! counter for a short while after each job (then park on a condition variable, so an idle crew
//! costs no CPU), and the calling thread takes a share of every copy.
//!
//! Work is split into pieces of at least 64 KiB, about four per participant, claimed one at a time
//! from a shared counter: a thread that was late to wake or was descheduled takes fewer pieces
//! instead of holding the others back.
//!
//! It lives in the CUDA layer because it writes through raw pointers into host buffers that this
//! layer owns (pinned staging slots); the `unsafe` here is the lifetime hand-off to the workers.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Smallest piece a participant claims; below `2 × MIN_PIECE` the caller copies alone.
const MIN_PIECE: usize = 64 << 10;
/// Pieces per participant: enough to balance, few enough that claiming stays cheap.
const PIECES_PER_PARTICIPANT: usize = 4;
/// How long an idle worker spins before it parks. The staged ring's gaps between chunks are
/// one chunk's DMA time (~0.3 ms for 16 MiB at 55 GB/s); 2 ms covers them with room to spare.
pub const DEFAULT_SPIN: Duration = Duration::from_millis(2);

/// Persistent copy threads plus the caller. Dropping the crew stops and joins its threads.
pub struct CopyCrew {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

struct Shared {
    /// High 32 bits: job generation; low 32 bits: next piece to claim.
    word: AtomicU64,
    src: AtomicPtr<u8>,
    dst: AtomicPtr<u8>,
    len: AtomicUsize,
    piece: AtomicUsize,
    /// Pieces finished in the current generation.
    done: AtomicUsize,
    stop: AtomicBool,
    /// Number of parked workers, guarded for the condition variable.
    parked: Mutex<usize>,
    wake: Condvar,
    spin: Duration,
}

/// Splits a job word into (generation, next piece).
fn unpack(w: u64) -> (u32, usize) {
    ((w >> 32) as u32, (w & 0xFFFF_FFFF) as usize)
}

impl CopyCrew {
    /// A crew of `participants` threads in all (the caller included): `participants - 1` workers.
    pub fn new(participants: usize, spin: Duration) -> std::io::Result<CopyCrew> {
        let shared = Arc::new(Shared {
            word: AtomicU64::new(0),
            src: AtomicPtr::new(std::ptr::null_mut()),
            dst: AtomicPtr::new(std::ptr::null_mut()),
            len: AtomicUsize::new(0),
            piece: AtomicUsize::new(MIN_PIECE),
            done: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            parked: Mutex::new(0),
            wake: Condvar::new(),
            spin,
        });
        let mut workers = Vec::new();
        for i in 1..participants.max(1) {
            let s = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("pinscope-copy-{i}"))
                .spawn(move || worker(&s));
            match spawned {
                Ok(h) => workers.push(h),
                Err(e) => {
                    // Stop the ones already started before reporting.
                    drop(CopyCrew { shared, workers });
                    return Err(e);
                }
            }
        }
        Ok(CopyCrew { shared, workers })
    }

    /// Threads taking part in each copy, the caller included.
    pub fn participants(&self) -> usize {
        self.workers.len() + 1
    }

    /// Copies `src` into `dst` (the shorter length) with every participant.
    pub fn copy(&self, dst: &mut [u8], src: &[u8]) {
        let n = dst.len().min(src.len());
        let p = self.participants();
        if p == 1 || n < 2 * MIN_PIECE {
            dst[..n].copy_from_slice(&src[..n]);
            return;
        }
        let piece = (n.div_ceil(p * PIECES_PER_PARTICIPANT).div_ceil(4096) * 4096).max(MIN_PIECE);
        let pieces = n.div_ceil(piece);
        let s = &self.shared;
        s.src.store(src.as_ptr().cast_mut(), Ordering::Relaxed);
        s.dst.store(dst.as_mut_ptr(), Ordering::Relaxed);
        s.len.store(n, Ordering::Relaxed);
        s.piece.store(piece, Ordering::Relaxed);
        s.done.store(0, Ordering::Relaxed);
        let (gen_now, _) = unpack(s.word.load(Ordering::SeqCst));
        let generation = gen_now.wrapping_add(1);
        // Publishes the job: the stores above happen-before any worker's SeqCst load of this.
        s.word.store(u64::from(generation) << 32, Ordering::SeqCst);
        {
            let parked = s.parked.lock().unwrap_or_else(|e| e.into_inner());
            if *parked > 0 {
                s.wake.notify_all();
            }
        }
        s.work(generation);
        // Every piece must be finished before `dst` and `src` go back to the caller.
        while s.done.load(Ordering::Acquire) < pieces {
            std::hint::spin_loop();
        }
    }
}

impl Shared {
    /// Claims and copies pieces of job `generation` until none are left.
    fn work(&self, generation: u32) {
        loop {
            let w = self.word.load(Ordering::SeqCst);
            let (g, next) = unpack(w);
            if g != generation {
                return;
            }
            // Read the job after seeing its generation; a successful claim below proves the
            // generation (and so these fields) did not change in between: the caller rewrites
            // them only after every piece of this generation is finished, which needs this claim.
            let len = self.len.load(Ordering::Relaxed);
            let piece = self.piece.load(Ordering::Relaxed);
            let src = self.src.load(Ordering::Relaxed);
            let dst = self.dst.load(Ordering::Relaxed);
            if next >= len.div_ceil(piece.max(1)) {
                return;
            }
            if self
                .word
                .compare_exchange_weak(w, w + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            let off = next * piece;
            let count = piece.min(len - off);
            // SAFETY: `src` and `dst` come from live slices of at least `len` bytes that the caller
            // of `CopyCrew::copy` keeps borrowed (shared and exclusive) until `done` counts every
            // piece; piece `next` was claimed exactly once (the CAS above), so no other thread
            // writes `dst[off..off + count]`; `src` and `dst` cannot overlap (`&[u8]` vs `&mut [u8]`).
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(off), dst.add(off), count);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

fn worker(s: &Shared) {
    let mut seen = 0u32;
    loop {
        // Spin for a new generation, then park.
        let started = Instant::now();
        let mut spins = 0u32;
        let generation = loop {
            if s.stop.load(Ordering::Relaxed) {
                return;
            }
            let (g, _) = unpack(s.word.load(Ordering::SeqCst));
            if g != seen {
                break g;
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && started.elapsed() >= s.spin {
                let mut parked = s.parked.lock().unwrap_or_else(|e| e.into_inner());
                *parked += 1;
                while unpack(s.word.load(Ordering::SeqCst)).0 == seen
                    && !s.stop.load(Ordering::SeqCst)
                {
                    parked = s.wake.wait(parked).unwrap_or_else(|e| e.into_inner());
                }
                *parked -= 1;
            }
        };
        seen = generation;
        s.work(generation);
    }
}

impl Drop for CopyCrew {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        {
            let _parked = self.shared.parked.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.wake.notify_all();
        }
        for h in self.workers.drain(..) {
            // A worker only copies bytes; it cannot panic short of a bug, and a join error here
            // has nobody to report to.
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, salt: u8) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8 ^ salt).collect()
    }

    #[test]
    fn copies_every_byte_for_awkward_sizes_and_thread_counts() {
        for participants in [1, 2, 3, 7, 16] {
            let crew = CopyCrew::new(participants, DEFAULT_SPIN).expect("threads");
            assert_eq!(crew.participants(), participants);
            for n in [0, 1, 4095, 128 << 10, (1 << 20) + 17, 5 * (1 << 20) + 4093] {
                let src = data(n, participants as u8);
                let mut dst = vec![0u8; n];
                crew.copy(&mut dst, &src);
                assert!(dst == src, "{participants} participants, {n} bytes");
            }
        }
    }

    #[test]
    fn many_back_to_back_jobs_with_parking_in_between() {
        // spin 0: workers park after every job, so each job also exercises the wake-up path.
        for spin in [Duration::ZERO, DEFAULT_SPIN] {
            let crew = CopyCrew::new(4, spin).expect("threads");
            for round in 0..200u32 {
                let n = (256 << 10) + (round as usize * 4096);
                let src = data(n, round as u8);
                let mut dst = vec![0u8; n];
                crew.copy(&mut dst, &src);
                assert!(dst == src, "round {round}");
                if round % 50 == 0 {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }

    #[test]
    fn copies_the_shorter_length() {
        let crew = CopyCrew::new(3, DEFAULT_SPIN).expect("threads");
        let src = data(1 << 20, 9);
        let mut dst = vec![0u8; (1 << 20) - 100];
        crew.copy(&mut dst, &src);
        assert!(dst[..] == src[..dst.len()]);
    }
}
