//! JSON: the [`Comparison`] structure as it is (serde).

use super::{Comparison, Exporter};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, cmp: &Comparison) -> String {
        // Serialising plain data with string keys cannot fail; fall back to a JSON error object.
        let mut s = serde_json::to_string_pretty(cmp)
            .unwrap_or_else(|e| format!("{{\"error\": \"{}\"}}", e.to_string().replace('"', "'")));
        s.push('\n');
        s
    }
}
