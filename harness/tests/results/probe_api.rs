//! The probe API as the runner uses it: build the set for this machine, snapshot around an
//! "allocation" the ledger records, map to the CSV columns, hold-after-free timeline.

use pinscope::accounting::ObserverId;
use pinscope::probe::{
    self, GpuContext, Ledger, LedgerCategory, Moment, Observers, Snapshot, column_values, delta,
    describe,
};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn runner_flow_without_a_gpu() {
    let ledger = Ledger::new();
    let fake_cuda: probe::CudaMemFn = {
        let ledger = ledger.clone();
        Box::new(move || Ok((80 << 30, (80 << 30) + ledger.get(LedgerCategory::Device))))
    };
    let mut obs = Observers::for_this_machine(GpuContext {
        uuid: None,
        luid: None,
        cuda_mem: Some(fake_cuda),
        ledger: ledger.clone(),
    });
    let before: Snapshot = obs.snapshot(Moment::Before);
    ledger.add(LedgerCategory::PinnedAlloc, 64 << 20);
    ledger.add(LedgerCategory::Device, 32 << 20);
    let alloc = obs.snapshot(Moment::Device);

    let d = delta(&before, &alloc);
    let get = |o: ObserverId, m: &str| d.iter().find(|(k, _)| *k == (o, m)).map(|(_, v)| *v);
    assert_eq!(get(ObserverId::Ledger, "pinned"), Some((64 << 20) as f64));
    assert_eq!(get(ObserverId::Cuda, "used"), Some((32 << 20) as f64));

    let cols = column_values(&before, &alloc);
    let col = |c: &str| cols.iter().find(|(n, _)| n.name() == c).map(|(_, v)| *v);
    assert_eq!(col("ledger_pinned"), Some(64.0));
    assert_eq!(col("cuda_used"), Some(32.0));

    ledger.sub(LedgerCategory::PinnedAlloc, 64 << 20);
    let stop = AtomicBool::new(false);
    let tl = probe::timeline(
        &mut obs,
        Duration::from_millis(30),
        Duration::from_millis(10),
        &stop,
    );
    assert!(tl.len() >= 2);
    let last = tl.last().map(|s| s.value(ObserverId::Ledger, "pinned"));
    assert_eq!(last, Some(Some(0.0)));

    let text = describe(&obs);
    let statuses = obs.statuses();
    assert_eq!(
        text.lines().count(),
        statuses.len(),
        "one line per observer: {text}"
    );
    assert!(text.starts_with("cuda: available"), "{text}");
    assert!(statuses.iter().all(|s| s.available == s.reason.is_none()));
}
