//! `nvml`: device memory and PCIe link as NVML reports them. `nvml-wrapper` loads
//! `libnvidia-ml` / `nvml.dll` at run time; when it is absent the observer is unavailable.
//!
//! NVML's per-process memory is not available under WDDM or in WSL2 (Windows' kernel driver owns
//! the memory); that is recorded as a note, never as a number.

use super::{Observer, Reading};
use crate::accounting::ObserverId;
use crate::platform::{GpuDriverModel, PcieLink};
use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

/// What NVML says about the device, for the machine description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NvmlFacts {
    pub name: String,
    /// e.g. `580.159.04`.
    pub driver_version: String,
    /// CUDA version the driver supports, e.g. `13.0`.
    pub cuda_version: String,
    /// `wddm` or `tcc` on Windows, `linux` elsewhere; `None` when NVML cannot tell.
    pub driver_model: Option<GpuDriverModel>,
    pub pcie: PcieLink,
}

/// `GPU-` + the UUID, as NVML spells it.
fn nvml_uuid(uuid: &str) -> String {
    if uuid.starts_with("GPU-") || uuid.starts_with("MIG-") {
        uuid.to_string()
    } else {
        format!("GPU-{uuid}")
    }
}

/// Opens NVML and finds the device: by UUID, or index 0 only when no UUID is given.
pub(super) fn open(uuid: Option<&str>) -> Result<(Nvml, u32), String> {
    let nvml = Nvml::init().map_err(|e| format!("NVML not loaded: {e}"))?;
    let index = match uuid {
        Some(u) => {
            let u = nvml_uuid(u);
            let dev = nvml
                .device_by_uuid(u.as_str())
                .map_err(|e| format!("NVML has no device {u}: {e}"))?;
            dev.index()
                .map_err(|e| format!("NVML device {u} has no index: {e}"))?
        }
        None => {
            nvml.device_by_index(0)
                .map_err(|e| format!("NVML has no device 0: {e}"))?;
            0
        }
    };
    Ok((nvml, index))
}

#[cfg(windows)]
fn driver_model(dev: &nvml_wrapper::Device) -> Option<GpuDriverModel> {
    use crate::platform::DriverModel;
    use nvml_wrapper::enum_wrappers::device::DriverModel as Nv;
    let model = match dev.driver_model().ok()?.current {
        Nv::WDDM => DriverModel::Wddm,
        Nv::WDM => DriverModel::Tcc,
    };
    Some(GpuDriverModel::Windows(model))
}

#[cfg(not(windows))]
fn driver_model(_dev: &nvml_wrapper::Device) -> Option<GpuDriverModel> {
    Some(GpuDriverModel::Linux)
}

/// NVML's description of the device with this UUID (or device 0 without one); `None` when NVML
/// is absent or does not know the device.
pub fn nvml_facts(uuid: Option<&str>) -> Option<NvmlFacts> {
    let (nvml, index) = open(uuid).ok()?;
    let dev = nvml.device_by_index(index).ok()?;
    let cuda_version = nvml
        .sys_cuda_driver_version()
        .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10))
        .unwrap_or_default();
    Some(NvmlFacts {
        name: dev.name().unwrap_or_default(),
        driver_version: nvml.sys_driver_version().unwrap_or_default(),
        cuda_version,
        driver_model: driver_model(&dev),
        pcie: PcieLink {
            gen_current: dev.current_pcie_link_gen().ok(),
            width_current: dev.current_pcie_link_width().ok(),
            gen_max: dev.max_pcie_link_gen().ok(),
            width_max: dev.max_pcie_link_width().ok(),
        },
    })
}

/// Free and total memory of device 0 per NVML, for `plan` (no CUDA context); `None` without NVML.
pub fn nvml_memory() -> Option<(u64, u64)> {
    let (nvml, index) = open(None).ok()?;
    let m = nvml.device_by_index(index).ok()?.memory_info().ok()?;
    Some((m.free, m.total))
}

pub struct NvmlObserver {
    nvml: Nvml,
    index: u32,
    notes: Vec<String>,
}

impl NvmlObserver {
    /// Loads NVML and finds the device by UUID (index 0 only when `uuid` is `None`); unavailable,
    /// with the reason, when either fails.
    pub fn open(uuid: Option<&str>) -> Box<dyn Observer> {
        super::opened(ObserverId::Nvml, open(uuid), |(nvml, index)| NvmlObserver {
            nvml,
            index,
            notes: Vec::new(),
        })
    }
}

impl Observer for NvmlObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Nvml
    }

    fn detail(&self) -> Option<String> {
        let name = self.nvml.device_by_index(self.index).ok()?.name().ok()?;
        Some(format!("device {}: {name}", self.index))
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let index = self.index;
        let dev = self
            .nvml
            .device_by_index(index)
            .map_err(|e| format!("device {index}: {e}"))?;
        let mem = dev.memory_info().map_err(|e| format!("memory info: {e}"))?;
        let mut out = vec![
            Reading::bytes("used", mem.used),
            Reading::bytes("free", mem.free),
            Reading::bytes("total", mem.total),
            Reading::bytes("reserved", mem.reserved),
        ];
        let pid = std::process::id();
        match dev.running_compute_processes() {
            Ok(procs) => {
                // A process that is not a CUDA client (yet) is not listed: nothing to report.
                if let Some(p) = procs.iter().find(|p| p.pid == pid) {
                    match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => out.push(Reading::bytes("process_used", b)),
                        UsedGpuMemory::Unavailable => self
                            .notes
                            .push("per-process memory unavailable (WDDM/WSL2)".into()),
                    }
                }
            }
            Err(e) => self
                .notes
                .push(format!("per-process memory unavailable: {e}")),
        }
        let counts = [
            ("pcie_gen", dev.current_pcie_link_gen()),
            ("pcie_width", dev.current_pcie_link_width()),
            ("pcie_gen_max", dev.max_pcie_link_gen()),
            ("pcie_width_max", dev.max_pcie_link_width()),
        ];
        for (metric, v) in counts {
            match v {
                Ok(v) => out.push(Reading::count(metric, u64::from(v))),
                Err(e) => self.notes.push(format!("{metric}: {e}")),
            }
        }
        Ok(out)
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_prefix() {
        assert_eq!(nvml_uuid("GPU-1234"), "GPU-1234");
        assert_eq!(nvml_uuid("1234"), "GPU-1234");
        assert_eq!(nvml_uuid("MIG-ab"), "MIG-ab");
    }

    #[test]
    fn never_panics_with_or_without_nvml() {
        let mut o = NvmlObserver::open(Some("GPU-00000000-0000-0000-0000-000000000000"));
        // No such device anywhere: unavailable with a reason, and read says the same.
        let why = o.unavailable().expect("no device has the all-zero UUID");
        assert!(!why.is_empty());
        assert!(o.read().is_err());
        let mut any = NvmlObserver::open(None);
        match any.unavailable() {
            Some(r) => assert!(!r.is_empty()),
            None => {
                // A machine with an NVIDIA driver: the numbers must be coherent.
                let r = any.read().expect("NVML memory info");
                println!("nvml readings: {r:?}\nnotes: {:?}", any.take_notes());
                println!("detail: {:?}\nfacts: {:?}", any.detail(), nvml_facts(None));
                let get = |m: &str| r.iter().find(|r| r.metric == m).map(|r| r.value);
                let total = get("total").unwrap_or(0.0);
                assert!(total > 0.0);
                assert!(get("used").unwrap_or(f64::MAX) <= total);
            }
        }
        let _ = nvml_facts(None);
    }
}
