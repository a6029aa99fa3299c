//! The memory observers and their readings, and the accounting metrics made from them, each
//! declared once.
//!
//! An observer ([`ObserverId`], [`OBSERVERS`]) is known by the name results files write its
//! readings under (`<observer>.<metric>`) and by the noise of its readings; a reading that is not
//! memory held, moves with its own noise or has words readers know it by is declared in
//! [`READINGS`]. An accounting metric ([`METRICS`]) has its name (the `<m>` of the CSV's
//! `d_<phase>_<m>_mib` columns and of claim metrics), its header in compare tables, the words
//! readers know it by, the readings that supply it and the platforms where it can be read.
//! Columns, claim metrics, compare tables, plots, the platform page and the table in
//! `docs/accounting.md` (checked by a test) all come from these tables.

use std::fmt;

/// Whether a metric can be read on a platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    Yes,
    /// Its observer cannot open what it watches there (the columns stay empty, never 0).
    No,
    /// pinscope has not yet been run there with that observer.
    Unverified,
}

/// The platforms of [`Declaration::platforms`], in order.
pub const PLATFORMS: [&str; 4] = ["Linux", "WSL2", "Windows WDDM", "Windows TCC"];

/// Everything said about one metric.
#[derive(Debug, Clone, Copy)]
pub struct Declaration {
    pub metric: Metric,
    /// `cuda_used`: the `<m>` of `d_<phase>_<m>_mib`.
    pub name: &'static str,
    /// The column header of compare tables (short).
    pub header: &'static str,
    /// The words of plots and the platform page (says where the number comes from).
    pub label: &'static str,
    /// The words of report sentences.
    pub words: &'static str,
    /// Observer readings that supply it (observer, metric), the first one read wins.
    pub sources: &'static [(ObserverId, &'static str)],
    /// Whether it can be read on each of [`PLATFORMS`].
    pub platforms: [Availability; 4],
    /// Where the number comes from, in the words of `docs/accounting.md`'s table (Markdown).
    pub source: &'static str,
    /// What page-locked memory moves in it, as measured or expected (Markdown).
    pub pinned_moves: &'static str,
}

use Availability::{No, Unverified, Yes};

/// Declares [`Metric`], [`Metric::ALL`] and [`METRICS`] from one table, a metric a row:
/// variant, name, header, label, words, sources and platforms, then the source and what pinned
/// memory moves in the words of the docs (see [`Declaration`]).
macro_rules! metrics {
    ($($m:ident: $name:literal, $header:literal, $label:literal, $words:literal, [$($o:ident.$r:ident),+], [$($p:ident),+], $source:literal, $moves:literal;)+) => {
        /// An accounting metric (a column family of the results CSV, MiB deltas against
        /// `before`).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(rename_all = "snake_case")]
        pub enum Metric {
            $($m,)+
        }

        impl Metric {
            /// Every metric, in the CSV's column order.
            pub const ALL: [Metric; [$($name),+].len()] = [$(Metric::$m),+];
        }

        /// Every metric, in the CSV's column order. [`Metric::READER_ORDER`] is the order a
        /// Windows-vs-WSL2 reader asks about them in.
        pub const METRICS: [Declaration; [$($name),+].len()] = [$(Declaration {
            metric: Metric::$m,
            name: $name,
            header: $header,
            label: $label,
            words: $words,
            sources: &[$((ObserverId::$o, stringify!($r))),+],
            platforms: [$($p),+],
            source: $source,
            pinned_moves: $moves,
        }),+];
    };
}

