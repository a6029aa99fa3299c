//! Transfer strategies as the scenario sees them: each [`Mode`] declared once, with the route its
//! data takes ([`Route`], built by [`Case::route`]) and its [`ModeDecl`] — the rules it puts on a
//! case's other keys, how its samples are taken, the bandwidth `plan` assumes for it, and how a
//! report label says it. `expand`, `plan`, the runner's sampling and the report's labels read the
//! declaration and never match on a mode themselves, so a new strategy is a variant here (the
//! compiler then asks for its declaration and its route), its file in `strategy/` with its arm of
//! `strategy::allocate`, and its value in `harness/scenarios/README.md` (docs/architecture.md,
//! "Adding a transfer strategy").

use super::named::{named_enum, setting_enum};
use super::{Cache, Case, Engine, HostKind, Wait};

/// `O_DIRECT` reads need buffers, lengths and offsets in whole pages: a ring's chunk is rounded
/// up to this.
const PAGE_BYTES: u64 = 4096;
use serde::{Deserialize, Serialize};

setting_enum! {
    /// How the transfer is organised.
    pub enum Mode {
        /// One transfer straight from/to the host buffer.
        #[default]
        Direct,
        /// Pageable data through a ring of small pinned staging buffers ("small buffers, reused
        /// often").
        Staged,
        /// Register a slice of pageable memory, copy it, unregister it — timed including
        /// registration.
        RegisterPerCopy,
        /// Pinned churn: each of `cycles` copies gets a freshly allocated (or registered) host
        /// buffer, waits `pause`, copies, is verified, and the buffer is freed.
        Churn,
        /// Copy latency: one asynchronous copy, then the stream is synchronised; each sample is the
        /// host clock from the call until the host sees the copy complete (plus its event time).
        Latency,
        /// Copy latency through the synchronous copy call (`cuMemcpyHtoD` / `cuMemcpyDtoH`): the
        /// host clock around the one call.
        LatencySync,
        /// Enqueue cost: the host clock around the asynchronous copy call alone, with page-locked
        /// memory's stream held by the spin gate so the call never waits for the copy.
        Enqueue,
        /// The scenario's file into device memory: `mmap`, then one synchronous copy per tensor
        /// out of the mapping (llama.cpp's default, safetensors' `safe_open(device="cuda")`).
        LoadMmap,
        /// The file `read` whole into fresh pageable memory, then one copy.
        LoadRead,
        /// The file `pread` into a ring of `ring` pinned buffers of `chunk` bytes, each copied
        /// asynchronously while the next is read (llama.cpp `--no-mmap`).
        LoadPread,
        /// As `load-pread` with the file opened `O_DIRECT` (the page cache bypassed).
        LoadDirect,
        /// The file mapped and the mapping registered read-only (`cuMemHostRegister`), then one
        /// copy; run in a child process with a deadline (`measure.time_limit`).
        LoadRegister,
        /// The file read whole into one pinned buffer, then one copy.
        LoadPinned,
        /// The file read straight into device memory by cuFile (GPUDirect Storage), direct or in
        /// compatibility mode as this machine allows.
        LoadCufile,
    }
    names Direct = "direct", Staged = "staged", RegisterPerCopy = "register-per-copy",
        Churn = "churn", Latency = "latency", LatencySync = "latency-sync", Enqueue = "enqueue",
        LoadMmap = "load-mmap", LoadRead = "load-read", LoadPread = "load-pread",
        LoadDirect = "load-direct", LoadRegister = "load-register", LoadPinned = "load-pinned",
        LoadCufile = "load-cufile";
}

/// What a mode asks of a case and how the plan and the report speak of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeDecl {
    /// The host memory the mode needs, with what it does with it (the rule's message says
    /// `mode = "staged" <what>: it needs host = "pageable"`); `None`: any host memory.
    pub host: Option<(HostKind, &'static str)>,
    /// The engine the mode needs; `None`: any engine.
    pub engine: Option<Engine>,
    /// What `chunk` is to the mode.
    pub chunk: ChunkUse,
    /// How a sample is taken, which decides how `plan` estimates the case.
    pub sampling: Sampling,
    /// The bandwidth `plan` assumes for the bytes the mode moves.
    pub speed: Speed,
    /// How a report label says the mode after the host memory.
    pub words: Words,
    /// The mode loads the scenario's file (`file` or `model`) into device memory: one load per
    /// sample, `direction = "h2d"`, `size` the file's.
    pub reads_file: bool,
}

