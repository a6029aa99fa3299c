//! The fleet section of the report: the nodes of a fleet folder (what each step of each node
//! exited with, in words), and for runs from many machines each group's distribution of the
//! headline measures with the GPUs far from their group named first.

use super::html::{escape, table};
use super::{para, section};
use crate::results::{Lane, NodeFolder, NodeProblem, NodeSteps, ResultSet, Row};
use crate::stats::{MAD_SCALE, Sample};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use std::path::Path;

/// What a step's exit code means, as pinscope documents its exit codes.
fn step_word(code: Option<i32>) -> String {
    match code {
        None => "not in this pinscope".into(),
        Some(0) => "ok".into(),
        Some(1) => "a check failed".into(),
        Some(2) => "usage or input error".into(),
        Some(3) => "no GPU".into(),
        Some(n) => format!("exit {n}"),
    }
}

/// The node's GPU from `info`, or why it had none (and that Slurm gave the job none there: where
/// Slurm manages GPUs and constrains devices, a job sees only the GPUs it asked for).
fn gpu_cell(n: &NodeFolder) -> String {
    if let Some(why) = &n.info.gpu_unavailable {
        let given_none = n.steps.as_ref().is_some_and(|s| s.slurm_gpus == Some(0));
        let hint = if given_none {
            " (Slurm gave this job no GPU on this node: where GPUs are a Slurm resource, submit with --gpus-per-node)"
        } else {
            ""
        };
        return format!("no GPU: {why}{hint}");
    }
    n.info
        .machine
        .as_ref()
        .and_then(|m| m.gpu.as_ref())
        .map_or_else(|| "—".into(), |g| g.name.clone())
}

/// True when a step of the node did not succeed or something of it is missing or unusable
/// (a results file reported without its sidecar is only noted).
fn node_failed(n: &NodeFolder) -> bool {
    n.problems
        .iter()
        .any(|p| !matches!(p, NodeProblem::NoSidecar { .. }))
        || n.steps.as_ref().is_none_or(|s| {
            [s.info, s.check, s.run]
                .iter()
                .any(|c| c.is_some_and(|c| c != 0))
        })
}

/// The table of nodes: one line each, the nodes whose steps did not all succeed first.
pub(crate) fn nodes_section(out: &mut String, nodes: &[NodeFolder]) {
    section(out, "nodes", "Fleet: nodes");
    let no_gpu = nodes
        .iter()
        .filter(|n| {
            n.info.gpu_unavailable.is_some() || n.steps.as_ref().is_some_and(|s| s.run == Some(3))
        })
        .count();
    let with_results = nodes.iter().filter(|n| !n.results.is_empty()).count();
    let set_aside = nodes.iter().filter(|n| n.has_set_aside()).count();
    para(
        out,
        &format!(
            "{} node(s): {with_results} wrote results, {set_aside} left results that cannot be used (the page leaves them out), {no_gpu} had no GPU, {} had a step that did not succeed or a file missing. Exit codes: 0 ok, 1 a check failed, 2 usage or input error, 3 no GPU.",
            nodes.len(),
            nodes.iter().filter(|n| node_failed(n)).count()
        ),
    );
    let mut order: Vec<&NodeFolder> = nodes.iter().collect();
    order.sort_by_key(|n| !node_failed(n));
    let rows: Vec<Vec<String>> = order
        .iter()
        .map(|n| {
            // Without steps.json nothing says how the steps ended.
            let step = |f: fn(&NodeSteps) -> Option<i32>| {
                n.steps
                    .as_ref()
                    .map_or_else(|| "not recorded".into(), |s| step_word(f(s)))
            };
            let problems: Vec<String> = n.problems.iter().map(ToString::to_string).collect();
            vec![
                n.name.clone(),
                gpu_cell(n),
                step(|s| s.info),
                step(|s| s.check),
                step(|s| s.run),
                n.results.len().to_string(),
                problems.join("; "),
            ]
        })
        .collect();
    let head = [
        "node",
        "GPU",
        "info",
        "check",
        "run",
        "results files reported",
        "problem",
    ];
    let failing = order.iter().map(|n| node_failed(n)).collect::<Vec<_>>();
    out.push_str(&table(&head, &rows, &|i| {
        if failing[i] { "failed" } else { "" }
    }));
    out.push_str("</section>\n");
}