#[rustfmt::skip]
metrics! {
    CudaUsed: "cuda_used", "CUDA used", "CUDA used (cuMemGetInfo)", "CUDA used", [Cuda.used], [Yes, Yes, Yes, Yes], "`cuMemGetInfo` total − free", "a few MiB of mapping (measured on Linux: +8 MiB for 4 GiB), not the pinned size";
    NvmlUsed: "nvml_used", "NVML used", "NVML device used", "NVML used", [Nvml.used], [Yes, Unverified, Yes, Yes], "NVML device memory used", "as `cuda_used`";
    ProcRss: "proc_rss", "RSS/WS", "host RSS / working set", "host RSS", [Procfs.vm_rss, Process.working_set], [Yes, Yes, Yes, Yes], "VmRSS; working set on Windows", "the pinned size (its pages are resident)";
    MemAvailable: "mem_available", "MemAvail", "MemAvailable", "MemAvailable", [Procfs.mem_available], [Yes, Yes, No, No], "`/proc/meminfo` MemAvailable", "minus the pinned size";
    Committed: "committed", "committed", "committed / private bytes", "committed memory", [Procfs.committed_as, Process.private_usage], [Yes, Yes, Yes, Yes], "Committed_AS; private usage on Windows", "depends on the flags (measured on Linux: write-combined and registered memory are not counted again)";
    Dedicated: "dedicated", "dedicated", "dedicated GPU memory (DXGI local)", "dedicated GPU memory", [Dxgi.local_usage, Pdh.process_dedicated], [No, No, Yes, Unverified], "DXGI LOCAL usage; PDH process dedicated", "nothing: it is device memory (TCC has no DXGI adapter)";
    Shared: "shared", "shared", "shared GPU memory (Task Manager; DXGI non-local)", "shared GPU memory", [Dxgi.nonlocal_usage, Pdh.process_shared], [No, No, Yes, Unverified], "DXGI NON_LOCAL usage (Task Manager's \"shared GPU memory\"); PDH process shared", "the pinned size under WDDM, as article 000 says (on WSL2, look at Task Manager on the Windows host)";
    LedgerPinned: "ledger_pinned", "ledger", "pinscope ledger: page-locked bytes", "pinscope's ledger", [Ledger.pinned], [Yes, Yes, Yes, Yes], "pinscope's own count", "the pinned size, by construction";
    CgroupMemory: "cgroup_memory", "cgroup", "cgroup v2 memory.current (the limit is memory.max)", "memory charged to the cgroup", [Cgroup.current], [Yes, Unverified, No, No], "cgroup v2 `memory.current` of this process's cgroup (`memory.max`, its limit, is in the samples file)", "not yet measured: whether the driver charges page-locked pages to the job's or container's cgroup is what this column shows (if it does, a pin can meet `memory.max` while MemAvailable is large). Unavailable, with the reason, where memory is on cgroup v1 (hybrid mounts) or the process is in the root cgroup";
}

impl Metric {
    /// The order plots and the platform page list them in: what a Windows-vs-WSL2 reader asks
    /// about first (shared and dedicated GPU memory) first.
    pub const READER_ORDER: [Metric; 9] = [
        Metric::Shared,
        Metric::Dedicated,
        Metric::ProcRss,
        Metric::LedgerPinned,
        Metric::CudaUsed,
        Metric::NvmlUsed,
        Metric::Committed,
        Metric::MemAvailable,
        Metric::CgroupMemory,
    ];

    pub fn declaration(self) -> &'static Declaration {
        &METRICS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.declaration().name
    }
    pub fn parse(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }
    /// How far it moves on its own: the largest noise of the readings that supply it (a
    /// metric read from the host's counters on one platform and the process's on another
    /// moves by less than this wherever it is read). The report's accounting plots leave out a
    /// case whose every metric stayed inside its noise.
    pub fn noise(self) -> Noise {
        let mut noise = Noise::EXACT;
        for (observer, reading) in self.declaration().sources {
            let n = ReadingFacts::of_reading(*observer, reading).noise;
            if n.mib > noise.mib {
                noise = n;
            }
        }
        noise
    }
    /// The observers that supply it (`procfs`, `process`), first choice first.
    pub fn observers(self) -> Vec<ObserverId> {
        let mut v: Vec<ObserverId> = self.declaration().sources.iter().map(|s| s.0).collect();
        v.dedup();
        v
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// What an observer reading counts: whether a plot of memory held and released draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadingKind {
    /// Memory that is taken and given back (used, resident, committed, locked, the ledger's).
    Held,
    /// Memory left over: the mirror of a `used` reading.
    Free,
    /// The size of a pool, or the budget the system grants: not what a case holds.
    Capacity,
    /// A high-water mark: it never comes back down.
    Peak,
    /// The PCIe link's generation and width (counts).
    Link,
}

