//! The line under a report's title that names what the runs ran on: GPU, driver, PCIe link, host
//! and platform (`NVIDIA H200 · driver 580.159.04 · PCIe Gen5 x16 · host vm · Linux (Ubuntu
//! 24.04.3 LTS)`). Runs on the same kind of machine share one line that names their hosts; each
//! other kind of machine gets a line of its own, headed by the runs it holds.

use super::html::escape;
use crate::platform::{GpuDriverModel, GpuInfo, MachineKey, Platform, Recorded};
use crate::results::ResultSet;
use std::fmt::Write;

/// Hosts a line names before it counts the rest.
const HOSTS_NAMED: usize = 8;

/// What a run ran on, as the line says it: everything but the host, and the host.
#[derive(Debug, Clone, PartialEq)]
struct MachineWords {
    /// GPU, driver, link (`NVIDIA H200 · driver 580.159.04 · PCIe Gen5 x16`).
    gpu: String,
    /// `Linux (Ubuntu 24.04.3 LTS)`.
    platform: String,
    host: String,
}

impl MachineWords {
    /// From the run's sidecar, or else from the machine fields of its first row; `None` for a
    /// run with neither.
    fn of(s: &ResultSet) -> Option<MachineWords> {
        if let Some(c) = &s.sidecar {
            let m = &c.machine;
            let gpus = c.gpus.len().max(1);
            return Some(MachineWords {
                gpu: gpu_words(m.gpu.as_ref(), gpus),
                platform: platform_words(&m.platform, driver_model(m.gpu.as_ref()), &m.os),
                host: m.host_name.clone(),
            });
        }
        let k: &MachineKey = &s.rows.first()?.machine;
        let mut gpu = vec![if k.gpu.is_empty() {
            "no GPU recorded".to_string()
        } else {
            k.gpu.clone()
        }];
        if !k.driver_version.is_empty() {
            gpu.push(format!("driver {}", k.driver_version));
        }
        if !k.pcie_link.is_empty() {
            gpu.push(format!("PCIe {}", k.pcie_link));
        }
        Some(MachineWords {
            gpu: gpu.join(" · "),
            platform: platform_words(&k.platform, Some(&k.driver_model), &k.os),
            host: k.host_name.clone(),
        })
    }
}

fn driver_model(gpu: Option<&GpuInfo>) -> Option<&Recorded<GpuDriverModel>> {
    gpu.map(|g| &g.driver_model)
}

/// `NVIDIA H200 · driver 580.159.04 · PCIe Gen5 x16`; `2 × ` before the name of a run on two
/// GPUs; the link's maximum when the link runs below it.
fn gpu_words(gpu: Option<&GpuInfo>, gpus: usize) -> String {
    let Some(g) = gpu else {
        return "no GPU recorded".into();
    };
    let mut parts = vec![if gpus > 1 {
        format!("{gpus} × {}", g.name)
    } else {
        g.name.clone()
    }];
    if !g.driver_version.is_empty() {
        parts.push(format!("driver {}", g.driver_version));
    }
    let p = &g.pcie;
    if let (Some(generation), Some(width)) = (p.gen_current, p.width_current) {
        let mut link = format!("PCIe Gen{generation} x{width}");
        if let (Some(gm), Some(wm)) = (p.gen_max, p.width_max)
            && (gm, wm) != (generation, width)
        {
            let _ = write!(link, " (max Gen{gm} x{wm})");
        }
        parts.push(link);
    }
    parts.join(" · ")
}

/// `Linux (Ubuntu 24.04.3 LTS)`, `Windows, WDDM (Windows 11 Pro)`, `WSL2 (…)`.
fn platform_words(
    platform: &Recorded<Platform>,
    model: Option<&Recorded<GpuDriverModel>>,
    os: &str,
) -> String {
    let mut s = match platform.known() {
        Some(Platform::Linux) => "Linux".to_string(),
        Some(Platform::Wsl2) => "WSL2".to_string(),
        Some(Platform::Wsl1) => "WSL1".to_string(),
        Some(Platform::Windows) => "Windows".to_string(),
        Some(Platform::Other) => "another OS".to_string(),
        None if platform.text().is_empty() => "platform not recorded".to_string(),
        None => platform.text().to_string(),
    };
    if platform.is(Platform::Windows)
        && let Some(m) = model.filter(|m| m.is_recorded())
    {
        let _ = write!(s, ", {}", m.text().to_uppercase());
    }
    if !os.is_empty() {
        let _ = write!(s, " ({os})");
    }
    s
}

