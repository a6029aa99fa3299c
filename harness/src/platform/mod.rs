//! Who and what this machine is: OS, Linux vs WSL2 vs WSL1 vs Windows, kernel, CPU, RAM, host
//! name, and (filled by the CUDA layer) the GPU and its driver.

use serde::{Deserialize, Serialize};

mod detect;
mod devices;
pub mod host_settings;
mod settings;
pub use detect::*;
pub use devices::*;
pub use settings::*;

/// The platform families pinscope tells apart; they observe memory differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Linux,
    Wsl2,
    Wsl1,
    Windows,
    Other,
}

impl RecordedName for Platform {
    const ALL: &'static [Self] = &[
        Platform::Linux,
        Platform::Wsl2,
        Platform::Wsl1,
        Platform::Windows,
        Platform::Other,
    ];
    fn name(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Wsl2 => "wsl2",
            Platform::Wsl1 => "wsl1",
            Platform::Windows => "windows",
            Platform::Other => "other",
        }
    }
}

/// What results files record as a GPU's driver model: a Windows driver model, or `linux` where
/// the GPU has none (Linux, WSL2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuDriverModel {
    Windows(DriverModel),
    Linux,
}

impl RecordedName for GpuDriverModel {
    const ALL: &'static [Self] = &[
        GpuDriverModel::Windows(DriverModel::Wddm),
        GpuDriverModel::Windows(DriverModel::Tcc),
        GpuDriverModel::Windows(DriverModel::Mcdm),
        GpuDriverModel::Linux,
    ];
    fn name(self) -> &'static str {
        match self {
            GpuDriverModel::Windows(DriverModel::Wddm) => "wddm",
            GpuDriverModel::Windows(DriverModel::Tcc) => "tcc",
            GpuDriverModel::Windows(DriverModel::Mcdm) => "mcdm",
            GpuDriverModel::Linux => "linux",
        }
    }
}

/// A value results files write by one name.
pub trait RecordedName: Copy + PartialEq + 'static {
    /// Every value.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
}

/// A value as a results file records it: one this version knows, or text it does not know
/// (written by another version, or empty where nothing was recorded), kept as read so the file
/// is written back byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded<T> {
    Known(T),
    Unknown(String),
}

impl<T: RecordedName> Recorded<T> {
    /// The value written as `text`.
    pub fn read(text: &str) -> Self {
        match T::ALL.iter().find(|v| v.name() == text) {
            Some(v) => Recorded::Known(*v),
            None => Recorded::Unknown(text.to_string()),
        }
    }
    /// The text it is written as.
    pub fn text(&self) -> &str {
        match self {
            Recorded::Known(v) => v.name(),
            Recorded::Unknown(s) => s,
        }
    }
    pub fn known(&self) -> Option<T> {
        match self {
            Recorded::Known(v) => Some(*v),
            Recorded::Unknown(_) => None,
        }
    }
    /// Whether it is `value`.
    pub fn is(&self, value: T) -> bool {
        self.known() == Some(value)
    }
    /// Whether anything was recorded (the text is not empty).
    pub fn is_recorded(&self) -> bool {
        !self.text().is_empty()
    }
}

/// Nothing recorded: empty text.
impl<T> Default for Recorded<T> {
    fn default() -> Self {
        Recorded::Unknown(String::new())
    }
}

impl<T> From<T> for Recorded<T> {
    fn from(v: T) -> Self {
        Recorded::Known(v)
    }
}

impl<T: RecordedName> std::fmt::Display for Recorded<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.text())
    }
}

impl<T: RecordedName> Serialize for Recorded<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text())
    }
}

impl<'de, T: RecordedName> Deserialize<'de> for Recorded<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Recorded::read(&s))
    }
}

/// The GPU a run used, as the CUDA driver (and NVML, where present) describe it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// CUDA device ordinal.
    pub index: u32,
    pub name: String,
    /// `GPU-xxxxxxxx-...` as nvidia-smi prints it.
    pub uuid: String,
    /// e.g. `9.0`.
    pub compute_capability: String,
    pub total_memory_bytes: u64,
    /// NVIDIA display driver version (NVML), e.g. `580.159.04`.
    pub driver_version: String,
    /// CUDA version the driver supports (`cuDriverGetVersion`), e.g. `13.0`.
    pub cuda_driver_version: String,
    /// `0000:17:00.0`.
    pub pci_bus_id: String,
    /// `wddm`, `tcc`, `mcdm` on Windows, `linux` elsewhere.
    pub driver_model: Recorded<GpuDriverModel>,
    pub integrated: bool,
    pub can_map_host_memory: bool,
    /// Windows adapter LUID (hex), where the platform has one.
    pub luid: Option<String>,
    /// Stored as the flat `pcie_*` fields of earlier files.
    #[serde(flatten)]
    pub pcie: PcieLink,
    pub multiprocessors: u32,
    pub async_engines: u32,
    /// NUMA node of the GPU's PCI device (Linux sysfs), where the host reports one.
    #[serde(default)]
    pub numa_node: Option<u32>,
}