/// How far a kind of reading moves on its own, and why: a hold-after-free timeline series is
/// drawn only when it moved by more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// MiB; 0: any change counts.
    pub mib: f64,
    /// What moves it (the docs' words).
    pub why: &'static str,
}

#[rustfmt::skip]
impl Noise {
    pub const EXACT: Noise = Noise { mib: 0.0, why: "pinscope counts its own allocations exactly" };
    pub const OWN: Noise = Noise { mib: 2.0, why: "this process's own counters: the allocator and the runtime's threads" };
    pub const DEVICE: Noise = Noise { mib: 4.0, why: "device memory: 2 MiB device pages, other contexts" };
    pub const SYSTEM: Noise = Noise { mib: 64.0, why: "system-wide host counters: other processes and the page cache (up to ~60 MiB on an idle VM in the published runs)" };
    pub const GROUP: Noise = Noise { mib: 64.0, why: "every process of the cgroup and the page cache charged to it, as the system-wide counters (+10 MiB after a free with nothing held in the published ollama-like run)" };
    /// An observer whose noise has not been measured, or one this version does not know.
    pub const UNMEASURED: Noise = Noise { mib: 2.0, why: "not measured yet (the default)" };
}

/// Declares [`ObserverId`] and [`OBSERVERS`] from one table, an observer a line: variant, the
/// name results files write, and the [`Noise`] of its readings.
macro_rules! observers {
    ($($o:ident: $name:literal, $noise:ident;)+) => {
        /// A memory observer, by the name results files write its readings under
        /// (`<observer>.<metric>`) and a run's sidecar lists its availability under.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(rename_all = "lowercase")]
        pub enum ObserverId {
            $($o,)+
        }

        /// Every observer, in the order a run sets them up and lists them.
        pub const OBSERVERS: [ObserverDecl; [$($name),+].len()] = [$(ObserverDecl {
            id: ObserverId::$o,
            name: $name,
            noise: Noise::$noise,
        }),+];
    };
}

/// Everything said about one observer.
#[derive(Debug, Clone, Copy)]
pub struct ObserverDecl {
    pub id: ObserverId,
    /// The `<observer>` of its readings' names.
    pub name: &'static str,
    /// How far its readings move on their own; a reading of [`READINGS`] may say otherwise.
    pub noise: Noise,
}

observers! {
    Cuda: "cuda", DEVICE;
    Nvml: "nvml", DEVICE;
    // System-wide host counters, but for this process's own (`vm_*`, in READINGS).
    Procfs: "procfs", SYSTEM;
    Cgroup: "cgroup", GROUP;
    Dxgi: "dxgi", DEVICE;
    Pdh: "pdh", DEVICE;
    Process: "process", OWN;
    Ledger: "ledger", EXACT;
}

impl ObserverId {
    pub fn declaration(self) -> &'static ObserverDecl {
        &OBSERVERS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.declaration().name
    }
    pub fn parse(name: &str) -> Option<ObserverId> {
        OBSERVERS.iter().find(|o| o.name == name).map(|o| o.id)
    }
}

impl fmt::Display for ObserverId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// An observer reading by name, `<observer>.<metric>` (`procfs.vm_rss`): how the samples file
/// names a reading's series. The observer is one of [`OBSERVERS`]; the metric is the observer's
/// own snake_case name of the reading (see `probe::Reading`), declared in [`READINGS`] when it
/// is known by more than its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReadingName {
    pub observer: ObserverId,
    pub metric: Box<str>,
}

impl ReadingName {
    pub fn new(observer: ObserverId, metric: &str) -> ReadingName {
        ReadingName {
            observer,
            metric: metric.into(),
        }
    }

    /// The reading named `<observer>.<metric>`, or why `text` is not one (a sentence fragment
    /// that names the text and the observers known).
    pub fn parse(text: &str) -> Result<ReadingName, String> {
        ReadingName::parts(text).map(|(observer, metric)| ReadingName::new(observer, metric))
    }