/// A page for a fleet folder in which no node wrote results: the nodes and why.
pub(crate) fn nodes_only_page(title: &str, nodes: &[NodeFolder]) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", escape(title));
    para(
        &mut body,
        "No node left results that can be reported: the table says what each step of each node exited with, and what each node left.",
    );
    nodes_section(&mut body, nodes);
    super::html::page(title, &body)
}

/// What each run is called on the page (with a trailing space; empty for a lone run): a run of
/// a fleet folder by its node (and the file, when the node left several; and the host its CSV
/// names, when that is not the node's name, as under `--anonymize`); any other run A, B, …, as
/// `compare` names them.
pub(crate) fn run_labels(sets: &[ResultSet], nodes: &[NodeFolder]) -> Vec<String> {
    if sets.len() <= 1 {
        return vec![String::new(); sets.len()];
    }
    let node_of: HashMap<&Path, &NodeFolder> = nodes
        .iter()
        .flat_map(|n| n.results.iter().map(move |p| (p.as_path(), n)))
        .collect();
    sets.iter()
        .enumerate()
        .map(|(i, s)| {
            let Some(n) = node_of.get(s.path.as_path()) else {
                return format!("{} ", crate::compare::run_label(i));
            };
            let mut l = n.name.clone();
            if n.results.len() > 1 {
                let stem = s.path.file_stem().unwrap_or_default().to_string_lossy();
                let _ = write!(l, "/{stem}");
            }
            if let Some(host) = s.rows.first().map(|r| &r.machine.host_name)
                && *host != n.name
            {
                let _ = write!(l, " (host {host})");
            }
            l.push(' ');
            l
        })
        .collect()
}

/// The heading of an answer that holds for the runs `runs` (indices into `labels`), all on
/// `platform`: "Run A (linux)", or "Runs n1, n2, n3 (3 runs with this answer, linux)".
pub(crate) fn runs_heading(labels: &[String], runs: &[usize], platform: &str) -> String {
    match runs {
        [one] => format!("Run {}({platform})", labels[*one]),
        many => {
            let names: Vec<&str> = many.iter().map(|i| labels[*i].trim()).collect();
            format!(
                "Runs {} ({} runs with this answer, {platform})",
                names.join(", "),
                many.len()
            )
        }
    }
}

// ---- runs from many machines: each group's distribution, and who is far from it ----------

/// Runs from at least this many machines get the fleet view.
pub const FLEET_MIN_MACHINES: usize = 3;
/// A GPU's measure is far from its group when it is more than this many scaled MADs
/// (1.4826 × MAD, the standard deviation of normal data) from the group's median …
pub const FAR_MADS: f64 = 3.5;
/// … and more than this fraction of the median away (identical GPUs can have a MAD near 0;
/// 5% is the margin cluster health checks warn at).
pub const FAR_MIN_REL: f64 = 0.05;
/// Lines of the distribution table; the rest are counted.
const MAX_DISTRIBUTION_ROWS: usize = 300;
/// GPUs named in the "far from their group" table; the rest are counted.
const MAX_FAR_ROWS: usize = 200;

/// One GPU of the fleet: a host (and the GPU's ordinal on a multi-GPU host).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Gpu<'a> {
    host: &'a str,
    device: Option<crate::results::Device>,
}

/// GPUs compared with each other: same GPU model, same PCIe link.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Group<'a> {
    model: &'a str,
    link: &'a str,
}

/// A headline measure: one case and lane of a scenario (the multi-GPU placement mark removed,
/// so GPU 0 and GPU 1 of a host measure the same thing).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Measure<'a> {
    scenario: &'a str,
    case: &'a str,
    lane: Lane,
}

/// One GPU's value of one measure, against its group.
#[derive(Debug, Clone)]
struct Far {
    title: String,
    value: f64,
    median: f64,
    /// (value − median) / median.
    rel: f64,
    /// (value − median) / (1.4826 × MAD); infinite when the MAD is 0.
    z: f64,
}