/// What `chunk` is to a mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkUse {
    /// The mode has no chunk: a case that gives one is refused.
    Refused,
    /// The mode takes a chunk and uses the whole size without one.
    Optional,
    /// The mode needs a chunk, which is the thing named (`the size of each staging buffer`).
    Required(&'static str),
}

/// How a mode takes a sample, which decides the model of its `plan` estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// `measure.batch` transfers per sample, sampled until the spread target or the time limit.
    Batched,
    /// One operation per sample, `measure.samples` of them: the latency modes.
    PerOperation,
    /// One copy per cycle, `cycles` cycles, each paying its own allocation and `pause`.
    Cycles,
}

/// The bandwidth `plan` assumes for a mode's bytes (the CPU engines have their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speed {
    /// The pinned speed when the host memory is page-locked (`alloc`, `register`), else the
    /// pageable one.
    OfHostMemory,
    /// The pageable speed whatever the host memory: the bytes pass through pageable memory or a
    /// fresh allocation on their way.
    Pageable,
}

/// How a report label says a mode after the host memory's words (`pinned (mapped)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// Nothing: the host memory's words say it.
    None,
    /// These words after the host memory's.
    After(&'static str),
    /// These words instead of the host memory's.
    Instead(&'static str),
    /// The staging ring the row used: `via 3 × 16 MiB pinned ring, 16 threads`.
    StagingRing,
}

/// What every file-load mode declares: the copy engine, one load per sample, the pageable speed.
const LOAD: ModeDecl = ModeDecl {
    host: None,
    engine: Some(Engine::Copy),
    chunk: ChunkUse::Refused,
    sampling: Sampling::Batched,
    speed: Speed::Pageable,
    words: Words::None,
    reads_file: true,
};

/// A file-load mode through a pinned ring: `chunk` is each buffer of the ring.
const LOAD_RING: ModeDecl = ModeDecl {
    chunk: ChunkUse::Required("the size of each pinned buffer of the ring"),
    ..LOAD
};

impl ModeDecl {
    const fn with_words(self, words: &'static str) -> ModeDecl {
        ModeDecl {
            words: Words::Instead(words),
            ..self
        }
    }
}

impl Mode {
    /// The mode's declaration.
    pub const fn declaration(self) -> &'static ModeDecl {
        match self {
            Self::Direct => &ModeDecl {
                host: None,
                engine: None,
                chunk: ChunkUse::Refused,
                sampling: Sampling::Batched,
                speed: Speed::OfHostMemory,
                words: Words::None,
                reads_file: false,
            },
            Self::Staged => &ModeDecl {
                host: Some((
                    HostKind::Pageable,
                    "copies pageable memory through a pinned ring",
                )),
                engine: Some(Engine::Copy),
                chunk: ChunkUse::Required("the size of each staging buffer"),
                sampling: Sampling::Batched,
                speed: Speed::Pageable,
                words: Words::StagingRing,
                reads_file: false,
            },
            Self::RegisterPerCopy => &ModeDecl {
                host: Some((
                    HostKind::Register,
                    "registers pageable memory around each copy",
                )),
                engine: Some(Engine::Copy),
                chunk: ChunkUse::Optional,
                sampling: Sampling::Batched,
                speed: Speed::OfHostMemory,
                words: Words::Instead("registered per copy"),
                reads_file: false,
            },
            Self::Churn => &ModeDecl {
                host: None,
                engine: None,
                chunk: ChunkUse::Refused,
                sampling: Sampling::Cycles,
                speed: Speed::Pageable,
                words: Words::After(" allocated per copy (churn)"),
                reads_file: false,
            },
            Self::LoadMmap => const { &LOAD.with_words("file mmap, copy per tensor") },
            Self::LoadRead => {
                const { &LOAD.with_words("file read into pageable memory, one copy") }
            }
            Self::LoadPread => const { &LOAD_RING.with_words("file pread into a pinned ring") },
            Self::LoadDirect => const { &LOAD_RING.with_words("file O_DIRECT into a pinned ring") },
            Self::LoadRegister => {
                const { &LOAD.with_words("file mmap registered read-only, one copy") }
            }
            Self::LoadPinned => {
                const { &LOAD.with_words("file read into one pinned buffer, one copy") }
            }
            Self::LoadCufile => {
                const { &LOAD.with_words("file read by cuFile (GPUDirect Storage)") }
            }
            Self::Latency | Self::LatencySync | Self::Enqueue => &ModeDecl {
                host: None,
                engine: None,
                chunk: ChunkUse::Refused,
                sampling: Sampling::PerOperation,
                speed: Speed::OfHostMemory,
                words: Words::None,
                reads_file: false,
            },
        }
    }

    /// The latency modes: one operation per sample, `measure.samples` samples, sizes from 4 B.
    pub fn is_latency(self) -> bool {
        self.declaration().sampling == Sampling::PerOperation
    }
}

