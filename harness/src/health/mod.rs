//! `pinscope check`'s verdicts: from what a short check measured and the recorded settings, one
//! verdict per check (`pass`, `warn`, `fail`, or why it did not run), each with the measured
//! value, the threshold and what to do. Pure: the measuring is in `run::check`.
//!
//! The checks, as cluster health checks run them (DCGM's PCIe plugin, Azure's node health
//! checks): the link during a transfer against its maximum; pinned bandwidth against a share of
//! the link's theoretical rate (or a floor given in GB/s); data verification; pinned pages on
//! the GPU's NUMA node; the P-state and throttle reasons while copying; under WSL2, the pinned
//! ceiling against what common frameworks pin.

use crate::platform::{NumaNode, Settings};
use crate::units::{GIB, format_size};
use serde::Serialize;
use std::fmt;

/// Default share of the link's theoretical rate below which pinned bandwidth fails. A healthy
/// Gen4/Gen5 x16 link carries 75–90% of it (H200: about 55 of 63 GB/s), native Windows about 75%;
/// a link trained at half its width, or a GPU behind a shared switch, lands below 60%.
pub const DEFAULT_MIN_LINK_SHARE: f64 = 0.6;
/// A bandwidth within this fraction above its floor is a warning (Azure's node checks warn
/// within 5%).
pub const WARN_MARGIN: f64 = 0.05;
/// Pinned memory common frameworks hold: vLLM's default CPU swap space is 4 GiB of pinned memory
/// per GPU; native Windows on a host whose WSL2 VM pinned only 0.5 GiB pinned 4 GB.
pub const FRAMEWORK_PINNED_BYTES: u64 = 4 * GIB;

/// One check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
    /// The check could not run (no GPU, a value the platform does not give).
    NotRun,
    /// The check means nothing here (no NUMA information, not WSL2).
    NotApplicable,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::NotRun => "not run",
            Verdict::NotApplicable => "n/a",
        }
    }
}

/// The checks, in the order they are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    LinkUnderLoad,
    PinnedH2d,
    PinnedD2h,
    DataVerification,
    PinnedNuma,
    ClocksUnderLoad,
    Wsl2PinnedCeiling,
    CopyLatency,
    /// The live pin-budget predictor (no GPU needed).
    PinBudget,
}

impl Check {
    pub const ALL: [Check; 9] = [
        Check::LinkUnderLoad,
        Check::PinnedH2d,
        Check::PinnedD2h,
        Check::DataVerification,
        Check::PinnedNuma,
        Check::ClocksUnderLoad,
        Check::Wsl2PinnedCeiling,
        Check::CopyLatency,
        Check::PinBudget,
    ];

    /// Whether the check measures on a GPU (all but the pin budget, which reads the host).
    pub fn needs_gpu(self) -> bool {
        self != Check::PinBudget
    }

    /// The checks that need a GPU, in [`Check::ALL`] order.
    pub fn gpu_checks() -> impl Iterator<Item = Check> {
        Check::ALL.into_iter().filter(|c| c.needs_gpu())
    }

    /// The name JSON and Prometheus files write.
    pub fn name(self) -> &'static str {
        match self {
            Check::LinkUnderLoad => "link_under_load",
            Check::PinnedH2d => "pinned_h2d",
            Check::PinnedD2h => "pinned_d2h",
            Check::DataVerification => "data_verification",
            Check::PinnedNuma => "pinned_numa",
            Check::ClocksUnderLoad => "clocks_under_load",
            Check::Wsl2PinnedCeiling => "wsl2_pinned_ceiling",
            Check::CopyLatency => "copy_latency",
            Check::PinBudget => "pin_budget",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Check::LinkUnderLoad => "PCIe link during a transfer",
            Check::PinnedH2d => "pinned host→device bandwidth",
            Check::PinnedD2h => "pinned device→host bandwidth",
            Check::DataVerification => "data verification",
            Check::PinnedNuma => "pinned memory's NUMA node",
            Check::ClocksUnderLoad => "clocks while copying",
            Check::Wsl2PinnedCeiling => "WSL2 pinned ceiling",
            Check::CopyLatency => "4-byte copy latency",
            Check::PinBudget => "pin budget",
        }
    }
}

impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A measured or required value, with its unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "unit", content = "value", rename_all = "snake_case")]
pub enum Amount {
    /// GB/s = 1e9 B/s.
    GbPerS(f64),
    Link {
        generation: u32,
        width: u32,
    },
    /// Words (4 bytes) that differed from the pattern, over all round trips.
    MismatchedWords(u64),
    Nodes(Vec<u32>),
    PState(u8),
    Bytes(u64),
    /// Microseconds.
    Micros(f64),
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Amount::GbPerS(v) => write!(f, "{v:.1} GB/s"),
            Amount::Link { generation, width } => write!(f, "gen{generation}x{width}"),
            Amount::MismatchedWords(n) => write!(f, "{n} mismatched 4-byte words"),
            Amount::Nodes(n) => {
                let list: Vec<String> = n.iter().map(u32::to_string).collect();
                write!(f, "node {}", list.join(", "))
            }
            Amount::PState(p) => write!(f, "P{p}"),
            Amount::Bytes(b) => f.write_str(&format_size(*b)),
            Amount::Micros(us) => write!(f, "{us:.1} µs"),
        }
    }
}

/// One check's verdict, with what was measured, the threshold, and what to do (or why it did
/// not run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    pub check: Check,
    pub verdict: Verdict,
    pub measured: Option<Amount>,
    /// The threshold as a reader needs it (`≥ 37.8 GB/s (60% of gen5x16's 63.0 GB/s)`).
    pub threshold: String,
    /// What to do about a warning or failure; why a check did not run; empty on a pass.
    pub advice: String,
}

impl CheckResult {
    fn new(check: Check, verdict: Verdict, measured: Option<Amount>) -> Self {
        CheckResult {
            check,
            verdict,
            measured,
            threshold: String::new(),
            advice: String::new(),
        }
    }
    fn threshold(mut self, t: impl Into<String>) -> Self {
        self.threshold = t.into();
        self
    }
    fn advice(mut self, a: impl Into<String>) -> Self {
        self.advice = a.into();
        self
    }
    /// A check that could not run, and why.
    pub fn not_run(check: Check, why: impl Into<String>) -> Self {
        CheckResult::new(check, Verdict::NotRun, None).advice(why)
    }
}

/// Every check that needs a GPU `not run`, with the same reason (no GPU).
pub fn all_not_run(why: &str) -> Vec<CheckResult> {
    Check::gpu_checks()
        .map(|c| CheckResult::not_run(c, why))
        .collect()
}

/// Bandwidth floors: absolute (`--min-h2d`, `--min-d2h`, GB/s) or a share of the link's
/// theoretical rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    pub min_h2d_gbs: Option<f64>,
    pub min_d2h_gbs: Option<f64>,
    pub min_link_share: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_h2d_gbs: None,
            min_d2h_gbs: None,
            min_link_share: DEFAULT_MIN_LINK_SHARE,
        }
    }
}

/// Copies of one kind and direction: the median and every sample, GB/s (1e9 B/s).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bandwidth {
    pub median_gbs: f64,
    pub samples_gbs: Vec<f64>,
    /// Bytes of each copy.
    pub copy_bytes: u64,
}

/// The copies of one kind and direction, or the driver error that stopped them.
pub type Copies = Result<Bandwidth, String>;

/// What the check measured on the GPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Measured {
    pub pinned_h2d: Option<Copies>,
    pub pinned_d2h: Option<Copies>,
    /// Reported, not judged: pageable copies depend on the CPU and the driver's staging.
    pub pageable_h2d: Option<Copies>,
    pub pageable_d2h: Option<Copies>,
    /// Mismatched words over every verified round trip; `None` when nothing could be verified.
    pub mismatched_words: Option<u64>,
    /// Median host-observed time of one 4-byte pinned host→device copy (call, then stream
    /// synchronisation; as `mode = "latency"` measures it), µs, with every sample.
    pub copy_latency_us: Option<Result<Vec<f64>, String>>,
    /// Under WSL2: bytes pinned before the driver refused (or the cap was reached), and whether
    /// the cap was reached.
    pub wsl2_pinned: Option<(u64, bool)>,
}

