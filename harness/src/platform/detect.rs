//! Platform detection: which family this machine is (Linux, WSL2, WSL1, Windows) and why, plus
//! the OS, kernel, CPU, RAM and host name recorded with every run.
//!
//! The Linux-side classification reads a directory tree ([`classify_tree`]) so the rules can be
//! tested on fixture trees copied from real WSL2, WSL1 and Linux machines.

use super::*;
use std::path::Path;

/// Physical RAM in bytes, as the OS reports it (0 when it does not).
pub fn ram_bytes() -> u64 {
    use sysinfo::{MemoryRefreshKind, RefreshKind, System};
    System::new_with_specifics(
        RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
    )
    .total_memory()
}

/// Describes this machine without touching the GPU.
pub fn this_machine(anonymize: bool) -> Machine {
    let (platform, platform_evidence) = classify(Path::new("/"));
    let raw_host = gethostname::gethostname().to_string_lossy().into_owned();
    let host_name = if anonymize {
        anonymize_host(&raw_host)
    } else {
        raw_host
    };

    let sys = sysinfo::System::new_with_specifics(
        sysinfo::RefreshKind::nothing().with_cpu(sysinfo::CpuRefreshKind::nothing()),
    );
    let cpu_threads = match sys.cpus().len() {
        0 => std::thread::available_parallelism().map_or(0, |n| n.get()),
        n => n,
    };
    let cpu = sys
        .cpus()
        .first()
        .map(|c| c.brand().trim().to_string())
        .filter(|b| !b.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|t| cpuinfo_model_name(&t))
        })
        .unwrap_or_default();

    Machine {
        host_name,
        platform: platform.into(),
        platform_evidence,
        os: os_name(),
        kernel: kernel_release(),
        cpu,
        cpu_threads: u32::try_from(cpu_threads).unwrap_or(u32::MAX),
        ram_bytes: ram_bytes(),
        gpu: None,
        settings: None,
    }
}

/// `anon-` and 8 hex digits of a stable hash of the host name: the same machine gets the same
/// name in every run (so runs can still be matched) without revealing it.
pub fn anonymize_host(name: &str) -> String {
    format!("anon-{:08x}", fnv1a32(name.as_bytes()))
}

/// 32-bit FNV-1a: tiny, stable across Rust versions and platforms (unlike `DefaultHasher`).
fn fnv1a32(bytes: &[u8]) -> u32 {
    const OFFSET: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u32::from(*b)).wrapping_mul(PRIME))
}

/// The platform family of the machine this binary runs on, with the evidence for it.
///
/// On Windows builds this is always [`Platform::Windows`]; elsewhere it is [`classify_tree`] of
/// `root` (normally `/`).
pub fn classify(root: &Path) -> (Platform, Vec<String>) {
    if cfg!(windows) {
        (
            Platform::Windows,
            vec!["built for Windows (native, not WSL)".into()],
        )
    } else {
        classify_tree(root)
    }
}

/// Classifies a Linux-like directory tree rooted at `root`, reading
/// `proc/sys/kernel/osrelease`, `proc/version` and the existence of `dev/dxg` and
/// `usr/lib/wsl/lib`.
///
/// * WSL2: osrelease contains `microsoft-standard-WSL2`, or another lower-case `microsoft`
///   kernel (`4.19.104-microsoft-standard`, a custom WSL2 kernel); `/dev/dxg` is reported as
///   evidence either way (without it there is no GPU paravirtualization).
/// * WSL1: osrelease contains `Microsoft` (capital, `4.4.0-19041-Microsoft`).
/// * Linux: an osrelease without either marker.
/// * Other: no osrelease at all (not Linux).
pub fn classify_tree(root: &Path) -> (Platform, Vec<String>) {
    let read = |rel: &str| {
        std::fs::read_to_string(root.join(rel))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let osrelease = read("proc/sys/kernel/osrelease");
    let version = read("proc/version");
    let dxg = root.join("dev/dxg").exists();
    let wsl_lib = root.join("usr/lib/wsl/lib").is_dir();

    let Some(osrelease) = osrelease else {
        return (
            Platform::Other,
            vec!["no /proc/sys/kernel/osrelease: not a Linux kernel".into()],
        );
    };
    let mut evidence = Vec::new();
    let extras = |ev: &mut Vec<String>| {
        ev.push(if dxg {
            "/dev/dxg exists (GPU paravirtualization)".into()
        } else {
            "no /dev/dxg".into()
        });
        if wsl_lib {
            ev.push("/usr/lib/wsl/lib exists (Windows-side CUDA/NVML libraries)".into());
        }
    };
    let platform = if osrelease.contains("microsoft-standard-WSL2") {
        evidence.push(format!(
            "osrelease `{osrelease}` contains microsoft-standard-WSL2"
        ));
        extras(&mut evidence);
        Platform::Wsl2
    } else if osrelease.contains("-microsoft-standard") && dxg {
        evidence.push(format!(
            "osrelease `{osrelease}` contains -microsoft-standard"
        ));
        extras(&mut evidence);
        Platform::Wsl2
    } else if osrelease.contains("Microsoft") {
        evidence.push(format!(
            "osrelease `{osrelease}` contains Microsoft (WSL1 kernel interface)"
        ));
        Platform::Wsl1
    } else if osrelease.to_ascii_lowercase().contains("microsoft") {
        evidence.push(format!(
            "osrelease `{osrelease}` names a Microsoft kernel without the WSL2 suffix (older or custom WSL2 kernel)"
        ));
        extras(&mut evidence);
        Platform::Wsl2
    } else {
        evidence.push(format!("osrelease `{osrelease}` has no Microsoft marker"));
        if dxg {
            evidence.push("/dev/dxg exists on a non-Microsoft kernel".into());
        }
        Platform::Linux
    };
    if version.is_some_and(|v| v.to_ascii_lowercase().contains("microsoft")) {
        evidence.push("/proc/version names Microsoft".into());
    }
    (platform, evidence)
}

/// `PRETTY_NAME` of an `/etc/os-release` file, unquoted.
pub fn os_release_pretty_name(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.trim().strip_prefix("PRETTY_NAME=")?;
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// The first `model name` of `/proc/cpuinfo`.
pub fn cpuinfo_model_name(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    })
}

