//! The settings that change a transfer's answer (PCIe link under load, clocks, NUMA placement,
//! driver model, HAGS, TDR, WSL2's VM, CUDA environment variables, the device attributes that
//! decide which strategies can work), recorded with every run.
//!
//! Each field is a [`Setting`]: a typed value with the [`Source`] it was read from, or
//! `unavailable` with the reason. Nothing is guessed: a value pinscope could not read is never
//! filled with a default. The fields are declared once, in [`settings_table!`]; the struct, its
//! JSON, the rows `info`, the report and `compare` print all come from that one table.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a setting was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A file, as read (`/sys/bus/pci/devices/0000:17:00.0/numa_node`).
    File(String),
    /// An NVML function; idle, or sampled while pinscope's own copies were in flight.
    Nvml(String),
    /// A CUDA driver call or device attribute.
    Cuda(String),
    /// An environment variable of this process.
    Env(String),
    /// A Windows registry value (`HKLM\...\Name`).
    Registry(String),
    /// A Win32 or D3DKMT call.
    Win32(String),
}

impl Source {
    /// What kind of place the value was read from, and which one (its path, call or name).
    fn kind_and_place(&self) -> (&'static str, &str) {
        match self {
            Source::File(p) => ("file", p),
            Source::Nvml(c) => ("NVML", c),
            Source::Cuda(c) => ("CUDA", c),
            Source::Env(v) => ("environment", v),
            Source::Registry(k) => ("registry", k),
            Source::Win32(c) => ("Win32", c),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, place) = self.kind_and_place();
        write!(f, "{kind} {place}")
    }
}

/// One recorded setting: its value and where it came from, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Setting<T> {
    Known { value: T, source: Source },
    Unavailable { unavailable: String },
}

impl<T> Setting<T> {
    pub fn known(value: T, source: Source) -> Self {
        Setting::Known { value, source }
    }
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Setting::Unavailable {
            unavailable: reason.into(),
        }
    }
    /// What a file written before this field existed holds.
    pub fn not_recorded() -> Self {
        Self::unavailable("not recorded (the file was written by a pinscope that did not read it)")
    }
    pub fn value(&self) -> Option<&T> {
        match self {
            Setting::Known { value, .. } => Some(value),
            Setting::Unavailable { .. } => None,
        }
    }
    /// Why it could not be read; `None` when it was.
    pub fn unavailable_reason(&self) -> Option<&str> {
        match self {
            Setting::Known { .. } => None,
            Setting::Unavailable { unavailable } => Some(unavailable),
        }
    }
    /// `Known` from `Ok`, `unavailable` with the error's text from `Err`.
    pub fn from_result<E: fmt::Display>(r: Result<T, E>, source: Source) -> Self {
        match r {
            Ok(value) => Setting::known(value, source),
            Err(e) => Setting::unavailable(format!("{source}: {e}")),
        }
    }
}

impl<T: SettingValue> Setting<T> {
    /// The value as text, or `unavailable: <reason>`.
    pub fn value_text(&self) -> String {
        match self {
            Setting::Known { value, .. } => value.render(),
            Setting::Unavailable { unavailable } => format!("unavailable: {unavailable}"),
        }
    }
    /// The source as text; empty when unavailable (the reason names what was tried).
    pub fn source_text(&self) -> String {
        match self {
            Setting::Known { source, .. } => source.to_string(),
            Setting::Unavailable { .. } => String::new(),
        }
    }
}

/// How a setting's value is written for a reader (units named).
pub trait SettingValue {
    fn render(&self) -> String;
}

impl SettingValue for bool {
    fn render(&self) -> String {
        if *self { "yes" } else { "no" }.into()
    }
}

impl SettingValue for u32 {
    fn render(&self) -> String {
        self.to_string()
    }
}

impl SettingValue for String {
    fn render(&self) -> String {
        self.clone()
    }
}

/// A size in bytes, written as MiB/GiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bytes(pub u64);

impl SettingValue for Bytes {
    fn render(&self) -> String {
        crate::units::format_size(self.0)
    }
}

/// A clock frequency in MHz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Megahertz(pub u32);

impl SettingValue for Megahertz {
    fn render(&self) -> String {
        format!("{} MHz", self.0)
    }
}

/// A time in seconds (TDR delays).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seconds(pub u32);

impl SettingValue for Seconds {
    fn render(&self) -> String {
        format!("{} s", self.0)
    }
}

/// A GPU performance state, `P0` (highest) to `P15`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PState(pub u8);

