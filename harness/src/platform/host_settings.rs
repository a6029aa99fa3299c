//! The Linux and WSL2 settings, read from `/proc`, `/sys`, `/etc` and `/dev` below a root
//! directory (`/` on a real machine, a fixture tree in tests): the GPU's NUMA node, the NUMA
//! nodes of a pinned buffer's pages, the CPU a thread ran on, CPU model and frequency governor,
//! kernel release, distribution, `MemTotal`, `/dev/dxg` and `libdxcore`.

use super::settings::{
    Bytes, CpuPlacement, NodeBytes, NodePlacement, NumaNode, Setting, Settings, Source,
};
use std::path::Path;

/// A directory tree read as if it were `/`.
#[derive(Debug, Clone, Copy)]
pub struct HostTree<'a> {
    root: &'a Path,
}

impl<'a> HostTree<'a> {
    pub fn new(root: &'a Path) -> Self {
        HostTree { root }
    }

    /// The text of `rel` (relative to the root) and its source, or why it could not be read.
    fn read(&self, rel: &str) -> Result<(String, Source), String> {
        let shown = format!("/{rel}");
        std::fs::read_to_string(self.root.join(rel))
            .map(|t| (t, Source::File(shown.clone())))
            .map_err(|e| format!("{shown} could not be read ({e})"))
    }

    /// Whether `rel` exists, as a known value with the path as its source.
    fn exists(&self, rel: &str) -> Setting<bool> {
        Setting::known(
            self.root.join(rel).exists(),
            Source::File(format!("/{rel}")),
        )
    }
}

/// Fills the fields read from files that do not depend on a transfer.
pub fn fill_host_files(s: &mut Settings, tree: HostTree<'_>, pci_bus_id: Option<&str>) {
    s.gpu_numa_node = match pci_bus_id {
        Some(id) => gpu_numa_node(tree, id),
        None => Setting::unavailable("no GPU, so no PCI device to look up"),
    };
    s.cpu_model = read_with(tree, "proc/cpuinfo", |t| {
        super::cpuinfo_model_name(t).ok_or("it has no `model name` line")
    });
    s.cpu_governor = cpu_governor(tree);
    s.kernel_release = read_with(tree, "proc/sys/kernel/osrelease", |t| {
        Some(t.trim().to_string())
            .filter(|t| !t.is_empty())
            .ok_or("it is empty")
    });
    s.distribution = read_with(tree, "etc/os-release", |t| {
        super::os_release_pretty_name(t).ok_or("it has no PRETTY_NAME")
    });
    s.mem_total = read_with(tree, "proc/meminfo", |t| {
        meminfo_total(t).ok_or("it has no MemTotal line")
    });
    s.dev_dxg = tree.exists("dev/dxg");
    s.libdxcore = tree.exists("usr/lib/wsl/lib/libdxcore.so");
}