    /// The observer and metric of `<observer>.<metric>`, checked as [`ReadingName::parse`]
    /// checks them, without copying the metric.
    pub fn parts(text: &str) -> Result<(ObserverId, &str), String> {
        let Some((observer, metric)) = text.split_once('.') else {
            return Err(format!(
                "`{text}` is not a reading `<observer>.<metric>` (no `.`)"
            ));
        };
        let Some(observer) = ObserverId::parse(observer) else {
            let known: Vec<&str> = OBSERVERS.iter().map(|o| o.name).collect();
            return Err(format!(
                "reading `{text}` names observer `{observer}`, which is not one of {}",
                known.join(", ")
            ));
        };
        let snake = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if metric.is_empty() || !metric.chars().all(snake) {
            return Err(format!(
                "reading `{text}` has metric `{metric}`, which is not a snake_case name"
            ));
        }
        Ok((observer, metric))
    }

    /// What the reading is: its row of [`READINGS`], else memory held with its observer's
    /// noise, named by its name.
    pub fn facts(&self) -> ReadingFacts {
        ReadingFacts::of_reading(self.observer, &self.metric)
    }
}

impl fmt::Display for ReadingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.observer, self.metric)
    }
}

/// What one observer reading is: what it counts, how far it moves on its own and the words
/// readers know it by (`None`: its name says it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadingFacts {
    pub kind: ReadingKind,
    pub noise: Noise,
    pub words: Option<&'static str>,
}

/// A reading (`<observer>.<metric>`) with what is declared of it.
#[derive(Debug, Clone, Copy)]
pub struct ReadingDecl {
    pub observer: ObserverId,
    pub metric: &'static str,
    pub facts: ReadingFacts,
}

/// Every observer reading (see `probe`) that is known by more than its name: what it counts,
/// how far it moves on its own and the words readers know it by. Any other reading of an
/// observer, including a metric this version does not declare, is memory held with its
/// observer's noise, named by its name ([`ReadingName::facts`]). A samples file that names an
/// observer this version does not have is refused. A row: observer, metric, what it counts, its
/// noise, its words.
#[rustfmt::skip]
pub const READINGS: &[ReadingDecl] = {
    use ObserverId::*;
    use ReadingKind::{Capacity, Free, Held, Link, Peak};
    /// Noise: its observer's.
    const OBS: Option<Noise> = None;
    /// Noise: a counter of this process's own memory.
    const OWN: Option<Noise> = Some(Noise::OWN);
    const fn r(
        observer: ObserverId,
        metric: &'static str,
        kind: ReadingKind,
        noise: Option<Noise>,
        words: &'static str,
    ) -> ReadingDecl {
        let noise = match noise {
            Some(n) => n,
            None => OBSERVERS[observer as usize].noise,
        };
        ReadingDecl { observer, metric, facts: ReadingFacts { kind, noise, words: Some(words) } }
    }
    &[
        r(Cuda, "used", Held, OBS, "CUDA used"),
        r(Cuda, "free", Free, OBS, "CUDA free"),
        r(Cuda, "total", Capacity, OBS, "CUDA total"),
        r(Nvml, "used", Held, OBS, "NVML device used"),
        r(Nvml, "process_used", Held, OBS, "NVML, this process"),
        r(Nvml, "reserved", Held, OBS, "NVML reserved"),
        r(Nvml, "free", Free, OBS, "NVML free"),
        r(Nvml, "total", Capacity, OBS, "NVML total"),
        r(Nvml, "pcie_gen", Link, OBS, "PCIe generation"),
        r(Nvml, "pcie_width", Link, OBS, "PCIe width"),
        r(Nvml, "pcie_gen_max", Link, OBS, "PCIe generation (max)"),
        r(Nvml, "pcie_width_max", Link, OBS, "PCIe width (max)"),
        r(Procfs, "vm_rss", Held, OWN, "host RSS"),
        r(Procfs, "vm_lck", Held, OWN, "locked (VmLck)"),
        r(Procfs, "vm_pin", Held, OWN, "pinned (VmPin)"),
        r(Procfs, "vm_hwm", Peak, OWN, "peak RSS (VmHWM)"),
        r(Procfs, "mem_total", Capacity, OBS, "MemTotal"),
        r(Procfs, "mem_available", Held, OBS, "MemAvailable"),
        r(Procfs, "committed_as", Held, OBS, "Committed_AS"),
        r(Procfs, "mlocked", Held, OBS, "Mlocked"),
        r(Procfs, "unevictable", Held, OBS, "Unevictable"),
        r(Procfs, "anon_pages", Held, OBS, "AnonPages"),
        r(Procfs, "anon_huge_pages", Held, OBS, "AnonHugePages"),
        r(Cgroup, "max", Capacity, OBS, "cgroup limit (memory.max)"),
        r(Cgroup, "peak", Peak, OBS, "cgroup peak (memory.peak)"),
        r(Dxgi, "local_usage", Held, OBS, "dedicated GPU memory"),
        r(Dxgi, "nonlocal_usage", Held, OBS, "shared GPU memory"),
        r(Dxgi, "local_budget", Capacity, OBS, "dedicated GPU memory budget"),
        r(Dxgi, "local_available_for_reservation", Capacity, OBS, "dedicated GPU memory available for reservation"),
        r(Dxgi, "nonlocal_budget", Capacity, OBS, "shared GPU memory budget"),
        r(Dxgi, "nonlocal_available_for_reservation", Capacity, OBS, "shared GPU memory available for reservation"),
        r(Process, "working_set", Held, OBS, "working set"),
        r(Process, "private_usage", Held, OBS, "private bytes"),
        r(Process, "peak_working_set", Peak, OBS, "peak working set"),
        r(Ledger, "pinned", Held, OBS, "pinscope ledger: page-locked"),
    ]
};