/// Theoretical one-direction rate of a PCIe link, GB/s (after line encoding; packet headers
/// not counted): per lane 0.25, 0.5, 0.985, 1.969, 3.938, 7.877 GB/s for generations 1–6.
pub fn link_rate_gbs(generation: u32, width: u32) -> Option<f64> {
    let per_lane = match generation {
        1 => 2.5 * 0.8 / 8.0,
        2 => 5.0 * 0.8 / 8.0,
        3 => 8.0 * 128.0 / 130.0 / 8.0,
        4 => 16.0 * 128.0 / 130.0 / 8.0,
        5 => 32.0 * 128.0 / 130.0 / 8.0,
        6 => 64.0 * 128.0 / 130.0 / 8.0,
        _ => return None,
    };
    Some(per_lane * f64::from(width))
}

/// The verdicts of every check that needs a GPU, in [`Check::gpu_checks`] order.
pub fn evaluate(m: &Measured, s: &Settings, t: &Thresholds, wsl2: bool) -> Vec<CheckResult> {
    vec![
        link_under_load(s),
        bandwidth(Check::PinnedH2d, m.pinned_h2d.as_ref(), t.min_h2d_gbs, s, t),
        bandwidth(Check::PinnedD2h, m.pinned_d2h.as_ref(), t.min_d2h_gbs, s, t),
        verification(m.mismatched_words),
        pinned_numa(s),
        clocks_under_load(s),
        wsl2_ceiling(m.wsl2_pinned, wsl2),
        latency(m.copy_latency_us.as_ref()),
    ]
}

/// The checks the recorded settings alone decide: the link and the clocks during the sampling
/// transfer, and the pinned pages' NUMA node (for a run's report).
pub fn settings_checks(s: &Settings) -> Vec<CheckResult> {
    vec![link_under_load(s), clocks_under_load(s), pinned_numa(s)]
}

fn max_link(s: &Settings) -> Option<(u32, u32)> {
    Some((*s.pcie_gen_max.value()?, *s.pcie_width_max.value()?))
}

fn link_under_load(s: &Settings) -> CheckResult {
    let c = Check::LinkUnderLoad;
    let now = match (
        s.pcie_gen_under_load.value(),
        s.pcie_width_under_load.value(),
    ) {
        (Some(g), Some(w)) => (*g, *w),
        _ => return CheckResult::not_run(c, s.pcie_gen_under_load.value_text()),
    };
    let Some(max) = max_link(s) else {
        return CheckResult::not_run(c, s.pcie_gen_max.value_text());
    };
    let measured = Some(Amount::Link {
        generation: now.0,
        width: now.1,
    });
    let threshold = format!("gen{}x{} (the maximum of device and system)", max.0, max.1);
    if now.0 >= max.0 && now.1 >= max.1 {
        return CheckResult::new(c, Verdict::Pass, measured).threshold(threshold);
    }
    CheckResult::new(c, Verdict::Fail, measured)
        .threshold(threshold)
        .advice("the link trained below its maximum while copying: reseat the GPU or its riser, check the slot's lanes and the BIOS PCIe settings (`nvidia-smi -q -d PCIE` shows the link)")
}

/// The floor for one direction: the absolute one given, else a share of the link's rate.
fn floor(given: Option<f64>, s: &Settings, t: &Thresholds) -> Result<(f64, String), String> {
    if let Some(gbs) = given {
        return Ok((gbs, format!("≥ {gbs:.1} GB/s (given)")));
    }
    let (generation, width) = max_link(s)
        .ok_or("the link's maximum is unknown (NVML did not say), so there is no floor: give one with --min-h2d / --min-d2h")?;
    let rate = link_rate_gbs(generation, width)
        .ok_or_else(|| format!("PCIe generation {generation} has no known rate"))?;
    let share = t.min_link_share;
    Ok((
        rate * share,
        format!(
            "≥ {:.1} GB/s ({:.0}% of gen{generation}x{width}'s {rate:.1} GB/s)",
            rate * share,
            share * 100.0
        ),
    ))
}