impl SettingValue for PState {
    fn render(&self) -> String {
        format!("P{}", self.0)
    }
}

/// One of NVML's clock throttle ("event") reasons (`nvmlClocksThrottleReason*`), written by
/// NVML's name (`HW_THERMAL_SLOWDOWN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ThrottleReason {
    /// Nothing is running on the GPU.
    GpuIdle,
    /// Held by the applications clocks setting (NVML's older name: user-defined clocks).
    #[serde(alias = "USER_DEFINED_CLOCKS")]
    ApplicationsClocksSetting,
    /// The software power cap.
    SwPowerCap,
    /// Hardware slowdown: heat, an external power brake or a power spike.
    HwSlowdown,
    /// Held to the slowest GPU of its sync boost group.
    SyncBoost,
    /// Software thermal slowdown: GPU or memory over its operating temperature.
    SwThermalSlowdown,
    /// Hardware thermal slowdown.
    HwThermalSlowdown,
    /// Hardware power brake slowdown (an external power brake).
    HwPowerBrakeSlowdown,
    /// Held by the display clock setting.
    DisplayClockSetting,
}

impl ThrottleReason {
    pub const ALL: [ThrottleReason; 9] = [
        ThrottleReason::GpuIdle,
        ThrottleReason::ApplicationsClocksSetting,
        ThrottleReason::SwPowerCap,
        ThrottleReason::HwSlowdown,
        ThrottleReason::SyncBoost,
        ThrottleReason::SwThermalSlowdown,
        ThrottleReason::HwThermalSlowdown,
        ThrottleReason::HwPowerBrakeSlowdown,
        ThrottleReason::DisplayClockSetting,
    ];

    /// NVML's name of the reason.
    pub fn name(self) -> &'static str {
        match self {
            ThrottleReason::GpuIdle => "GPU_IDLE",
            ThrottleReason::ApplicationsClocksSetting => "APPLICATIONS_CLOCKS_SETTING",
            ThrottleReason::SwPowerCap => "SW_POWER_CAP",
            ThrottleReason::HwSlowdown => "HW_SLOWDOWN",
            ThrottleReason::SyncBoost => "SYNC_BOOST",
            ThrottleReason::SwThermalSlowdown => "SW_THERMAL_SLOWDOWN",
            ThrottleReason::HwThermalSlowdown => "HW_THERMAL_SLOWDOWN",
            ThrottleReason::HwPowerBrakeSlowdown => "HW_POWER_BRAKE_SLOWDOWN",
            ThrottleReason::DisplayClockSetting => "DISPLAY_CLOCK_SETTING",
        }
    }

    /// True when the reason means heat, power or hardware slowed the GPU (not idling, a
    /// clock setting or a sync boost group).
    pub fn is_slowdown(self) -> bool {
        matches!(
            self,
            ThrottleReason::SwPowerCap
                | ThrottleReason::HwSlowdown
                | ThrottleReason::SwThermalSlowdown
                | ThrottleReason::HwThermalSlowdown
                | ThrottleReason::HwPowerBrakeSlowdown
        )
    }
}

impl fmt::Display for ThrottleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// NVML's clock throttle reasons active at the moment of reading.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ThrottleReasons(pub Vec<ThrottleReason>);

impl SettingValue for ThrottleReasons {
    fn render(&self) -> String {
        if self.0.is_empty() {
            "none".into()
        } else {
            let names: Vec<&str> = self.0.iter().map(|r| r.name()).collect();
            names.join(", ")
        }
    }
}

/// The Windows driver model of a GPU (NVML `nvmlDeviceGetDriverModel_v2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverModel {
    Wddm,
    Tcc,
    Mcdm,
}

impl SettingValue for DriverModel {
    fn render(&self) -> String {
        match self {
            DriverModel::Wddm => "WDDM",
            DriverModel::Tcc => "TCC",
            DriverModel::Mcdm => "MCDM",
        }
        .into()
    }
}

/// Declares a setting read as a value or as its known absence (a fact, not a failure to read):
/// the enum, serialized in snake case (`{"node": 1}`, `"no_affinity"`), and its rendering, the
/// value through `$show` or the absence's fixed words.
macro_rules! value_or_absence {
    (
        $(#[$meta:meta])*
        $name:ident { $value:ident($v:ident: $ty:ty) => $show:expr, $absent:ident => $words:literal }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $value($ty),
            $absent,
        }

        impl SettingValue for $name {
            fn render(&self) -> String {
                match self {
                    $name::$value($v) => $show,
                    $name::$absent => $words.into(),
                }
            }
        }
    };
}

