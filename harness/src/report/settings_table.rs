//! The report's table of the settings that change the answer: one row per setting, one column
//! per run, each cell the value (or `unavailable: …`) and, on hover, its source.

use super::html;
use crate::results::ResultSet;

/// The settings table, or nothing when no run recorded settings.
pub fn settings_table(sets: &[ResultSet], labels: &[String]) -> String {
    let recorded: Vec<Option<Vec<crate::platform::SettingRow>>> = sets
        .iter()
        .map(|s| {
            let settings = s.sidecar.as_ref()?.machine.settings.as_ref()?;
            Some(settings.rows())
        })
        .collect();
    let Some(keys) = recorded.iter().flatten().next() else {
        return String::new();
    };
    let mut head = vec!["setting"];
    head.extend(labels.iter().map(|l| l.trim()));
    let rows: Vec<Vec<String>> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let mut row = vec![key.label.to_string()];
            row.extend(recorded.iter().map(|r| match r {
                Some(rows) => {
                    let r = &rows[i];
                    if r.source.is_empty() {
                        r.value.clone()
                    } else {
                        format!("{} [{}]", r.value, r.source)
                    }
                }
                None => "not recorded".into(),
            }));
            row
        })
        .collect();
    format!(
        "<h3>Settings that change the answer</h3>\n{}",
        html::table(&head, &rows, &|_| "")
    )
}