/// `Known` from the parsed text of `rel`, or `unavailable` with the path and what was wrong.
fn read_with<T>(
    tree: HostTree<'_>,
    rel: &str,
    parse: impl FnOnce(&str) -> Result<T, &'static str>,
) -> Setting<T> {
    match tree.read(rel) {
        Ok((text, source)) => match parse(&text) {
            Ok(v) => Setting::known(v, source),
            Err(why) => Setting::unavailable(format!("{source}: {why}")),
        },
        Err(why) => Setting::unavailable(why),
    }
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn meminfo_total(text: &str) -> Option<Bytes> {
    text.lines().find_map(|l| {
        let kib = l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?;
        kib.trim().parse::<u64>().ok().map(|k| Bytes(k * 1024))
    })
}

/// The NUMA node of the GPU's PCI device (`/sys/bus/pci/devices/<bus id>/numa_node`).
pub fn gpu_numa_node(tree: HostTree<'_>, pci_bus_id: &str) -> Setting<NumaNode> {
    let rel = format!(
        "sys/bus/pci/devices/{}/numa_node",
        super::sysfs_bus_id(pci_bus_id)
    );
    read_with(tree, &rel, |t| match t.trim().parse::<i64>() {
        Ok(-1) => Ok(NumaNode::NoAffinity),
        Ok(n) => u32::try_from(n)
            .map(NumaNode::Node)
            .map_err(|_| "it is not a node number"),
        Err(_) => Err("it is not a number"),
    })
}

/// The scaling governor of every CPU: one name when all agree, else each distinct name with
/// the CPUs that use it.
pub fn cpu_governor(tree: HostTree<'_>) -> Setting<String> {
    let dir = "sys/devices/system/cpu";
    let Ok(entries) = std::fs::read_dir(tree.root.join(dir)) else {
        return Setting::unavailable(format!("/{dir} could not be listed"));
    };
    let mut cpus: Vec<u32> = entries
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("cpu")?
                .parse()
                .ok()
        })
        .collect();
    cpus.sort_unstable();
    let mut by_governor: Vec<(String, Vec<u32>)> = Vec::new();
    for cpu in cpus {
        let rel = format!("{dir}/cpu{cpu}/cpufreq/scaling_governor");
        let Ok((text, _)) = tree.read(&rel) else {
            continue;
        };
        let g = text.trim().to_string();
        match by_governor.iter_mut().find(|(name, _)| *name == g) {
            Some((_, list)) => list.push(cpu),
            None => by_governor.push((g, vec![cpu])),
        }
    }
    let source = Source::File(format!("/{dir}/cpu*/cpufreq/scaling_governor"));
    match by_governor.as_slice() {
        [] => Setting::unavailable(format!(
            "no /{dir}/cpu*/cpufreq/scaling_governor: the kernel (or the VM) exposes no frequency scaling"
        )),
        [(one, _)] => Setting::known(one.clone(), source),
        many => {
            let parts: Vec<String> = many
                .iter()
                .map(|(g, cpus)| format!("{g} on {} CPUs", cpus.len()))
                .collect();
            Setting::known(parts.join(", "), source)
        }
    }
}

/// Where the pages of the mapping holding `address` lie, from `/proc/self/numa_maps`.
pub fn pinned_pages_nodes(tree: HostTree<'_>, address: usize) -> Setting<NodePlacement> {
    match tree.read("proc/self/numa_maps") {
        Ok((text, source)) => match numa_maps_placement(&text, address) {
            Ok(p) => Setting::known(p, source),
            Err(why) => Setting::unavailable(format!("{source}: {why}")),
        },
        Err(why) => Setting::unavailable(why),
    }
}

/// The `N<node>=<pages>` counts of the `numa_maps` line whose mapping starts at or below
/// `address` (the last such start), in bytes (`kernelpagesize_kB`).
pub fn numa_maps_placement(text: &str, address: usize) -> Result<NodePlacement, String> {
    let line = text
        .lines()
        .filter_map(|l| {
            let start = usize::from_str_radix(l.split_whitespace().next()?, 16).ok()?;
            (start <= address).then_some((start, l))
        })
        .max_by_key(|(start, _)| *start)
        .map(|(_, l)| l)
        .ok_or_else(|| format!("no mapping starts at or below {address:#x}"))?;
    let mut page_kib = None;
    let mut pages = Vec::new();
    for token in line.split_whitespace().skip(2) {
        let Some((k, v)) = token.split_once('=') else {
            continue;
        };
        if k == "kernelpagesize_kB" {
            page_kib = v.parse::<u64>().ok();
        } else if let (Some(node), Ok(n)) = (
            k.strip_prefix('N').and_then(|n| n.parse::<u32>().ok()),
            v.parse::<u64>(),
        ) {
            pages.push((node, n));
        }
    }
    if pages.is_empty() {
        // Driver-mapped memory (VM_IO / VM_PFNMAP) is listed without per-node counts.
        let start = line.split_whitespace().next().unwrap_or_default();
        return Err(format!(
            "the mapping at {start} lists no N<node>= counts (pages the driver mapped itself are not counted per node)"
        ));
    }
    let kib = page_kib.ok_or("the mapping has no kernelpagesize_kB")?;
    Ok(NodePlacement(
        pages
            .into_iter()
            .map(|(node, n)| NodeBytes {
                node,
                bytes: n * kib * 1024,
            })
            .collect(),
    ))
}

