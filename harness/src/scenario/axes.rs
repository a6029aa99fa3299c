//! The case keys as a type, and a case's sweep axes keyed by them: what the scenario's sweeps
//! name and what a results row's `axes` column holds. Below the case model and the key table
//! (`keys.rs`), which both name them.

use super::named::named_enum;
use serde::{Deserialize, Serialize};
use std::fmt;

named_enum! {
    /// A case key: what a `[[case]]` block sets, a sweep sweeps and a results row's `axes`
    /// names. Written as its (dotted) name; `keys.rs` gives each its type, default and field.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum CaseKey {
        Host,
        Flags,
        Engine,
        Direction,
        Mode,
        Wait,
        Size,
        Chunk,
        Ring,
        Streams,
        Threads,
        Guard,
        MeasureWarmup,
        MeasureWarmupTime,
        MeasureMinSamples,
        MeasureMaxSamples,
        MeasureTargetSpread,
        MeasureTimeLimit,
        MeasureVerify,
        MeasureBatch,
        MeasureSamples,
        ProbesAccounting,
        ProbesMaxAlloc,
        ProbesPinnedCeiling,
        ProbesCeilingChunk,
        ProbesHoldAfterFree,
        ProbesHoldInterval,
        DeviceHold,
        Cycles,
        Pause,
        Layers,
        Cache,
    }
    names Host = "host",
        Flags = "flags",
        Engine = "engine",
        Direction = "direction",
        Mode = "mode",
        Wait = "wait",
        Size = "size",
        Chunk = "chunk",
        Ring = "ring",
        Streams = "streams",
        Threads = "threads",
        Guard = "guard",
        MeasureWarmup = "measure.warmup",
        MeasureWarmupTime = "measure.warmup_time",
        MeasureMinSamples = "measure.min_samples",
        MeasureMaxSamples = "measure.max_samples",
        MeasureTargetSpread = "measure.target_spread",
        MeasureTimeLimit = "measure.time_limit",
        MeasureVerify = "measure.verify",
        MeasureBatch = "measure.batch",
        MeasureSamples = "measure.samples",
        ProbesAccounting = "probes.accounting",
        ProbesMaxAlloc = "probes.max_alloc",
        ProbesPinnedCeiling = "probes.pinned_ceiling",
        ProbesCeilingChunk = "probes.ceiling_chunk",
        ProbesHoldAfterFree = "probes.hold_after_free",
        ProbesHoldInterval = "probes.hold_interval",
        DeviceHold = "device_hold",
        Cycles = "cycles",
        Pause = "pause",
        Layers = "layers",
        Cache = "cache";
}

/// A case's sweep axes: each swept key with its value as the user wrote it, in sweep order.
/// Written `key=value;key=value` (the results' `axes` column).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Axes(Vec<(CaseKey, String)>);

impl Axes {
    /// Appends the axis `key` at the value written `written`.
    pub fn push(&mut self, key: CaseKey, written: String) {
        self.0.push((key, written));
    }

    /// The axes as `(key, value as written)`, in sweep order.
    pub fn iter(&self) -> impl Iterator<Item = (CaseKey, &str)> {
        self.0.iter().map(|(k, v)| (*k, v.as_str()))
    }

    /// The value of axis `key` as written, if the case swept it.
    pub fn get(&self, key: CaseKey) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `key=value` for each axis, joined by `sep` (`;` in the results file).
    pub fn joined(&self, sep: &str) -> String {
        let pairs: Vec<String> = self.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.join(sep)
    }

    /// The axes written `key=value;key=value` (empty: none), each key a case key.
    pub fn parse(s: &str) -> Result<Axes, String> {
        let pair = |p: &str| {
            let (k, v) = p.split_once('=')?;
            Some((CaseKey::parse(k)?, v.to_string()))
        };
        s.split(';')
            .filter(|p| !p.is_empty())
            .map(|p| pair(p).ok_or_else(|| format!("`{p}` is not key=value of a case key")))
            .collect::<Result<_, _>>()
            .map(Axes)
    }
}

impl fmt::Display for Axes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.joined(";"))
    }
}

super::named::written_as_text!(Axes, Axes::parse);
