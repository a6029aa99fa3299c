//! The CPU alone reads (`cpu-read`) or writes (`cpu-write`) the host buffer, with `threads`
//! threads: what a memory kind costs the CPU. Write-combined memory is fast to write and very
//! slow to read. No bytes cross PCIe; timed by the wall clock.

use super::*;
use crate::measure::Stopwatch;

pub struct CpuAccess {
    host: HostBuffer,
    scratch: Vec<u8>,
    read: bool,
    seed: u32,
    size: usize,
    pool: rayon::ThreadPool,
    setup: SetupTimes,
}

impl CpuAccess {
    pub fn allocate(case: &Case) -> Result<Self, CudaError> {
        let size = case.size as usize;
        let host = host_buffer(case, size)?;
        let read = case.engine == Engine::CpuRead;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(case.threads.resolve() as usize)
            .build()
            .map_err(|e| CudaError::new("thread pool", e.to_string()))?;
        Ok(Self {
            setup: SetupTimes::of(&host),
            host,
            scratch: if read { vec![0; size] } else { Vec::new() },
            read,
            seed: seed_for(case),
            size,
            pool,
        })
    }
}

/// The CPU alone works on the host buffer: no device memory is added.
impl HostSide for CpuAccess {
    fn touch(&mut self) {
        crate::cuda::fill_pattern(self.host.as_mut_slice(), 0, self.seed);
    }
    fn footprint(&self) -> Footprint {
        Transfer::footprint(self)
    }
    fn add_device(self: Box<Self>, _gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        Ok(self)
    }
}

impl Measurable for CpuAccess {
    fn moves(&self) -> Moves {
        // Reading the buffer stands for the CPU's side of a device-to-host copy.
        Moves::one_way(!self.read, self.size)
    }

    fn sample(&mut self, _gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let host = &mut self.host;
        let threads = self.pool.current_num_threads();
        let wall = Stopwatch::start();
        for _ in 0..batch {
            if self.read {
                let src = host.as_slice();
                let dst = &mut self.scratch;
                self.pool
                    .install(|| crate::cuda::parallel_copy(dst, src, threads));
            } else {
                let (buf, seed) = (host.as_mut_slice(), self.seed);
                self.pool
                    .install(|| crate::cuda::fill_pattern(buf, 0, seed));
            }
        }
        let wall_ms = wall.ms();
        let lane = self.moves().lanes()[0];
        Ok(SampleTimes {
            lanes: vec![(lane, wall_ms)],
            wall_ms,
            event_ms: vec![],
            register_ms: None,
            unregister_ms: None,
            load: None,
        })
    }
}

impl Transfer for CpuAccess {
    fn verify(&mut self, _gpu: &Gpu) -> Result<Verified, CudaError> {
        let host = &self.host;
        let (bad, first) = if self.read {
            crate::cuda::check_pattern(&self.scratch, 0, self.seed)
        } else {
            crate::cuda::check_pattern(host.as_slice(), 0, self.seed)
        };
        Ok(Verified::of(self.moves().lanes()[0], bad, first))
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        footprint_of(&self.host, &mut fp);
        fp.pageable += self.scratch.len() as u64;
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let CpuAccess {
            host,
            scratch,
            setup,
            ..
        } = *self;
        drop(scratch);
        free_all([host], setup)
    }
}
