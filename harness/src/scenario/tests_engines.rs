//! Engines, the device guard, the ceiling chunk, derived blocks, threads, devices, and the route
//! each mode gets.

use super::tests::*;
use super::*;

// ---- engines, guard, ceiling chunk ------------------------------------------------------------

#[test]
fn every_engine_name_parses_and_unknown_ones_are_listed() {
    for e in Engine::ALL {
        let (host, flags, dir) = match e {
            Engine::Copy => ("alloc", "[]", "h2d"),
            Engine::Kernel | Engine::KernelRead | Engine::Chase | Engine::ChaseRandom => {
                ("alloc", "[\"mapped\"]", "h2d")
            }
            Engine::KernelWrite => ("register", "[\"mapped\"]", "d2h"),
            Engine::CpuRead => ("alloc", "[\"write-combined\"]", "d2h"),
            Engine::CpuWrite => ("pageable", "[]", "h2d"),
            // Device memory only: no host, flags or direction (tests_vram.rs).
            Engine::DeviceRead
            | Engine::DeviceWrite
            | Engine::DeviceCopy
            | Engine::DeviceCopyEngine
            | Engine::Empty => {
                let s = ok(&format!("[[case]]\nlabel = \"e\"\nengine = \"{e}\"\n"));
                assert_eq!(s.cases[0].engine, e);
                continue;
            }
        };
        let s = ok(&format!(
            "[[case]]\nlabel = \"e\"\nhost = \"{host}\"\nflags = {flags}\nengine = \"{e}\"\ndirection = \"{dir}\"\n"
        ));
        assert_eq!(s.cases[0].engine, e);
    }
    assert_problems(&[(
        "[[case]]\nlabel = \"e\"\nengine = \"kernel_read\"\n",
        &[
            "5:10: `engine` must be one of \"copy\", \"kernel\", \"kernel-read\", \"kernel-write\", \"cpu-read\", \"cpu-write\", \"device-read\", \"device-write\", \"device-copy\", \"device-copy-engine\", \"empty\", \"chase\", \"chase-random\", not \"kernel_read\"; did you mean \"kernel-read\"?",
        ],
    )]);
}

