//! What a case's memory cost, in the report's words: the `Memory:` sentence (the finding
//! `compare::MemoryFinding` makes, so `report` and `compare` say the same) and the largest device
//! allocation with only the host memory held.
//!
//! Files written before the host phase existed hold only the `alloc` phase (host and device
//! memory together) and a max-alloc probe taken with the device memory held too: for a case
//! without device memory these are the host memory's own cost; otherwise the sentences say that
//! the run did not record the host memory alone.

use crate::compare::MemoryFinding;
use crate::results::Row;
use crate::units::format_size;

/// The probe's step: two max-alloc results closer than this are the same.
const MAX_ALLOC_STEP_MIB: f64 = 64.0;

/// The `Memory:` sentence: the [`MemoryFinding`] of these rows (the one `compare` states for the
/// same file): what allocating the most page-locked memory did to each observer with no device
/// memory held yet and what its device memory then added, or, in a run that did not record the
/// host memory alone, that it did not. `None` when no observer has a number to tell.
pub fn memory_sentence(rows: &[&Row]) -> Option<String> {
    let finding = MemoryFinding::of_rows(&[rows.to_vec()])?;
    let cost = finding.runs.into_iter().flatten().next()?;
    cost.observed().then(|| format!("{}.", cost.sentence()))
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