value_or_absence! {
    /// The NUMA node Linux gives a PCI device; sysfs writes -1 when the device has none.
    #[derive(Copy)]
    NumaNode {
        Node(n: u32) => format!("node {n}"),
        NoAffinity => "none (-1: no NUMA information for this device)"
    }
}

/// Bytes of a mapping resident on one NUMA node (`/proc/self/numa_maps` `N<node>=<pages>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeBytes {
    pub node: u32,
    pub bytes: u64,
}

/// Where the pages of a mapping lie, node by node (empty: no page resident yet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePlacement(pub Vec<NodeBytes>);

impl SettingValue for NodePlacement {
    fn render(&self) -> String {
        if self.0.is_empty() {
            return "no resident pages".into();
        }
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|n| format!("node {}: {}", n.node, crate::units::format_size(n.bytes)))
            .collect();
        parts.join(", ")
    }
}

/// The CPU a thread last ran on, its NUMA node, and the CPUs the process may run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlacement {
    pub cpu: u32,
    /// `None` when sysfs names no node for the CPU.
    pub node: Option<u32>,
    /// `Cpus_allowed_list` as the kernel writes it (`0-63`).
    pub allowed: String,
}

impl SettingValue for CpuPlacement {
    fn render(&self) -> String {
        let node = self
            .node
            .map_or_else(|| "node unknown".into(), |n| format!("node {n}"));
        format!("CPU {} ({node}), allowed {}", self.cpu, self.allowed)
    }
}

value_or_absence! {
    /// An environment variable that changes CUDA's behaviour: its text, or not set.
    EnvValue {
        Set(v: String) => format!("`{v}`"),
        Unset => "not set"
    }
}

/// Hardware-accelerated GPU scheduling as the adapter reports it
/// (`D3DKMT_WDDM_2_7_CAPS`: bit 0 supported, bit 1 enabled, bit 2 on by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HagsCaps {
    pub supported: bool,
    pub enabled: bool,
    pub enabled_by_default: bool,
}

impl SettingValue for HagsCaps {
    fn render(&self) -> String {
        format!(
            "{} (supported: {}, on by default: {})",
            if self.enabled { "on" } else { "off" },
            self.supported.render(),
            self.enabled_by_default.render()
        )
    }
}

/// The `HwSchMode` registry value: 2 = on, 1 = off (applies after a reboot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HwSchMode(pub u32);

impl SettingValue for HwSchMode {
    fn render(&self) -> String {
        let meaning = match self.0 {
            2 => "on",
            1 => "off",
            _ => "not a documented value",
        };
        format!("{} ({meaning}; applies after a reboot)", self.0)
    }
}

/// The active Windows power plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerPlan {
    pub guid: String,
    /// The plan's friendly name; empty when Windows did not give it.
    pub name: String,
}

impl SettingValue for PowerPlan {
    fn render(&self) -> String {
        if self.name.is_empty() {
            self.guid.clone()
        } else {
            format!("{} ({})", self.name, self.guid)
        }
    }
}

