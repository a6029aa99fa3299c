//! The fleet view: runs of many machines, made from a real published run (host names changed,
//! one GPU planted slow), and a page for scenarios with more rows than a page lists.

use crate::common;
use crate::devfixture;

use pinscope::report;
use pinscope::results::{NodeFolder, NodeInfo, NodeSteps, ResultSet};
use std::path::{Path, PathBuf};

fn headline() -> ResultSet {
    ResultSet::load(&common::published_run("h200", "h200-headline")).expect("loads")
}

/// `n` copies of the published run as machines `node-000`…; `slow` gets `factor` × its
/// bandwidth in every case.
fn fleet(n: usize, slow: usize, factor: f64) -> Vec<ResultSet> {
    let base = headline();
    (0..n)
        .map(|i| {
            let mut s = base.clone();
            s.path = PathBuf::from(format!("node-{i:03}/run.csv"));
            for r in &mut s.rows {
                std::sync::Arc::make_mut(&mut r.machine).host_name = format!("node-{i:03}");
                // A little spread between machines, as real fleets have (±0.5%).
                let jitter = 1.0 + ((i * 7919) % 11) as f64 * 0.001 - 0.005;
                let f = if i == slow { factor } else { jitter };
                r.bw_median_gbs = r.bw_median_gbs.map(|v| v * f);
            }
            s.samples = Default::default();
            s
        })
        .collect()
}

fn section<'p>(page: &'p str, id: &str) -> &'p str {
    let start = page
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = page[start..].find("</section>").expect("section end") + start;
    &page[start..end]
}

#[test]
fn the_slow_gpu_is_named_first_with_its_link_and_check() {
    let sets = fleet(40, 17, 0.8);
    let nodes = vec![NodeFolder {
        name: "node-017".into(),
        path: PathBuf::from("node-017"),
        steps: Some(NodeSteps {
            node: "node-017".into(),
            info: Some(0),
            check: Some(1),
            run: Some(0),
            slurm_gpus: Some(8),
        }),
        info: NodeInfo::default(),
        results: vec![PathBuf::from("node-017/run.csv")],
        problems: Vec::new(),
    }];
    let page = report::render_fleet_report(&sets, &nodes, &[], "fleet").expect("renders");
    let fleet = section(&page, "fleet");
    assert!(fleet.contains("40 machines, 1 group(s)"), "{fleet}");
    assert!(fleet.contains("1 GPU(s) are far"), "{fleet}");
    let first_row = fleet.split("<tbody>").nth(1).expect("a table");
    let first_row = first_row.split("</tr>").next().expect("a row");
    for want in [
        "node-017",
        "NVIDIA H200",
        "gen5x16",
        "a check failed",
        "-20.0",
    ] {
        assert!(first_row.contains(want), "{want} missing from {first_row}");
    }
    // The fleet section comes before the per-run answers.
    assert!(page.find("id=\"fleet\"") < page.find("id=\"answer\""));
}

#[test]
fn a_fleet_of_equal_gpus_names_none_and_few_machines_get_no_fleet_view() {
    let page = report::render_report(&fleet(12, usize::MAX, 1.0), &[], "fleet").expect("renders");
    assert!(section(&page, "fleet").contains("No GPU is far from its group."));
    let page = report::render_report(&fleet(2, 0, 0.5), &[], "two").expect("renders");
    assert!(!page.contains("id=\"fleet\""));
}

#[test]
fn many_rows_are_summarised_not_listed() {
    let set = devfixture::big_set(6_000, 2);
    let page = report::render_report(std::slice::from_ref(&set), &[], "big").expect("renders");
    let summary = section(&page, "summary");
    assert!(
        summary.contains("more than the 2000 a page lists"),
        "{summary}"
    );
    assert!(summary.contains("href=\"synthetic-big.csv\""));
    // One line per strategy, lane and size rather than one per row.
    let lines = summary.matches("<tr>").count();
    assert!(lines < 6_000 / 2, "{lines} table lines");
    assert!(page.len() < 2_000_000, "page is {} bytes", page.len());
}

