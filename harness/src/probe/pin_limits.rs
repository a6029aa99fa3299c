//! The live pin-budget predictor: how much host memory this process can page-lock now, read from
//! what the platform says without touching the GPU, each limit with its source or why it could not
//! be read.
//!
//! Linux and WSL2: `MemAvailable` (`/proc/meminfo`), the cgroup v2 limit and usage
//! (`memory.max`, `memory.current`), `vm.max_map_count` against the mappings this process has
//! (`/proc/self/maps`), and `Max locked memory` (`/proc/self/limits`, what `ulimit -l` sets).
//! Windows: the DXGI NON_LOCAL (shared) budget and usage of the GPU's adapter (where WDDM charges
//! page-locked memory) and the system commit limit and charge (`GetPerformanceInfo`).
//!
//! The memlock limit is recorded but not part of the rule: the NVIDIA driver pins pages itself and
//! does not charge them to `VmLck` (pinscope's H200 runs show `VmLck` 0 with gigabytes pinned), so
//! `ulimit -l` does not stop `cuMemHostAlloc` or `cuMemHostRegister`. Under WSL2 the rule also
//! takes the pinned wall users report (a prediction from reports, not a reading; the measured
//! WSL2 ceiling of `check` is the reading).

use crate::platform::{Bytes, Platform, Setting, Source};
use crate::units::MIB;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Share of the headroom the budget keeps back: the headroom moves while a program pins.
pub const HEADROOM_KEPT: f64 = 0.10;
/// The lowest pinned wall users report under WSL2 with RAM free (0.75–1.0 GiB with 62.8 GiB of
/// RAM, FreeToken PR #233; ~1 GB in containers, nvidia-container-toolkit#226).
pub const WSL2_REPORTED_WALL: u64 = 768 * MIB;
/// Why the Windows readings are absent elsewhere, and the Linux ones on Windows.
const WINDOWS_ONLY: &str = "Windows only";
const LINUX_ONLY: &str = "Linux and WSL2 only";
/// The most bytes read from a `/proc` file (`maps` of a large process is the longest).
const PROC_LIMIT: u64 = 16 * MIB;

/// A limit that may be absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cap {
    Bytes(u64),
    Unlimited,
}

impl crate::platform::SettingValue for Cap {
    fn render(&self) -> String {
        match self {
            Cap::Bytes(b) => crate::units::format_size(*b),
            Cap::Unlimited => "unlimited".into(),
        }
    }
}

/// Every limit the predictor reads, each with its source or why it could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinLimits {
    pub mem_available: Setting<Bytes>,
    /// `Max locked memory` soft limit (`ulimit -l`): recorded, not in the rule (module doc).
    pub memlock: Setting<Cap>,
    /// `Max address space` soft limit (`ulimit -v`, Slurm's `VSizeFactor`): recorded, not in the
    /// rule. A CUDA context maps gigabytes of address space before it pins anything, and each pin
    /// maps as much again, so past this limit `cuMemHostAlloc` is refused
    /// (`CUDA_ERROR_OUT_OF_MEMORY`) with RAM to spare. Absent from records made before it was read.
    #[serde(default = "not_recorded")]
    pub address_space: Setting<Cap>,
    pub cgroup_max: Setting<Cap>,
    pub cgroup_current: Setting<Bytes>,
    /// `vm.max_map_count`: each registered range is at least one mapping.
    pub max_map_count: Setting<u32>,
    /// Mappings this process has now (lines of `/proc/self/maps`).
    pub map_count: Setting<u32>,
    pub dxgi_nonlocal_budget: Setting<Bytes>,
    pub dxgi_nonlocal_usage: Setting<Bytes>,
    pub commit_limit: Setting<Bytes>,
    pub commit_total: Setting<Bytes>,
}

/// One limit as text: its label, its value or `unavailable: why`, its source, and whether it
/// exists only on another OS.
#[derive(Debug)]
pub struct LimitRow {
    pub label: &'static str,
    pub value: String,
    pub source: String,
    pub other_os: bool,
}

