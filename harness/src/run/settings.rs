//! Recording the settings that change a transfer's answer, for one opened GPU: the CUDA
//! environment, the device attributes, the host files (Linux, WSL2), NVML idle, the Windows
//! settings; then, by [`record_under_load`], a short pinned host→device transfer during which
//! NVML is read again (links and clocks drop when the GPU idles) and after which the pinned
//! pages' NUMA nodes and the issuing thread's CPU are read. A run makes that transfer after its
//! last case, never before the first: its 2 GiB of copies left the small pageable device→host
//! copies measured after it in the same process ~1.1 µs slower on an H200 (the driver-API probe
//! alike, in a context of its own too; `docs/latency.md`), so every case would have measured it.

use crate::cuda::{self, DeviceAttribute, DeviceBuffer, Event, HostBuffer, HostFlags, Stream};
use crate::platform::host_settings::{self, HostTree};
use crate::platform::{GpuInfo, Setting, Settings, Source, set_unavailable};
use crate::probe::{self, NvmlSettings};
use crate::units::MIB;
use std::path::Path;

/// Bytes of each copy of the sampling transfer.
const COPY_BYTES: usize = (64 * MIB) as usize;
/// Copies queued before NVML is read (the link retrains to full speed during these).
const WARM_COPIES: usize = 4;

/// The settings of this machine and `gpu` (described by `info`) that need no transfer, read
/// now; the under-load fields say they are read after the run's cases until
/// [`record_under_load`] fills them.
pub fn record_settings(gpu: &cuda::Gpu, info: &GpuInfo) -> Settings {
    let mut s = Settings::all_unavailable("not read");
    s.fill_env(|name| std::env::var(name).ok());
    fill_attributes(&mut s, gpu);
    let root = Path::new("/");
    if cfg!(windows) {
        fill_linux_only(&mut s);
    } else {
        host_settings::fill_host_files(&mut s, HostTree::new(root), Some(&info.pci_bus_id));
    }
    match open_nvml(info) {
        Ok(n) => n.fill_idle(&mut s),
        Err(why) => probe::fill_without_nvml(&mut s, &why),
    }
    probe::fill_windows_settings(&mut s, gpu.facts().luid);
    mark_under_load(&mut s, UNDER_LOAD_PENDING);
    s
}

/// What the under-load fields say until [`record_under_load`] has run.
pub const UNDER_LOAD_PENDING: &str = "read during a transfer after the run's last case";

/// The fields the sampling transfer fills, all `unavailable: <why>`.
fn mark_under_load(s: &mut Settings, why: &str) {
    probe::fill_under_load_without_nvml(s, why);
    if !cfg!(windows) {
        s.pinned_pages_nodes = Setting::unavailable(why);
        s.copy_thread_cpu = Setting::unavailable(why);
    }
}

fn open_nvml(info: &GpuInfo) -> Result<NvmlSettings, String> {
    NvmlSettings::open((!info.uuid.is_empty()).then_some(info.uuid.as_str()))
}

/// Fills the under-load fields of `s`: makes the sampling transfer on the current GPU and reads
/// NVML during it (see the module's words on why a run calls this after its cases).
pub fn record_under_load(s: &mut Settings, info: &GpuInfo) {
    let nvml = open_nvml(info);
    if let Err(why) = sample_under_load(s, nvml.as_ref().ok(), Path::new("/")) {
        mark_under_load(s, &format!("the sampling transfer failed: {why}"));
    }
}

/// The settings of a machine without a usable GPU: what the host files and the environment say,
/// every GPU field `unavailable: <why>`.
pub fn record_settings_without_gpu(why: &str) -> Settings {
    let mut s = Settings::all_unavailable(why);
    s.fill_env(|name| std::env::var(name).ok());
    if cfg!(windows) {
        fill_linux_only(&mut s);
    } else {
        host_settings::fill_host_files(&mut s, HostTree::new(Path::new("/")), None);
        s.gpu_numa_node = Setting::unavailable(why);
    }
    probe::fill_windows_settings(&mut s, None);
    s
}

fn fill_linux_only(s: &mut Settings) {
    set_unavailable!(s, "Linux and WSL2 only"; gpu_numa_node, pinned_pages_nodes, copy_thread_cpu,
        cpu_governor, cpu_model, kernel_release, distribution, mem_total, dev_dxg, libdxcore);
}

fn fill_attributes(s: &mut Settings, gpu: &cuda::Gpu) {
    let flag = |a: DeviceAttribute| {
        Setting::from_result(
            gpu.attribute(a).map(|v| v != 0),
            Source::Cuda(a.name().into()),
        )
    };
    s.can_map_host_memory = flag(DeviceAttribute::CanMapHostMemory);
    s.unified_addressing = flag(DeviceAttribute::UnifiedAddressing);
    s.can_use_host_pointer_for_registered_mem =
        flag(DeviceAttribute::CanUseHostPointerForRegisteredMem);
    s.host_register_supported = flag(DeviceAttribute::HostRegisterSupported);
    s.pageable_memory_access = flag(DeviceAttribute::PageableMemoryAccess);
    s.concurrent_managed_access = flag(DeviceAttribute::ConcurrentManagedAccess);
    let engines = DeviceAttribute::AsyncEngineCount;
    s.async_engine_count = Setting::from_result(
        gpu.attribute(engines)
            .map(|v| u32::try_from(v).unwrap_or(0)),
        Source::Cuda(engines.name().into()),
    );
}

/// Queues pinned host→device copies, reads NVML once the first copies have finished and while
/// the rest are in flight (queueing more copies and trying again, up to three times, when
/// they finished first), then reads where the pinned pages lie and the issuing thread's CPU.
fn sample_under_load(
    s: &mut Settings,
    nvml: Option<&NvmlSettings>,
    root: &Path,
) -> Result<(), cuda::CudaError> {
    let host = HostBuffer::pinned(COPY_BYTES, HostFlags::default())?;
    let dev = DeviceBuffer::new(COPY_BYTES)?;
    let stream = Stream::new()?;
    let (warm, done) = (Event::new()?, Event::new()?);
    let mut sampled_in_flight = false;
    for copies in [32, 128, 512] {
        for i in 0..copies {
            stream.copy_h2d(&dev, 0, &host, 0, COPY_BYTES)?;
            if i + 1 == WARM_COPIES {
                warm.record(&stream)?;
            }
        }
        done.record(&stream)?;
        warm.spin_wait()?;
        if let Some(n) = nvml {
            n.fill_under_load(s);
        }
        sampled_in_flight = !done.is_complete()?;
        stream.synchronize()?;
        if sampled_in_flight {
            break;
        }
    }
    if nvml.is_none() {
        probe::fill_under_load_without_nvml(s, "NVML is not available");
    } else if !sampled_in_flight {
        probe::fill_under_load_without_nvml(
            s,
            "the copies finished before NVML answered, three times: no reading during a transfer",
        );
    }
    if !cfg!(windows) {
        let tree = HostTree::new(root);
        s.pinned_pages_nodes = host_settings::pinned_pages_nodes(tree, host.address());
        s.copy_thread_cpu = host_settings::thread_cpu(tree);
    }
    Ok(())
}