fn bandwidth(
    c: Check,
    measured: Option<&Copies>,
    given: Option<f64>,
    s: &Settings,
    t: &Thresholds,
) -> CheckResult {
    let gbs = match measured {
        None => return CheckResult::not_run(c, "not measured"),
        Some(Err(why)) => {
            return CheckResult::new(c, Verdict::Fail, None)
                .advice(format!("the copies failed: {why}"));
        }
        Some(Ok(b)) => b.median_gbs,
    };
    let amount = Some(Amount::GbPerS(gbs));
    let (min, threshold) = match floor(given, s, t) {
        Ok(f) => f,
        Err(why) => return CheckResult::new(c, Verdict::NotRun, amount).advice(why),
    };
    let verdict = if gbs < min {
        Verdict::Fail
    } else if gbs < min * (1.0 + WARN_MARGIN) {
        Verdict::Warn
    } else {
        Verdict::Pass
    };
    let advice = match verdict {
        Verdict::Pass => "",
        _ => {
            "compare with other GPUs of this host and with `nvbandwidth -t host_to_device_memcpy_ce`; check the link (above), the NUMA placement, and other traffic on the same PCIe switch"
        }
    };
    CheckResult::new(c, verdict, amount)
        .threshold(threshold)
        .advice(advice)
}

fn verification(mismatched: Option<u64>) -> CheckResult {
    let c = Check::DataVerification;
    match mismatched {
        None => CheckResult::not_run(c, "no round trip finished"),
        Some(0) => CheckResult::new(c, Verdict::Pass, Some(Amount::MismatchedWords(0)))
            .threshold("0 mismatched words"),
        Some(n) => CheckResult::new(c, Verdict::Fail, Some(Amount::MismatchedWords(n)))
            .threshold("0 mismatched words")
            .advice("data came back wrong: do not use this GPU for work; run `nvidia-smi -q -d ECC` and the vendor's diagnostics (`dcgmi diag -r 3`); under WSL2 a pinned copy that returns zeros is a known driver fault"),
    }
}

fn pinned_numa(s: &Settings) -> CheckResult {
    let c = Check::PinnedNuma;
    let gpu_node = match s.gpu_numa_node.value() {
        Some(NumaNode::Node(n)) => *n,
        Some(NumaNode::NoAffinity) => {
            return CheckResult::new(c, Verdict::NotApplicable, None)
                .advice("the host gives the GPU no NUMA node (one-node host or VM)");
        }
        None => return CheckResult::not_run(c, s.gpu_numa_node.value_text()),
    };
    let Some(placement) = s.pinned_pages_nodes.value() else {
        return CheckResult::not_run(c, s.pinned_pages_nodes.value_text());
    };
    let nodes: Vec<u32> = placement.0.iter().map(|n| n.node).collect();
    let measured = Some(Amount::Nodes(nodes.clone()));
    let threshold = format!("node {gpu_node} (the GPU's)");
    if nodes.iter().all(|n| *n == gpu_node) {
        return CheckResult::new(c, Verdict::Pass, measured).threshold(threshold);
    }
    CheckResult::new(c, Verdict::Warn, measured)
        .threshold(threshold)
        .advice(format!("pinned pages lie on another NUMA node than the GPU's, so copies cross the CPU interconnect: run with `numactl --cpunodebind={gpu_node} --membind={gpu_node}` (or bind the job's CPUs to node {gpu_node})"))
}

fn clocks_under_load(s: &Settings) -> CheckResult {
    let c = Check::ClocksUnderLoad;
    let Some(p) = s.pstate_under_load.value() else {
        return CheckResult::not_run(c, s.pstate_under_load.value_text());
    };
    let measured = Some(Amount::PState(p.0));
    let slowed: Vec<&str> = s
        .throttle_under_load
        .value()
        .map(|r| {
            r.0.iter()
                .filter(|r| r.is_slowdown())
                .map(|r| r.name())
                .collect()
        })
        .unwrap_or_default();
    let threshold = "P0 and no thermal, power or hardware slowdown";
    if p.0 == 0 && slowed.is_empty() {
        return CheckResult::new(c, Verdict::Pass, measured).threshold(threshold);
    }
    let why = if slowed.is_empty() {
        format!("the GPU copied at P{} instead of P0", p.0)
    } else {
        format!("the clocks were held down by {}", slowed.join(", "))
    };
    CheckResult::new(c, Verdict::Warn, measured)
        .threshold(threshold)
        .advice(format!("{why}: see `nvidia-smi -q -d PERFORMANCE,CLOCK`; GeForce cards run CUDA work at P2 by design; cluster checks lock clocks first (`nvidia-smi -lgc`)"))
}