impl PinLimits {
    /// Each limit as text, for `info` and `check`.
    pub fn rows(&self) -> Vec<LimitRow> {
        fn row<T: crate::platform::SettingValue>(label: &'static str, s: &Setting<T>) -> LimitRow {
            LimitRow {
                label,
                value: s.value_text(),
                source: s.source_text(),
                other_os: matches!(s.unavailable_reason(), Some(WINDOWS_ONLY | LINUX_ONLY)),
            }
        }
        vec![
            row("MemAvailable", &self.mem_available),
            row("memlock (ulimit -l; not in the rule)", &self.memlock),
            row(
                "address space (ulimit -v; not in the rule)",
                &self.address_space,
            ),
            row("cgroup memory.max", &self.cgroup_max),
            row("cgroup memory.current", &self.cgroup_current),
            row("vm.max_map_count", &self.max_map_count),
            row("mappings now", &self.map_count),
            row("DXGI NON_LOCAL budget", &self.dxgi_nonlocal_budget),
            row("DXGI NON_LOCAL usage", &self.dxgi_nonlocal_usage),
            row("commit limit", &self.commit_limit),
            row("commit charge", &self.commit_total),
        ]
    }
}

impl Predictor {
    pub fn name(self) -> &'static str {
        match self {
            Predictor::LinuxMemory => "linux_memory",
            Predictor::Wsl2ReportedWall => "wsl2_reported_wall",
            Predictor::WindowsDxgiNonLocal => "windows_dxgi_non_local",
            Predictor::None => "none",
        }
    }
}

/// Which reading the budget comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predictor {
    /// `MemAvailable` and the cgroup headroom.
    LinuxMemory,
    /// The Linux rule, capped at the pinned wall users report under WSL2.
    Wsl2ReportedWall,
    /// DXGI NON_LOCAL budget − usage and the commit headroom.
    WindowsDxgiNonLocal,
    /// No reading to predict from (the reason is in `unavailable`).
    None,
}

impl Serialize for Predictor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Predictor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        [
            Predictor::LinuxMemory,
            Predictor::Wsl2ReportedWall,
            Predictor::WindowsDxgiNonLocal,
            Predictor::None,
        ]
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            serde::de::Error::unknown_variant(
                &name,
                &[
                    "linux_memory",
                    "wsl2_reported_wall",
                    "windows_dxgi_non_local",
                    "none",
                ],
            )
        })
    }
}

/// What a program may pin here now, and the rule and readings it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinBudget {
    pub predictor: Predictor,
    /// The rule in words.
    pub rule: String,
    /// Safe bytes for one or several `cuMemHostAlloc` calls together.
    pub host_alloc_bytes: Option<u64>,
    /// Safe bytes for `cuMemHostRegister` of memory the program already has (the same host
    /// memory is charged, so the predictor gives the same number; the measured probe can differ).
    pub host_register_bytes: Option<u64>,
    /// New memory mappings this process may still create (`vm.max_map_count` − mappings now,
    /// − 10%). Registering ranges inside one allocation did not use mappings on driver 580
    /// (70 000 registered with `vm.max_map_count` 65 530), so this does not bound registrations
    /// there. Records of earlier versions call it `registrations`.
    #[serde(alias = "registrations")]
    pub mappings: Option<u64>,
    /// Why there are no bytes, when there are none.
    pub unavailable: Option<String>,
    pub limits: PinLimits,
}

/// The budget of this machine now; `luid` picks the DXGI adapter on Windows (the first hardware
/// adapter without it).
pub fn pin_budget(platform: Platform, luid: Option<[u8; 8]>) -> PinBudget {
    let limits = if cfg!(windows) {
        windows_limits(luid)
    } else {
        tree_limits(Path::new("/"))
    };
    budget(platform, limits)
}