/// The route a case's data takes, with the settings that route uses and no others: built once
/// from the case keys ([`Case::route`], after `expand` has checked their combination), so code
/// downstream matches on it instead of re-deriving "no chunk means the whole size" from
/// optional keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// One transfer straight from/to the host buffer (or within the device, for the
    /// device-resident engines).
    Direct,
    /// Pageable data through `ring` pinned staging buffers of `chunk` bytes, the memcpy into and
    /// out of them run by `threads` host threads.
    Staged { chunk: u64, ring: u32, threads: u32 },
    /// A `slice` of pageable memory registered, copied and unregistered per copy.
    RegisterPerCopy { slice: u64 },
    /// `cycles` copies, each from a freshly pinned buffer that waits `pause` before it is copied.
    Churn {
        cycles: u32,
        pause: std::time::Duration,
    },
    /// One operation per sample, timed by itself (`latency`, `latency-sync`, `enqueue`), the end
    /// awaited as `wait` says.
    Latency { call: LatencyCall, wait: Wait },
    /// The scenario's file loaded into device memory the way `how` says, from a page cache made
    /// `cache` before each load.
    Load { how: Load, cache: Cache },
}

/// How a file-load mode moves the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// `mmap`, one copy per tensor from the mapping.
    Mmap,
    /// `read` into fresh pageable memory, one copy.
    Read,
    /// `pread` into `ring` pinned buffers of `chunk` bytes by `threads` threads (each reads a
    /// part of every chunk), async copies; `direct`: `O_DIRECT`.
    Ring {
        chunk: u64,
        ring: u32,
        threads: u32,
        direct: bool,
    },
    /// `mmap` + read-only registration, one copy, in a child process.
    Register,
    /// `read` into one pinned buffer, one copy.
    Pinned,
    /// cuFile reads into device memory.
    Cufile,
}

/// Which call a latency case times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyCall {
    /// The asynchronous copy and a stream synchronisation: host-observed end to end.
    AsyncAndSync,
    /// The synchronous copy call.
    Sync,
    /// The asynchronous copy call alone (the enqueue cost).
    Enqueue,
}

impl Route {
    /// The staging buffer (`staged`) or registered slice (`register-per-copy`) in bytes; 0 for
    /// the routes that have none (the results' `chunk_bytes` column).
    pub fn chunk_bytes(self) -> u64 {
        match self {
            Route::Staged { chunk, .. } => chunk,
            Route::RegisterPerCopy { slice } => slice,
            Route::Load {
                how: Load::Ring { chunk, .. },
                ..
            } => chunk,
            Route::Direct | Route::Churn { .. } | Route::Latency { .. } | Route::Load { .. } => 0,
        }
    }