/// Writes node folder `node` as the Slurm script leaves it: the published run with its host and
/// run id changed, its bandwidth (rows and samples) times `factor`, and `steps.json`.
fn write_node(fleet: &Path, node: &str, factor: f64, check: i32) {
    let src = headline().path;
    let dir = fleet.join(node);
    std::fs::create_dir_all(&dir).expect("node folder");
    let mut rows = pinscope::results::read_rows(&src).expect("rows");
    for r in &mut rows {
        std::sync::Arc::make_mut(&mut r.machine).host_name = node.to_string();
        r.run_id = format!("synthetic-{node}").into();
        for v in [&mut r.bw_median_gbs, &mut r.bw_min_gbs, &mut r.bw_max_gbs] {
            *v = v.map(|v| v * factor);
        }
    }
    let mut samples =
        pinscope::results::read_samples(&pinscope::results::samples_path(&src)).expect("samples");
    for s in samples
        .iter_mut()
        .filter(|s| s.series == pinscope::results::Series::Bandwidth)
    {
        s.value *= factor;
    }
    let out = dir.join("run.csv");
    let mut w = pinscope::results::ResultsWriter::create(&out).expect("create");
    w.write_case(&rows, &samples).expect("write");
    drop(w);
    let sidecar = std::fs::read_to_string(pinscope::results::sidecar_path(&src)).expect("sidecar");
    let mut json: serde_json::Value = serde_json::from_str(&sidecar).expect("json");
    json["run_id"] = format!("synthetic-{node}").into();
    json["machine"]["host_name"] = node.into();
    json["SYNTHETIC"] = "a published run copied per node by fleet.rs: not a measurement".into();
    std::fs::write(dir.join("run.json"), json.to_string()).expect("sidecar");
    let steps = format!(r#"{{"node":"{node}","info":0,"check":{check},"run":0}}"#);
    std::fs::write(dir.join("steps.json"), steps).expect("steps");
}

/// The done-when of the fleet view, at a size a test can afford (scripts/fleet-timings.sh runs
/// the same with 1 000 nodes and times it): node folders on disk made from the published run,
/// one GPU planted at 0.8 x its bandwidth; `pinscope report FOLDER` names it first.
#[test]
fn report_over_a_fleet_folder_names_the_planted_slow_gpu_first() {
    let d = tempfile::Builder::new()
        .prefix("synthetic-fleet")
        .tempdir()
        .expect("tempdir");
    let fleet = d.path().join("fleet");
    for i in 0..24 {
        let node = format!("node-{i:03}");
        // A little spread between machines, as real fleets have (±0.5%).
        let jitter = 1.0 + ((i * 7919) % 11) as f64 * 0.001 - 0.005;
        let (factor, check) = if i == 13 { (0.8, 1) } else { (jitter, 0) };
        write_node(&fleet, &node, factor, check);
    }
    let page = d.path().join("fleet.html");
    // Started directly, not through cargo's runner (under Wine that is a Linux script).
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_pinscope"))
        .args(["report", "-q", "-o"])
        .arg(&page)
        .arg(&fleet)
        .assert()
        .success();
    let page = std::fs::read_to_string(&page).expect("page");
    let fleet = section(&page, "fleet");
    let first_row = fleet.split("<tbody>").nth(1).expect("a table");
    let first_row = first_row.split("</tr>").next().expect("a row");
    for want in ["node-013", "NVIDIA H200", "gen5x16", "a check failed"] {
        assert!(first_row.contains(want), "{want} missing from {first_row}");
    }
    assert!(fleet.contains("1 GPU(s) are far"), "{fleet}");
    assert!(
        page.contains("SYNTHETIC"),
        "the page says its inputs are synthetic"
    );
}

/// The published run's first `lines` lines (its header is line 1) and, when `cut` is given,
/// the first `cut` bytes of the next line: what a node killed while writing leaves.
fn head_of(src: &Path, lines: usize, cut: Option<usize>) -> Vec<u8> {
    let bytes = std::fs::read(src).expect("published file");
    let mut end = 0;
    for _ in 0..lines {
        end += bytes[end..]
            .iter()
            .position(|b| *b == b'\n')
            .expect("a line")
            + 1;
    }
    end += cut.unwrap_or(0);
    bytes[..end].to_vec()
}

/// A node killed before its first case finished (the run writes the header first: a results
/// CSV and samples file holding only their headers), and one killed while writing its fifth
/// row: `report` over the fleet still writes the page, lists both with their reason, names them
/// on stderr and exits 0; the live nodes are reported.
#[test]
fn a_fleet_with_a_header_only_node_and_a_truncated_node_still_gets_its_page() {
    let d = tempfile::Builder::new()
        .prefix("synthetic-fleet")
        .tempdir()
        .expect("tempdir");
    let fleet = d.path().join("fleet");
    for i in 0..4 {
        write_node(&fleet, &format!("node-{i:03}"), 1.0, 0);
    }
    let src = headline().path;
    let samples = pinscope::results::samples_path(&src);
    let write = |node: &str, csv: Vec<u8>, samples: Vec<u8>| {
        let dir = fleet.join(node);
        std::fs::write(dir.join("run.csv"), csv).expect("csv");
        std::fs::write(dir.join("run.samples.csv"), samples).expect("samples");
    };
    write(
        "node-001",
        head_of(&src, 1, None),
        head_of(&samples, 1, None),
    );
    write(
        "node-002",
        head_of(&src, 5, Some(40)),
        std::fs::read(&samples).expect("samples"),
    );
    let page = fleet.join("index.html");
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_pinscope"))
        .args(["report", "-o"])
        .arg(&page)
        .arg(&fleet)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("warning: 2 results file(s) of the fleet left out")
            && stderr.contains("node-001/run.csv (no results: the run finished no case)")
            && stderr.contains("node-002/run.csv (truncated at line 6"),
        "{stderr}"
    );
    let page = std::fs::read_to_string(&page).expect("the page is written");
    let nodes = section(&page, "nodes");
    assert!(
        nodes.contains("4 node(s): 2 wrote results, 2 left results that cannot be used"),
        "{nodes}"
    );
    let row = |node: &str| {
        let start = nodes.find(&format!("<td>{node}</td>")).expect("node row");
        nodes[start..]
            .split("</tr>")
            .next()
            .expect("row")
            .to_string()
    };
    assert!(
        row("node-001").contains("run.csv left out: no results: the run finished no case"),
        "{}",
        row("node-001")
    );
    assert!(
        row("node-002").contains(
            "run.csv left out: truncated at line 6: the node stopped while the run was writing it"
        ),
        "{}",
        row("node-002")
    );
    // The nodes that finished are reported, by name.
    let answer = section(&page, "answer");
    assert!(
        answer.contains("Runs node-000, node-003 (2 runs with this answer"),
        "{answer}"
    );
}

