//! Transfer strategies, one file each, behind one trait.
//!
//! The runner drives every strategy through the same phases so the memory observers can take a
//! snapshot between them, with the host memory on its own before any device memory exists:
//! [`allocate`] (host and staging memory) → [`HostSide::touch`] (the verification pattern or
//! zeros: first touch of every page) → [`HostSide::add_device`] (device memory and streams,
//! allocated and first touched) → [`Transfer::sample`] ×N → [`Transfer::verify`] →
//! [`Transfer::free`]. Sampling itself is [`crate::measure`]'s: a [`Transfer`] is a
//! [`Measurable`] the sampling loop drives, and its batches are timed with measure's clocks.

mod bidirectional;
mod chase;
pub mod churn;
mod copy_engine;
mod cpu_access;
mod device_local;
mod empty;
#[cfg(target_os = "linux")]
mod file_load;
mod latency;
#[cfg(target_os = "linux")]
mod load_cufile;
#[cfg(target_os = "linux")]
mod load_mmap;
#[cfg(target_os = "linux")]
mod load_pinned;
#[cfg(target_os = "linux")]
mod load_read;
#[cfg(target_os = "linux")]
pub mod load_register;
#[cfg(target_os = "linux")]
mod load_ring;
mod one_way;
mod register_per_copy;
mod staged;
mod zero_copy;

use crate::cuda::{CudaError, DeviceBuffer, HostBuffer, Stream};
use crate::measure::{Gpu, Measurable, Moves, SampleTimes};
use crate::scenario::Lane;
use crate::scenario::{Case, Direction, Engine, HostKind, Load, Route};
pub(crate) use one_way::{Enqueue, OneWay, OneWayHost, Rig};

/// Result of checking the moved data.
#[derive(Debug, Clone, PartialEq)]
pub enum Verified {
    Yes,
    /// Nothing lands anywhere that could be checked (read-only kernels).
    NotApplicable,
    /// Mismatching 32-bit words and the first bad word index.
    Mismatch {
        lane: Lane,
        bad_words: u64,
        first: Option<u64>,
    },
    /// Pinned churn (`mode = "churn"`): copies whose data was wrong, of all copies made.
    Copies {
        lane: Lane,
        bad_copies: u32,
        copies: u32,
    },
}

impl Verified {
    /// `Yes` when no word of `lane` was bad, else the mismatch.
    pub fn of(lane: Lane, bad_words: u64, first: Option<u64>) -> Verified {
        if bad_words == 0 {
            Verified::Yes
        } else {
            Verified::Mismatch {
                lane,
                bad_words,
                first,
            }
        }
    }
}

/// Setup costs of the host memory (ms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetupTimes {
    pub alloc_ms: Option<f64>,
    pub register_ms: Option<f64>,
    pub unregister_ms: Option<f64>,
    pub free_ms: Option<f64>,
}

impl SetupTimes {
    /// The allocation (and registration) time of one host buffer.
    pub(crate) fn of(host: &HostBuffer) -> SetupTimes {
        Self::of_all(&[host])
    }

    /// The allocation and registration times of host buffers added up (registration only when
    /// every buffer was registered).
    pub(crate) fn of_all(hosts: &[&HostBuffer]) -> SetupTimes {
        SetupTimes {
            alloc_ms: Some(hosts.iter().map(|h| h.alloc_ms).sum()),
            register_ms: hosts.iter().map(|h| h.register_ms).sum(),
            ..Default::default()
        }
    }
}

/// Bytes a strategy holds, for the ledger.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footprint {
    pub pinned_alloc: u64,
    pub registered: u64,
    pub managed: u64,
    pub staging: u64,
    pub device: u64,
    pub pageable: u64,
}

