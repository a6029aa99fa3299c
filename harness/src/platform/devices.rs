//! Which GPUs a run uses: `--device 0`, `--device 0,1`, `--device all`, or a scenario's
//! `devices` key; checked against the GPUs the driver reports before anything is allocated.
//! Also the GPU's NUMA node as Linux reports it, so multi-GPU runs can record placement.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// GPUs selected by the user, before the driver says how many exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceSelection {
    /// Every GPU the driver reports.
    All,
    /// These CUDA ordinals, in the order written, without repeats.
    List(Vec<u32>),
}

impl Default for DeviceSelection {
    fn default() -> Self {
        DeviceSelection::List(vec![0])
    }
}

impl fmt::Display for DeviceSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelection::All => f.write_str("all"),
            DeviceSelection::List(v) => {
                let parts: Vec<String> = v.iter().map(u32::to_string).collect();
                f.write_str(&parts.join(","))
            }
        }
    }
}

/// Most GPUs one selection may name (CUDA ordinals fit far below this on any real host).
pub const MAX_DEVICES: usize = 64;

impl DeviceSelection {
    /// Parses `all`, `3` or `0,1,2` (spaces allowed around the commas).
    pub fn parse(text: &str) -> Result<DeviceSelection, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(DeviceSelection::All);
        }
        if t.is_empty() {
            return Err(
                "no GPU given: write a CUDA device index like 0, a list like 0,1, or all".into(),
            );
        }
        let mut list = Vec::new();
        for part in t.split(',') {
            let p = part.trim();
            let n: u32 = p.parse().map_err(|_| {
                format!(
                    "`{p}` is not a GPU: write a CUDA device index like 0, a list like 0,1, or all"
                )
            })?;
            if list.contains(&n) {
                return Err(format!("GPU {n} is listed twice in `{t}`"));
            }
            list.push(n);
        }
        if list.len() > MAX_DEVICES {
            return Err(format!(
                "`{t}` lists {} GPUs; at most {MAX_DEVICES}",
                list.len()
            ));
        }
        Ok(DeviceSelection::List(list))
    }

    /// The ordinals this selection means on a machine with `count` GPUs, or one sentence saying
    /// which index does not exist.
    pub fn resolve(&self, count: u32) -> Result<Vec<u32>, String> {
        match self {
            DeviceSelection::All if count == 0 => {
                Err("no GPU was found, so `all` selects nothing".into())
            }
            DeviceSelection::All => Ok((0..count).collect()),
            DeviceSelection::List(v) => {
                if let Some(bad) = v.iter().find(|d| **d >= count) {
                    let have = match count {
                        0 => "no GPU".to_string(),
                        1 => "one GPU (index 0)".to_string(),
                        n => format!("{n} GPUs (indices 0 to {})", n - 1),
                    };
                    return Err(format!(
                        "GPU {bad} does not exist: the driver reports {have}; pick an index from `pinscope info`, or use all"
                    ));
                }
                Ok(v.clone())
            }
        }
    }

    /// True when the selection can mean more than one GPU.
    pub fn is_multi(&self) -> bool {
        match self {
            DeviceSelection::All => true,
            DeviceSelection::List(v) => v.len() > 1,
        }
    }
}

/// The NUMA node Linux gives a PCI device (`/sys/bus/pci/devices/<bus id>/numa_node`); `None`
/// where there is no such file, or it says -1 (no NUMA information, as on one-node hosts).
pub fn numa_node_of(pci_bus_id: &str) -> Option<u32> {
    numa_node_in(Path::new("/sys/bus/pci/devices"), pci_bus_id)
}

/// [`numa_node_of`] below `root` (for tests with a fixture tree).
pub fn numa_node_in(root: &Path, pci_bus_id: &str) -> Option<u32> {
    let text =
        std::fs::read_to_string(root.join(sysfs_bus_id(pci_bus_id)).join("numa_node")).ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(|n| u32::try_from(n).ok())
}

/// A PCI bus id as sysfs names the device: CUDA prints `00000000:17:00.0`, sysfs names it
/// `0000:17:00.0` (lowercase hex).
pub fn sysfs_bus_id(pci_bus_id: &str) -> String {
    let id = pci_bus_id.trim().to_ascii_lowercase();
    match id.split_once(':') {
        Some((domain, rest)) if domain.len() > 4 => {
            format!("{}:{rest}", &domain[domain.len() - 4..])
        }
        _ => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_single_and_lists() {
        assert_eq!(DeviceSelection::parse("all"), Ok(DeviceSelection::All));
        assert_eq!(DeviceSelection::parse(" ALL "), Ok(DeviceSelection::All));
        assert_eq!(
            DeviceSelection::parse("1"),
            Ok(DeviceSelection::List(vec![1]))
        );
        assert_eq!(
            DeviceSelection::parse("0, 1,3"),
            Ok(DeviceSelection::List(vec![0, 1, 3]))
        );
        assert_eq!(
            DeviceSelection::parse("0,1").map(|s| s.to_string()),
            Ok("0,1".into())
        );
    }

    #[test]
    fn bad_selections_are_one_sentence() {
        for (given, item) in [("gpu0", "gpu0"), ("0,,1", ""), ("-1", "-1")] {
            assert_eq!(
                DeviceSelection::parse(given),
                Err(format!(
                    "`{item}` is not a GPU: write a CUDA device index like 0, a list like 0,1, or all"
                ))
            );
        }
        assert_eq!(
            DeviceSelection::parse("1,1"),
            Err("GPU 1 is listed twice in `1,1`".into())
        );
        assert!(DeviceSelection::parse("").is_err());
    }

    #[test]
    fn resolving_checks_every_index_against_the_driver_count() {
        assert_eq!(DeviceSelection::All.resolve(2), Ok(vec![0, 1]));
        assert_eq!(DeviceSelection::List(vec![1, 0]).resolve(2), Ok(vec![1, 0]));
        assert_eq!(
            DeviceSelection::List(vec![0, 2]).resolve(2),
            Err("GPU 2 does not exist: the driver reports 2 GPUs (indices 0 to 1); pick an index from `pinscope info`, or use all".into())
        );
        assert_eq!(
            DeviceSelection::List(vec![1]).resolve(1),
            Err("GPU 1 does not exist: the driver reports one GPU (index 0); pick an index from `pinscope info`, or use all".into())
        );
        assert!(DeviceSelection::All.resolve(0).is_err());
        assert!(DeviceSelection::All.is_multi());
        assert!(!DeviceSelection::List(vec![3]).is_multi());
    }

    #[test]
    fn numa_node_from_a_sysfs_tree() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dev = tmp.path().join("0000:17:00.0");
        std::fs::create_dir_all(&dev).expect("mkdir");
        std::fs::write(dev.join("numa_node"), "1\n").expect("write");
        let other = tmp.path().join("0000:65:00.0");
        std::fs::create_dir_all(&other).expect("mkdir");
        std::fs::write(other.join("numa_node"), "-1\n").expect("write");
        assert_eq!(numa_node_in(tmp.path(), "00000000:17:00.0"), Some(1));
        assert_eq!(numa_node_in(tmp.path(), "0000:17:00.0"), Some(1));
        assert_eq!(
            numa_node_in(tmp.path(), "00000000:65:00.0"),
            None,
            "-1 means no NUMA info"
        );
        assert_eq!(numa_node_in(tmp.path(), "00000000:99:00.0"), None);
    }
}