/// What a GPU looks like against its group.
#[derive(Debug, Clone)]
struct GpuVerdict<'a> {
    gpu: Gpu<'a>,
    group: Group<'a>,
    set: usize,
    far: Vec<Far>,
    measures: usize,
}

/// The measures of every GPU, by group: group -> measure -> (GPU, value, row title, set).
type Grouped<'a> = BTreeMap<Group<'a>, BTreeMap<Measure<'a>, Vec<(Gpu<'a>, f64, &'a Row, usize)>>>;

fn grouped<'a>(sets: &'a [ResultSet]) -> Grouped<'a> {
    let mut g: Grouped<'a> = BTreeMap::new();
    for (i, s) in sets.iter().enumerate() {
        for r in &s.rows {
            let Some(v) = r
                .bw_median_gbs
                .filter(|_| r.status.is_ok() && r.gpus_at_once <= 1)
            else {
                continue;
            };
            if r.device == Some(crate::results::Device::All) {
                continue;
            }
            let case = r.base_key();
            let group = Group {
                model: &r.machine.gpu,
                link: &r.machine.pcie_link,
            };
            let gpu = Gpu {
                host: &r.machine.host_name,
                device: r.device,
            };
            let m = Measure {
                scenario: &r.scenario,
                case,
                lane: r.lane,
            };
            g.entry(group)
                .or_default()
                .entry(m)
                .or_default()
                .push((gpu, v, r, i));
        }
    }
    g
}

/// Every GPU with its measures far from the group's, the farthest first.
fn far_gpus<'a>(g: &Grouped<'a>) -> Vec<GpuVerdict<'a>> {
    let mut by_gpu: BTreeMap<(Group<'a>, Gpu<'a>), GpuVerdict<'a>> = BTreeMap::new();
    for (group, measures) in g {
        for (m, vals) in measures {
            let Ok(s) = Sample::new(vals.iter().map(|v| v.1).collect()) else {
                continue;
            };
            if s.len() < FLEET_MIN_MACHINES {
                continue;
            }
            let (median, sd) = (s.median(), MAD_SCALE * s.mad());
            for (gpu, v, row, set) in vals {
                let e = by_gpu
                    .entry((group.clone(), gpu.clone()))
                    .or_insert_with(|| GpuVerdict {
                        gpu: gpu.clone(),
                        group: group.clone(),
                        set: *set,
                        far: Vec::new(),
                        measures: 0,
                    });
                e.measures += 1;
                let d = v - median;
                if d.abs() > FAR_MADS * sd && d.abs() > FAR_MIN_REL * median.abs() {
                    e.far.push(Far {
                        title: format!("{} {}", row.title(), m.lane.name()),
                        value: *v,
                        median,
                        rel: d / median,
                        z: if sd > 0.0 {
                            d / sd
                        } else {
                            f64::INFINITY.copysign(d)
                        },
                    });
                }
            }
        }
    }
    let mut out: Vec<GpuVerdict<'a>> = by_gpu.into_values().filter(|v| !v.far.is_empty()).collect();
    for v in &mut out {
        v.far.sort_by(|a, b| b.rel.abs().total_cmp(&a.rel.abs()));
    }
    out.sort_by(|a, b| b.far[0].rel.abs().total_cmp(&a.far[0].rel.abs()));
    out
}

/// The node folder a result set came from, by path.
fn node_of<'n>(sets: &[ResultSet], set: usize, nodes: &'n [NodeFolder]) -> Option<&'n NodeFolder> {
    let p = &sets.get(set)?.path;
    nodes.iter().find(|n| n.results.iter().any(|r| r == p))
}

