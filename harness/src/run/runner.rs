//! What a run opens once on its GPU: device, kernels, spin gate, machine facts, observers.

use super::probes::ceiling_cap;
use crate::Error;
use crate::cuda::{self, Gate, Gpu as CudaGpu, Kernels};
use crate::platform::{DriverModel, GpuDriverModel, GpuInfo, Machine};
use crate::probe::{self, GpuContext, Ledger, Observers};

/// Everything a run needs from the GPU, opened once.
/// Fields drop in declaration order: everything that lives in the GPU context (kernels, gate)
/// must go before `gpu`, which releases the context.
pub struct Runner {
    pub kernels: Kernels,
    pub gate: Gate,
    pub machine: Machine,
    pub ledger: Ledger,
    pub observers: Observers,
    /// Cap of the pinned-ceiling probe (bytes).
    pub pinned_cap: u64,
    /// Whether `machine.settings` holds the under-load readings yet.
    under_load_read: bool,
    pub gpu: CudaGpu,
}

impl Runner {
    /// Fills the settings' under-load fields (the sampling transfer, once per runner). A run
    /// calls it after its cases: the transfer changes what small copies measure after it.
    pub fn read_settings_under_load(&mut self) {
        if self.under_load_read {
            return;
        }
        self.under_load_read = true;
        if let (Some(settings), Some(info)) = (&mut self.machine.settings, &self.machine.gpu) {
            super::settings::record_under_load(settings, info);
        }
    }
}

/// Opens the GPU, loads the kernels and sets up the observers; one sentence on failure.
pub fn open_runner(device: u32, anonymize: bool) -> Result<Runner, Error> {
    let gpu = CudaGpu::open(device).map_err(|e| Error::NoGpu(e.sentence()))?;
    let kernels = Kernels::load(&gpu).map_err(|error| Error::Cuda {
        doing: "load its kernels (pinscope.ptx, embedded in the binary) into the GPU",
        error,
    })?;
    let gate = Gate::new().map_err(|error| Error::Cuda {
        doing: "allocate the page-locked flag its timed copies start on",
        error,
    })?;
    let mut machine = crate::platform::this_machine(anonymize);
    let info = gpu_info(&gpu);
    machine.settings = Some(super::settings::record_settings(&gpu, &info));
    machine.gpu = Some(info);
    let ledger = Ledger::new();
    let facts = gpu.facts();
    let observers = Observers::for_this_machine(GpuContext {
        uuid: (!facts.uuid.is_empty()).then(|| facts.uuid.clone()),
        luid: facts.luid,
        cuda_mem: Some(Box::new(|| {
            cuda::cuda_mem_info().map_err(|e| e.to_string())
        })),
        ledger: ledger.clone(),
    });
    let pinned_cap = ceiling_cap(None, machine.ram_bytes)?;
    Ok(Runner {
        pinned_cap,
        under_load_read: false,
        gpu,
        kernels,
        gate,
        machine,
        ledger,
        observers,
    })
}

fn gpu_info(gpu: &CudaGpu) -> GpuInfo {
    let f = gpu.facts();
    let nv = probe::nvml_facts((!f.uuid.is_empty()).then_some(f.uuid.as_str()));
    let mut g = GpuInfo {
        index: gpu.ordinal(),
        name: f.name.clone(),
        uuid: f.uuid.clone(),
        compute_capability: f.compute_capability.clone(),
        // The machine record has no unknown size: 0 when the driver did not say.
        total_memory_bytes: f.total_memory.unwrap_or(0),
        driver_version: String::new(),
        cuda_driver_version: f.cuda_driver_version.clone(),
        pci_bus_id: f.pci_bus_id.clone(),
        driver_model: if cfg!(windows) {
            GpuDriverModel::Windows(if f.tcc {
                DriverModel::Tcc
            } else {
                DriverModel::Wddm
            })
        } else {
            GpuDriverModel::Linux
        }
        .into(),
        integrated: f.integrated,
        can_map_host_memory: f.can_map_host_memory,
        luid: f
            .luid
            .map(|l| l.iter().map(|b| format!("{b:02x}")).collect()),
        multiprocessors: f.multiprocessors,
        async_engines: f.async_engines,
        ..Default::default()
    };
    if let Some(nv) = nv {
        g.driver_version = nv.driver_version;
        if cfg!(windows)
            && let Some(model) = nv.driver_model
        {
            g.driver_model = model.into();
        }
        g.pcie = nv.pcie;
    }
    g
}