fn os_name() -> String {
    if cfg!(windows) {
        sysinfo::System::long_os_version().unwrap_or_else(|| "Windows".into())
    } else {
        ["/etc/os-release", "/usr/lib/os-release"]
            .iter()
            .find_map(|p| {
                std::fs::read_to_string(p)
                    .ok()
                    .and_then(|t| os_release_pretty_name(&t))
            })
            .or_else(sysinfo::System::long_os_version)
            .unwrap_or_default()
    }
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && !cfg!(windows))
        .or_else(sysinfo::System::kernel_version)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/platform")
            .join(name)
    }

    #[test]
    fn wsl2_tree_is_wsl2() {
        let (p, ev) = classify_tree(&fixture("wsl2"));
        assert_eq!(p, Platform::Wsl2);
        assert!(
            ev[0].contains("5.15.167.4-microsoft-standard-WSL2"),
            "{ev:?}"
        );
        assert!(
            ev.iter().any(|e| e.starts_with("/dev/dxg exists")),
            "{ev:?}"
        );
        assert!(
            ev.iter().any(|e| e.starts_with("/usr/lib/wsl/lib")),
            "{ev:?}"
        );
        assert!(ev.iter().any(|e| e.contains("/proc/version")), "{ev:?}");
    }

    #[test]
    fn wsl1_tree_is_wsl1() {
        let (p, ev) = classify_tree(&fixture("wsl1"));
        assert_eq!(p, Platform::Wsl1);
        assert!(ev[0].contains("4.4.0-19041-Microsoft"), "{ev:?}");
    }

    #[test]
    fn linux_tree_is_linux() {
        let (p, ev) = classify_tree(&fixture("linux"));
        assert_eq!(p, Platform::Linux);
        assert!(ev[0].contains("no Microsoft marker"), "{ev:?}");
    }

    #[test]
    fn missing_tree_is_other_not_a_panic() {
        let (p, ev) = classify_tree(&fixture("does-not-exist"));
        assert_eq!(p, Platform::Other);
        assert_eq!(ev.len(), 1);
    }

    #[test]
    fn classify_matches_build_target() {
        let (p, _) = classify(&fixture("wsl2"));
        if cfg!(windows) {
            assert_eq!(p, Platform::Windows);
        } else {
            assert_eq!(p, Platform::Wsl2);
        }
    }

    #[test]
    fn anonymized_host_is_stable_and_short() {
        // FNV-1a 32 reference values: "" -> 811c9dc5, "a" -> e40c292c, "foobar" -> bf9cf968.
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9c_f968);
        assert_eq!(anonymize_host("foobar"), "anon-bf9cf968");
        assert_ne!(anonymize_host("gpu-box-1"), anonymize_host("gpu-box-2"));
    }

    #[test]
    fn pretty_name_and_cpu_model() {
        let t = "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\n";
        assert_eq!(
            os_release_pretty_name(t).as_deref(),
            Some("Ubuntu 24.04.1 LTS")
        );
        assert_eq!(os_release_pretty_name("ID=x\n"), None);
        let c = "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n";
        assert_eq!(
            cpuinfo_model_name(c).as_deref(),
            Some("AMD EPYC 9654 96-Core Processor")
        );
    }

    #[test]
    fn this_machine_fills_what_it_can() {
        let m = this_machine(true);
        assert!(m.host_name.starts_with("anon-"), "{}", m.host_name);
        assert_eq!(m.host_name.len(), "anon-".len() + 8);
        assert!(m.platform.is_recorded());
        assert!(!m.platform_evidence.is_empty());
        assert!(m.cpu_threads > 0);
    }
}
