//! Memory observers (temporary minimal set until the full observers land).

use crate::results::ObserverStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Count,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub metric: String,
    pub value: f64,
    pub unit: Unit,
}

pub trait Observer: Send {
    fn name(&self) -> &str;
    fn unavailable(&self) -> Option<String>;
    fn read(&mut self) -> Result<Vec<Reading>, String>;
}

#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub phase: String,
    pub t_ms: f64,
    pub readings: Vec<(String, Reading)>,
    pub errors: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    PinnedAlloc,
    Registered,
    Managed,
    Device,
    Staging,
}

#[derive(Clone, Default)]
pub struct Ledger(Arc<[AtomicU64; 5]>);

impl Ledger {
    pub fn new() -> Self {
        Self::default()
    }
    fn i(c: Category) -> usize {
        c as usize
    }
    pub fn add(&self, c: Category, bytes: u64) {
        self.0[Self::i(c)].fetch_add(bytes, Ordering::SeqCst);
    }
    pub fn sub(&self, c: Category, bytes: u64) {
        let _ = self.0[Self::i(c)].fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
            Some(v.saturating_sub(bytes))
        });
    }
    pub fn get(&self, c: Category) -> u64 {
        self.0[Self::i(c)].load(Ordering::SeqCst)
    }
    pub fn total_pinned(&self) -> u64 {
        self.get(Category::PinnedAlloc)
            + self.get(Category::Registered)
            + self.get(Category::Staging)
    }
}

pub type CudaMemFn = Box<dyn FnMut() -> Result<(u64, u64), String> + Send>;

pub struct GpuContext {
    pub uuid: Option<String>,
    pub luid: Option<[u8; 8]>,
    pub cuda_mem: Option<CudaMemFn>,
    pub ledger: Ledger,
}

pub struct Observers {
    cuda_mem: Option<CudaMemFn>,
    ledger: Ledger,
    start: Instant,
}

impl Observers {
    pub fn for_this_machine(ctx: GpuContext) -> Observers {
        Observers {
            cuda_mem: ctx.cuda_mem,
            ledger: ctx.ledger,
            start: Instant::now(),
        }
    }
    pub fn snapshot(&mut self, phase: &str) -> Snapshot {
        let mut s = Snapshot {
            phase: phase.into(),
            t_ms: self.start.elapsed().as_secs_f64() * 1e3,
            ..Default::default()
        };
        if let Some(f) = self.cuda_mem.as_mut() {
            match f() {
                Ok((free, total)) => {
                    for (m, v) in [("free", free), ("total", total), ("used", total - free)] {
                        s.readings.push((
                            "cuda".into(),
                            Reading {
                                metric: m.into(),
                                value: v as f64,
                                unit: Unit::Bytes,
                            },
                        ));
                    }
                }
                Err(e) => s.errors.push(("cuda".into(), e)),
            }
        }
        s.readings.push((
            "ledger".into(),
            Reading {
                metric: "pinned".into(),
                value: self.ledger.total_pinned() as f64,
                unit: Unit::Bytes,
            },
        ));
        s
    }
    pub fn statuses(&self) -> Vec<ObserverStatus> {
        vec![ObserverStatus {
            name: "cuda".into(),
            available: self.cuda_mem.is_some(),
            reason: None,
        }]
    }
}

pub fn column_values(before: &Snapshot, after: &Snapshot) -> Vec<(String, f64)> {
    let get = |s: &Snapshot, o: &str, m: &str| {
        s.readings
            .iter()
            .find(|(ob, r)| ob == o && r.metric == m)
            .map(|(_, r)| r.value)
    };
    let mut v = Vec::new();
    for (col, o, m) in [
        ("cuda_used", "cuda", "used"),
        ("ledger_pinned", "ledger", "pinned"),
    ] {
        if let (Some(a), Some(b)) = (get(before, o, m), get(after, o, m)) {
            v.push((col.to_string(), (b - a) / (1u64 << 20) as f64));
        }
    }
    v
}

pub fn timeline(
    obs: &mut Observers,
    hold: Duration,
    interval: Duration,
    stop: &AtomicBool,
) -> Vec<Snapshot> {
    let t0 = Instant::now();
    let mut v = Vec::new();
    while t0.elapsed() < hold && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(interval);
        v.push(obs.snapshot("hold"));
    }
    v
}

pub fn nvml_facts(_uuid: Option<&str>) -> Option<()> {
    None
}

pub fn apply_nvml_facts(_g: &mut crate::platform::GpuInfo, _nv: Option<()>) {}