/// The CPU the calling thread last ran on (`/proc/thread-self/stat`, field 39), its NUMA node
/// (the `node<N>` entry of `/sys/devices/system/cpu/cpu<C>`) and `Cpus_allowed_list`.
pub fn thread_cpu(tree: HostTree<'_>) -> Setting<CpuPlacement> {
    let stat = match tree.read("proc/thread-self/stat") {
        Ok(s) => s,
        Err(why) => return Setting::unavailable(why),
    };
    let Some(cpu) = stat_processor(&stat.0) else {
        return Setting::unavailable(format!("{}: it has no field 39 (processor)", stat.1));
    };
    let allowed = tree
        .read("proc/self/status")
        .ok()
        .and_then(|(t, _)| {
            t.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    let node = std::fs::read_dir(tree.root.join(format!("sys/devices/system/cpu/cpu{cpu}")))
        .ok()
        .and_then(|entries| {
            entries.filter_map(Result::ok).find_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("node")?
                    .parse::<u32>()
                    .ok()
            })
        });
    Setting::known(
        CpuPlacement { cpu, node, allowed },
        Source::File("/proc/thread-self/stat, /proc/self/status, /sys/devices/system/cpu".into()),
    )
}

/// Field 39 (`processor`) of a `/proc/<pid>/stat` line; the command name (field 2) may hold
/// spaces and parentheses, so fields are counted after its last `)`.
pub fn stat_processor(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    // Field 3 (state) is the first after the name, so field 39 is the 37th.
    after.split_whitespace().nth(36)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Files copied from the Linux build machine (see the fixture's README).
    fn linux_host() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/settings/linux-host")
    }

    #[test]
    fn host_files_of_a_real_linux_vm() {
        let root = linux_host();
        let mut s = Settings::all_unavailable("not read");
        fill_host_files(&mut s, HostTree::new(&root), None);
        let no_gpu = s.gpu_numa_node.unavailable_reason().unwrap_or_default();
        assert!(no_gpu.starts_with("no GPU"), "{no_gpu}");
        assert_eq!(s.mem_total.value(), Some(&Bytes(24_683_584 * 1024)));
        assert_eq!(
            s.kernel_release.value().map(String::as_str),
            Some("6.18.44-fc-v1045")
        );
        assert_eq!(s.dev_dxg.value(), Some(&false));
        assert_eq!(s.libdxcore.value(), Some(&false));
        assert!(s.cpu_model.value().is_some_and(|m| !m.is_empty()));
        assert_eq!(
            s.distribution.value().map(String::as_str),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        let gov = s.cpu_governor.value_text();
        assert!(
            gov.starts_with("unavailable: no /sys/devices/system/cpu/cpu*/cpufreq"),
            "{gov}"
        );
    }

    /// A sysfs PCI device folder (its name holds colons, which a Windows checkout cannot hold,
    /// so the tree is made here) with the `numa_node` text the build machine's devices give.
    fn pci_tree(numa_node: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dev = tmp.path().join("sys/bus/pci/devices/0000:17:00.0");
        std::fs::create_dir_all(&dev).expect("mkdir");
        std::fs::write(dev.join("numa_node"), numa_node).expect("write");
        tmp
    }

    #[test]
    fn the_gpu_numa_node_from_sysfs_with_cuda_s_bus_id() {
        let none = pci_tree("-1\n");
        let s = gpu_numa_node(HostTree::new(none.path()), "00000000:17:00.0");
        assert_eq!(s.value(), Some(&NumaNode::NoAffinity));
        assert_eq!(
            s.source_text(),
            "file /sys/bus/pci/devices/0000:17:00.0/numa_node"
        );
        let one = pci_tree("1\n");
        let s = gpu_numa_node(HostTree::new(one.path()), "0000:17:00.0");
        assert_eq!(s.value(), Some(&NumaNode::Node(1)));
        let bad = pci_tree("x\n");
        let s = gpu_numa_node(HostTree::new(bad.path()), "0000:17:00.0");
        let why = s.unavailable_reason().unwrap_or_default();
        assert!(why.ends_with("it is not a number"), "{s:?}");
    }

    #[test]
    fn a_missing_pci_device_is_unavailable_with_its_path() {
        let root = linux_host();
        let s = gpu_numa_node(HostTree::new(&root), "0000:99:00.0");
        let why = s.unavailable_reason().unwrap_or_default();
        assert!(
            why.contains("/sys/bus/pci/devices/0000:99:00.0/numa_node could not be read"),
            "{s:?}"
        );
    }

    #[test]
    fn wsl2_tree_has_dxg_and_libdxcore() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/settings/wsl2-host");
        let mut s = Settings::all_unavailable("not read");
        fill_host_files(&mut s, HostTree::new(&root), None);
        assert_eq!(s.dev_dxg.value(), Some(&true));
        assert_eq!(s.libdxcore.value(), Some(&true));
        assert_eq!(
            s.kernel_release.value().map(String::as_str),
            Some("5.15.167.4-microsoft-standard-WSL2")
        );
        let no_gpu = s.gpu_numa_node.unavailable_reason().unwrap_or_default();
        assert!(no_gpu.starts_with("no GPU"), "{no_gpu}");
        assert!(
            s.distribution
                .value_text()
                .contains("/etc/os-release could not be read")
        );
    }

    #[test]
    fn governors_that_differ_are_each_named_with_their_cpu_count() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/settings/governors");
        let gov = cpu_governor(HostTree::new(&root));
        assert_eq!(
            gov.value().map(String::as_str),
            Some("performance on 2 CPUs, powersave on 1 CPUs")
        );
        assert_eq!(
            gov.source_text(),
            "file /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
        );
    }

    #[test]
    fn the_thread_cpu_and_its_node_from_real_proc_and_sys_files() {
        let root = linux_host();
        let s = thread_cpu(HostTree::new(&root));
        let p = s.value().expect("a placement");
        assert_eq!((p.cpu, p.node, p.allowed.as_str()), (1, Some(0), "0-1"));
    }

    #[test]
    fn processor_field_survives_a_name_with_spaces_and_parens() {
        let stat =
            std::fs::read_to_string(linux_host().join("proc/thread-self/stat")).expect("fixture");
        let renamed = stat.replacen("(cat)", "(a b) (c)", 1);
        assert_eq!(stat_processor(&stat), Some(1));
        assert_eq!(stat_processor(&renamed), Some(1));
        assert_eq!(stat_processor("1 (x) S 2"), None);
    }

    #[test]
    fn numa_maps_counts_pages_per_node_of_the_mapping_holding_the_address() {
        let text =
            std::fs::read_to_string(linux_host().join("proc/self/numa_maps")).expect("fixture");
        let heap = text
            .lines()
            .find(|l| l.contains(" heap "))
            .expect("a heap line");
        let start =
            usize::from_str_radix(heap.split(' ').next().expect("address"), 16).expect("hex");
        let p = numa_maps_placement(&text, start + 4096).expect("placement");
        assert_eq!(p.0.len(), 1);
        assert_eq!(p.0[0].node, 0);
        assert!(p.0[0].bytes > 0 && p.0[0].bytes.is_multiple_of(4096));
        assert!(
            numa_maps_placement(&text, 0).is_err(),
            "below every mapping"
        );
    }

    #[test]
    fn numa_maps_of_a_driver_mapping_without_node_counts_says_so() {
        let line = "7f2a40000000 default file=/dev/nvidiactl\n";
        let err = numa_maps_placement(line, 0x7f2a_4000_1000).expect_err("no counts");
        assert!(err.contains("lists no N<node>= counts"), "{err}");
        let two = "7f0000000000 bind:0-1 anon=512 dirty=512 N0=256 N1=256 kernelpagesize_kB=4\n";
        let p = numa_maps_placement(two, 0x7f00_0000_0000).expect("counts");
        assert_eq!(
            p.0,
            vec![
                NodeBytes {
                    node: 0,
                    bytes: 1 << 20
                },
                NodeBytes {
                    node: 1,
                    bytes: 1 << 20
                }
            ]
        );
    }
}
