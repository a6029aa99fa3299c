//! The accounting metrics, each declared once: its name (the `<m>` of the CSV's
//! `d_<phase>_<m>_mib` columns and of claim metrics), its header in compare tables, the words
//! readers know it by, the observer readings that supply it and the platforms where it can be
//! read. Columns, claim metrics, compare tables, plots, the platform page and the table in
//! `docs/accounting.md` (checked by a test) all come from [`METRICS`].

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
    /// Observer readings that supply it (`observer.metric`), the first one read wins.
    pub sources: &'static [&'static str],
    /// Whether it can be read on each of [`PLATFORMS`].
    pub platforms: [Availability; 4],
}

use Availability::{No, Unverified, Yes};

/// Declares [`Metric`], [`Metric::ALL`] and [`METRICS`] from one table, a metric a line:
/// variant, name, header, label, words, sources and platforms (see [`Declaration`]).
macro_rules! metrics {
    ($($m:ident: $name:literal, $header:literal, $label:literal, $words:literal, [$($src:literal),+], [$($p:ident),+];)+) => {
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
            sources: &[$($src),+],
            platforms: [$($p),+],
        }),+];
    };
}

#[rustfmt::skip]
metrics! {
    CudaUsed: "cuda_used", "CUDA used", "CUDA used (cuMemGetInfo)", "CUDA used", ["cuda.used"], [Yes, Yes, Yes, Yes];
    NvmlUsed: "nvml_used", "NVML used", "NVML device used", "NVML used", ["nvml.used"], [Yes, Unverified, Yes, Yes];
    ProcRss: "proc_rss", "RSS/WS", "host RSS / working set", "host RSS", ["procfs.vm_rss", "process.working_set"], [Yes, Yes, Yes, Yes];
    MemAvailable: "mem_available", "MemAvail", "MemAvailable", "MemAvailable", ["procfs.mem_available"], [Yes, Yes, No, No];
    Committed: "committed", "committed", "committed / private bytes", "committed memory", ["procfs.committed_as", "process.private_usage"], [Yes, Yes, Yes, Yes];
    Dedicated: "dedicated", "dedicated", "dedicated GPU memory (DXGI local)", "dedicated GPU memory", ["dxgi.local_usage", "pdh.process_dedicated"], [No, No, Yes, Unverified];
    Shared: "shared", "shared", "shared GPU memory (Task Manager; DXGI non-local)", "shared GPU memory", ["dxgi.nonlocal_usage", "pdh.process_shared"], [No, No, Yes, Unverified];
    LedgerPinned: "ledger_pinned", "ledger", "pinscope ledger: page-locked bytes", "pinscope's ledger", ["ledger.pinned"], [Yes, Yes, Yes, Yes];
    CgroupMemory: "cgroup_memory", "cgroup", "cgroup v2 memory.current (the limit is memory.max)", "memory charged to the cgroup", ["cgroup.current"], [Yes, Unverified, No, No];
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
    /// The observers that supply it (`procfs`, `process`), first choice first.
    pub fn observers(self) -> Vec<&'static str> {
        let mut v: Vec<&str> = self
            .declaration()
            .sources
            .iter()
            .filter_map(|s| s.split_once('.').map(|(o, _)| o))
            .collect();
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

/// Every observer reading (`observer.metric`, see `probe`) that is not memory held, with what
/// it counts; every other reading, including ones this version does not know, is
/// [`ReadingKind::Held`].
#[rustfmt::skip]
const NOT_HELD: &[(&str, ReadingKind)] = &[
    ("cuda.free", ReadingKind::Free),
    ("cuda.total", ReadingKind::Capacity),
    ("nvml.free", ReadingKind::Free),
    ("nvml.total", ReadingKind::Capacity),
    ("nvml.pcie_gen", ReadingKind::Link),
    ("nvml.pcie_width", ReadingKind::Link),
    ("nvml.pcie_gen_max", ReadingKind::Link),
    ("nvml.pcie_width_max", ReadingKind::Link),
    ("procfs.vm_hwm", ReadingKind::Peak),
    ("procfs.mem_total", ReadingKind::Capacity),
    ("cgroup.max", ReadingKind::Capacity),
    ("cgroup.peak", ReadingKind::Peak),
    ("dxgi.local_budget", ReadingKind::Capacity),
    ("dxgi.local_available_for_reservation", ReadingKind::Capacity),
    ("dxgi.nonlocal_budget", ReadingKind::Capacity),
    ("dxgi.nonlocal_available_for_reservation", ReadingKind::Capacity),
    ("process.peak_working_set", ReadingKind::Peak),
];

impl ReadingKind {
    /// What the reading `observer.metric` counts.
    pub fn of(reading: &str) -> ReadingKind {
        NOT_HELD
            .iter()
            .find(|(r, _)| *r == reading)
            .map_or(ReadingKind::Held, |(_, k)| *k)
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
    fn readings_other_than_memory_held_are_known_by_name() {
        assert_eq!(ReadingKind::of("cuda.used"), ReadingKind::Held);
        assert_eq!(ReadingKind::of("cuda.free"), ReadingKind::Free);
        assert_eq!(ReadingKind::of("nvml.pcie_width_max"), ReadingKind::Link);
        assert_eq!(
            ReadingKind::of("process.peak_working_set"),
            ReadingKind::Peak
        );
        assert_eq!(ReadingKind::of("dxgi.local_budget"), ReadingKind::Capacity);
        // A reading this version does not know is drawn as memory held.
        assert_eq!(ReadingKind::of("newobserver.thing"), ReadingKind::Held);
        // Each reading once.
        let mut names: Vec<&str> = NOT_HELD.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), NOT_HELD.len());
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
        assert_eq!(Metric::ProcRss.observers(), ["procfs", "process"]);
        assert_eq!(Metric::LedgerPinned.observers(), ["ledger"]);
    }

    /// The table "What each observer can see, per platform" in docs/accounting.md lists every
    /// metric once, with the platforms its declaration gives.
    #[test]
    fn docs_table_matches_the_declarations() {
        let doc = include_str!("../../docs/accounting.md");
        let rows: Vec<Vec<&str>> = doc
            .lines()
            .skip_while(|l| !l.starts_with("| metric | source |"))
            .take_while(|l| l.starts_with('|'))
            .filter(|l| l.starts_with("| `"))
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect();
        let names: Vec<&str> = rows.iter().map(|r| r[0].trim_matches('`')).collect();
        let declared: Vec<&str> = METRICS.iter().map(|d| d.name).collect();
        assert_eq!(
            names, declared,
            "docs/accounting.md lists the metrics in CSV order"
        );
        for (row, d) in rows.iter().zip(&METRICS) {
            for (i, a) in d.platforms.iter().enumerate() {
                let cell = row[2 + i];
                let said = match a {
                    Yes => cell == "yes",
                    No => cell.starts_with('—'),
                    Unverified => cell.starts_with("unverified"),
                };
                assert!(
                    said,
                    "{} on {}: the docs say `{cell}`, the declaration {a:?}",
                    d.name, PLATFORMS[i]
                );
            }
        }
    }
}
