//! `pinscope check` and the settings record through the real binary, on a machine without a
//! GPU (where a driver is present these tests say so and do not apply; the GPU run is in
//! `scripts/publish.sh check`).

use crate::common;

use common::*;
use predicates::prelude::*;

const CHECKS: [&str; 9] = [
    "link_under_load",
    "pinned_h2d",
    "pinned_d2h",
    "data_verification",
    "pinned_numa",
    "clocks_under_load",
    "wsl2_pinned_ceiling",
    "copy_latency",
    "pin_budget",
];

#[test]
fn check_without_a_gpu_exits_3_and_names_every_check_as_not_run() {
    without_driver("check_without_a_gpu_exits_3", || {
        let out = pinscope().arg("check").output().expect("runs");
        assert_eq!(out.status.code(), Some(3));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("no usable GPU"), "{text}");
        for title in [
            "PCIe link during a transfer",
            "data verification",
            "4-byte copy latency",
        ] {
            assert!(
                text.lines()
                    .any(|l| l.contains("not run") && l.contains(title)),
                "{title}: {text}"
            );
        }
        assert!(text.contains("verdict: not run (exit 3)"), "{text}");
        assert!(text.contains("pin budget"), "{text}");
        assert!(text.contains("reason: no GPU: "), "{text}");
        assert!(no_panic().eval(&String::from_utf8_lossy(&out.stderr)));
    });
}