    /// Page-locked bytes the route holds besides the host buffer itself, per direction: the
    /// staging ring or the registered slice.
    pub fn pinned_besides_host(self) -> u64 {
        match self {
            Route::Staged { chunk, ring, .. } => chunk * u64::from(ring.max(1)),
            Route::RegisterPerCopy { slice } => slice,
            Route::Load {
                how: Load::Ring { chunk, ring, .. },
                ..
            } => chunk * u64::from(ring.max(1)),
            Route::Direct | Route::Churn { .. } | Route::Latency { .. } | Route::Load { .. } => 0,
        }
    }

    /// The plan's `chunk` cell: `16 MiB×3` for a staging ring, the registered slice, `-` for
    /// the routes without either.
    pub fn chunk_cell(self) -> String {
        let exact = super::format_bytes_exact;
        match self {
            Route::Direct | Route::Churn { .. } | Route::Latency { .. } => "-".into(),
            Route::Load { how, .. } => match how {
                Load::Ring { chunk, ring, .. } => format!("{}×{ring}", exact(chunk)),
                Load::Mmap | Load::Read | Load::Register | Load::Pinned | Load::Cufile => {
                    "-".into()
                }
            },
            Route::Staged { chunk, ring, .. } => format!("{}×{ring}", exact(chunk)),
            Route::RegisterPerCopy { slice } => exact(slice),
        }
    }
}

impl Case {
    /// The route this case's data takes, with its settings: `chunk` (the whole `size` when none
    /// is given, never more than `size`), `ring` and `threads` for `staged`, the slice for
    /// `register-per-copy`, `cycles` and `pause` for `churn`. The one place that reads those
    /// keys for the measurement.
    pub fn route(&self) -> Route {
        let chunk = self.chunk.unwrap_or(self.size).min(self.size);
        match self.mode {
            Mode::Direct => Route::Direct,
            Mode::Staged => Route::Staged {
                chunk,
                ring: self.ring.max(1),
                threads: self.threads.resolve(),
            },
            Mode::RegisterPerCopy => Route::RegisterPerCopy { slice: chunk },
            Mode::Churn => Route::Churn {
                cycles: self.vram.cycles,
                pause: self.vram.pause,
            },
            Mode::Latency => Route::Latency {
                call: LatencyCall::AsyncAndSync,
                wait: self.wait,
            },
            Mode::LatencySync => Route::Latency {
                call: LatencyCall::Sync,
                wait: self.wait,
            },
            Mode::Enqueue => Route::Latency {
                call: LatencyCall::Enqueue,
                wait: self.wait,
            },
            Mode::LoadMmap => self.load(Load::Mmap),
            Mode::LoadRead => self.load(Load::Read),
            Mode::LoadPread | Mode::LoadDirect => self.load(Load::Ring {
                chunk: chunk.div_ceil(PAGE_BYTES).max(1) * PAGE_BYTES,
                ring: self.ring.max(1),
                // A loader reads with one thread unless told otherwise: `auto` is one here.
                threads: match self.threads {
                    super::Threads::Count(n) => n.max(1),
                    super::Threads::Auto => 1,
                },
                direct: self.mode == Mode::LoadDirect,
            }),
            Mode::LoadRegister => self.load(Load::Register),
            Mode::LoadPinned => self.load(Load::Pinned),
            Mode::LoadCufile => self.load(Load::Cufile),
        }
    }

    fn load(&self, how: Load) -> Route {
        Route::Load {
            how,
            cache: self.cache,
        }
    }

    /// The host threads the case uses, as the results' `threads` column says it: a load ring's
    /// readers, one for the other file loads, else `threads` resolved.
    pub fn threads_used(&self) -> u32 {
        match self.route() {
            Route::Load {
                how: Load::Ring { threads, .. },
                ..
            } => threads,
            Route::Load { .. } => 1,
            Route::Direct
            | Route::Staged { .. }
            | Route::RegisterPerCopy { .. }
            | Route::Churn { .. }
            | Route::Latency { .. } => self.threads.resolve(),
        }
    }