/// Declares the settings once: the [`Settings`] struct (each field a [`Setting`], missing in
/// older files = not recorded), its default, and [`Settings::rows`] in declaration order.
macro_rules! settings_table {
    ($( $(#[$doc:meta])* $field:ident : $ty:ty => $label:literal, )*) => {
        /// The settings that change a transfer's answer, each with its source or the reason it
        /// is unavailable.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct Settings {
            $( $(#[$doc])* #[serde(default = "Setting::not_recorded")] pub $field: Setting<$ty>, )*
        }

        impl Default for Settings {
            fn default() -> Self {
                Settings { $( $field: Setting::not_recorded(), )* }
            }
        }

        impl Settings {
            /// Every field `unavailable: <why>`: the start of a record on a machine where no
            /// source answers (no GPU, another OS); the readers then fill what they can.
            pub fn all_unavailable(why: &str) -> Settings {
                Settings { $( $field: Setting::unavailable(why), )* }
            }

            /// One row per setting, in declaration order, rendered for a reader.
            pub fn rows(&self) -> Vec<SettingRow> {
                vec![ $( SettingRow {
                    key: stringify!($field),
                    label: $label,
                    value: self.$field.value_text(),
                    source: self.$field.source_text(),
                    unavailable: self.$field.unavailable_reason().map(str::to_string),
                }, )* ]
            }
        }
    };
}

/// One setting as text: JSON key, label, value (or `unavailable: …`) and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingRow {
    pub key: &'static str,
    pub label: &'static str,
    pub value: String,
    pub source: String,
    /// Why the setting is unavailable, when it is.
    #[serde(skip)]
    pub unavailable: Option<String>,
}

settings_table! {
    /// Driver model now (Windows: WDDM, TCC or MCDM).
    driver_model_current: DriverModel => "driver model (now)",
    /// Driver model after the next reboot.
    driver_model_pending: DriverModel => "driver model (after reboot)",
    /// PCIe generation with the GPU idle (links downshift when idle).
    pcie_gen_idle: u32 => "PCIe generation, idle",
    pcie_width_idle: u32 => "PCIe width, idle",
    /// PCIe generation while pinscope's own pinned copies were in flight.
    pcie_gen_under_load: u32 => "PCIe generation, during a transfer",
    pcie_width_under_load: u32 => "PCIe width, during a transfer",
    /// Highest generation the device and the system (slot, root port) allow together.
    pcie_gen_max: u32 => "PCIe generation, max of device and system",
    pcie_width_max: u32 => "PCIe width, max of device and system",
    /// Highest generation the GPU itself supports (`nvmlDeviceGetPcieLinkMaxSpeed`).
    pcie_gen_gpu_max: u32 => "PCIe generation, max of the GPU",
    /// BAR1 aperture: about the VRAM size with Resizable BAR, about 256 MiB without.
    bar1_size: Bytes => "BAR1 size",
    sm_clock_under_load: Megahertz => "SM clock, during a transfer",
    mem_clock_under_load: Megahertz => "memory clock, during a transfer",
    sm_clock_max: Megahertz => "SM clock, max",
    mem_clock_max: Megahertz => "memory clock, max",
    pstate_under_load: PState => "P-state, during a transfer",
    throttle_under_load: ThrottleReasons => "clock throttle reasons, during a transfer",
    persistence_mode: bool => "persistence mode",
    can_map_host_memory: bool => "can map host memory",
    unified_addressing: bool => "unified addressing",
    can_use_host_pointer_for_registered_mem: bool => "can use host pointer for registered memory",
    host_register_supported: bool => "host register supported",
    pageable_memory_access: bool => "pageable memory access",
    concurrent_managed_access: bool => "concurrent managed access",
    async_engine_count: u32 => "async (copy) engines",
    cuda_launch_blocking: EnvValue => "CUDA_LAUNCH_BLOCKING",
    cuda_device_max_connections: EnvValue => "CUDA_DEVICE_MAX_CONNECTIONS",
    cuda_visible_devices: EnvValue => "CUDA_VISIBLE_DEVICES",
    cuda_module_loading: EnvValue => "CUDA_MODULE_LOADING",
    /// NUMA node of the GPU's PCI device.
    gpu_numa_node: NumaNode => "GPU NUMA node",
    /// NUMA nodes holding the pages of pinscope's pinned buffer.
    pinned_pages_nodes: NodePlacement => "NUMA nodes of the pinned pages",
    /// The CPU the thread that issued the copies ran on.
    copy_thread_cpu: CpuPlacement => "CPU of the copy-issuing thread",
    cpu_model: String => "CPU model",
    cpu_governor: String => "CPU frequency governor",
    kernel_release: String => "kernel release",
    distribution: String => "distribution",
    /// `MemTotal`: under WSL2 the VM's memory limit.
    mem_total: Bytes => "MemTotal",
    dev_dxg: bool => "/dev/dxg (GPU paravirtualization)",
    libdxcore: bool => "libdxcore (WSL2 D3D core library)",
    hags: HagsCaps => "hardware-accelerated GPU scheduling (adapter)",
    hw_sch_mode: HwSchMode => "HwSchMode (registry)",
    tdr_delay: Seconds => "TdrDelay",
    tdr_level: u32 => "TdrLevel",
    tdr_ddi_delay: Seconds => "TdrDdiDelay",
    windows_build: String => "Windows build (CurrentBuild.UBR)",
    windows_display_version: String => "Windows version (DisplayVersion)",
    power_plan: PowerPlan => "active power plan",
    sysmem_fallback: String => "CUDA sysmem fallback policy",
}

/// Sets each named field of a [`Settings`] to `unavailable: <why>`.
macro_rules! set_unavailable {
    ($s:expr, $why:expr; $($field:ident),+ $(,)?) => {{
        let why: &str = $why;
        $( $s.$field = $crate::platform::Setting::unavailable(why); )+
    }};
}
pub(crate) use set_unavailable;

/// The CUDA environment variables recorded, each with the field that holds it.
const CUDA_ENV: [&str; 4] = [
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_MODULE_LOADING",
];

impl Settings {
    /// Fills the CUDA environment variables from `lookup` (`std::env::var` outside tests).
    pub fn fill_env(&mut self, lookup: impl Fn(&str) -> Option<String>) {
        let [blocking, connections, visible, loading] = CUDA_ENV.map(|name| {
            let v = lookup(name).map_or(EnvValue::Unset, EnvValue::Set);
            Setting::known(v, Source::Env(name.into()))
        });
        self.cuda_launch_blocking = blocking;
        self.cuda_device_max_connections = connections;
        self.cuda_visible_devices = visible;
        self.cuda_module_loading = loading;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasons are written by NVML's names, read back as the same reasons, rendered by
    /// those names; a name NVML does not have is refused.
    #[test]
    fn throttle_reasons_are_written_and_read_by_nvml_names() {
        let all = ThrottleReasons(ThrottleReason::ALL.to_vec());
        let json = serde_json::to_value(&all).expect("json");
        let names: Vec<&str> = ThrottleReason::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(json, serde_json::json!(names));
        assert_eq!(
            serde_json::from_value::<ThrottleReasons>(json).ok(),
            Some(all)
        );
        let old: ThrottleReasons =
            serde_json::from_str(r#"["USER_DEFINED_CLOCKS"]"#).expect("NVML's older name");
        assert_eq!(old.0, [ThrottleReason::ApplicationsClocksSetting]);
        assert!(serde_json::from_str::<ThrottleReasons>(r#"["TOO_HOT"]"#).is_err());
        let two = ThrottleReasons(vec![ThrottleReason::GpuIdle, ThrottleReason::SwPowerCap]);
        assert_eq!(two.render(), "GPU_IDLE, SW_POWER_CAP");
        assert_eq!(ThrottleReasons::default().render(), "none");
    }

    #[test]
    fn a_setting_is_json_with_value_and_source_or_unavailable() {
        let known: Setting<u32> = Setting::known(5, Source::Nvml("nvmlX".into()));
        let json = serde_json::to_value(&known).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"value": 5, "source": {"nvml": "nvmlX"}})
        );
        let back: Setting<u32> = serde_json::from_value(json).expect("read back");
        assert_eq!(back, known);
        let missing: Setting<u32> = Setting::unavailable("why");
        let json = serde_json::to_value(&missing).expect("json");
        assert_eq!(json, serde_json::json!({"unavailable": "why"}));
        assert_eq!(
            serde_json::from_value::<Setting<u32>>(json).ok(),
            Some(missing)
        );
    }

    #[test]
    fn fields_missing_from_a_file_read_as_not_recorded() {
        let s: Settings =
            serde_json::from_value(serde_json::json!({"bar1_size": {"value": 268435456, "source": {"nvml": "nvmlDeviceGetBAR1MemoryInfo"}}}))
                .expect("partial settings");
        assert_eq!(s.bar1_size.value(), Some(&Bytes(256 << 20)));
        assert_eq!(s.bar1_size.value_text(), "256 MiB");
        let why = s.hags.unavailable_reason().unwrap_or_default();
        assert!(why.starts_with("not recorded"), "{why}");
    }

    #[test]
    fn every_field_has_one_row_and_a_round_trip() {
        let mut s = Settings::all_unavailable("no GPU");
        s.fill_env(|k| (k == "CUDA_VISIBLE_DEVICES").then(|| "1".to_string()));
        let rows = s.rows();
        let json = serde_json::to_value(&s).expect("json");
        let obj = json.as_object().expect("object");
        assert_eq!(rows.len(), obj.len(), "one row per JSON field");
        for r in &rows {
            assert!(obj.contains_key(r.key), "{}", r.key);
        }
        let visible = rows
            .iter()
            .find(|r| r.key == "cuda_visible_devices")
            .expect("row");
        assert_eq!(
            (visible.value.as_str(), visible.source.as_str()),
            ("`1`", "environment CUDA_VISIBLE_DEVICES")
        );
        let blocking = rows
            .iter()
            .find(|r| r.key == "cuda_launch_blocking")
            .expect("row");
        assert_eq!(blocking.value, "not set");
        assert_eq!(
            rows.iter()
                .find(|r| r.key == "bar1_size")
                .map(|r| r.value.as_str()),
            Some("unavailable: no GPU")
        );
        let back: Settings = serde_json::from_value(json).expect("read back");
        assert_eq!(back, s);
    }
}