/// A GPU's PCIe link as NVML reports it: generation and width, current and maximum; `None`
/// where NVML is absent or does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieLink {
    #[serde(rename = "pcie_gen_current")]
    pub gen_current: Option<u32>,
    #[serde(rename = "pcie_width_current")]
    pub width_current: Option<u32>,
    #[serde(rename = "pcie_gen_max")]
    pub gen_max: Option<u32>,
    #[serde(rename = "pcie_width_max")]
    pub width_max: Option<u32>,
}

impl PcieLink {
    /// The current link as `gen5x16`; `None` unless both generation and width are known.
    pub fn current(&self) -> Option<String> {
        Some(format!("gen{}x{}", self.gen_current?, self.width_current?))
    }
}

/// This machine, as recorded in every results file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Host name, or `anon-<8 hex digits of FNV-1a>` with `--anonymize`.
    pub host_name: String,
    pub platform: Recorded<Platform>,
    /// Why the platform was classified as it was (`osrelease contains microsoft-standard-WSL2`).
    pub platform_evidence: Vec<String>,
    /// Distribution / edition and version, e.g. `Ubuntu 24.04.1 LTS`.
    pub os: String,
    pub kernel: String,
    pub cpu: String,
    pub cpu_threads: u32,
    pub ram_bytes: u64,
    pub gpu: Option<GpuInfo>,
    /// The settings that change a transfer's answer; absent in files written before pinscope
    /// recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
}

impl Machine {
    /// The fields repeated in each CSV row.
    pub fn key(&self) -> MachineKey {
        let gpu = self.gpu.as_ref();
        MachineKey {
            host_name: self.host_name.clone(),
            platform: self.platform.clone(),
            os: self.os.clone(),
            driver_model: gpu.map(|g| g.driver_model.clone()).unwrap_or_default(),
            gpu: gpu.map(|g| g.name.clone()).unwrap_or_default(),
            driver_version: gpu.map(|g| g.driver_version.clone()).unwrap_or_default(),
            pcie_link: gpu.and_then(|g| g.pcie.current()).unwrap_or_default(),
        }
    }
}

/// Machine fields repeated in every CSV row so one CSV alone can be compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineKey {
    pub host_name: String,
    /// `linux`, `wsl2`, `wsl1`, `windows`, `other`.
    pub platform: Recorded<Platform>,
    /// e.g. `Ubuntu 24.04`, `Windows 11 Pro 23H2`.
    pub os: String,
    /// `wddm`, `tcc`, `mcdm`, or `linux` (no Windows driver model); empty without a GPU.
    pub driver_model: Recorded<GpuDriverModel>,
    pub gpu: String,
    pub driver_version: String,
    /// PCIe link as `gen5x16` (current), empty when unknown.
    pub pcie_link: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A published sidecar of a multi-GPU run (link known on every GPU), copied into the crate.
    const PUBLISHED: &str = include_str!("../../tests/fixtures/platform/multi-gpu-sidecar.json");

    #[test]
    fn gpus_read_and_write_the_flat_pcie_fields_of_published_files() {
        let file: serde_json::Value = serde_json::from_str(PUBLISHED).expect("published JSON");
        let mut gpus = vec![&file["machine"]["gpu"]];
        gpus.extend(file["gpus"].as_array().expect("gpus"));
        for recorded in gpus {
            let g: GpuInfo = serde_json::from_value(recorded.clone()).expect("a GpuInfo");
            assert_eq!(g.pcie.current().as_deref(), Some("gen5x16"));
            assert_eq!((g.pcie.gen_max, g.pcie.width_max), (Some(5), Some(16)));
            let written = serde_json::to_value(&g).expect("serialize");
            assert_eq!(&written, recorded, "written as it was read");
        }
    }

    /// Every name reads back as its value; text this version does not know, and the empty text
    /// of a run without a GPU, are kept as read and written back unchanged.
    #[test]
    fn recorded_names_round_trip() {
        for p in Platform::ALL {
            assert_eq!(Recorded::read(p.name()), Recorded::Known(*p));
        }
        for m in GpuDriverModel::ALL {
            assert_eq!(Recorded::read(m.name()).known(), Some(*m));
        }
        for text in ["macos", "", "WDDM"] {
            let r: Recorded<GpuDriverModel> = Recorded::read(text);
            assert_eq!(r.known(), None);
            assert_eq!(r.text(), text);
            let json = serde_json::to_string(&r).expect("serialize");
            let back: Recorded<GpuDriverModel> = serde_json::from_str(&json).expect("read");
            assert_eq!(back, r);
        }
        let key = Machine::default().key();
        assert!(!key.platform.is_recorded() && !key.driver_model.is_recorded());
        let tcc: Recorded<GpuDriverModel> = Recorded::read("tcc");
        assert!(tcc.is(GpuDriverModel::Windows(DriverModel::Tcc)));
        assert_eq!(serde_json::to_string(&tcc).expect("serialize"), "\"tcc\"");
    }

    #[test]
    fn an_unknown_link_is_empty_in_the_csv_key() {
        let half = PcieLink {
            gen_current: Some(4),
            ..PcieLink::default()
        };
        assert_eq!(half.current(), None);
        let machine = Machine {
            gpu: Some(GpuInfo {
                pcie: half,
                ..GpuInfo::default()
            }),
            ..Machine::default()
        };
        assert_eq!(machine.key().pcie_link, "");
    }
}