    /// Page-locked host bytes this case holds at its peak (host buffer and staging ring).
    pub fn pinned_bytes(&self) -> u64 {
        let dirs = self.directions();
        if self.engine.is_device() {
            return 0;
        }
        match self.route() {
            // One freshly pinned buffer at a time.
            Route::Churn { .. } => self.size,
            Route::Load {
                how: Load::Register | Load::Pinned,
                ..
            } => self.size,
            Route::Direct | Route::Latency { .. } if self.host.is_pinned() => self.size * dirs,
            route @ (Route::Direct
            | Route::Latency { .. }
            | Route::Staged { .. }
            | Route::RegisterPerCopy { .. }
            | Route::Load { .. }) => route.pinned_besides_host() * dirs,
        }
    }

    /// Host bytes of any kind this case allocates: the host buffer, and the staging ring besides
    /// it (a registered slice is part of the host buffer).
    pub fn host_bytes(&self) -> u64 {
        if self.engine.is_device() {
            return 0;
        }
        let dirs = self.directions();
        let staging = match self.route() {
            route @ Route::Staged { .. } => route.pinned_besides_host() * dirs,
            // A load holds the file in host memory only where it reads it into a buffer; a
            // mapping is the page cache's, a ring only its buffers.
            Route::Load { how, .. } => {
                return match how {
                    Load::Read | Load::Pinned => self.size,
                    Load::Ring { chunk, ring, .. } => chunk * u64::from(ring.max(1)),
                    Load::Mmap | Load::Register | Load::Cufile => 0,
                };
            }
            Route::Direct
            | Route::RegisterPerCopy { .. }
            | Route::Churn { .. }
            | Route::Latency { .. } => 0,
        };
        self.size * dirs + staging
    }
}