#[test]
fn one_way_engines_need_their_direction() {
    // Each points at the `direction` value, the last line of the body.
    assert_problems(&[
        (
            "[[case]]\nlabel = \"x\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nengine = \"kernel-read\"\ndirection = \"d2h\"\n",
            &[
                "8:13: case `x`: engine = \"kernel-read\" only reads host memory from a kernel: it needs direction = \"h2d\", not \"d2h\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nhost = \"managed\"\nengine = \"kernel-write\"\ndirection = \"h2d\"\n",
            &[
                "7:13: case `x`: engine = \"kernel-write\" only writes host memory from a kernel: it needs direction = \"d2h\", not \"h2d\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nhost = \"pageable\"\nengine = \"cpu-read\"\ndirection = \"bidirectional\"\n",
            &[
                "7:13: case `x`: engine = \"cpu-read\" times the CPU reading the host buffer, as after a device-to-host copy: it needs direction = \"d2h\", not \"bidirectional\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"x\"\nhost = \"register\"\nengine = \"cpu-write\"\ndirection = \"d2h\"\n",
            &[
                "7:13: case `x`: engine = \"cpu-write\" times the CPU writing the host buffer, as before a host-to-device copy: it needs direction = \"h2d\", not \"d2h\"",
            ],
        ),
        // A swept direction points at the value behind the problem and names it.
        (
            "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n[[case]]\nlabel = \"w\"\nengine = \"cpu-write\"\n",
            &[
                "4:21: case `w` with direction=d2h: engine = \"cpu-write\" times the CPU writing the host buffer, as before a host-to-device copy: it needs direction = \"h2d\", not \"d2h\"",
            ],
        ),
    ]);
}

#[test]
fn kernel_read_and_write_need_mapped_memory() {
    assert_problems(&[
        (
            "[[case]]\nlabel = \"r\"\nhost = \"pageable\"\nengine = \"kernel-read\"\n",
            &[&format!("6:10: case `r`: {}", expand::KERNEL_NEEDS_MAPPED)],
        ),
        (
            "[[case]]\nlabel = \"w\"\nhost = \"register\"\nengine = \"kernel-write\"\ndirection = \"d2h\"\n",
            &[&format!("6:10: case `w`: {}", expand::KERNEL_NEEDS_MAPPED)],
        ),
    ]);
}

#[test]
fn cpu_engines_take_any_host_kind_but_only_direct_mode() {
    for host in ["pageable", "alloc", "register", "managed"] {
        let s = ok(&format!(
            "[[case]]\nlabel = \"c\"\nhost = \"{host}\"\nengine = \"cpu-read\"\ndirection = \"d2h\"\n"
        ));
        assert_eq!(s.cases[0].device_bytes(), 0, "{host}");
    }
    assert_problems(&[
        (
            "[[case]]\nlabel = \"c\"\nhost = \"pageable\"\nengine = \"cpu-write\"\nmode = \"staged\"\nchunk = \"16MiB\"\n",
            &["7:8: case `c`: mode = \"staged\" needs engine = \"copy\""],
        ),
        (
            "[[case]]\nlabel = \"c\"\nhost = \"register\"\nengine = \"cpu-write\"\nmode = \"register-per-copy\"\n",
            &["7:8: case `c`: mode = \"register-per-copy\" needs engine = \"copy\""],
        ),
    ]);
}

#[test]
fn guard_is_a_sweepable_case_key() {
    let s = ok("[[case]]\nlabel = \"g\"\n");
    assert!(s.cases[0].guard);
    let s = ok("[defaults]\nguard = false\n[[case]]\nlabel = \"g\"\n");
    assert!(!s.cases[0].guard);
    let s = ok("[[case]]\nlabel = \"g\"\nsweep = { guard = [true, false] }\n");
    let got: Vec<(bool, String)> = s
        .cases
        .iter()
        .map(|c| (c.guard, c.axes.to_string()))
        .collect();
    assert_eq!(
        got,
        vec![(true, "guard=true".into()), (false, "guard=false".into())]
    );
    assert_problems(&[
        (
            "[[case]]\nlabel = \"g\"\nguard = \"no\"\n",
            &["5:9: `guard` must be true or false, not a string"],
        ),
        (
            "[[case]]\nlabel = \"g\"\nguards = false\n",
            &["5:1: unknown key `guards` in [[case]] #1; did you mean `guard`?"],
        ),
    ]);
}

#[test]
fn unguarded_managed_memory_is_refused() {
    assert_problems(&[(
        "[[case]]\nlabel = \"m\"\nhost = \"managed\"\nguard = false\n",
        &[&format!("6:9: case `m`: {}", expand::MANAGED_UNGUARDED)],
    )]);
    assert_eq!(
        expand::MANAGED_UNGUARDED,
        "guard = false with host = \"managed\" could oversubscribe device memory with managed memory, which can hang the GPU: keep guard = true for managed cases"
    );
    ok(
        "[[case]]\nlabel = \"m\"\nhost = \"alloc\"\nflags = [\"mapped\"]\nengine = \"kernel-read\"\nguard = false\n",
    );
}

#[test]
fn ceiling_chunk_is_a_size_of_at_least_one_mib() {
    let s = ok("[[case]]\nlabel = \"c\"\n");
    assert_eq!(s.cases[0].probes.ceiling_chunk, 256 << 20);
    let s = ok(
        "[[case]]\nlabel = \"c\"\nprobes = { pinned_ceiling = true, ceiling_chunk = \"64MiB\" }\n",
    );
    assert_eq!(
        (
            s.cases[0].probes.pinned_ceiling,
            s.cases[0].probes.ceiling_chunk
        ),
        (true, 64 << 20)
    );
    assert_problems(&[
        (
            "[[case]]\nlabel = \"c\"\nprobes.ceiling_chunk = \"4KiB\"\n",
            &[
                "5:24: `probes.ceiling_chunk` must be at least 1MiB (the probe pins memory chunk by chunk), not \"4KiB\"",
            ],
        ),
        (
            "[[case]]\nlabel = \"c\"\nprobes = { ceiling_chunks = \"4MiB\" }\n",
            &[
                "5:12: unknown key `ceiling_chunks` in `probes` of [[case]] #1; did you mean `ceiling_chunk`?",
            ],
        ),
    ]);
    let s = ok(
        "[[case]]\nlabel = \"c\"\nsweep = { \"probes.ceiling_chunk\" = [\"1MiB\", \"1GiB\"] }\n",
    );
    assert_eq!(s.cases.len(), 2);
}

// ---- derived ----------------------------------------------------------------------------------

#[test]
fn derived_blocks_are_read_with_defaults() {
    let s = ok(&format!(
        "{CLAIM_CASES}[[derived]]\ntext = \"load time\"\ncases = [\"pinned\", \"pageable\"]\nmetric = \"time_median_ms\"\nscale = 1e-3\nunit = \"s\"\n[[derived]]\ntext = \"tokens/s ceiling\"\ncases = [\"pinned\"]\nmetric = \"time_median_ms\"\nscale = 1000\ninvert = true\n"
    ));
    assert_eq!(
        s.derived,
        vec![
            crate::claims::Derived {
                text: "load time".into(),
                cases: vec!["pinned".into(), "pageable".into()],
                metric: ClaimMetric::Row(RowMetric::TimeMedianMs),
                scale: 1e-3,
                invert: false,
                unit: "s".into(),
            },
            crate::claims::Derived {
                text: "tokens/s ceiling".into(),
                cases: vec!["pinned".into()],
                metric: ClaimMetric::Row(RowMetric::TimeMedianMs),
                scale: 1000.0,
                invert: true,
                unit: String::new(),
            },
        ]
    );
}

#[test]
fn derived_blocks_are_validated() {
    // Line 8 is the [[derived]] header.
    assert_problems(&[
        (
            &format!(
                "{CLAIM_CASES}[[derived]]\ntext = 3\ncases = [\"pined\", 4, \"pinned\", \"pinned\"]\nmetric = \"time_median\"\nscale = 0\ninvert = \"yes\"\nunit = 1\nunits = \"s\"\n"
            ),
            &[
                "9:8: `text` must be a string, not an integer",
                "10:10: [[derived]] #1 names case `pined`, which is not a label in this file; did you mean `pinned`?",
                "10:19: `cases` must contain only case labels (strings), not an integer",
                "10:32: `cases` in [[derived]] #1 lists `pinned` twice",
                "11:10: unknown metric `time_median` in [[derived]] #1; did you mean `time_median_ms`?",
                "12:9: `scale` must be a finite number other than 0, not 0",
                "13:10: `invert` must be true or false, not a string",
                "14:8: `unit` must be a string, not an integer",
                "15:1: unknown key `units` in [[derived]] #1; did you mean `unit`?",
            ],
        ),
        (
            &format!("{CLAIM_CASES}[[derived]]\nscale = \"2\"\n"),
            &[
                "8:1: [[derived]] #1 has no `text`: say what the number is, like \"model load time\"",
                "8:1: [[derived]] #1 has no `cases`: list the labels whose metric is summed, like cases = [\"load\"]",
                "8:1: [[derived]] #1 has no `metric`: name the measured quantity, like \"time_median_ms\"",
                "9:9: `scale` must be a number, not a string",
            ],
        ),
        (
            &format!(
                "{CLAIM_CASES}[[derived]]\ntext = \"t\"\ncases = \"pinned\"\nmetric = \"alloc_ms\"\n[[derived]]\ntext = \"t\"\ncases = []\nmetric = \"alloc_ms\"\n"
            ),
            &[
                "10:9: `cases` must be an array of case labels, like cases = [\"load\"], not a string",
                "14:9: `cases` in [[derived]] #2 is empty: list at least one label",
            ],
        ),
        (
            &format!("derived = 3\n{CLAIM_CASES}"),
            &["3:11: `derived` must be written as [[derived]] blocks, not an integer"],
        ),
    ]);
}

#[test]
fn derived_cases_must_expand_to_one_case_each() {
    assert_problems(&[(
        "[sweep]\ndirection = [\"h2d\", \"d2h\"]\n[[case]]\nlabel = \"a\"\nsweep = { size = [\"1MiB\", \"2MiB\"], ring = [3] }\n[[case]]\nlabel = \"b\"\ndirection = \"h2d\"\n[[derived]]\ntext = \"t\"\ncases = [\"b\", \"a\"]\nmetric = \"time_median_ms\"\n",
        &[
            "13:15: [[derived]] #1 names case `a`, which expands to 4 cases (swept over direction, size): a derived value takes one row per label; give each point its own [[case]] and label",
        ],
    )]);
}

// ---- threads ----------------------------------------------------------------------------------

#[test]
fn threads_take_auto_or_a_count_and_auto_is_the_default() {
    let s = ok(
        "[[case]]\nlabel = \"a\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1MiB\"\nthreads = \"auto\"\n\
                [[case]]\nlabel = \"b\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1MiB\"\nthreads = 6\n\
                [[case]]\nlabel = \"c\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"1MiB\"\n",
    );
    let t: Vec<Threads> = s.cases.iter().map(|c| c.threads).collect();
    assert_eq!(t, vec![Threads::Auto, Threads::Count(6), Threads::Auto]);
    assert_eq!(Threads::Count(6).resolve(), 6);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    assert_eq!(Threads::Auto.resolve(), cpus.min(AUTO_THREADS_MAX));
    assert!(
        s.cases[0].key().ends_with("threads=auto"),
        "{}",
        s.cases[0].key()
    );
    assert!(s.cases[1].key().ends_with("threads=6"));
}

#[test]
fn threads_reject_other_words_and_types() {
    for (value, shown) in [("\"all\"", "\"all\""), ("1.5", "1.5"), ("true", "true")] {
        let got = problems(&format!("[[case]]\nlabel = \"a\"\nthreads = {value}\n"));
        assert_eq!(
            got,
            vec![p(
                5,
                11,
                &format!(
                    "`threads` must be \"auto\" (every CPU this process may use) or a whole number from 1 to 256, not {shown}"
                )
            )],
            "{value}"
        );
    }
}

// ---- devices ----------------------------------------------------------------------------------

#[test]
fn devices_take_all_an_index_or_a_list() {
    use crate::platform::DeviceSelection;
    let case = "[[case]]\nlabel = \"a\"\n";
    assert_eq!(ok(case).devices, None);
    assert_eq!(
        ok(&format!("devices = \"all\"\n{case}")).devices,
        Some(DeviceSelection::All)
    );
    assert_eq!(
        ok(&format!("devices = [0, 1]\n{case}")).devices,
        Some(DeviceSelection::List(vec![0, 1]))
    );
    assert_eq!(
        ok(&format!("devices = 1\n{case}")).devices,
        Some(DeviceSelection::List(vec![1]))
    );
}

#[test]
fn bad_devices_are_exact_problems() {
    let case = "[[case]]\nlabel = \"a\"\n";
    assert_problems(&[
        (
            &format!("devices = \"some\"\n{case}"),
            &[
                "3:11: `devices`: `some` is not a GPU: write a CUDA device index like 0, a list like 0,1, or all",
            ],
        ),
        (
            &format!("devices = [0, 0]\n{case}"),
            &["3:11: `devices`: GPU 0 is listed twice in `0,0`"],
        ),
        (
            &format!("devices = true\n{case}"),
            &[
                "3:11: `devices` must be \"all\", a GPU index like 0, or a list like [0, 1], not a boolean",
            ],
        ),
    ]);
}

/// Each mode's route carries exactly its settings: a register-per-copy case without `chunk`
/// registers the whole size (the CSV's `chunk_bytes` says so, not 0), a direct case has none,
/// churn takes `cycles` and `pause`.
#[test]
fn each_mode_gets_its_route_with_its_settings() {
    use std::time::Duration;
    let routes = each_case(
        "[[case]]\nlabel = \"d\"\n\n\
         [[case]]\nlabel = \"s\"\nhost = \"pageable\"\nmode = \"staged\"\nchunk = \"16MiB\"\nring = 4\nthreads = 3\n\n\
         [[case]]\nlabel = \"r\"\nhost = \"register\"\nmode = \"register-per-copy\"\nsize = \"64MiB\"\n\n\
         [[case]]\nlabel = \"c\"\nmode = \"churn\"\ncycles = 7\npause = \"2ms\"\n",
        |c| c.route(),
    );
    assert_eq!(
        routes,
        vec![
            Route::Direct,
            Route::Staged {
                chunk: 16 << 20,
                ring: 4,
                threads: 3
            },
            Route::RegisterPerCopy { slice: 64 << 20 },
            Route::Churn {
                cycles: 7,
                pause: Duration::from_millis(2)
            },
        ]
    );
    let chunks: Vec<u64> = routes.iter().map(|r| r.chunk_bytes()).collect();
    assert_eq!(chunks, [0, 16 << 20, 64 << 20, 0]);
}
