//! What `observe` samples on Windows beside the allocation events, as Task Manager shows it: PDH's
//! `GPU Process Memory` counters (dedicated, shared, total committed) of each process of the tree
//! and summed over it; PDH's `GPU Adapter Memory` (dedicated, shared) and DXGI's NON_LOCAL budget
//! and usage for the machine; and the commit charge and limit. DXGI answers for the calling
//! process only, so its usage is pinscope's own: the observed processes' usage is PDH's.
//! Where an observer cannot run (PDH under Wine, which has no GPU counters), it is listed
//! unavailable once, with the reason, and the others go on. Only Windows builds sample them.

use super::tree::process_and_tree_points;
use crate::probe::{Observer, Reading};
use crate::results::{Scope, Source, TimelinePoint, Unavailable};
use std::collections::BTreeMap;

/// The DXGI readings `observe` keeps: the NON_LOCAL (shared) segment's.
const DXGI_KEPT: [&str; 2] = ["nonlocal_budget", "nonlocal_usage"];

pub struct WddmObservers {
    /// PDH of each process of the tree, opened when it joins; `None` once PDH is unavailable.
    per_process: Option<BTreeMap<u32, Box<dyn Observer>>>,
    /// Opens PDH for one process.
    open_process: fn(u32) -> Box<dyn Observer>,
    adapters: Option<Box<dyn Observer>>,
    dxgi: Option<Box<dyn Observer>>,
    commit: Option<Box<dyn Observer>>,
}

/// `o`, or `None` with the reason in `unavailable` when it cannot run here.
fn usable(
    source: Source,
    o: Box<dyn Observer>,
    unavailable: &mut Vec<Unavailable>,
) -> Option<Box<dyn Observer>> {
    match o.unavailable() {
        Some(reason) => {
            unavailable.push(Unavailable {
                observer: source,
                reason,
            });
            None
        }
        None => Some(o),
    }
}

/// Adds `note` unless it is there already (a read that fails at every sample says so once).
fn note_once(notes: &mut Vec<String>, note: String) {
    if !notes.contains(&note) {
        notes.push(note);
    }
}

impl WddmObservers {
    /// The observers of this machine.
    pub fn for_this_machine(unavailable: &mut Vec<Unavailable>) -> WddmObservers {
        use crate::probe::{commit_observer, dxgi_of_first_adapter, pdh_of_adapters};
        WddmObservers::with(
            pdh_of_adapters(),
            dxgi_of_first_adapter(),
            commit_observer(),
            crate::probe::pdh_of_process,
            unavailable,
        )
    }

    /// These observers (tests give their own).
    pub fn with(
        adapters: Box<dyn Observer>,
        dxgi: Box<dyn Observer>,
        commit: Box<dyn Observer>,
        open_process: fn(u32) -> Box<dyn Observer>,
        unavailable: &mut Vec<Unavailable>,
    ) -> WddmObservers {
        WddmObservers {
            per_process: Some(BTreeMap::new()),
            open_process,
            adapters: usable(Source::Pdh, adapters, unavailable),
            dxgi: usable(Source::Dxgi, dxgi, unavailable),
            commit: usable(Source::Commit, commit, unavailable),
        }
    }

    /// Every reading at `t_s` for the tree `pids`.
    pub fn sample(
        &mut self,
        t_s: f64,
        pids: &[u32],
        unavailable: &mut Vec<Unavailable>,
        notes: &mut Vec<String>,
    ) -> Vec<TimelinePoint> {
        let mut out = self.per_process_points(t_s, pids, unavailable, notes);
        let machine = [
            (Source::Pdh, &mut self.adapters),
            (Source::Dxgi, &mut self.dxgi),
            (Source::Commit, &mut self.commit),
        ];
        for (source, o) in machine {
            let Some(o) = o else { continue };
            match o.read() {
                Ok(readings) => out.extend(
                    readings
                        .into_iter()
                        .filter(|r| source != Source::Dxgi || DXGI_KEPT.contains(&&*r.metric))
                        .map(|r| machine_point(t_s, source, r)),
                ),
                Err(e) => note_once(notes, format!("{}: {e}", source.name())),
            }
        }
        out
    }

    /// PDH of each process of the tree and summed over it. Processes that left the tree are
    /// forgotten; the first process PDH cannot be opened for makes it unavailable.
    fn per_process_points(
        &mut self,
        t_s: f64,
        pids: &[u32],
        unavailable: &mut Vec<Unavailable>,
        notes: &mut Vec<String>,
    ) -> Vec<TimelinePoint> {
        let Some(open) = &mut self.per_process else {
            return Vec::new();
        };
        open.retain(|pid, _| pids.contains(pid));
        let mut read: Vec<(u32, Vec<Reading>)> = Vec::with_capacity(pids.len());
        for &pid in pids {
            let o = open.entry(pid).or_insert_with(|| (self.open_process)(pid));
            if let Some(reason) = o.unavailable() {
                // One entry for PDH: the adapters' counters may have failed already.
                match unavailable.iter_mut().find(|u| u.observer == Source::Pdh) {
                    Some(u) if u.reason != reason => {
                        u.reason = format!("{}; per process: {reason}", u.reason);
                    }
                    Some(_) => {}
                    None => unavailable.push(Unavailable {
                        observer: Source::Pdh,
                        reason,
                    }),
                }
                self.per_process = None;
                return Vec::new();
            }
            match o.read() {
                Ok(r) => read.push((pid, r)),
                Err(e) => note_once(notes, format!("pdh of process {pid}: {e}")),
            }
        }
        process_and_tree_points(Source::Pdh, t_s, read, None)
    }
}