/// The runs `indices` (ascending) by their labels, neighbours joined: `A–D, F`.
pub(crate) fn runs_named(indices: &[usize], labels: &[String]) -> String {
    let name = |i: usize| labels.get(i).map_or("", |l| l.trim()).to_string();
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < indices.len() {
        let mut end = k;
        while end + 1 < indices.len() && indices[end + 1] == indices[end] + 1 {
            end += 1;
        }
        match end - k {
            0 => parts.push(name(indices[k])),
            1 => parts.extend([name(indices[k]), name(indices[end])]),
            _ => parts.push(format!("{}–{}", name(indices[k]), name(indices[end]))),
        }
        k = end + 1;
    }
    parts.join(", ")
}

/// The machine lines of the page (HTML paragraphs), or nothing when no run says what it ran on.
pub fn machine_lines(sets: &[ResultSet], labels: &[String]) -> String {
    // Per kind of machine (all but the host): its words, its runs and its hosts.
    let mut groups: Vec<(MachineWords, Vec<usize>, Vec<String>)> = Vec::new();
    for (i, s) in sets.iter().enumerate() {
        let Some(w) = MachineWords::of(s) else {
            continue;
        };
        let same = |g: &MachineWords| g.gpu == w.gpu && g.platform == w.platform;
        match groups.iter_mut().find(|(g, _, _)| same(g)) {
            Some((_, runs, hosts)) => {
                runs.push(i);
                if !hosts.contains(&w.host) {
                    hosts.push(w.host.clone());
                }
            }
            None => {
                let host = w.host.clone();
                groups.push((w, vec![i], vec![host]));
            }
        }
    }
    let several = groups.len() > 1;
    let mut out = String::new();
    for (w, runs, hosts) in &groups {
        let lead = if several {
            let word = if runs.len() > 1 { "Runs" } else { "Run" };
            format!("{word} {}: ", runs_named(runs, labels))
        } else {
            String::new()
        };
        let line = format!("{lead}{} · {} · {}", w.gpu, hosts_words(hosts), w.platform);
        let _ = writeln!(out, "<p class=\"machine\">{}</p>", escape(&line));
    }
    out
}

/// `host vm`, or `3 hosts: a, b, c`, the first [`HOSTS_NAMED`] named.
fn hosts_words(hosts: &[String]) -> String {
    match hosts {
        [one] if one.is_empty() => "host not recorded".into(),
        [one] => format!("host {one}"),
        _ => {
            let mut named = hosts[..hosts.len().min(HOSTS_NAMED)].join(", ");
            if hosts.len() > HOSTS_NAMED {
                let _ = write!(named, " … and {} more", hosts.len() - HOSTS_NAMED);
            }
            format!("{} hosts: {named}", hosts.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbouring_runs_are_joined() {
        let labels: Vec<String> = (0..8)
            .map(|i| format!("{} ", crate::compare::run_label(i)))
            .collect();
        assert_eq!(runs_named(&[0, 1, 2, 3], &labels), "A–D");
        assert_eq!(runs_named(&[0, 1, 3, 5, 6, 7], &labels), "A, B, D, F–H");
        assert_eq!(runs_named(&[2], &labels), "C");
    }

    #[test]
    fn many_hosts_are_counted() {
        let hosts: Vec<String> = (1..=10).map(|i| format!("n{i:02}")).collect();
        assert_eq!(
            hosts_words(&hosts),
            "10 hosts: n01, n02, n03, n04, n05, n06, n07, n08 … and 2 more"
        );
        assert_eq!(hosts_words(&hosts[..1]), "host n01");
    }

    #[test]
    fn windows_names_its_driver_model() {
        let w = platform_words(
            &Recorded::read("windows"),
            Some(&Recorded::read("wddm")),
            "Windows 11 Pro",
        );
        assert_eq!(w, "Windows, WDDM (Windows 11 Pro)");
        let l = platform_words(&Recorded::read("linux"), None, "");
        assert_eq!(l, "Linux");
    }
}