/// A transfer whose host memory is allocated and no device memory yet: what page-locked (or
/// pageable) memory costs is observed here on its own, before the device buffers add theirs.
pub trait HostSide {
    /// First touch of the host memory: sources get the pattern, destinations zeros.
    fn touch(&mut self);
    /// Host memory held (no device bytes).
    fn footprint(&self) -> Footprint;
    /// Allocates the device memory and the streams and first-touches the device memory: the
    /// transfer ready to run. On an error every buffer is released (host buffers by `Drop`).
    fn add_device(self: Box<Self>, gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError>;
}

/// The host side of a strategy that holds no host memory before it runs (device-local kernels;
/// pinned churn, whose cycles allocate their own): everything is made by `add_device`.
pub(crate) struct NoHostMemory(Box<AddDevice>);

/// What makes a [`NoHostMemory`] strategy's transfer: its device memory, allocated and touched.
type AddDevice = dyn FnOnce(&Gpu) -> Result<Box<dyn Transfer>, CudaError>;

impl HostSide for NoHostMemory {
    fn touch(&mut self) {}
    fn footprint(&self) -> Footprint {
        Footprint::default()
    }
    fn add_device(self: Box<Self>, gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        (self.0)(gpu)
    }
}

/// An allocated, first-touched, ready-to-run transfer: what it moves and how a batch of it is
/// run and timed ([`Measurable`], which the sampling loop drives), and what the runner does
/// around the samples.
pub trait Transfer: Measurable {
    /// Checks the destination holds the pattern.
    fn verify(&mut self, gpu: &Gpu) -> Result<Verified, CudaError>;
    /// Setup costs so far.
    fn setup(&self) -> SetupTimes;
    /// Memory held, by kind.
    fn footprint(&self) -> Footprint;
    /// Frees everything, returning the setup costs including unregister/free times.
    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError>;
}

/// Seed of the verification pattern for a case (differs per case so stale data fails).
pub fn seed_for(case: &Case) -> u32 {
    0x5EED_0000 ^ (case.index as u32).wrapping_mul(0x0101_0101) ^ case.size as u32
}

/// The engines that move host memory, as [`host_route`] takes them: every other engine has no
/// host buffer and is allocated in [`allocate`] directly.
#[derive(Clone, Copy)]
enum HostEngine {
    /// The copy engine (`cuMemcpy*Async`).
    Copy,
    /// A kernel reading or writing mapped host memory.
    ZeroCopy,
    /// The CPU reading or writing the memory.
    Cpu,
}

/// Allocates the host memory a case needs (nothing is touched yet, no device memory exists).
pub fn allocate(case: &Case) -> Result<Box<dyn HostSide>, CudaError> {
    let engine = match case.engine {
        Engine::Empty => {
            let case = case.clone();
            return Ok(Box::new(NoHostMemory(Box::new(move |_| {
                empty::EmptyKernel::allocate(&case).map(|t| Box::new(t) as Box<dyn Transfer>)
            }))));
        }
        Engine::Chase | Engine::ChaseRandom => return Ok(Box::new(chase::Chase::allocate(case)?)),
        Engine::DeviceRead
        | Engine::DeviceWrite
        | Engine::DeviceCopy
        | Engine::DeviceCopyEngine => {
            let case = case.clone();
            return Ok(Box::new(NoHostMemory(Box::new(move |gpu| {
                device_local::DeviceLocal::allocate(&case, gpu)
                    .map(|t| Box::new(t) as Box<dyn Transfer>)
            }))));
        }
        Engine::Copy => HostEngine::Copy,
        Engine::Kernel | Engine::KernelRead | Engine::KernelWrite => HostEngine::ZeroCopy,
        Engine::CpuRead | Engine::CpuWrite => HostEngine::Cpu,
    };
    host_route(case, engine)
}

/// Allocates the host side of a case whose engine moves host memory, by its route.
fn host_route(case: &Case, engine: HostEngine) -> Result<Box<dyn HostSide>, CudaError> {
    Ok(match (case.route(), engine, case.direction) {
        (Route::Churn { pause, .. }, _, _) => {
            let case = case.clone();
            Box::new(NoHostMemory(Box::new(move |_| {
                churn::Churn::allocate(&case, pause).map(|t| Box::new(t) as Box<dyn Transfer>)
            })))
        }
        (
            Route::Staged {
                chunk,
                ring,
                threads,
            },
            _,
            _,
        ) => Box::new(staged::Staged::allocate(case, chunk, ring, threads)?),
        (Route::Load { how, cache }, _, _) => load_route(case, how, cache)?,
        (Route::Latency { call, wait }, _, _) => {
            Box::new(latency::Latency::allocate(case, call, wait)?)
        }
        (Route::RegisterPerCopy { slice }, _, _) => {
            Box::new(register_per_copy::RegisterPerCopy::allocate(case, slice)?)
        }
        (Route::Direct, HostEngine::ZeroCopy, _) => Box::new(zero_copy::ZeroCopy::allocate(case)?),
        (Route::Direct, HostEngine::Cpu, _) => Box::new(cpu_access::CpuAccess::allocate(case)?),
        (Route::Direct, HostEngine::Copy, Direction::Bidirectional) => {
            Box::new(bidirectional::BidirectionalHost::allocate(case)?)
        }
        (Route::Direct, HostEngine::Copy, _) => Box::new(copy_engine::CopyEngine::allocate(case)?),
    })
}

/// Allocates the host side of a file-load case: its way of loading and that way's buffers.
#[cfg(target_os = "linux")]
fn load_route(
    case: &Case,
    how: Load,
    cache: crate::scenario::Cache,
) -> Result<Box<dyn HostSide>, CudaError> {
    use file_load::{FileLoad, LoadWay};
    let source = case
        .source
        .clone()
        .ok_or_else(|| CudaError::new("loading a file", "the case names no file to load"))?;
    let (way, setup): (Box<dyn LoadWay>, SetupTimes) = match how {
        Load::Mmap => (
            Box::new(load_mmap::LoadMmap::default()),
            SetupTimes::default(),
        ),
        Load::Read => (
            Box::new(load_read::LoadRead::default()),
            SetupTimes::default(),
        ),
        Load::Ring {
            chunk,
            ring,
            threads,
            direct,
        } => {
            let (r, t) = load_ring::LoadRing::allocate(chunk, ring, threads, direct)?;
            (Box::new(r), t)
        }
        Load::Register => (
            Box::new(load_register::LoadRegister::new(case.measure.time_limit)),
            SetupTimes::default(),
        ),
        Load::Pinned => {
            let (p, t) = load_pinned::LoadPinned::allocate(&source)?;
            (Box::new(p), t)
        }
        Load::Cufile => (Box::new(load_cufile::LoadCufile), SetupTimes::default()),
    };
    Ok(Box::new(FileLoad::new(case, cache, way, setup)?))
}

/// File loads read files the way Linux loaders do (`mmap`, `pread`, `O_DIRECT`).
#[cfg(not(target_os = "linux"))]
fn load_route(
    _: &Case,
    _: Load,
    _: crate::scenario::Cache,
) -> Result<Box<dyn HostSide>, CudaError> {
    Err(CudaError::new(
        "loading a file",
        "the file-load modes run on Linux only",
    ))
}

/// Allocates host memory of the case's kind (registered memory is registered here).
pub(crate) fn host_buffer(case: &Case, len: usize) -> Result<HostBuffer, CudaError> {
    match case.host {
        HostKind::Pageable => HostBuffer::pageable(len),
        HostKind::Alloc => HostBuffer::pinned(len, case.flags),
        HostKind::Register => HostBuffer::registered(len, case.flags),
        HostKind::Managed => HostBuffer::managed(len),
    }
}

/// First touch of a host end of a copy: the pattern of `seed` when it is the source, zeros when
/// it is the destination.
pub(crate) fn touch_host_end(host: &mut HostBuffer, source: bool, seed: u32) {
    if source {
        crate::cuda::fill_pattern(host.as_mut_slice(), 0, seed);
    } else {
        crate::cuda::fill_zero(host.as_mut_slice());
    }
}

pub(crate) fn footprint_of(host: &HostBuffer, fp: &mut Footprint) {
    use crate::cuda::HostMem;
    let n = host.len() as u64;
    match host.mem() {
        HostMem::Pageable => fp.pageable += n,
        HostMem::Pinned(_) => fp.pinned_alloc += n,
        HostMem::Registered(_) => fp.registered += n,
        HostMem::Managed => fp.managed += n,
    }
}

/// Frees a host buffer and folds its times into `t`.
pub(crate) fn free_host(buf: HostBuffer, t: &mut SetupTimes) -> Result<(), CudaError> {
    let (unreg, free) = buf.free()?;
    if let Some(u) = unreg {
        t.unregister_ms = Some(t.unregister_ms.unwrap_or(0.0) + u);
    }
    t.free_ms = Some(t.free_ms.unwrap_or(0.0) + free);
    Ok(())
}

/// Frees the host buffers of a transfer, folding their times into `setup`; the first error wins
/// but every buffer is freed.
pub(crate) fn free_all(
    bufs: impl IntoIterator<Item = HostBuffer>,
    mut setup: SetupTimes,
) -> Result<SetupTimes, CudaError> {
    let mut first = Ok(());
    for b in bufs {
        if let Err(e) = free_host(b, &mut setup) {
            first = first.and(Err(e));
        }
    }
    first.map(|_| setup)
}

/// Checks a device buffer holds the pattern.
pub(crate) fn verify_device(
    gpu: &Gpu,
    stream: &Stream,
    buf: &DeviceBuffer,
    seed: u32,
    lane: Lane,
) -> Result<Verified, CudaError> {
    let result = DeviceBuffer::new(16)?;
    let (bad, first) = gpu.kernels.verify(stream, buf, buf.len(), seed, &result)?;
    Ok(Verified::of(lane, bad, first))
}

/// Checks a host buffer holds the pattern.
pub(crate) fn verify_host(buf: &HostBuffer, seed: u32, lane: Lane) -> Verified {
    let (bad, first) = crate::cuda::check_pattern(buf.as_slice(), 0, seed);
    Verified::of(lane, bad, first)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scenario::{HostFlags, Measure, Mode, Probes};

    pub(crate) fn test_case() -> Case {
        Case {
            scenario: "t".into(),
            label: "c".into(),
            host: HostKind::Alloc,
            flags: HostFlags::default(),
            engine: Engine::Copy,
            direction: Direction::H2d,
            mode: Mode::Direct,
            size: 1 << 20,
            chunk: None,
            ring: 3,
            streams: 1,
            threads: crate::scenario::Threads::Count(8),
            measure: Measure::default(),
            probes: Probes::default(),
            guard: true,
            ..Case::default()
        }
    }

    #[test]
    fn auto_batch_moves_at_least_256_mib_and_at_most_256_transfers() {
        let mut c = test_case();
        c.size = 16 << 10;
        assert_eq!(c.batch(), 256);
        c.size = 64 << 20;
        assert_eq!(c.batch(), 4);
        c.size = 4 << 30;
        assert_eq!(c.batch(), 1);
        c.measure.batch = 100;
        assert_eq!(c.batch(), 100);
        c.measure.batch = 0;
        c.engine = Engine::Empty;
        assert_eq!(c.batch(), crate::scenario::EMPTY_BATCH);
    }
}
