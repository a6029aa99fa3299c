//! Reads `nvbandwidth -j` output (NVIDIA's bandwidth tool) so a report can show it as a
//! reference next to pinscope's own numbers.
//!
//! The JSON looks like `{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce",
//! "bandwidth_matrix": [["55.3137"]], "sum": 55.31, "status": "Passed", ...}], ...}}`. Matrix
//! cells are strings (`"N/A"` where a pair does not apply).

use crate::Error;
use crate::results::Lane;
use serde::Serialize;
use std::path::Path;

/// What an nvbandwidth test's number is, read from its name when the file is parsed: its
/// `*_latency_*` tests report nanoseconds, every other test GB/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NvbandwidthMeasure {
    /// GB/s over the host link (`host_to_device_*`, `device_to_host_*`, and the rest).
    HostLink,
    /// GB/s of a copy within one GPU's memory (`device_local_copy`).
    DeviceLocal,
    /// Nanoseconds per access (`host_device_latency_sm`, …): not a bandwidth.
    LatencyNs,
}

impl NvbandwidthMeasure {
    fn of(testname: &str) -> NvbandwidthMeasure {
        if testname.contains("latency") {
            NvbandwidthMeasure::LatencyNs
        } else if testname.starts_with("device_local") {
            NvbandwidthMeasure::DeviceLocal
        } else {
            NvbandwidthMeasure::HostLink
        }
    }

    /// The lane a test of this measure named `testname` moves its bytes in: inside the device,
    /// one way over the host link (`host_to_device_*`, `device_to_host_*`), or none of pinscope's
    /// lanes (the other host-link tests, latencies).
    fn lane(self, testname: &str) -> Option<Lane> {
        match self {
            NvbandwidthMeasure::DeviceLocal => Some(Lane::Device),
            NvbandwidthMeasure::LatencyNs => None,
            NvbandwidthMeasure::HostLink if testname.starts_with("host_to_device") => {
                Some(Lane::H2d)
            }
            NvbandwidthMeasure::HostLink if testname.starts_with("device_to_host") => {
                Some(Lane::D2h)
            }
            NvbandwidthMeasure::HostLink => None,
        }
    }
}

/// One nvbandwidth test case as a single reference number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvbandwidthSeries {
    /// nvbandwidth's test name, e.g. `host_to_device_memcpy_ce`.
    pub testname: String,
    /// What `bandwidth_gbs` holds: GB/s, or nanoseconds for a latency test.
    #[serde(skip)]
    pub measure: NvbandwidthMeasure,
    /// The lane its copies take, read from its name with `measure`; `None`: none of pinscope's.
    #[serde(skip)]
    pub lane: Option<Lane>,
    /// GB/s (1e9 B/s). nvbandwidth's `sum` field when present — the total over the matrix, which
    /// for a host↔single-GPU test is the one cell — otherwise the sum of the numeric matrix cells.
    pub bandwidth_gbs: f64,
    /// Every numeric matrix cell, row-major (GB/s).
    pub matrix_gbs: Vec<f64>,
    /// Buffer size in bytes when the file records it (`bufferSize`, MiB, in some versions);
    /// nvbandwidth's default is 512 MiB but it is not assumed here.
    pub buffer_size: Option<u64>,
    /// `Passed`, `Waived`, … as nvbandwidth wrote it.
    pub status: String,
    /// Source file, for tables.
    pub source: String,
}

fn bad(path: &Path, reason: String) -> Error {
    Error::BadResults {
        path: path.to_path_buf(),
        reason,
    }
}