/// The Linux and WSL2 limits of a tree read as if it were `/` (tests use fixture trees).
pub fn tree_limits(root: &Path) -> PinLimits {
    let (cgroup_max, cgroup_current) = cgroup(root);
    PinLimits {
        mem_available: mem_available(root),
        memlock: process_limit(root, "Max locked memory"),
        address_space: process_limit(root, "Max address space"),
        cgroup_max,
        cgroup_current,
        max_map_count: read(root, "proc/sys/vm/max_map_count", |t| {
            t.trim().parse().map_err(|_| "it is not a number".into())
        }),
        map_count: read(root, "proc/self/maps", |t| {
            u32::try_from(t.lines().count()).map_err(|_| "too many lines".into())
        }),
        dxgi_nonlocal_budget: Setting::unavailable(WINDOWS_ONLY),
        dxgi_nonlocal_usage: Setting::unavailable(WINDOWS_ONLY),
        commit_limit: Setting::unavailable(WINDOWS_ONLY),
        commit_total: Setting::unavailable(WINDOWS_ONLY),
    }
}

/// The Windows limits: DXGI NON_LOCAL of the adapter, the system commit.
fn windows_limits(luid: Option<[u8; 8]>) -> PinLimits {
    let (budget, usage) = super::os::dxgi_nonlocal(luid);
    let (commit_limit, commit_total) = super::os::commit_charge();
    PinLimits {
        mem_available: Setting::unavailable(LINUX_ONLY),
        memlock: Setting::unavailable(LINUX_ONLY),
        address_space: Setting::unavailable(LINUX_ONLY),
        cgroup_max: Setting::unavailable(LINUX_ONLY),
        cgroup_current: Setting::unavailable(LINUX_ONLY),
        max_map_count: Setting::unavailable(LINUX_ONLY),
        map_count: Setting::unavailable(LINUX_ONLY),
        dxgi_nonlocal_budget: budget,
        dxgi_nonlocal_usage: usage,
        commit_limit,
        commit_total,
    }
}

/// The budget from the limits, by the rule of the platform.
pub fn budget(platform: Platform, limits: PinLimits) -> PinBudget {
    let (predictor, rule, headroom) = match platform {
        Platform::Windows => (
            Predictor::WindowsDxgiNonLocal,
            "min(DXGI NON_LOCAL budget − usage, commit limit − commit charge) − 10%",
            windows_headroom(&limits),
        ),
        Platform::Wsl2 => (
            Predictor::Wsl2ReportedWall,
            "min(MemAvailable, cgroup memory.max − memory.current, 0.75 GiB: the lowest pinned wall users report under WSL2) − 10%",
            linux_headroom(&limits).map(|h| h.min(WSL2_REPORTED_WALL)),
        ),
        Platform::Linux | Platform::Wsl1 | Platform::Other => (
            Predictor::LinuxMemory,
            "min(MemAvailable, cgroup memory.max − memory.current) − 10%; ulimit -l is not in it (the driver's pins do not count against it)",
            linux_headroom(&limits),
        ),
    };
    let safe = headroom.as_ref().ok().map(|h| kept(*h));
    let mappings = match (limits.max_map_count.value(), limits.map_count.value()) {
        (Some(max), Some(now)) => Some(kept(u64::from(max.saturating_sub(*now)))),
        _ => None,
    };
    PinBudget {
        predictor: if safe.is_some() {
            predictor
        } else {
            Predictor::None
        },
        rule: rule.into(),
        host_alloc_bytes: safe,
        host_register_bytes: safe,
        mappings,
        unavailable: headroom.err(),
        limits,
    }
}

/// `value` less the share the budget keeps back.
fn kept(value: u64) -> u64 {
    (value as f64 * (1.0 - HEADROOM_KEPT)) as u64
}

fn linux_headroom(l: &PinLimits) -> Result<u64, String> {
    let available = match &l.mem_available {
        Setting::Known { value, .. } => value.0,
        Setting::Unavailable { unavailable } => return Err(format!("MemAvailable: {unavailable}")),
    };
    let cgroup = match (l.cgroup_max.value(), l.cgroup_current.value()) {
        (Some(Cap::Bytes(max)), Some(now)) => max.saturating_sub(now.0),
        _ => u64::MAX,
    };
    Ok(available.min(cgroup))
}

