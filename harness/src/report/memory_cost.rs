//! What a case's memory cost, told apart: the host memory alone (the `host` phase, before any
//! device memory exists), what the device memory added on top, the largest device allocation
//! with only the host memory held. Every sentence about what page-locked memory cost at
//! allocation is made here, from the row's numbers.
//!
//! Files written before the host phase existed hold only the `alloc` phase (host and device
//! memory together) and a max-alloc probe taken with the device memory held too: for a case
//! without device memory these are the host memory's own cost; otherwise the sentences say that
//! the two memories cannot be told apart.

use crate::accounting::{Metric, Phase};
use crate::results::Row;
use crate::units::format_size;

/// The probe's step: two max-alloc results closer than this are the same.
const MAX_ALLOC_STEP_MIB: f64 = 64.0;

/// Metrics whose change is device memory.
const DEVICE_SIDE: &[Metric] = &[Metric::Shared, Metric::Dedicated, Metric::CudaUsed];

/// The metrics a memory sentence names.
pub const NAMED: &[Metric] = &[
    Metric::Shared,
    Metric::Dedicated,
    Metric::CudaUsed,
    Metric::ProcRss,
    Metric::LedgerPinned,
];

/// True when the row's deltas show the host memory's cost on its own: it has the `host` phase,
/// or it held no device memory (then `alloc` is the host memory alone).
pub fn host_cost_known(r: &Row) -> bool {
    r.has_accounting_at(Phase::Host) || r.device_bytes == 0
}

/// MiB `metric` moved when the case's host memory alone was allocated and first touched.
pub fn host_alone(r: &Row, metric: Metric) -> Option<f64> {
    r.accounting_value(Phase::Host, metric).or_else(|| {
        (r.device_bytes == 0)
            .then(|| r.accounting_value(Phase::Alloc, metric))
            .flatten()
    })
}

/// MiB `metric` moved when the case's device memory was added to its host memory.
pub fn device_added(r: &Row, metric: Metric) -> Option<f64> {
    Some(r.accounting_value(Phase::Alloc, metric)? - r.accounting_value(Phase::Host, metric)?)
}

fn moved(r: &Row, metrics: &[Metric], value: impl Fn(&Row, Metric) -> Option<f64>) -> String {
    metrics
        .iter()
        .filter_map(|m| value(r, *m).map(|v| format!("{} {v:+.0} MiB", m.declaration().words)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `Memory:` sentence: what allocating the most page-locked memory did to each observer, from
/// a case whose host memory's cost is known on its own; what its device memory then added, as
/// device memory. Without such a case, a sentence that says both memories moved together.
pub fn memory_sentence(rows: &[&Row]) -> Option<String> {
    let pinned: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.pinned_bytes > 0 && !r.accounting.is_empty())
        .collect();
    // The largest page-locked allocation; on a tie the first case.
    let largest = |rs: &mut dyn Iterator<Item = &Row>| -> Option<Row> {
        rs.max_by_key(|r| (r.pinned_bytes, std::cmp::Reverse(r.case_index)))
            .cloned()
    };
    let mut text = match largest(&mut pinned.iter().copied().filter(|r| host_cost_known(r))) {
        Some(r) => host_sentence(&r)?,
        None => {
            let r = largest(&mut pinned.iter().copied())?;
            let seen = moved(&r, NAMED, |r, m| r.accounting_value(Phase::Alloc, m));
            if seen.is_empty() {
                return None;
            }
            format!(
                "allocating {} page-locked together with {} of device memory for {} moved {seen}: both memories at once, since these results have no host-only phase (d_host_* columns), so what pinning alone cost cannot be told apart here",
                format_size(r.pinned_bytes),
                format_size(r.device_bytes),
                r.case_label
            )
        }
    };
    if !rows
        .iter()
        .any(|r| r.accounting.iter().any(|(_, m, _)| *m == Metric::Shared))
    {
        text.push_str("; shared GPU memory is not observable on this platform");
    }
    text.push('.');
    Some(text)
}

fn host_sentence(r: &Row) -> Option<String> {
    let seen = moved(r, NAMED, host_alone);
    if seen.is_empty() {
        return None;
    }
    let mut text = format!(
        "allocating {} page-locked for {} (no device memory held yet) moved {seen}",
        format_size(r.pinned_bytes),
        r.case_label
    );
    let device = moved(r, DEVICE_SIDE, device_added);
    if r.device_bytes > 0 && !device.is_empty() {
        text.push_str(&format!(
            "; the case's own {} of device memory then moved {device} (device memory, not pinning)",
            format_size(r.device_bytes)
        ));
    }
    Some(text)
}

/// The max-alloc probe of a case in words: what was held, the two results, and what holding the
/// host memory cost the device budget (nothing measurable within the probe's 64 MiB step).
pub fn max_alloc_detail(r: &Row) -> Option<String> {
    let free = r.max_alloc_free_mib?;
    if let Some(host) = r.max_alloc_host_only_mib() {
        let d = free - host;
        let cost = if d.abs() < MAX_ALLOC_STEP_MIB {
            "the same within the probe's 64 MiB step: holding it cost the device budget nothing measurable".to_string()
        } else if d > 0.0 {
            format!("holding the host memory cost the device budget {d:.0} MiB")
        } else {
            format!(
                "{:.0} MiB more while it was held (the driver's own caching, not a cost)",
                -d
            )
        };
        return Some(format!(
            "{}: {host:.0} MiB with only its {} of host memory held (no device memory yet), {free:.0} MiB after it was freed: {cost}",
            r.case_label,
            format_size(r.pinned_bytes.max(host_bytes(r)))
        ));
    }
    let held = r.max_alloc_held_mib?;
    Some(format!(
        "{}: {held:.0} MiB with the case's host memory and its {} of device memory held, {free:.0} MiB after both were freed: the difference, {:.0} MiB, is mostly the case's own device memory, not a cost of pinning (these results predate the probe with only the host memory held)",
        r.case_label,
        format_size(r.device_bytes),
        free - held
    ))
}

/// Host bytes a row's case holds (its transfer size for host-memory cases).
fn host_bytes(r: &Row) -> u64 {
    if r.host.is_none() { 0 } else { r.size_bytes }
}