/// Parses nvbandwidth JSON text; `path` is used in messages and as the source name.
pub fn parse(path: &Path, text: &str) -> Result<Vec<NvbandwidthSeries>, Error> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| bad(path, format!("it is not valid nvbandwidth JSON ({e})")))?;
    let root = v.get("nvbandwidth").unwrap_or(&v);
    let cases = root
        .get("testcases")
        .and_then(|t| t.as_array())
        .ok_or_else(|| {
            bad(
                path,
                "it has no `testcases` list, so it is not `nvbandwidth -j` output".into(),
            )
        })?;
    let top_buffer = root
        .get("bufferSize")
        .and_then(serde_json::Value::as_f64)
        .map(|mib| (mib * 1048576.0) as u64);
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or_else(|| bad(path, format!("test case {} has no `name`", i + 1)))?;
        let cell = |x: &serde_json::Value| -> Option<f64> {
            x.as_f64()
                .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
        };
        let matrix_gbs: Vec<f64> = c
            .get("bandwidth_matrix")
            .and_then(|m| m.as_array())
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| r.as_array())
                    .flatten()
                    .filter_map(cell)
                    .collect()
            })
            .unwrap_or_default();
        let status = c
            .get("status")
            .and_then(|s| s.as_str())
            .unwrap_or("")
            .to_string();
        let bandwidth_gbs = match c.get("sum").and_then(cell) {
            Some(s) => s,
            None if !matrix_gbs.is_empty() => matrix_gbs.iter().sum(),
            // A waived/failed test has no numbers; keep it out of the plots.
            None => continue,
        };
        let measure = NvbandwidthMeasure::of(name);
        out.push(NvbandwidthSeries {
            testname: name.to_string(),
            measure,
            lane: measure.lane(name),
            bandwidth_gbs,
            matrix_gbs,
            buffer_size: c
                .get("bufferSize")
                .and_then(serde_json::Value::as_f64)
                .map(|mib| (mib * 1048576.0) as u64)
                .or(top_buffer),
            status,
            source: path.display().to_string(),
        });
    }
    Ok(out)
}

impl NvbandwidthSeries {
    /// The direction its copies take, in a results table's lane words (empty when not one).
    pub fn lane_words(&self) -> &'static str {
        self.lane.map_or("", Lane::name)
    }

    /// Its number with its unit: `55.31 GB/s` or `1192.7 ns`.
    pub fn value_text(&self) -> String {
        match self.measure {
            NvbandwidthMeasure::LatencyNs => format!("{:.1} ns", self.bandwidth_gbs),
            _ => format!("{:.2} GB/s", self.bandwidth_gbs),
        }
    }
}

/// The bandwidth references of `measure` as (label, GB/s) for a chart's dashed lines.
pub fn reference_lines(
    refs: &[NvbandwidthSeries],
    measure: NvbandwidthMeasure,
) -> Vec<(String, f64)> {
    refs.iter()
        .filter(|r| r.measure == measure)
        .map(|r| (format!("nvbandwidth {}", r.testname), r.bandwidth_gbs))
        .collect()
}

/// Reads and parses one nvbandwidth JSON file.
pub fn load(path: &Path) -> Result<Vec<NvbandwidthSeries>, Error> {
    let bytes = crate::input::read_input(path, &crate::input::NVBANDWIDTH_JSON)?;
    let text = String::from_utf8(bytes).map_err(|_| Error::BadResults {
        path: path.to_path_buf(),
        reason: "it is not UTF-8 text, so it is not nvbandwidth JSON output".into(),
    })?;
    parse(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_names_the_file() {
        let e = parse(Path::new("nvb.json"), "{ not json").expect_err("rejected");
        assert!(e.to_string().contains("nvb.json"), "{e}");
        let e = parse(Path::new("other.json"), "{\"a\": 1}").expect_err("rejected");
        assert!(e.to_string().contains("other.json"), "{e}");
    }

    #[test]
    fn matrix_without_sum_is_summed() {
        let t = r#"{"nvbandwidth":{"testcases":[{"name":"x","bandwidth_matrix":[["1.5","N/A"],["2.5","3"]],"status":"Passed"}]}}"#;
        let s = parse(Path::new("x.json"), t).expect("parses");
        assert_eq!(s[0].bandwidth_gbs, 7.0);
        assert_eq!(s[0].matrix_gbs, vec![1.5, 2.5, 3.0]);
    }

    #[test]
    fn latency_tests_are_nanoseconds_and_never_a_bandwidth_line() {
        let t = r#"{"nvbandwidth":{"testcases":[
            {"name":"host_to_device_memcpy_ce","sum":55.4,"status":"Passed"},
            {"name":"device_local_copy","sum":2080.4,"status":"Passed"},
            {"name":"host_device_latency_sm","sum":1192.7,"status":"Passed"}]}}"#;
        let s = parse(Path::new("x.json"), t).expect("parses");
        let measures: Vec<_> = s.iter().map(|r| r.measure).collect();
        assert_eq!(
            measures,
            [
                NvbandwidthMeasure::HostLink,
                NvbandwidthMeasure::DeviceLocal,
                NvbandwidthMeasure::LatencyNs
            ]
        );
        assert_eq!(s[2].value_text(), "1192.7 ns");
        assert_eq!(s[0].value_text(), "55.40 GB/s");
        let host = reference_lines(&s, NvbandwidthMeasure::HostLink);
        assert_eq!(
            host,
            vec![("nvbandwidth host_to_device_memcpy_ce".to_string(), 55.4)]
        );
    }
}
