//! Result rows for unit tests.

use super::{Device, Lane, Row, Status};
use crate::scenario::Engine;

/// A row of a device-engine case named `label` with sweep axes `axes`.
pub fn device_row(label: &str, axes: &str, lane: Lane, status: Status, bw: Option<f64>) -> Row {
    Row {
        machine: Default::default(),
        scenario: "s".into(),
        case_label: label.into(),
        case_key: "k".into(),
        lane,
        host: None,
        engine: Engine::DeviceRead,
        size_bytes: 1 << 30,
        ring: 3,
        streams: 1,
        threads: 8,
        batch: 1,
        axes: crate::scenario::Axes::parse(axes).expect("fixture axes"),
        status,
        samples: 20,
        bw_median_gbs: bw,
        device: Some(Device::Gpu(0)),
        gpus_at_once: 1,
        ..Row::default()
    }
}