/// The rules the mode declarations put on a case, as `harness/scenarios/README.md` says them:
/// one bullet, like `` `staged` needs `host = "pageable"`, `engine = "copy"` and `chunk` ``.
#[cfg(test)]
fn readme_rules() -> String {
    let and = |parts: &[String]| match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let mut sentences = Vec::new();
    for m in Mode::ALL {
        let d = m.declaration();
        let mut needs = Vec::new();
        if let Some((host, _)) = d.host {
            needs.push(format!("`host = \"{host}\"`"));
        }
        if let Some(engine) = d.engine {
            needs.push(format!("`engine = \"{engine}\"`"));
        }
        if d.reads_file {
            needs.push("`direction = \"h2d\"`".to_string());
        }
        if let ChunkUse::Required(_) = d.chunk {
            needs.push("`chunk`".to_string());
        }
        if !needs.is_empty() {
            sentences.push(format!("`{m}` needs {}", and(&needs)));
        }
    }
    let taking: Vec<String> = Mode::ALL
        .into_iter()
        .filter(|m| m.declaration().chunk != ChunkUse::Refused)
        .map(|m| format!("`{m}`"))
        .collect();
    sentences.push(format!("`chunk` is only for {}", and(&taking)));
    format!("- {}.\n", sentences.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mode takes a chunk exactly when its route has one: the declaration and the route agree.
    #[test]
    fn a_mode_takes_a_chunk_exactly_when_its_route_has_one() {
        for m in Mode::ALL {
            let case = Case {
                mode: m,
                size: 64 << 20,
                chunk: Some(16 << 20),
                ..Case::default()
            };
            let has = case.route().chunk_bytes() > 0;
            let takes = m.declaration().chunk != ChunkUse::Refused;
            assert_eq!(has, takes, "mode `{m}`");
            assert_eq!(has, case.route().chunk_cell() != "-", "mode `{m}`");
        }
    }

    /// `plan` assumes the pinned speed for page-locked host memory exactly when the mode
    /// declares the speed of its host memory, and the pageable speed otherwise.
    #[test]
    fn plan_assumes_the_speed_each_mode_declares() {
        use super::super::plan::{ASSUMED_PAGEABLE_BPS, ASSUMED_PINNED_BPS, assumed_bps};
        for m in Mode::ALL {
            for host in HostKind::ALL {
                let case = Case {
                    mode: m,
                    host,
                    size: 64 << 20,
                    ..Case::default()
                };
                let want = match m.declaration().speed {
                    Speed::OfHostMemory if host.is_pinned() => ASSUMED_PINNED_BPS,
                    Speed::OfHostMemory | Speed::Pageable => ASSUMED_PAGEABLE_BPS,
                };
                assert_eq!(assumed_bps(&case), want, "mode `{m}`, host `{host}`");
            }
        }
        let speed = |m: Mode| m.declaration().speed;
        assert_eq!(speed(Mode::Staged), Speed::Pageable);
        assert_eq!(speed(Mode::RegisterPerCopy), Speed::OfHostMemory);
        assert_eq!(speed(Mode::Churn), Speed::Pageable);
    }

    /// A load ring's chunk is whole 4 KiB pages (what `O_DIRECT` reads), within the size, and
    /// `threads = "auto"` reads with one thread; a cold case's key says so.
    #[test]
    fn a_load_ring_reads_whole_pages_with_one_thread_unless_told() {
        let case = Case {
            mode: Mode::LoadDirect,
            size: 1 << 20,
            chunk: Some(10_000),
            ring: 2,
            cache: Cache::Cold,
            ..Case::default()
        };
        let Route::Load {
            how:
                Load::Ring {
                    chunk,
                    threads,
                    direct,
                    ..
                },
            cache,
        } = case.route()
        else {
            panic!("a load ring: {:?}", case.route());
        };
        assert_eq!(
            (chunk, threads, direct, cache),
            (12_288, 1, true, Cache::Cold)
        );
        assert_eq!(case.pinned_bytes(), 2 * 12_288);
        assert_eq!(case.threads_used(), 1);
        assert!(case.key().ends_with(",cache=cold"), "{}", case.key());
        let eight = Case {
            threads: super::super::Threads::Count(8),
            ..case.clone()
        };
        assert_eq!(eight.threads_used(), 8);
        let pinned = Case {
            mode: Mode::LoadPinned,
            chunk: None,
            ..case
        };
        assert_eq!(
            (pinned.pinned_bytes(), pinned.host_bytes()),
            (1 << 20, 1 << 20)
        );
        assert_eq!(pinned.batch(), 1, "one load per sample");
    }

    /// `harness/scenarios/README.md`'s rules about the modes are the ones the declarations make.
    /// With `PINSCOPE_WRITE_DOCS=1` the test writes them there instead.
    #[test]
    fn scenarios_readme_states_the_mode_rules_of_the_declarations() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/README.md");
        let mut doc = std::fs::read_to_string(path).expect("the scenarios README is readable");
        let open = "<!-- mode rules:";
        let close = "<!-- end of mode rules -->";
        let start = doc.find(open).expect("the README marks the mode rules");
        let start = start + doc[start..].find('\n').expect("a line after the marker") + 1;
        let end = doc
            .find(close)
            .expect("the README marks the end of the mode rules");
        let want = readme_rules();
        if std::env::var_os("PINSCOPE_WRITE_DOCS").is_some() {
            doc.replace_range(start..end, &want);
            std::fs::write(path, doc).expect("the scenarios README is writable");
        } else {
            assert_eq!(
                &doc[start..end],
                want,
                "harness/scenarios/README.md: run `PINSCOPE_WRITE_DOCS=1 cargo test -p pinscope --lib scenario::modes` to write it"
            );
        }
    }

    #[test]
    fn the_rules_name_what_each_mode_needs() {
        assert_eq!(
            readme_rules(),
            "- `staged` needs `host = \"pageable\"`, `engine = \"copy\"` and `chunk`; \
             `register-per-copy` needs `host = \"register\"` and `engine = \"copy\"`; \
             `load-mmap` needs `engine = \"copy\"` and `direction = \"h2d\"`; \
             `load-read` needs `engine = \"copy\"` and `direction = \"h2d\"`; \
             `load-pread` needs `engine = \"copy\"`, `direction = \"h2d\"` and `chunk`; \
             `load-direct` needs `engine = \"copy\"`, `direction = \"h2d\"` and `chunk`; \
             `load-register` needs `engine = \"copy\"` and `direction = \"h2d\"`; \
             `load-pinned` needs `engine = \"copy\"` and `direction = \"h2d\"`; \
             `load-cufile` needs `engine = \"copy\"` and `direction = \"h2d\"`; \
             `chunk` is only for `staged`, `register-per-copy`, `load-pread` and `load-direct`.\n"
        );
    }
}