/// The fleet section: the GPUs far from their group first, then each group's distributions.
/// `None` when the runs come from fewer than [`FLEET_MIN_MACHINES`] machines.
pub(crate) fn fleet_section(sets: &[ResultSet], nodes: &[NodeFolder]) -> Option<String> {
    let hosts: BTreeSet<&str> = sets
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.machine.host_name.as_str()))
        .collect();
    if hosts.len() < FLEET_MIN_MACHINES {
        return None;
    }
    let g = grouped(sets);
    let far = far_gpus(&g);
    let mut out = String::new();
    section(&mut out, "fleet", "Fleet: GPUs far from their group");
    para(
        &mut out,
        &format!(
            "{} machines, {} group(s) of the same GPU model and PCIe link. A GPU's median bandwidth in a case is far from its group when it differs from the group's median by more than {FAR_MADS} scaled MADs (1.4826 × median absolute deviation) and by more than {:.0}%; groups need at least {FLEET_MIN_MACHINES} GPUs. {} GPU(s) are far in at least one case; the farthest first.",
            hosts.len(),
            g.len(),
            FAR_MIN_REL * 100.0,
            far.len()
        ),
    );
    far_table(&mut out, sets, nodes, &far);
    distribution_table(&mut out, &g);
    out.push_str("</section>\n");
    Some(out)
}

fn far_table(out: &mut String, sets: &[ResultSet], nodes: &[NodeFolder], far: &[GpuVerdict<'_>]) {
    if far.is_empty() {
        para(out, "No GPU is far from its group.");
        return;
    }
    let rows: Vec<Vec<String>> = far
        .iter()
        .take(MAX_FAR_ROWS)
        .map(|v| {
            let f = &v.far[0];
            let node = node_of(sets, v.set, nodes);
            let check = node
                .and_then(|n| n.steps.as_ref())
                .map_or_else(|| "—".into(), |s| step_word(s.check));
            vec![
                node.map_or_else(|| "—".into(), |n| n.name.clone()),
                v.gpu.host.to_string(),
                v.gpu.device.map_or_else(|| "0".into(), |d| d.to_string()),
                v.group.model.to_string(),
                if v.group.link.is_empty() {
                    "unknown".into()
                } else {
                    v.group.link.to_string()
                },
                check,
                f.title.clone(),
                format!("{:.2}", f.value),
                format!("{:.2}", f.median),
                format!("{:+.1}", f.rel * 100.0),
                if f.z.is_finite() {
                    format!("{:+.1}", f.z)
                } else {
                    "MAD 0".into()
                },
                format!("{} of {}", v.far.len(), v.measures),
            ]
        })
        .collect();
    let head = [
        "node",
        "host",
        "GPU",
        "model",
        "PCIe link",
        "check",
        "farthest case",
        "GB/s",
        "group median GB/s",
        "off by %",
        "scaled MADs",
        "cases far",
    ];
    out.push_str(&table(&head, &rows, &|_| "failed"));
    if far.len() > MAX_FAR_ROWS {
        para(
            out,
            &format!(
                "… and {} more GPUs far from their group.",
                far.len() - MAX_FAR_ROWS
            ),
        );
    }
}

fn distribution_table(out: &mut String, g: &Grouped<'_>) {
    let _ = writeln!(
        out,
        "<h3>{}</h3>",
        escape("Each group's distribution, per case")
    );
    let mut rows = Vec::new();
    let mut left = 0usize;
    for (group, measures) in g {
        for (m, vals) in measures {
            let Ok(s) = Sample::new(vals.iter().map(|v| v.1).collect()) else {
                continue;
            };
            if rows.len() >= MAX_DISTRIBUTION_ROWS {
                left += 1;
                continue;
            }
            let title = vals.first().map_or_else(String::new, |v| v.2.title());
            rows.push(vec![
                group.model.to_string(),
                if group.link.is_empty() {
                    "unknown".into()
                } else {
                    group.link.to_string()
                },
                format!("{} / {title} {}", m.scenario, m.lane.name()),
                s.len().to_string(),
                format!("{:.2}", s.quantile(0.0)),
                format!("{:.2}", s.quantile(0.1)),
                format!("{:.2}", s.median()),
                format!("{:.2}", s.quantile(0.9)),
                format!("{:.2}", s.quantile(1.0)),
                format!("{:.1}", 100.0 * MAD_SCALE * s.mad() / s.median().max(1e-12)),
            ]);
        }
    }
    let head = [
        "model",
        "PCIe link",
        "case",
        "GPUs",
        "min GB/s",
        "p10",
        "median",
        "p90",
        "max",
        "scaled MAD %",
    ];
    out.push_str(&table(&head, &rows, &|_| ""));
    if left > 0 {
        para(
            out,
            &format!("… {left} more cases: every row is in the results CSVs."),
        );
    }
}
