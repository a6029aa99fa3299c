//! The predictor on fixture trees (pin-limits/README.md says which files are real captures and
//! which are SYNTHETIC), the Windows rule on recorded values, and this machine.

use super::*;
use crate::units::{GIB, KIB};
use std::path::PathBuf;

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pin-limits")
        .join(name)
}

fn known<T: Clone>(s: &Setting<T>) -> T {
    s.value().cloned().unwrap_or_else(|| {
        panic!(
            "unavailable: {}",
            s.unavailable_reason().unwrap_or_default()
        )
    })
}

/// The build machine's real files: MemAvailable rules, memlock is recorded, the v1 memory
/// cgroup says why it is not read.
#[test]
fn linux_budget_from_real_proc_files() {
    let limits = tree_limits(&tree("linux-host"));
    assert_eq!(known(&limits.mem_available), Bytes(22_263_544 * KIB));
    assert_eq!(known(&limits.memlock), Cap::Bytes(8_388_608));
    assert_eq!(known(&limits.address_space), Cap::Unlimited);
    assert_eq!(known(&limits.max_map_count), 65530);
    assert_eq!(known(&limits.map_count), 38);
    let why = limits.cgroup_max.unavailable_reason().expect("v1 memory");
    assert!(why.contains("cgroup v1"), "{why}");
    assert!(limits.dxgi_nonlocal_budget.unavailable_reason().is_some());
    let b = budget(Platform::Linux, limits);
    assert_eq!(b.predictor, Predictor::LinuxMemory);
    let safe = (22_263_544 * KIB) as f64 * 0.9;
    assert_eq!(b.host_alloc_bytes, Some(safe as u64));
    assert_eq!(b.host_register_bytes, b.host_alloc_bytes);
    assert_eq!(b.mappings, Some(((65530 - 38) as f64 * 0.9) as u64));
    assert!(
        b.rule.contains("MemAvailable") && b.rule.contains("10%"),
        "{}",
        b.rule
    );
    assert_eq!(b.unavailable, None);
    // The sources are the files read.
    let json = serde_json::to_value(&b).expect("json");
    assert_eq!(
        json["limits"]["mem_available"]["source"]["file"],
        "/proc/meminfo"
    );
    assert_eq!(
        json["limits"]["memlock"]["source"]["file"],
        "/proc/self/limits"
    );
}

/// A Slurm job's cgroup limit (SYNTHETIC): the process runs in `job_42/step_0/user/task_0`, whose
/// own `memory.max` is `max`; the job's 16 GiB max with 5 GiB charged, two levels up, leaves
/// 11 GiB of headroom below MemAvailable (~21 GiB), and rules.
#[test]
fn a_parent_cgroup_limit_below_mem_available_rules() {
    let limits = tree_limits(&tree("slurm-job"));
    assert_eq!(known(&limits.cgroup_max), Cap::Bytes(16 * GIB));
    assert_eq!(known(&limits.cgroup_current), Bytes(5 * GIB));
    assert_eq!(known(&limits.memlock), Cap::Unlimited);
    let source = match &limits.cgroup_max {
        Setting::Known { source, .. } => source.to_string(),
        Setting::Unavailable { .. } => String::new(),
    };
    assert_eq!(
        source,
        "file /sys/fs/cgroup/system.slice/slurmstepd.scope/job_42/memory.max"
    );
    let b = budget(Platform::Linux, limits);
    assert_eq!(b.host_alloc_bytes, Some((11.0 * GIB as f64 * 0.9) as u64));
    assert_eq!(b.mappings, Some(((262_144 - 37) as f64 * 0.9) as u64));
}

