//! The settings NVML reports: driver model, PCIe link (idle, under load, maximum), BAR1 size,
//! clocks, P-state, throttle reasons, persistence mode. The under-load fields are read while
//! pinscope's own copies are in flight (links and clocks drop when the GPU idles), so the
//! caller reads them between queueing copies and waiting for them.

use crate::platform::{
    Bytes, DriverModel, Megahertz, PState, Setting, Settings, Source, ThrottleReason,
    ThrottleReasons, set_unavailable,
};
use nvml_wrapper::bitmasks::device::ThrottleReasons as NvmlThrottle;
use nvml_wrapper::enum_wrappers::device::{Clock, PerformanceState};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

/// An open NVML handle on one device, for reading settings.
pub struct NvmlSettings {
    nvml: Nvml,
    index: u32,
}

fn nvml_source(call: &str) -> Source {
    Source::Nvml(call.into())
}

fn read<T, U>(r: Result<T, NvmlError>, call: &str, into: impl FnOnce(T) -> U) -> Setting<U> {
    Setting::from_result(r.map(into), nvml_source(call))
}

/// What the source of a reading taken while copies are in flight adds to the call's name.
const UNDER_LOAD: &str = " (during a transfer)";

/// The link's current generation and width; `when` follows each call's name.
fn current_link(dev: &Device, when: &str) -> (Setting<u32>, Setting<u32>) {
    let gen_call = format!("nvmlDeviceGetCurrPcieLinkGeneration{when}");
    let width_call = format!("nvmlDeviceGetCurrPcieLinkWidth{when}");
    (
        read(dev.current_pcie_link_gen(), &gen_call, |v| v),
        read(dev.current_pcie_link_width(), &width_call, |v| v),
    )
}

/// The SM and memory clocks as `get` reads them, sourced `call(SM)` / `call(MEM)` and `when`.
fn clocks(
    call: &str,
    get: impl Fn(Clock) -> Result<u32, NvmlError>,
    when: &str,
) -> (Setting<Megahertz>, Setting<Megahertz>) {
    (
        read(get(Clock::SM), &format!("{call}(SM){when}"), Megahertz),
        read(get(Clock::Memory), &format!("{call}(MEM){when}"), Megahertz),
    )
}

impl NvmlSettings {
    /// NVML on the device with this UUID (device 0 without one), or why not.
    pub fn open(uuid: Option<&str>) -> Result<NvmlSettings, String> {
        let (nvml, index) = super::nvml::open(uuid)?;
        Ok(NvmlSettings { nvml, index })
    }

    fn device(&self) -> Result<Device<'_>, String> {
        self.nvml
            .device_by_index(self.index)
            .map_err(|e| format!("NVML device {}: {e}", self.index))
    }

    /// Fills the fields read with the GPU idle: driver model, idle and maximum link, BAR1,
    /// maximum clocks, persistence mode.
    pub fn fill_idle(&self, s: &mut Settings) {
        let dev = match self.device() {
            Ok(d) => d,
            Err(why) => return fill_without_nvml(s, &why),
        };
        (s.driver_model_current, s.driver_model_pending) = driver_models(&dev);
        (s.pcie_gen_idle, s.pcie_width_idle) = current_link(&dev, "");
        s.pcie_gen_max = read(
            dev.max_pcie_link_gen(),
            "nvmlDeviceGetMaxPcieLinkGeneration",
            |v| v,
        );
        s.pcie_width_max = read(
            dev.max_pcie_link_width(),
            "nvmlDeviceGetMaxPcieLinkWidth",
            |v| v,
        );
        let source = nvml_source("nvmlDeviceGetPcieLinkMaxSpeed");
        s.pcie_gen_gpu_max = match dev.max_pcie_link_speed() {
            Ok(speed) => match speed.as_integer().and_then(generation_of_mts) {
                Some(g) => Setting::known(g, source),
                None => Setting::unavailable(format!("{source}: no valid speed ({speed:?})")),
            },
            Err(e) => Setting::unavailable(format!("{source}: {e}")),
        };
        s.bar1_size = read(dev.bar1_memory_info(), "nvmlDeviceGetBAR1MemoryInfo", |m| {
            Bytes(m.total)
        });
        (s.sm_clock_max, s.mem_clock_max) =
            clocks("nvmlDeviceGetMaxClockInfo", |c| dev.max_clock_info(c), "");
        s.persistence_mode = persistence_mode(&dev);
    }

    /// Fills the fields read while copies are in flight: link, clocks, P-state, throttle reasons.
    pub fn fill_under_load(&self, s: &mut Settings) {
        let dev = match self.device() {
            Ok(d) => d,
            Err(why) => return fill_under_load_without_nvml(s, &why),
        };
        (s.pcie_gen_under_load, s.pcie_width_under_load) = current_link(&dev, UNDER_LOAD);
        (s.sm_clock_under_load, s.mem_clock_under_load) =
            clocks("nvmlDeviceGetClockInfo", |c| dev.clock_info(c), UNDER_LOAD);
        s.pstate_under_load = read(
            dev.performance_state(),
            "nvmlDeviceGetPerformanceState (during a transfer)",
            pstate,
        );
        s.throttle_under_load = read(
            dev.current_throttle_reasons(),
            "nvmlDeviceGetCurrentClocksThrottleReasons (during a transfer)",
            throttle_reasons,
        );
    }
}