#[test]
fn check_json_without_a_gpu_is_valid_json_with_every_gpu_check_an_error() {
    without_driver("check_json_without_a_gpu", || {
        let out = pinscope()
            .args(["check", "--json", "--min-h2d", "48"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(3));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("only JSON");
        assert_eq!(v["severity"], "error");
        assert_eq!(v["exit_code"], 3);
        assert!(v["gpu_unavailable"].as_str().is_some_and(|w| !w.is_empty()));
        assert!(
            v["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("no GPU: "))
        );
        assert_eq!(v["thresholds"]["min_h2d_gbs"], 48.0);
        let checks = v["checks"].as_array().expect("checks");
        let names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(names, CHECKS);
        for c in &checks[..8] {
            assert_eq!(c["severity"], "error", "{c}");
            assert!(
                c["advice"]
                    .as_str()
                    .is_some_and(|a| a.contains("no usable GPU"))
            );
        }
        // The pin budget needs no GPU: a reading on Linux, or why not.
        let budget = &checks[8];
        assert!(["pass", "warn", "error"].contains(&budget["severity"].as_str().unwrap_or("")));
    });
}

/// The operators' document: every field present and of its type, whatever the machine.
#[test]
fn check_json_has_the_verdict_schema() {
    without_driver("check_json_has_the_verdict_schema", || {
        let out = pinscope()
            .args(["check", "--json", "--quick"])
            .output()
            .expect("runs");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("only JSON");
        assert_eq!(v["schema_version"], 1);
        assert!(v["host"].as_str().is_some_and(|h| !h.is_empty()));
        let time = v["time"].as_str().expect("time");
        assert!(chrono::DateTime::parse_from_rfc3339(time).is_ok(), "{time}");
        assert!(v["gpus"].is_array());
        for g in v["gpus"].as_array().expect("gpus") {
            assert!(g["index"].is_u64() && g["name"].is_string() && g["uuid"].is_string());
        }
        let severities = ["skip", "pass", "warn", "fail", "error"];
        assert!(severities[1..].contains(&v["severity"].as_str().expect("severity")));
        let reason = v["reason"].as_str().expect("reason");
        assert!(!reason.is_empty() && reason.len() <= 120 && !reason.contains('\n'));
        assert!(reason.chars().all(|c| (' '..='~').contains(&c)), "{reason}");
        assert_eq!(v["mode"], "quick");
        assert!(v["seconds"].is_f64());
        for c in v["checks"].as_array().expect("checks") {
            let keys: Vec<&String> = c.as_object().expect("entry").keys().collect();
            assert_eq!(
                keys,
                ["advice", "name", "severity", "threshold", "unit", "value"],
                "{c}"
            );
            assert!(severities.contains(&c["severity"].as_str().expect("severity")));
            assert!(c["name"].is_string() && c["threshold"].is_string() && c["advice"].is_string());
            assert_eq!(c["unit"].is_null(), c["value"].is_null(), "{c}");
        }
        let b = &v["pin_budget"];
        assert!(b["predictor"].is_string() && b["rule"].is_string(), "{b}");
        assert!(
            b["host_alloc_bytes"].is_u64() || b["unavailable"].is_string(),
            "{b}"
        );
        // The predictor's count is of memory mappings; the old key is no longer written.
        assert!(b.get("registrations").is_none(), "{b}");
        if cfg!(target_os = "linux") {
            assert!(b["mappings"].as_u64().is_some_and(|n| n > 0), "{b}");
        } else {
            assert!(b["mappings"].is_null(), "{b}");
        }
        for limit in [
            "mem_available",
            "memlock",
            "cgroup_max",
            "max_map_count",
            "dxgi_nonlocal_budget",
            "commit_limit",
        ] {
            let l = &b["limits"][limit];
            assert!(
                l["source"].is_object() || l["unavailable"].is_string(),
                "{limit}: {l}"
            );
        }
        let code = out.status.code().expect("exit code");
        let expected = match v["severity"].as_str() {
            Some("fail") => 1,
            Some("error") => 3,
            _ => 0,
        };
        assert_eq!(code, expected);
    });
}

#[test]
fn check_reason_prints_one_line() {
    without_driver("check_reason_prints_one_line", || {
        let out = pinscope()
            .args(["check", "--reason"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(3));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.starts_with("no GPU: "), "{text}");
    });
}

#[test]
fn check_refuses_thresholds_that_are_not_numbers_before_looking_for_a_gpu() {
    pinscope()
        .args(["check", "--min-h2d=-5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--min-h2d -5 is not a bandwidth"));
    pinscope()
        .args(["check", "--min-link-share", "1.5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a share"));
    pinscope()
        .args(["check", "--min-d2h", "NaN"])
        .assert()
        .code(2)
        .stderr(no_panic());
}

#[test]
fn info_json_carries_the_settings_with_sources_or_reasons() {
    without_driver("info_json_carries_the_settings", || {
        let out = pinscope().args(["info", "--json"]).output().expect("runs");
        assert_eq!(out.status.code(), Some(3));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
        let s = &v["machine"]["settings"];
        let reason = |key: &str| {
            s[key]["unavailable"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        if cfg!(windows) {
            assert!(
                reason("kernel_release").contains("Linux and WSL2 only"),
                "{s}"
            );
            // Read from the registry, or the reason it could not be.
            let build = &s["windows_build"];
            assert!(build["source"]["registry"].is_string() || build["unavailable"].is_string());
        } else {
            assert_eq!(
                s["kernel_release"]["source"]["file"],
                "/proc/sys/kernel/osrelease"
            );
            assert!(s["mem_total"]["value"].as_u64().is_some_and(|b| b > 0));
            assert!(reason("hags").contains("Windows only"), "{s}");
        }
        assert_eq!(
            s["cuda_visible_devices"]["source"]["env"],
            "CUDA_VISIBLE_DEVICES"
        );
        assert_eq!(reason("bar1_size"), "no usable GPU");
        let budget = &v["pin_budget"];
        assert!(
            budget["rule"].as_str().is_some_and(|r| r.contains("10%")),
            "{budget}"
        );
        if cfg!(target_os = "linux") {
            assert_eq!(
                budget["limits"]["mem_available"]["source"]["file"],
                "/proc/meminfo"
            );
            assert!(budget["host_alloc_bytes"].as_u64().is_some_and(|b| b > 0));
            assert!(
                budget["mappings"].as_u64().is_some_and(|n| n > 0),
                "{budget}"
            );
        }
    });
}

#[test]
fn info_prints_each_setting_with_its_source() {
    // On Linux `MemTotal` has a value; elsewhere it is named among the settings this OS lacks.
    let mem_total = if cfg!(target_os = "linux") {
        "MemTotal: "
    } else {
        "MemTotal"
    };
    // The predictor's count of new memory mappings is a Linux reading.
    let mappings = if cfg!(target_os = "linux") {
        "  mappings: "
    } else {
        "pin budget"
    };
    without_driver("info_prints_each_setting", || {
        pinscope()
            .arg("info")
            .env("CUDA_DEVICE_MAX_CONNECTIONS", "8")
            .assert()
            .code(3)
            .stdout(predicate::str::contains("settings that change the answer:"))
            .stdout(predicate::str::contains(
                "CUDA_DEVICE_MAX_CONNECTIONS: `8`  [environment CUDA_DEVICE_MAX_CONNECTIONS]",
            ))
            .stdout(predicate::str::contains(mem_total))
            .stdout(predicate::str::contains(mappings));
    });
}

/// Copies a published run (CSV, samples, sidecar) to `dir` as `name`, with `settings` (made up
/// for the test: SYNTHETIC values, not a measurement) written into its sidecar.
fn run_with_settings(dir: &std::path::Path, name: &str, settings: serde_json::Value) -> String {
    let from = repo().join("reports/h200/20261203-095939-register-vs-alloc-vm");
    let to = dir.join(name);
    for ext in ["csv", "samples.csv"] {
        std::fs::copy(from.with_extension(ext), to.with_extension(ext)).expect("copy");
    }
    let text = std::fs::read_to_string(from.with_extension("json")).expect("sidecar");
    let mut sidecar: serde_json::Value = serde_json::from_str(&text).expect("json");
    sidecar["machine"]["settings"] = settings;
    std::fs::write(to.with_extension("json"), sidecar.to_string()).expect("write");
    to.with_extension("csv").display().to_string()
}

fn width_under_load(width: u32) -> serde_json::Value {
    let nvml = |call: &str| serde_json::json!({"nvml": call});
    serde_json::json!({
        "pcie_width_under_load": {"value": width, "source": nvml("nvmlDeviceGetCurrPcieLinkWidth (during a transfer)")},
        "pcie_gen_under_load": {"value": 5, "source": nvml("nvmlDeviceGetCurrPcieLinkGeneration (during a transfer)")},
        "pcie_gen_max": {"value": 5, "source": nvml("nvmlDeviceGetMaxPcieLinkGeneration")},
        "pcie_width_max": {"value": 16, "source": nvml("nvmlDeviceGetMaxPcieLinkWidth")},
        "cuda_launch_blocking": {"value": "unset", "source": {"env": "CUDA_LAUNCH_BLOCKING"}},
    })
}

#[test]
fn compare_names_a_setting_that_differs_and_report_shows_the_settings_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = run_with_settings(dir.path(), "a", width_under_load(16));
    let b = run_with_settings(dir.path(), "b", width_under_load(8));
    let out = pinscope().args(["compare", &a, &b]).output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("differs — PCIe width, during a transfer: A=16  B=8"),
        "{text}"
    );
    assert!(!text.contains("differs — CUDA_LAUNCH_BLOCKING"), "{text}");
    let html = dir.path().join("r.html");
    pinscope()
        .args(["report", &a, &b, "-o"])
        .arg(&html)
        .assert()
        .code(0);
    let page = std::fs::read_to_string(&html).expect("report");
    assert!(page.contains("Settings that change the answer"));
    assert!(page.contains("PCIe width, during a transfer"));
    // The answer section carries the check verdicts the recorded settings decide.
    assert!(
        page.contains("PCIe link during a transfer: pass — gen5x16"),
        "run A's link"
    );
    assert!(
        page.contains("PCIe link during a transfer: fail — gen5x8"),
        "run B's link"
    );
}

#[test]
fn compare_says_when_a_run_recorded_no_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = run_with_settings(dir.path(), "a", width_under_load(16));
    let b = run_with_settings(dir.path(), "b", serde_json::Value::Null);
    let out = pinscope().args(["compare", &a, &b]).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("are not compared: run(s) B recorded none"),
        "{text}"
    );
    assert!(!text.contains("differs — PCIe width"), "{text}");
}