fn wsl2_ceiling(pinned: Option<(u64, bool)>, wsl2: bool) -> CheckResult {
    let c = Check::Wsl2PinnedCeiling;
    if !wsl2 {
        return CheckResult::new(c, Verdict::NotApplicable, None).advice("not WSL2");
    }
    let Some((bytes, reached_cap)) = pinned else {
        return CheckResult::not_run(c, "the pinned ceiling was not probed");
    };
    let threshold = format!(
        "≥ {} (vLLM's default pinned swap space per GPU)",
        format_size(FRAMEWORK_PINNED_BYTES)
    );
    let measured = Some(Amount::Bytes(bytes));
    if reached_cap || bytes >= FRAMEWORK_PINNED_BYTES {
        return CheckResult::new(c, Verdict::Pass, measured).threshold(threshold);
    }
    CheckResult::new(c, Verdict::Warn, measured)
        .threshold(threshold)
        .advice("WSL2 caps page-locked memory below what frameworks pin: set pin_memory=False (PyTorch), a smaller swap_space (vLLM), or run natively on Windows or Linux")
}

/// The pin budget against what common frameworks pin: `safe` is the predictor's safe pinned
/// bytes, or why there is none.
pub fn pin_budget(safe: Result<u64, &str>) -> CheckResult {
    let c = Check::PinBudget;
    let bytes = match safe {
        Ok(b) => b,
        Err(why) => return CheckResult::not_run(c, why),
    };
    let threshold = format!(
        "≥ {} (vLLM's default pinned swap space per GPU)",
        format_size(FRAMEWORK_PINNED_BYTES)
    );
    let measured = Some(Amount::Bytes(bytes));
    if bytes >= FRAMEWORK_PINNED_BYTES {
        return CheckResult::new(c, Verdict::Pass, measured).threshold(threshold);
    }
    CheckResult::new(c, Verdict::Warn, measured)
        .threshold(threshold)
        .advice("a program that pins what common frameworks pin may fail or push this host into swap: pin less (pin_memory=False in PyTorch, a smaller swap_space in vLLM), free memory, or raise the cgroup's memory.max")
}

/// A 4-byte copy slower than this is a warning: native Linux takes a few µs, WDDM's command
/// batching tens of µs; beyond this something (a busy GPU, a VM exit per doorbell) adds to every
/// small copy.
pub const WARN_LATENCY_US: f64 = 100.0;

fn latency(samples: Option<&Result<Vec<f64>, String>>) -> CheckResult {
    let c = Check::CopyLatency;
    let us = match samples {
        None => return CheckResult::not_run(c, "not measured"),
        Some(Err(why)) => {
            return CheckResult::new(c, Verdict::Fail, None)
                .advice(format!("the copies failed: {why}"));
        }
        Some(Ok(v)) => match crate::stats::median(v) {
            Some(m) => m,
            None => return CheckResult::not_run(c, "no sample"),
        },
    };
    let threshold = format!("≤ {WARN_LATENCY_US:.0} µs (median)");
    let measured = Some(Amount::Micros(us));
    if us <= WARN_LATENCY_US {
        return CheckResult::new(c, Verdict::Pass, measured).threshold(threshold);
    }
    CheckResult::new(c, Verdict::Warn, measured)
        .threshold(threshold)
        .advice("every small copy pays this: look for other work on the GPU, a VM that traps the doorbell, or (Windows) hardware-accelerated GPU scheduling off; see docs/latency.md")
}

/// `fail` when any check failed, else `warn` when any warned, else `pass`; `not run` when no
/// check ran at all.
pub fn overall(results: &[CheckResult]) -> Verdict {
    let has = |v: Verdict| results.iter().any(|r| r.verdict == v);
    if has(Verdict::Fail) {
        Verdict::Fail
    } else if has(Verdict::Warn) {
        Verdict::Warn
    } else if has(Verdict::Pass) {
        Verdict::Pass
    } else {
        Verdict::NotRun
    }
}

mod node;
mod prom;
pub use node::*;
pub use prom::*;

#[cfg(test)]
mod tests;
