//! The columns of the results CSV and of its samples file: each column's name, unit and the
//! field of [`Row`] it reads and writes, so writer and reader share one list.

use super::schema::*;
use crate::accounting;
use crate::platform::{Recorded, RecordedName};
use crate::scenario::{Axes, HostFlags, HostKind};
use std::sync::Arc;

/// A field of a [`Row`], as a column reads and writes it.
enum Field<'a> {
    Text(&'a mut String),
    /// Text most rows of a file share: a row read with the previous row's value keeps it.
    Shared(&'a mut Arc<str>),
    /// A whole number of bytes or an index.
    Whole(&'a mut u64),
    Index(&'a mut usize),
    /// A count that fits in 32 bits.
    Small(&'a mut u32),
    /// A measured value: empty, or finite and 0 or more.
    Measured(&'a mut Option<f64>),
    /// A probe's value in MiB: empty, or finite (of either sign).
    Mib(&'a mut Option<f64>),
    Lane(&'a mut Lane),
    Status(&'a mut Status),
    /// A typed value written as a name ([`Cell`]).
    Cell(&'a mut dyn Cell),
}

/// A typed field written as text and read back from it.
trait Cell {
    fn text(&self) -> String;
    /// The value of `s`, or the values the column may hold.
    fn set(&mut self, s: &str) -> Result<(), String>;
}

fn one_of<T: Named>() -> String {
    T::ALL
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl<T: Named> Cell for T {
    fn text(&self) -> String {
        self.name().into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = T::from_name(s).ok_or_else(one_of::<T>)?;
        Ok(())
    }
}

/// Empty for `None`.
impl<T: Named> Cell for Option<T> {
    fn text(&self) -> String {
        self.map(|v| v.name()).unwrap_or_default().into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = match s {
            "" => None,
            s => Some(T::from_name(s).ok_or_else(one_of::<T>)?),
        };
        Ok(())
    }
}

/// `device` for `None` (device engines have no host buffer).
impl Cell for Option<HostKind> {
    fn text(&self) -> String {
        host_name(*self).into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = match s {
            "device" => None,
            s => Some(s.parse::<HostKind>().map_err(|_| {
                let names: Vec<&str> = HostKind::ALL.iter().map(|h| h.name()).collect();
                format!("{}, device", names.join(", "))
            })?),
        };
        Ok(())
    }
}

impl Cell for HostFlags {
    fn text(&self) -> String {
        self.label()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = HostFlags::from_label(s)
            .ok_or_else(|| format!("none or {} joined by +", HostFlags::NAMES.join(", ")))?;
        Ok(())
    }
}

/// Any text: what this version does not know is kept as read.
impl<T: RecordedName> Cell for Recorded<T> {
    fn text(&self) -> String {
        Recorded::text(self).into()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = Recorded::read(s);
        Ok(())
    }
}

/// `key=value;...`, each key a case key.
impl Cell for Axes {
    fn text(&self) -> String {
        self.to_string()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = Axes::parse(s)?;
        Ok(())
    }
}

/// Empty for `None`.
impl Cell for Option<Device> {
    fn text(&self) -> String {
        self.map(|d| d.to_string()).unwrap_or_default()
    }
    fn set(&mut self, s: &str) -> Result<(), String> {
        *self = match s {
            "" => None,
            s => Some(Device::parse(s).ok_or("a GPU's ordinal or all")?),
        };
        Ok(())
    }
}

/// One column of the results CSV: its name, the unit of its values (empty when it has none) and
/// the field of [`Row`] it holds. Reading and writing go through the same field, so a new column
/// is one entry in [`HEAD`] or [`TAIL`] (and its line in the README, which a test checks).
pub struct Column {
    pub name: &'static str,
    pub unit: &'static str,
    field: for<'a> fn(&'a mut Row) -> Field<'a>,
}

/// `col!(name, unit, Kind, field)`: the column `name` (values in `unit`, empty when it has none)
/// holding `Field::Kind` of the [`Row`] field `field` (a path such as `machine.os`).
macro_rules! col {
    ($name:literal, $unit:literal, machine.$field:ident) => {
        Column {
            name: $name,
            unit: $unit,
            field: |r| Field::Text(&mut Arc::make_mut(&mut r.machine).$field),
        }
    };
    ($name:literal, $unit:literal, $kind:ident, machine.$field:ident) => {
        Column {
            name: $name,
            unit: $unit,
            field: |r| Field::$kind(&mut Arc::make_mut(&mut r.machine).$field),
        }
    };
    ($name:literal, $unit:literal, $kind:ident, $($field:ident).+) => {
        Column {
            name: $name,
            unit: $unit,
            field: |r| Field::$kind(&mut r.$($field).+),
        }
    };
}

/// The leading columns, in order (after `schema_version`, which every file starts with and which
/// is checked on its own). Every file has them.
pub(super) const HEAD: &[Column] = &[
    col!("run_id", "", Shared, run_id),
    col!("started_at", "", Shared, started_at),
    col!("host_name", "", machine.host_name),
    col!("platform", "", Cell, machine.platform),
    col!("os", "", machine.os),
    col!("driver_model", "", Cell, machine.driver_model),
    col!("gpu", "", machine.gpu),
    col!("driver_version", "", machine.driver_version),
    col!("pcie_link", "", machine.pcie_link),
    col!("scenario", "", Shared, scenario),
    col!("case_label", "", Text, case_label),
    col!("case_index", "", Index, case_index),
    col!("case_key", "", Text, case_key),
    col!("lane", "", Lane, lane),
    col!("host", "", Cell, host),
    col!("flags", "", Cell, flags),
    col!("engine", "", Cell, engine),
    col!("direction", "", Cell, direction),
    col!("mode", "", Cell, mode),
    col!("size_bytes", "B", Whole, size_bytes),
    col!("chunk_bytes", "B", Whole, chunk_bytes),
    col!("ring", "", Small, ring),
    col!("streams", "", Small, streams),
    col!("threads", "", Small, threads),
    col!("batch", "", Small, batch),
    col!("axes", "", Cell, axes),
    col!("status", "", Status, status),
    col!("samples", "", Small, samples),
    col!("outliers", "", Small, outliers),
    col!("bw_median_gbs", "GB/s", Measured, bw_median_gbs),
    col!("bw_min_gbs", "GB/s", Measured, bw_min_gbs),
    col!("bw_max_gbs", "GB/s", Measured, bw_max_gbs),
    col!("bw_spread_pct", "%", Measured, bw_spread_pct),
    col!("time_median_ms", "ms", Measured, time_median_ms),
    col!("time_min_ms", "ms", Measured, time_min_ms),
    col!("time_max_ms", "ms", Measured, time_max_ms),
    col!("wall_median_ms", "ms", Measured, wall_median_ms),
    col!("verified", "", Cell, verified),
    col!("alloc_ms", "ms", Measured, alloc_ms),
    col!("register_ms", "ms", Measured, register_ms),
    col!("unregister_ms", "ms", Measured, unregister_ms),
    col!("free_ms", "ms", Measured, free_ms),
    col!("pinned_bytes", "B", Whole, pinned_bytes),
    col!("device_bytes", "B", Whole, device_bytes),
];

/// The columns after the accounting family, in order. Files written before a column existed
/// lack it: it reads as empty (`gpus_at_once` as 1).
pub(super) const TAIL: &[Column] = &[
    col!("max_alloc_held_mib", "MiB", Mib, max_alloc_held_mib),
    col!("max_alloc_free_mib", "MiB", Mib, max_alloc_free_mib),
    col!("pinned_ceiling_mib", "MiB", Mib, pinned_ceiling_mib),
    col!("stopped_by", "", Cell, stopped_by),
    col!("device", "", Cell, device),
    col!("gpus_at_once", "", Small, gpus_at_once),
    col!("lat_min_us", "µs", Measured, lat_min_us),
    col!("lat_p50_us", "µs", Measured, lat_p50_us),
    col!("lat_p90_us", "µs", Measured, lat_p90_us),
    col!("lat_p99_us", "µs", Measured, lat_p99_us),
    col!("lat_event_p50_us", "µs", Measured, lat_event_p50_us),
    col!("max_alloc_host_mib", "MiB", Mib, max_alloc_host_mib),
    col!("pinned_ceiling_cap_mib", "MiB", Mib, pinned_ceiling_cap_mib),
    col!("wait", "", Cell, wait),
    col!("cache", "", Cell, cache),
    col!("file_format", "", Cell, file_format),
    col!("file_tensors", "", Small, file_tensors),
    col!(
        "resident_before_bytes",
        "B",
        Measured,
        resident_before_bytes
    ),
    col!("resident_after_bytes", "B", Measured, resident_after_bytes),
    col!("read_ms", "ms", Measured, read_ms),
    col!("fault_ms", "ms", Measured, fault_ms),
    col!("pin_ms", "ms", Measured, pin_ms),
    col!("dma_ms", "ms", Measured, dma_ms),
    col!("cufile_mode", "", Cell, cufile_mode),
];

/// The fixed leading columns of the results CSV, in order: `schema_version` and [`HEAD`].
/// Accounting columns follow them, `d_<phase>_<metric>_mib` for each phase and metric
/// ([`crate::accounting::columns`]), then [`TAIL`]; the late phases' come last.
pub fn base_columns() -> Vec<&'static str> {
    std::iter::once("schema_version")
        .chain(HEAD.iter().map(|c| c.name))
        .collect()
}

/// Every column of the results CSV, in order.
pub fn columns() -> Vec<String> {
    let mut cols: Vec<String> = base_columns().into_iter().map(String::from).collect();
    let family = |late: bool| {
        accounting::columns()
            .filter(move |(p, _)| p.is_late() == late)
            .map(|(p, m)| accounting::column(p, m))
    };
    cols.extend(family(false));
    cols.extend(TAIL.iter().map(|c| c.name.to_string()));
    cols.extend(family(true));
    cols
}

/// The column named `name` among the fixed ones (not the accounting family).
pub fn column(name: &str) -> Option<&'static Column> {
    HEAD.iter().chain(TAIL).find(|c| c.name == name)
}

impl Column {
    /// The column's value in `row` when it holds a number (a measured value, a probe's MiB).
    pub fn number(&self, row: &Row) -> Option<f64> {
        let mut r = row.clone();
        match (self.field)(&mut r) {
            Field::Measured(v) | Field::Mib(v) => *v,
            Field::Whole(v) => Some(*v as f64),
            Field::Small(v) => Some(f64::from(*v)),
            Field::Index(v) => Some(*v as f64),
            Field::Text(_)
            | Field::Shared(_)
            | Field::Lane(_)
            | Field::Status(_)
            | Field::Cell(_) => None,
        }
    }

    /// The column's value in `row` as the CSV writes it.
    pub(super) fn write(&self, row: &mut Row) -> String {
        match (self.field)(row) {
            Field::Text(s) => s.clone(),
            Field::Shared(s) => s.to_string(),
            Field::Whole(v) => v.to_string(),
            Field::Index(v) => v.to_string(),
            Field::Small(v) => v.to_string(),
            Field::Measured(v) | Field::Mib(v) => opt(*v),
            Field::Lane(l) => l.name().into(),
            Field::Status(s) => s.to_field(),
            Field::Cell(c) => c.text(),
        }
    }

    /// Reads `s` into `row`; the reason on a bad value.
    pub(super) fn read(&self, row: &mut Row, s: &str) -> Result<(), String> {
        let name = self.name;
        let whole = || -> Result<u64, String> {
            s.parse()
                .map_err(|_| format!("`{name}` is `{s}`, not a whole number"))
        };
        match (self.field)(row) {
            Field::Text(t) => *t = s.into(),
            Field::Shared(t) => {
                if **t != *s {
                    *t = s.into();
                }
            }
            Field::Whole(v) => *v = whole()?,
            Field::Index(v) => *v = whole()? as usize,
            Field::Small(v) => {
                *v = u32::try_from(whole()?).map_err(|_| format!("`{name}` is too large"))?;
            }
            Field::Measured(v) => {
                *v = if s.is_empty() {
                    None
                } else {
                    let x = s
                        .parse::<f64>()
                        .map_err(|_| format!("`{name}` is `{s}`, not a number"))?;
                    // Bandwidths, times and spreads are never negative, infinite or NaN.
                    if !x.is_finite() || x < 0.0 {
                        return Err(format!(
                            "`{name}` is `{s}`: it must be a finite number, 0 or more"
                        ));
                    }
                    Some(x)
                }
            }
            Field::Mib(v) => {
                *v = if s.is_empty() {
                    None
                } else {
                    Some(
                        s.parse::<f64>()
                            .ok()
                            .filter(|x| x.is_finite())
                            .ok_or_else(|| format!("`{s}` is not a finite number"))?,
                    )
                }
            }
            Field::Lane(l) => {
                *l = Lane::parse(s)
                    .ok_or_else(|| format!("`lane` is `{s}`, not h2d, d2h, sum or device"))?;
            }
            Field::Status(st) => {
                *st = Status::from_field(s)
                    .ok_or_else(|| format!("`status` is `{s}`, not ok / failed: … / skipped: …"))?;
            }
            Field::Cell(c) => {
                c.set(s)
                    .map_err(|names| format!("`{name}` is `{s}`, not one of {names}"))?;
            }
        }
        Ok(())
    }
}

pub(super) fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

pub const SAMPLE_COLUMNS: [&str; 7] = [
    "schema_version",
    "case_key",
    "lane",
    "series",
    "index",
    "t_ms",
    "value",
];