fn windows_headroom(l: &PinLimits) -> Result<u64, String> {
    let (budget, usage) = match (&l.dxgi_nonlocal_budget, &l.dxgi_nonlocal_usage) {
        (Setting::Known { value: b, .. }, Setting::Known { value: u, .. }) => (b.0, u.0),
        (Setting::Unavailable { unavailable }, _) | (_, Setting::Unavailable { unavailable }) => {
            return Err(format!("DXGI NON_LOCAL: {unavailable}"));
        }
    };
    if budget == 0 {
        return Err("DXGI reports a NON_LOCAL budget of 0 (Wine's DXGI answers so; a WDDM driver gives the shared budget)".into());
    }
    let commit = match (l.commit_limit.value(), l.commit_total.value()) {
        (Some(limit), Some(total)) => limit.0.saturating_sub(total.0),
        _ => u64::MAX,
    };
    Ok(budget.saturating_sub(usage).min(commit))
}

/// `Known` from the parsed text of `rel`, or why it could not be read or parsed.
fn read<T>(root: &Path, rel: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Setting<T> {
    use std::io::Read;
    let shown = format!("/{rel}");
    let mut text = String::new();
    let read = std::fs::File::open(root.join(rel))
        .and_then(|f| f.take(PROC_LIMIT).read_to_string(&mut text));
    match read {
        Err(e) => Setting::unavailable(format!("{shown} could not be read ({e})")),
        Ok(_) => match parse(&text) {
            Ok(v) => Setting::known(v, Source::File(shown)),
            Err(why) => Setting::unavailable(format!("{shown}: {why}")),
        },
    }
}

fn mem_available(root: &Path) -> Setting<Bytes> {
    read(root, "proc/meminfo", |t| {
        super::parse_meminfo(t)
            .into_iter()
            .find(|r| r.metric == "mem_available")
            .map(|r| Bytes(r.value as u64))
            .ok_or_else(|| "it has no MemAvailable line".into())
    })
}

/// The soft limit on the line `name` of `/proc/self/limits` (a byte count or `unlimited`).
fn process_limit(root: &Path, name: &str) -> Setting<Cap> {
    read(root, "proc/self/limits", |t| {
        let line = t
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .ok_or_else(|| format!("it has no `{name}` line"))?;
        match line.split_whitespace().next() {
            Some("unlimited") => Ok(Cap::Unlimited),
            Some(n) => n
                .parse()
                .map(Cap::Bytes)
                .map_err(|_| format!("`{}` is not a byte count", n.escape_debug())),
            None => Err(format!("`{name}` has no value")),
        }
    })
}

/// What a record made before a limit was read says of it.
fn not_recorded() -> Setting<Cap> {
    Setting::unavailable("not recorded (made by an earlier pinscope)")
}

/// The cgroup v2 limit and usage of the level with the least headroom (`memory.max` −
/// `memory.current`) among this process's cgroup and its parents, each with the file it came
/// from; with no limit anywhere, this cgroup's usage and `unlimited`.
fn cgroup(root: &Path) -> (Setting<Cap>, Setting<Bytes>) {
    let levels = match super::cgroup::levels(root) {
        Ok(l) => l,
        Err(why) => return (Setting::unavailable(why.clone()), Setting::unavailable(why)),
    };
    let headroom = |l: &&super::CgroupLevel| l.max.map(|m| m.saturating_sub(l.current));
    let Some(level) = levels
        .iter()
        .filter(|l| l.max.is_some())
        .min_by_key(headroom)
        .or(levels.first())
    else {
        let why = "no cgroup level read";
        return (Setting::unavailable(why), Setting::unavailable(why));
    };
    let source = |file: &str| {
        let dir = level.path.trim_end_matches('/');
        Source::File(format!("/sys/fs/cgroup{dir}/{file}"))
    };
    let max = level.max.map_or(Cap::Unlimited, Cap::Bytes);
    (
        Setting::known(max, source("memory.max")),
        Setting::known(Bytes(level.current), source("memory.current")),
    )
}

#[cfg(test)]
mod tests;