/// The level with the least headroom rules, wherever it is: a container's own 2 GiB limit (1 GiB
/// charged) under a pod's 8 GiB (2 GiB charged); a parent that cannot be read is passed over.
#[test]
fn the_tightest_cgroup_level_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
    write("sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "2147483648\n");
    write(
        "sys/fs/cgroup/kubepods/pod1/ctr/memory.current",
        "1073741824\n",
    );
    write("sys/fs/cgroup/kubepods/pod1/memory.max", "8589934592\n");
    write("sys/fs/cgroup/kubepods/pod1/memory.current", "2147483648\n");
    write("sys/fs/cgroup/kubepods/memory.max", "not a number\n");
    write("sys/fs/cgroup/kubepods/memory.current", "3221225472\n");
    let levels = crate::probe::cgroup::levels(root).expect("levels");
    let paths: Vec<&str> = levels.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["/kubepods/pod1/ctr", "/kubepods/pod1"]);
    let (max, current) = cgroup(root);
    assert_eq!(known(&max), Cap::Bytes(2 * GIB));
    assert_eq!(known(&current), Bytes(GIB));
    // The pod's limit becomes the tighter one once the pod holds more.
    write("sys/fs/cgroup/kubepods/pod1/memory.current", "8053063680\n");
    let (max, current) = cgroup(root);
    assert_eq!(known(&max), Cap::Bytes(8 * GIB));
    assert_eq!(known(&current), Bytes(8053063680));
    match max {
        Setting::Known { source, .. } => {
            assert_eq!(
                source.to_string(),
                "file /sys/fs/cgroup/kubepods/pod1/memory.max"
            )
        }
        Setting::Unavailable { .. } => unreachable!(),
    }
}

/// `ulimit -v` is read as the address-space limit (a tree whose limits file has one set), and a
/// record made before it was read says so instead of failing to load.
#[test]
fn the_address_space_limit_is_recorded_and_old_records_still_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = std::fs::read_to_string(tree("linux-host").join("proc/self/limits"))
        .expect("limits")
        .replace(
            "Max address space         unlimited            unlimited",
            "Max address space         17179869184          unlimited",
        );
    std::fs::create_dir_all(dir.path().join("proc/self")).expect("mkdir");
    std::fs::write(dir.path().join("proc/self/limits"), limits).expect("write");
    let read = tree_limits(dir.path());
    assert_eq!(known(&read.address_space), Cap::Bytes(16 * GIB));
    assert_eq!(known(&read.memlock), Cap::Bytes(8_388_608));
    let mut json = serde_json::to_value(&read).expect("json");
    json.as_object_mut()
        .expect("object")
        .remove("address_space");
    let old: PinLimits = serde_json::from_value(json).expect("an old record reads");
    let why = old
        .address_space
        .unavailable_reason()
        .expect("not recorded");
    assert!(why.contains("not recorded"), "{why}");
}

/// WSL2 (SYNTHETIC values): the reported wall caps 13 GiB available; a 64 KiB memlock does not.
#[test]
fn wsl2_budget_is_capped_at_the_reported_wall() {
    let (platform, _) = crate::platform::classify_tree(&tree("wsl2-host"));
    assert_eq!(platform, Platform::Wsl2, "the tree is classified as WSL2");
    let limits = tree_limits(&tree("wsl2-host"));
    assert_eq!(known(&limits.memlock), Cap::Bytes(64 * KIB));
    assert_eq!(known(&limits.cgroup_max), Cap::Unlimited);
    assert_eq!(known(&limits.cgroup_current), Bytes(GIB));
    let b = budget(platform, limits);
    assert_eq!(b.predictor, Predictor::Wsl2ReportedWall);
    assert_eq!(
        b.host_alloc_bytes,
        Some((WSL2_REPORTED_WALL as f64 * 0.9) as u64)
    );
    assert!(b.rule.contains("WSL2"), "{}", b.rule);
}

#[test]
fn no_proc_gives_no_budget_and_says_why() {
    let b = budget(Platform::Linux, tree_limits(&tree("does-not-exist")));
    assert_eq!(b.predictor, Predictor::None);
    assert_eq!(b.host_alloc_bytes, None);
    assert_eq!(b.mappings, None);
    let why = b.unavailable.expect("a reason");
    assert!(why.contains("/proc/meminfo could not be read"), "{why}");
}

#[test]
fn odd_limits_files_are_unavailable_with_the_reason() {
    let root = tempfile::tempdir().expect("tempdir");
    let proc_self = root.path().join("proc/self");
    std::fs::create_dir_all(&proc_self).expect("dirs");
    std::fs::write(
        proc_self.join("limits"),
        "Max locked memory lots lots bytes\n",
    )
    .expect("w");
    std::fs::write(root.path().join("proc/meminfo"), "MemTotal: 1 kB\n").expect("w");
    let l = tree_limits(root.path());
    let why = l.memlock.unavailable_reason().expect("not a number");
    assert!(why.contains("`lots`"), "{why}");
    let why = l.mem_available.unavailable_reason().expect("no line");
    assert!(why.contains("no MemAvailable"), "{why}");
}