impl ReadingFacts {
    /// What the reading `<observer>.<metric>` is, from its name (read once, where a results
    /// file names it).
    pub fn of(reading: &str) -> ReadingFacts {
        ReadingName::parse(reading).map_or(ReadingFacts::held(Noise::UNMEASURED), |r| r.facts())
    }

    /// What the reading `metric` of `observer` is.
    pub fn of_reading(observer: ObserverId, metric: &str) -> ReadingFacts {
        READINGS
            .iter()
            .find(|r| r.observer == observer && r.metric == metric)
            .map_or(ReadingFacts::held(observer.declaration().noise), |r| {
                r.facts
            })
    }

    /// Memory held, moving by `noise` on its own, named by its name.
    fn held(noise: Noise) -> ReadingFacts {
        ReadingFacts {
            kind: ReadingKind::Held,
            noise,
            words: None,
        }
    }
}

/// The snapshot of a case an accounting delta is taken at (against `before`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The host memory allocated and first touched, no device memory yet.
    Host,
    /// Host and device memory allocated and first touched; minus `host`, the device memory.
    Alloc,
    /// The end of the hold after free.
    Free,
}

impl Phase {
    /// In the order a case goes through them.
    pub const ALL: [Phase; 3] = [Phase::Host, Phase::Alloc, Phase::Free];
    pub fn name(self) -> &'static str {
        match self {
            Phase::Host => "host",
            Phase::Alloc => "alloc",
            Phase::Free => "free",
        }
    }
    pub fn parse(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }
    /// Phases whose columns come at the end of the row: they were added after files had been
    /// published, which read them as empty.
    pub fn is_late(self) -> bool {
        self == Phase::Host
    }
}

/// `d_<phase>_<metric>_mib`: the CSV column (and claim metric) of a metric at a phase.
pub fn column(phase: Phase, metric: Metric) -> String {
    format!("d_{}_{}_mib", phase.name(), metric.name())
}

/// The phase and metric of a column made by [`column`].
pub fn parse_column(name: &str) -> Option<(Phase, Metric)> {
    let rest = name.strip_prefix("d_")?.strip_suffix("_mib")?;
    let (phase, metric) = rest.split_once('_')?;
    Some((Phase::parse(phase)?, Metric::parse(metric)?))
}