/// `n` runs equal to the published one but for their host, each from node folder `node-NNN`.
fn equal_nodes(n: usize) -> (Vec<ResultSet>, Vec<NodeFolder>) {
    let base = headline();
    (0..n)
        .map(|i| {
            let name = format!("node-{i:03}");
            let mut s = base.clone();
            s.path = PathBuf::from(format!("{name}/run.csv"));
            for r in &mut s.rows {
                std::sync::Arc::make_mut(&mut r.machine).host_name = name.clone();
            }
            let node = NodeFolder {
                name: name.clone(),
                path: PathBuf::from(&name),
                steps: None,
                info: NodeInfo::default(),
                results: vec![s.path.clone()],
                problems: Vec::new(),
            };
            (s, node)
        })
        .unzip()
}

/// 64 nodes with the same answer get it once, under one heading naming every node; a node
/// whose answer differs gets its own, by name. The answer section stays about one run's size.
#[test]
fn equal_answers_of_a_64_node_fleet_collapse_into_one_naming_the_nodes() {
    let one = report::render_report(std::slice::from_ref(&headline()), &[], "one").expect("page");
    let (mut sets, nodes) = equal_nodes(64);
    // Node 17 is slow, and its CSV names its host as `--anonymize` writes it.
    for r in &mut sets[17].rows {
        r.bw_median_gbs = r.bw_median_gbs.map(|v| v * 0.8);
        std::sync::Arc::make_mut(&mut r.machine).host_name = "host-5f3a".into();
    }
    let page = report::render_fleet_report(&sets, &nodes, &[], "fleet").expect("page");
    let answer = section(&page, "answer");
    assert_eq!(
        answer.matches("<ul class=\"answer\"").count(),
        2,
        "{answer}"
    );
    let names: Vec<String> = (0..64)
        .filter(|i| *i != 17)
        .map(|i| format!("node-{i:03}"))
        .collect();
    let heading = format!(
        "<p class=\"run\">Runs {} (63 runs with this answer, ",
        names.join(", ")
    );
    assert!(answer.contains(&heading), "{answer}");
    assert!(
        answer.contains("<p class=\"run\">Run node-017 (host host-5f3a) ("),
        "{answer}"
    );
    // The far table joins the node and the host its CSV names.
    let far = section(&page, "fleet");
    let first_row = far.split("<tbody>").nth(1).expect("a table");
    let first_row = first_row.split("</tr>").next().expect("a row");
    assert!(
        first_row.contains("<td>node-017</td><td>host-5f3a</td>"),
        "{first_row}"
    );
    assert!(!answer.contains("Run A") && !answer.contains("R27"));
    let single = section(&one, "answer").len();
    assert!(
        answer.len() < 3 * single,
        "answer section {} B, one run's {single} B",
        answer.len()
    );
}

/// Where Slurm manages GPUs and constrains devices, a job that asks for no GPU sees none: the
/// node table says Slurm gave the job no GPU on that node, beside what `info` said.
#[test]
fn a_node_given_no_gpu_by_slurm_says_so() {
    let d = tempfile::tempdir().expect("tempdir");
    let fleet = d.path().join("fleet");
    let node = fleet.join("gpu-node-01");
    std::fs::create_dir_all(&node).expect("node folder");
    std::fs::write(
        node.join("steps.json"),
        r#"{"node":"gpu-node-01","info":3,"check":3,"run":3,"slurm_gpus":0}"#,
    )
    .expect("steps");
    std::fs::write(
        node.join("info.json"),
        r#"{"machine":null,"gpu_unavailable":"no CUDA device: cuInit failed with CUDA_ERROR_NO_DEVICE"}"#,
    )
    .expect("info");
    let inputs = pinscope::results::expand_inputs(std::slice::from_ref(&fleet)).expect("inputs");
    assert_eq!(
        inputs.nodes[0].steps.as_ref().expect("steps").slurm_gpus,
        Some(0)
    );
    let page = report::render_fleet_report(&[], &inputs.nodes, &[], "fleet").expect("page");
    let nodes = section(&page, "nodes");
    assert!(
        nodes.contains("no GPU: no CUDA device: cuInit failed with CUDA_ERROR_NO_DEVICE (Slurm gave this job no GPU on this node: where GPUs are a Slurm resource, submit with --gpus-per-node)"),
        "{nodes}"
    );
}
