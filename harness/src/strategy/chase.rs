//! Zero-copy read latency (`engine = "chase"`, `"chase-random"`): one GPU thread follows a chain
//! of 8-byte pointers through mapped host memory, each load waiting for the one before, as
//! nvbandwidth's `host_device_latency_sm` does. The chain has one node per 128-byte slot of the
//! `size`-byte buffer: `chase` links slot k to slot k + 1 (nvbandwidth's `(i + 16) % n` over
//! 8-byte nodes), `chase-random` follows one random cycle through every slot (Sattolo's
//! algorithm, fixed seed), which no prefetcher can follow. The pointers are the buffer's device
//! address from `cuMemHostGetDevicePointer` (WSL2 may map it elsewhere than the host address).
//!
//! A transfer is one launch of [`CHASE_STEPS`] dependent loads from slot 0; a sample is `batch`
//! launches between two events. The time per load is the event time / (batch × steps).

use super::*;
use crate::cuda::Event;
use crate::measure::Stopwatch;
use crate::stats::Rng;

/// Bytes between the nodes of a chain: one node per 128-byte line.
pub const CHASE_STRIDE: usize = 128;
pub use crate::scenario::CHASE_STEPS;
/// Seed of the random chain (the same chain in every run).
const CHASE_SEED: u64 = 0xC4A5_E000;

/// A pointer chain in mapped host memory and where the last pointer lands.
pub struct Chase {
    host: HostBuffer,
    /// `next[k]`: the slot slot `k` points to.
    next: Vec<u32>,
    out: DeviceBuffer,
    stream: Stream,
    start: Event,
    end: Event,
}

/// The successor of every slot: `k → k + 1` around the buffer, or one random cycle.
pub(crate) fn chain(slots: usize, random: bool) -> Vec<u32> {
    let mut next: Vec<u32> = (0..slots).map(|k| ((k + 1) % slots) as u32).collect();
    if random && slots > 1 {
        // Sattolo's algorithm: a uniformly random permutation with exactly one cycle.
        let mut order: Vec<u32> = (0..slots as u32).collect();
        let mut rng = Rng::new(CHASE_SEED);
        for i in (1..slots).rev() {
            let j = rng.below(i);
            order.swap(i, j);
        }
        for w in 0..slots {
            next[order[w] as usize] = order[(w + 1) % slots];
        }
    }
    next
}

/// The slot reached from slot 0 after `steps` hops.
pub(crate) fn slot_after(next: &[u32], steps: u64) -> usize {
    let mut k = 0usize;
    for _ in 0..steps {
        k = next[k] as usize;
    }
    k
}

impl Chase {
    pub fn allocate(case: &Case) -> Result<Chase, CudaError> {
        let size = case.size as usize;
        let slots = (size / CHASE_STRIDE).max(1);
        Ok(Chase {
            host: host_buffer(case, size)?,
            next: chain(slots, case.engine == crate::scenario::Engine::ChaseRandom),
            out: DeviceBuffer::new(16)?,
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
        })
    }

    fn base(&self) -> Result<u64, CudaError> {
        self.host.device_ptr().ok_or_else(|| {
            CudaError::new(
                "chase kernel",
                "memory is not mapped into the GPU's address space",
            )
        })
    }
}

/// The mapped host buffer is the chain; the 16-byte result buffer, stream and events come with
/// it (the chain needs no device buffer of its size).
impl HostSide for Chase {
    /// First touch: the chain's pointers, as device addresses, into the first 8 bytes of each
    /// slot (the rest of the buffer zeroed). Memory that is not mapped is left for
    /// [`HostSide::add_device`] to refuse.
    fn touch(&mut self) {
        let Ok(base) = self.base() else {
            return;
        };
        let buf = self.host.as_mut_slice();
        crate::cuda::fill_zero(buf);
        for (k, &n) in self.next.iter().enumerate() {
            let at = k * CHASE_STRIDE;
            let ptr = base + (n as usize * CHASE_STRIDE) as u64;
            buf[at..at + 8].copy_from_slice(&ptr.to_le_bytes());
        }
    }
    fn footprint(&self) -> Footprint {
        Transfer::footprint(self)
    }
    fn add_device(self: Box<Self>, _gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        self.base()?;
        Ok(self)
    }
}

impl Measurable for Chase {
    fn moves(&self) -> Moves {
        // What one launch loads: `CHASE_STEPS` 8-byte pointers.
        Moves::OneWay(Lane::H2d, CHASE_STEPS * 8)
    }

    fn sample(&mut self, gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let s = &self.stream;
        self.start.record(s)?;
        let wall = Stopwatch::start();
        for _ in 0..batch {
            gpu.kernels
                .chase(s, &self.host, 0, CHASE_STEPS, &self.out)?;
        }
        self.end.record(s)?;
        self.end.synchronize()?;
        let wall_ms = wall.ms();
        let event_ms = self.start.elapsed_ms(&self.end)?;
        Ok(SampleTimes {
            lanes: vec![(Lane::H2d, event_ms)],
            wall_ms,
            event_ms: vec![(Lane::H2d, event_ms)],
            register_ms: None,
            unregister_ms: None,
            load: None,
        })
    }
}

impl Transfer for Chase {
    /// The last pointer of the last launch must be the slot the chain reaches after
    /// [`CHASE_STEPS`] hops from slot 0.
    fn verify(&mut self, _gpu: &Gpu) -> Result<Verified, CudaError> {
        self.stream.synchronize()?;
        let mut got = [0u8; 8];
        self.out.read(0, &mut got)?;
        let want = self.base()? + (slot_after(&self.next, CHASE_STEPS) * CHASE_STRIDE) as u64;
        let bad = u64::from(u64::from_le_bytes(got) != want);
        Ok(Verified::of(Lane::H2d, bad, (bad > 0).then_some(0)))
    }

    fn setup(&self) -> SetupTimes {
        SetupTimes::of(&self.host)
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint {
            device: 16,
            ..Footprint::default()
        };
        footprint_of(&self.host, &mut fp);
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let setup = self.setup();
        let Chase { host, .. } = *self;
        free_all([host], setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visits_every_slot_once(next: &[u32]) -> bool {
        let mut seen = vec![false; next.len()];
        let mut k = 0usize;
        for _ in 0..next.len() {
            if seen[k] {
                return false;
            }
            seen[k] = true;
            k = next[k] as usize;
        }
        k == 0 && seen.iter().all(|s| *s)
    }

    #[test]
    fn both_chains_are_one_cycle_through_every_slot() {
        for slots in [1, 2, 3, 16, 1000, 16384] {
            assert!(visits_every_slot_once(&chain(slots, false)), "{slots}");
            assert!(visits_every_slot_once(&chain(slots, true)), "{slots}");
        }
    }

    #[test]
    fn the_stride_chain_steps_one_slot_and_the_random_one_does_not() {
        let stride = chain(16384, false);
        assert_eq!(slot_after(&stride, 3), 3);
        assert_eq!(slot_after(&stride, 16384 + 5), 5);
        let random = chain(16384, true);
        let sequential = (0..16384).filter(|&k| random[k] as usize == k + 1).count();
        assert!(
            sequential < 100,
            "{sequential} of 16384 links go to the next slot"
        );
        assert_eq!(
            chain(16384, true),
            random,
            "the same seed gives the same chain"
        );
    }
}