fn windows_limits_of(budget: u64, usage: u64, commit: Option<(u64, u64)>) -> PinLimits {
    let win = |v| Setting::known(Bytes(v), Source::Win32("recorded".into()));
    const NONE: &str = "Linux and WSL2 only";
    let (limit, total) = match commit {
        Some((l, t)) => (win(l), win(t)),
        None => (Setting::unavailable("no"), Setting::unavailable("no")),
    };
    PinLimits {
        mem_available: Setting::unavailable(NONE),
        memlock: Setting::unavailable(NONE),
        address_space: Setting::unavailable(NONE),
        cgroup_max: Setting::unavailable(NONE),
        cgroup_current: Setting::unavailable(NONE),
        max_map_count: Setting::unavailable(NONE),
        map_count: Setting::unavailable(NONE),
        dxgi_nonlocal_budget: win(budget),
        dxgi_nonlocal_usage: win(usage),
        commit_limit: limit,
        commit_total: total,
    }
}

/// SYNTHETIC values: a 16 GiB shared budget with 4 GiB used, and a commit headroom that rules
/// when it is smaller; Wine's zero budget is no reading.
#[test]
fn windows_rule_is_budget_less_usage_within_the_commit_headroom() {
    let b = budget(
        Platform::Windows,
        windows_limits_of(16 * GIB, 4 * GIB, None),
    );
    assert_eq!(b.predictor, Predictor::WindowsDxgiNonLocal);
    assert_eq!(b.host_alloc_bytes, Some((12.0 * GIB as f64 * 0.9) as u64));
    assert_eq!(b.mappings, None);
    let commit = Some((40 * GIB, 38 * GIB));
    let b = budget(
        Platform::Windows,
        windows_limits_of(16 * GIB, 4 * GIB, commit),
    );
    assert_eq!(b.host_alloc_bytes, Some((2.0 * GIB as f64 * 0.9) as u64));
    let b = budget(Platform::Windows, windows_limits_of(0, 0, None));
    assert_eq!(b.predictor, Predictor::None);
    assert!(b.unavailable.expect("why").contains("budget of 0"));
}

/// This machine, whatever it is: a budget, or the reason there is none; under Wine (a Windows
/// build) the DXGI path answers with a reading or says why not.
#[test]
fn this_machine_has_a_budget_or_says_why() {
    let platform = crate::platform::classify(Path::new("/")).0;
    let b = pin_budget(platform, None);
    println!("{}", serde_json::to_string_pretty(&b).expect("json"));
    assert!(
        b.host_alloc_bytes.is_some() != b.unavailable.is_some(),
        "{b:?}"
    );
    if cfg!(windows) {
        for s in [&b.limits.dxgi_nonlocal_budget, &b.limits.commit_limit] {
            assert!(s.value().is_some() || s.unavailable_reason().is_some_and(|w| !w.is_empty()));
        }
        assert!(b.limits.mem_available.unavailable_reason().is_some());
    } else {
        assert!(b.limits.mem_available.value().is_some(), "{b:?}");
        assert!(b.host_alloc_bytes.is_some(), "{b:?}");
    }
}

/// A budget record written before the rename (the H100 fixture, kept as written) names the
/// mappings `registrations`; it still reads into `mappings`, and a budget writes the new name.
#[test]
fn a_budget_written_with_the_old_name_reads_its_mappings() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/budget/h100-budget.json");
    let text = std::fs::read_to_string(&path).expect("the H100 budget fixture");
    let record: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let old = &record["predictor"];
    assert_eq!(
        old["registrations"], 7_424_673u64,
        "the fixture keeps the old key"
    );
    let b: PinBudget = serde_json::from_value(old.clone()).expect("the old name still reads");
    assert_eq!(b.mappings, Some(7_424_673));
    let written = serde_json::to_value(&b).expect("a budget is JSON");
    assert_eq!(written["mappings"], 7_424_673u64);
    assert!(written.get("registrations").is_none(), "{written}");
}