/// Every column of the family, phase by phase in [`Phase::ALL`] order.
pub fn columns() -> impl Iterator<Item = (Phase, Metric)> {
    Phase::ALL
        .into_iter()
        .flat_map(|p| Metric::ALL.into_iter().map(move |m| (p, m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reading's name is its observer and metric; one of an observer pinscope does not have,
    /// or without a snake_case metric, is refused with a sentence that names it.
    #[test]
    fn reading_names_are_an_observer_and_a_metric() {
        let r = ReadingName::parse("procfs.vm_rss").expect("a reading");
        assert_eq!(r, ReadingName::new(ObserverId::Procfs, "vm_rss"));
        assert_eq!(r.to_string(), "procfs.vm_rss");
        assert_eq!(r.facts().words, Some("host RSS"));
        // A metric this version does not declare is memory held, named by its name.
        let new = ReadingName::parse("ledger.staging").expect("a reading");
        assert_eq!(new.facts().kind, ReadingKind::Held);
        assert_eq!(new.facts().words, None);
        let e = ReadingName::parse("gpu.used").expect_err("no such observer");
        assert!(
            e.contains("observer `gpu`") && e.contains("cuda, nvml"),
            "{e}"
        );
        assert!(
            ReadingName::parse("cuda")
                .expect_err("no dot")
                .contains("`cuda`")
        );
        for bad in ["cuda.", "cuda.Used", "cuda.used mib"] {
            let e = ReadingName::parse(bad).expect_err(bad);
            assert!(e.contains("not a snake_case name"), "{e}");
        }
    }

    #[test]
    fn declarations_are_in_the_order_of_the_enum() {
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(METRICS[i].metric, m);
            assert_eq!(m as usize, i);
        }
        let mut reader = Metric::READER_ORDER.to_vec();
        reader.sort();
        assert_eq!(reader, Metric::ALL.to_vec(), "each metric once");
    }

    #[test]
    fn readings_are_known_by_name() {
        let kind = |r: &str| ReadingFacts::of(r).kind;
        assert_eq!(kind("cuda.used"), ReadingKind::Held);
        assert_eq!(kind("cuda.free"), ReadingKind::Free);
        assert_eq!(kind("nvml.pcie_width_max"), ReadingKind::Link);
        assert_eq!(kind("process.peak_working_set"), ReadingKind::Peak);
        assert_eq!(kind("dxgi.local_budget"), ReadingKind::Capacity);
        // A reading this version does not know is memory held, with its observer's noise.
        assert_eq!(kind("newobserver.thing"), ReadingKind::Held);
        let noise = |r: &str| ReadingFacts::of(r).noise.mib;
        assert_eq!(noise("pdh.x"), 4.0);
        assert_eq!(noise("procfs.vm_rss"), 2.0);
        assert_eq!(noise("procfs.anon_pages"), 64.0);
        assert_eq!(noise("newobserver.thing"), Noise::UNMEASURED.mib);
        // Each reading once.
        let mut names: Vec<(ObserverId, &str)> =
            READINGS.iter().map(|r| (r.observer, r.metric)).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), READINGS.len());
    }

    #[test]
    fn observers_are_declared_in_the_order_of_the_enum() {
        for (i, o) in OBSERVERS.iter().enumerate() {
            assert_eq!(o.id as usize, i);
            assert_eq!(ObserverId::parse(o.name), Some(o.id));
            assert_eq!(
                serde_json::to_string(&o.id).expect("json"),
                format!("\"{}\"", o.name)
            );
        }
    }

    #[test]
    fn columns_read_back() {
        for (p, m) in columns() {
            assert_eq!(parse_column(&column(p, m)), Some((p, m)));
        }
        assert_eq!(
            column(Phase::Host, Metric::CudaUsed),
            "d_host_cuda_used_mib"
        );
        assert_eq!(parse_column("d_touch_cuda_used_mib"), None);
        assert_eq!(parse_column("d_host_cuda_mib"), None);
    }

    #[test]
    fn observers_come_from_the_sources() {
        assert_eq!(
            Metric::ProcRss.observers(),
            [ObserverId::Procfs, ObserverId::Process]
        );
        assert_eq!(Metric::LedgerPinned.observers(), [ObserverId::Ledger]);
    }

    /// The table "What each observer can see, per platform" of `docs/accounting.md`, made from
    /// [`METRICS`].
    fn docs_table() -> String {
        let mut t = format!(
            "| metric | source | {} | what page-locked memory moves | noise |\n|---|---|{}---|---|\n",
            PLATFORMS.join(" | "),
            "---|".repeat(PLATFORMS.len())
        );
        for d in &METRICS {
            let cells: Vec<&str> = d
                .platforms
                .iter()
                .map(|a| match a {
                    Yes => "yes",
                    No => "—",
                    Unverified => "unverified",
                })
                .collect();
            t += &format!(
                "| `{}` | {} | {} | {} | {} |\n",
                d.name,
                d.source,
                cells.join(" | "),
                d.pinned_moves,
                noise_words(d.metric.noise())
            );
        }
        t
    }

    /// `any change` or `64 MiB`.
    fn noise_words(n: Noise) -> String {
        if n.mib == 0.0 {
            "any change".to_string()
        } else {
            format!("{} MiB", n.mib)
        }
    }

    /// The table of timeline noise of `docs/accounting.md` (indented: it sits in a list item),
    /// made from [`OBSERVERS`] and [`READINGS`]: a row a [`Noise`], lowest first.
    fn noise_table() -> String {
        let mut classes: Vec<Noise> = Vec::new();
        let noises = OBSERVERS.iter().map(|o| o.noise);
        for n in noises.chain(READINGS.iter().map(|r| r.facts.noise)) {
            if !classes.contains(&n) {
                classes.push(n);
            }
        }
        classes.sort_by(|a, b| a.mib.total_cmp(&b.mib));
        let own_noise = |r: &&ReadingDecl| r.facts.noise != r.observer.declaration().noise;
        let mut t = "  | readings | noise | why |\n  |---|---|---|\n".to_string();
        for n in classes {
            let mut who: Vec<String> = Vec::new();
            for o in OBSERVERS.iter().filter(|o| o.noise == n) {
                let others = READINGS
                    .iter()
                    .filter(own_noise)
                    .any(|r| r.observer == o.id);
                who.push(format!(
                    "`{}.*`{}",
                    o.name,
                    if others { " (the others)" } else { "" }
                ));
            }
            who.extend(
                READINGS
                    .iter()
                    .filter(own_noise)
                    .filter(|r| r.facts.noise == n)
                    .map(|r| format!("`{}.{}`", r.observer, r.metric)),
            );
            t += &format!(
                "  | {} | {} | {} |\n",
                who.join(", "),
                noise_words(n),
                n.why
            );
        }
        t
    }

    /// `docs/accounting.md`'s table of metrics and table of timeline noise are the ones
    /// [`METRICS`], [`OBSERVERS`] and [`READINGS`] make. With `PINSCOPE_WRITE_DOCS=1` the test
    /// writes them there instead (after a metric or an observer is added or changed), so the
    /// docs never need a hand edit for one.
    #[test]
    fn docs_tables_are_made_from_the_declarations() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/accounting.md");
        let mut doc = std::fs::read_to_string(path).expect("docs/accounting.md is readable");
        let write = std::env::var_os("PINSCOPE_WRITE_DOCS").is_some();
        for (header, want) in [
            ("| metric | source |", docs_table()),
            ("  | readings | noise |", noise_table()),
        ] {
            let start = doc
                .find(header)
                .unwrap_or_else(|| panic!("docs/accounting.md has a table `{header}`"));
            let len: usize = doc[start..]
                .split_inclusive('\n')
                .take_while(|l| l.trim_start().starts_with('|'))
                .map(str::len)
                .sum();
            if write {
                doc.replace_range(start..start + len, &want);
            } else {
                assert_eq!(
                    &doc[start..start + len],
                    want,
                    "docs/accounting.md: run `PINSCOPE_WRITE_DOCS=1 cargo test -p pinscope --lib accounting` to write it"
                );
            }
        }
        if write {
            std::fs::write(path, doc).expect("docs/accounting.md is writable");
        }
    }
}
