//! `ledger`: pinscope's own count of the memory it holds. On Linux, CUDA pinning shows in
//! neither `VmLck`, `Mlocked` nor `Unevictable`, so the only exact number is the one we keep.

use super::{Observer, Reading};
use crate::accounting::ObserverId;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a ledger entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerCategory {
    /// `cuMemHostAlloc` / `cudaMallocHost`.
    PinnedAlloc,
    /// Pageable memory page-locked with `cuMemHostRegister`.
    Registered,
    /// `cuMemAllocManaged`.
    Managed,
    /// `cuMemAlloc`.
    Device,
    /// Pinned staging buffers of a chunked strategy.
    Staging,
}

impl LedgerCategory {
    pub const ALL: [LedgerCategory; 5] = [
        LedgerCategory::PinnedAlloc,
        LedgerCategory::Registered,
        LedgerCategory::Managed,
        LedgerCategory::Device,
        LedgerCategory::Staging,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LedgerCategory::PinnedAlloc => "pinned_alloc",
            LedgerCategory::Registered => "registered",
            LedgerCategory::Managed => "managed",
            LedgerCategory::Device => "device",
            LedgerCategory::Staging => "staging",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Shared, thread-safe byte counts per [`LedgerCategory`]; clones count into the same ledger.
#[derive(Debug, Clone, Default)]
pub struct Ledger(Arc<[AtomicU64; 5]>);

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    pub fn add(&self, cat: LedgerCategory, bytes: u64) {
        // Saturating: a ledger that overflows u64 is already meaningless; never wrap to 0.
        let _ = self.0[cat.index()].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_add(bytes))
        });
    }

    /// Subtracts, stopping at zero (a double free must not wrap around to 16 EiB).
    pub fn sub(&self, cat: LedgerCategory, bytes: u64) {
        let _ = self.0[cat.index()].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_sub(bytes))
        });
    }

    pub fn get(&self, cat: LedgerCategory) -> u64 {
        self.0[cat.index()].load(Ordering::Relaxed)
    }

    /// Page-locked host bytes: pinned allocations + registered + staging.
    pub fn total_pinned(&self) -> u64 {
        self.get(LedgerCategory::PinnedAlloc)
            .saturating_add(self.get(LedgerCategory::Registered))
            .saturating_add(self.get(LedgerCategory::Staging))
    }
}

impl Observer for Ledger {
    fn id(&self) -> ObserverId {
        ObserverId::Ledger
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let mut out: Vec<Reading> = LedgerCategory::ALL
            .iter()
            .map(|c| Reading::bytes(c.name(), self.get(*c)))
            .collect();
        out.push(Reading::bytes("pinned", self.total_pinned()));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_sharing() {
        let l = Ledger::new();
        let l2 = l.clone();
        l.add(LedgerCategory::PinnedAlloc, 4 << 30);
        l2.add(LedgerCategory::Registered, 100);
        l.add(LedgerCategory::Staging, 64 << 20);
        l.add(LedgerCategory::Device, 7);
        l.add(LedgerCategory::Managed, 9);
        assert_eq!(l2.get(LedgerCategory::PinnedAlloc), 4 << 30);
        assert_eq!(l.total_pinned(), (4 << 30) + 100 + (64 << 20));
        l.sub(LedgerCategory::Registered, 40);
        assert_eq!(l.get(LedgerCategory::Registered), 60);
        l.sub(LedgerCategory::Registered, 1000);
        assert_eq!(l.get(LedgerCategory::Registered), 0, "saturates at zero");
        l.add(LedgerCategory::Device, u64::MAX);
        assert_eq!(l.get(LedgerCategory::Device), u64::MAX, "saturates at max");
    }

    #[test]
    fn concurrent_adds_all_count() {
        let l = Ledger::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let l = l.clone();
                s.spawn(move || {
                    for _ in 0..1000 {
                        l.add(LedgerCategory::Staging, 3);
                    }
                });
            }
        });
        assert_eq!(l.get(LedgerCategory::Staging), 12_000);
    }

    #[test]
    fn reads_every_category_and_pinned() {
        let mut l = Ledger::new();
        l.add(LedgerCategory::PinnedAlloc, 10);
        l.add(LedgerCategory::Managed, 5);
        let r = l.read().expect("ledger reads never fail");
        let names: Vec<&str> = r.iter().map(|r| r.metric.as_str()).collect();
        assert_eq!(
            names,
            [
                "pinned_alloc",
                "registered",
                "managed",
                "device",
                "staging",
                "pinned"
            ]
        );
        assert_eq!(r[5].value, 10.0, "managed memory is not pinned");
        assert!(l.unavailable().is_none());
    }
}
