//! Result rows for unit tests.

use super::{Lane, Row, Status};

/// A row of a device-engine case named `label` with sweep axes `axes`.
pub fn device_row(label: &str, axes: &str, lane: Lane, status: Status, bw: Option<f64>) -> Row {
    Row {
        machine: Default::default(),
        scenario: "s".into(),
        case_label: label.into(),
        case_key: "k".into(),
        lane,
        host: "device".into(),
        flags: "none".into(),
        engine: "device-read".into(),
        direction: "h2d".into(),
        mode: "direct".into(),
        size_bytes: 1 << 30,
        ring: 3,
        streams: 1,
        threads: 8,
        batch: 1,
        axes: axes.into(),
        status,
        samples: 20,
        bw_median_gbs: bw,
        device: "0".into(),
        gpus_at_once: 1,
        ..Row::default()
    }
}