/// NVML's bitflags as the reasons they set, in [`ThrottleReason::ALL`] order.
fn throttle_reasons(flags: NvmlThrottle) -> ThrottleReasons {
    ThrottleReasons(
        ThrottleReason::ALL
            .into_iter()
            .filter(|r| flags.contains(nvml_flag(*r)))
            .collect(),
    )
}

/// NVML's flag of `reason`.
fn nvml_flag(reason: ThrottleReason) -> NvmlThrottle {
    match reason {
        ThrottleReason::GpuIdle => NvmlThrottle::GPU_IDLE,
        ThrottleReason::ApplicationsClocksSetting => NvmlThrottle::APPLICATIONS_CLOCKS_SETTING,
        ThrottleReason::SwPowerCap => NvmlThrottle::SW_POWER_CAP,
        ThrottleReason::HwSlowdown => NvmlThrottle::HW_SLOWDOWN,
        ThrottleReason::SyncBoost => NvmlThrottle::SYNC_BOOST,
        ThrottleReason::SwThermalSlowdown => NvmlThrottle::SW_THERMAL_SLOWDOWN,
        ThrottleReason::HwThermalSlowdown => NvmlThrottle::HW_THERMAL_SLOWDOWN,
        ThrottleReason::HwPowerBrakeSlowdown => NvmlThrottle::HW_POWER_BRAKE_SLOWDOWN,
        ThrottleReason::DisplayClockSetting => NvmlThrottle::DISPLAY_CLOCK_SETTING,
    }
}

/// Every NVML field `unavailable: <why>`.
pub fn fill_without_nvml(s: &mut Settings, why: &str) {
    set_unavailable!(s, why; driver_model_current, driver_model_pending, pcie_gen_idle,
        pcie_width_idle, pcie_gen_max, pcie_width_max, pcie_gen_gpu_max, bar1_size, sm_clock_max,
        mem_clock_max, persistence_mode);
    fill_under_load_without_nvml(s, why);
}

/// Every under-load NVML field `unavailable: <why>`.
pub fn fill_under_load_without_nvml(s: &mut Settings, why: &str) {
    set_unavailable!(s, why; pcie_gen_under_load, pcie_width_under_load, sm_clock_under_load,
        mem_clock_under_load, pstate_under_load, throttle_under_load);
}

/// The PCIe generation whose per-lane rate is `mts` MT/s.
pub fn generation_of_mts(mts: u32) -> Option<u32> {
    match mts {
        2500 => Some(1),
        5000 => Some(2),
        8000 => Some(3),
        16000 => Some(4),
        32000 => Some(5),
        64000 => Some(6),
        _ => None,
    }
}

fn pstate(p: PerformanceState) -> PState {
    use PerformanceState as P;
    PState(match p {
        P::Zero => 0,
        P::One => 1,
        P::Two => 2,
        P::Three => 3,
        P::Four => 4,
        P::Five => 5,
        P::Six => 6,
        P::Seven => 7,
        P::Eight => 8,
        P::Nine => 9,
        P::Ten => 10,
        P::Eleven => 11,
        P::Twelve => 12,
        P::Thirteen => 13,
        P::Fourteen => 14,
        P::Fifteen => 15,
        P::Unknown => 255,
    })
}