fn machine_point(t_s: f64, source: Source, r: Reading) -> TimelinePoint {
    TimelinePoint {
        t_s,
        scope: Scope::Machine,
        source,
        reading: r.metric,
        value: r.value,
        unit: r.unit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::ObserverId;
    use crate::probe::Unsupported;

    /// A SYNTHETIC observer: fixed readings, each value the pid times the metric's rank.
    struct Fixed(ObserverId, u32, &'static [&'static str]);

    impl Observer for Fixed {
        fn id(&self) -> ObserverId {
            self.0
        }
        fn read(&mut self) -> Result<Vec<Reading>, String> {
            let pid = u64::from(self.1);
            Ok((1..)
                .zip(self.2)
                .map(|(rank, m)| Reading::bytes(m, pid * rank))
                .collect())
        }
    }

    fn process(pid: u32) -> Box<dyn Observer> {
        let metrics = &[
            "process_dedicated",
            "process_shared",
            "process_total_committed",
        ];
        Box::new(Fixed(ObserverId::Pdh, pid, metrics))
    }

    fn no_pdh(_pid: u32) -> Box<dyn Observer> {
        Box::new(Unsupported::new(
            ObserverId::Pdh,
            r"\GPU Process Memory failed",
        ))
    }

    fn value(points: &[TimelinePoint], scope: Scope, source: Source, reading: &str) -> Option<f64> {
        points
            .iter()
            .find(|p| p.scope == scope && p.source == source && p.reading == reading)
            .map(|p| p.value)
    }

    #[test]
    fn pdh_is_read_per_process_and_summed_over_the_tree() {
        let mut unavailable = Vec::new();
        let dxgi = &[
            "local_usage",
            "nonlocal_usage",
            "nonlocal_budget",
            "nonlocal_reservation",
        ];
        let mut w = WddmObservers::with(
            Box::new(Fixed(ObserverId::Pdh, 1000, &["adapter_shared"])),
            Box::new(Fixed(ObserverId::Dxgi, 10, dxgi)),
            Box::new(Fixed(
                ObserverId::Process,
                7,
                &["commit_charge", "commit_limit"],
            )),
            process,
            &mut unavailable,
        );
        let mut notes = Vec::new();
        let points = w.sample(0.5, &[10, 11], &mut unavailable, &mut notes);
        assert!(
            unavailable.is_empty() && notes.is_empty(),
            "{unavailable:?} {notes:?}"
        );
        let v = |scope, source, reading| value(&points, scope, source, reading);
        assert_eq!(
            v(Scope::Process(11), Source::Pdh, "process_shared"),
            Some(22.0)
        );
        assert_eq!(v(Scope::Tree, Source::Pdh, "process_shared"), Some(42.0));
        assert_eq!(
            v(Scope::Tree, Source::Pdh, "process_total_committed"),
            Some(63.0)
        );
        assert_eq!(
            v(Scope::Machine, Source::Pdh, "adapter_shared"),
            Some(1000.0)
        );
        assert_eq!(
            v(Scope::Machine, Source::Dxgi, "nonlocal_budget"),
            Some(30.0)
        );
        assert_eq!(v(Scope::Machine, Source::Dxgi, "local_usage"), None);
        assert_eq!(
            v(Scope::Machine, Source::Commit, "commit_limit"),
            Some(14.0)
        );
        // A process that left the tree is no longer read.
        let points = w.sample(1.0, &[10], &mut unavailable, &mut notes);
        assert_eq!(
            value(&points, Scope::Tree, Source::Pdh, "process_shared"),
            Some(20.0)
        );
        assert_eq!(
            value(&points, Scope::Process(11), Source::Pdh, "process_shared"),
            None
        );
    }

    #[test]
    fn an_observer_that_cannot_run_is_listed_once_and_the_others_go_on() {
        let mut unavailable = Vec::new();
        let mut w = WddmObservers::with(
            Box::new(Unsupported::new(
                ObserverId::Pdh,
                r"\GPU Adapter Memory failed",
            )),
            Box::new(Unsupported::new(ObserverId::Dxgi, "no adapter")),
            Box::new(Fixed(ObserverId::Process, 7, &["commit_charge"])),
            no_pdh,
            &mut unavailable,
        );
        let mut notes = Vec::new();
        for t in [0.0, 0.1] {
            let points = w.sample(t, &[5, 6], &mut unavailable, &mut notes);
            assert_eq!(points.len(), 1, "{points:?}");
            assert_eq!(points[0].source, Source::Commit);
        }
        let sources: Vec<Source> = unavailable.iter().map(|u| u.observer).collect();
        assert_eq!(sources, [Source::Pdh, Source::Dxgi]);
        let why = &unavailable[0].reason;
        assert!(
            why.contains("GPU Adapter Memory") && why.contains("per process: \\GPU Process Memory"),
            "{why}"
        );
        assert!(w.per_process.is_none());
    }
}