#[cfg(not(windows))]
fn persistence_mode(dev: &Device<'_>) -> Setting<bool> {
    read(
        dev.is_in_persistent_mode(),
        "nvmlDeviceGetPersistenceMode",
        |v| v,
    )
}

#[cfg(windows)]
fn persistence_mode(_dev: &Device<'_>) -> Setting<bool> {
    Setting::unavailable("Linux only (NVML persistence mode does not exist under Windows)")
}

/// The driver model now and after a reboot (`nvmlDeviceGetDriverModel`; Windows only).
#[cfg(windows)]
fn driver_models(dev: &Device<'_>) -> (Setting<DriverModel>, Setting<DriverModel>) {
    use nvml_wrapper::enum_wrappers::device::DriverModel as Nv;
    let source = || nvml_source("nvmlDeviceGetDriverModel");
    let model = |m: Nv| match m {
        Nv::WDDM => DriverModel::Wddm,
        Nv::WDM => DriverModel::Tcc,
    };
    match dev.driver_model() {
        Ok(state) => (
            Setting::known(model(state.current), source()),
            Setting::known(model(state.pending), source()),
        ),
        Err(NvmlError::UnexpectedVariant(2)) => {
            let why = "nvmlDeviceGetDriverModel: one of now / after reboot is 2 (MCDM), and the NVML binding used cannot say which";
            (Setting::unavailable(why), Setting::unavailable(why))
        }
        Err(e) => {
            let why = format!("nvmlDeviceGetDriverModel: {e}");
            (Setting::unavailable(&why), Setting::unavailable(why))
        }
    }
}

#[cfg(not(windows))]
fn driver_models(_dev: &Device<'_>) -> (Setting<DriverModel>, Setting<DriverModel>) {
    let why = "Windows only (WDDM / TCC / MCDM are Windows driver models)";
    (Setting::unavailable(why), Setting::unavailable(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVML's bitflags become the typed reasons, each once (the deprecated user-defined clocks
    /// flag is the applications clocks bit), and every reason has its own flag.
    #[test]
    fn nvml_throttle_flags_become_typed_reasons() {
        let flags = NvmlThrottle::GPU_IDLE | NvmlThrottle::HW_THERMAL_SLOWDOWN;
        assert_eq!(
            throttle_reasons(flags).0,
            vec![ThrottleReason::GpuIdle, ThrottleReason::HwThermalSlowdown]
        );
        #[allow(deprecated)]
        let user = NvmlThrottle::USER_DEFINED_CLOCKS;
        assert_eq!(
            throttle_reasons(user).0,
            vec![ThrottleReason::ApplicationsClocksSetting]
        );
        assert!(throttle_reasons(NvmlThrottle::NONE).0.is_empty());
        let all = ThrottleReason::ALL.map(nvml_flag);
        for (i, f) in all.iter().enumerate() {
            assert_eq!(f.bits().count_ones(), 1, "{:?}", ThrottleReason::ALL[i]);
            assert!(all[..i].iter().all(|g| g != f));
        }
    }

    #[test]
    fn generations_from_per_lane_rates() {
        assert_eq!(generation_of_mts(32000), Some(5));
        assert_eq!(generation_of_mts(8000), Some(3));
        assert_eq!(generation_of_mts(12345), None);
    }

    #[test]
    fn without_nvml_every_nvml_field_says_why() {
        let mut s = Settings::default();
        fill_without_nvml(&mut s, "NVML not loaded: libnvidia-ml.so.1 missing");
        for row in s.rows() {
            let nvml_field = row.key.starts_with("pcie_")
                || row.key.contains("clock")
                || row.key.starts_with("driver_model")
                || [
                    "bar1_size",
                    "persistence_mode",
                    "pstate_under_load",
                    "throttle_under_load",
                ]
                .contains(&row.key);
            if nvml_field {
                assert_eq!(
                    row.value, "unavailable: NVML not loaded: libnvidia-ml.so.1 missing",
                    "{}",
                    row.key
                );
            }
        }
    }

    #[test]
    fn reading_nvml_here_never_panics() {
        match NvmlSettings::open(None) {
            Ok(n) => {
                let mut s = Settings::default();
                n.fill_idle(&mut s);
                n.fill_under_load(&mut s);
                assert!(s.pcie_gen_max.value().is_some_and(|g| *g >= 1));
            }
            Err(why) => assert!(why.starts_with("NVML"), "{why}"),
        }
    }
}
