//! The report's table of the settings that change the answer: one row per setting, one column
//! per run, each cell the value (or `unavailable: …`) and its source. Runs whose settings are all
//! the same share one column (`A–D (identical)`); past a few columns, or when the runs differ in
//! few settings, each row gives the value the runs agree on, or each value with the runs that
//! have it.

use super::html;
use super::machine_line::runs_named;
use crate::platform::SettingRow;
use crate::results::ResultSet;

/// Most columns of runs the table has. Past it, or when the runs differ in few settings (a
/// quarter or less), each row gives the value its runs agree on, or its values each with the
/// runs that have it.
const MAX_RUN_COLUMNS: usize = 4;

/// The settings table, or nothing when no run recorded settings.
pub fn settings_table(sets: &[ResultSet], labels: &[String]) -> String {
    let recorded: Vec<Option<Vec<SettingRow>>> = sets
        .iter()
        .map(|s| {
            let settings = s.sidecar.as_ref()?.machine.settings.as_ref()?;
            Some(settings.rows())
        })
        .collect();
    let Some(keys) = recorded.iter().flatten().next() else {
        return String::new();
    };
    let columns: Vec<Vec<String>> = recorded
        .iter()
        .map(|r| (0..keys.len()).map(|i| cell(r.as_deref(), i)).collect())
        .collect();
    let groups = identical_columns(&columns);
    // Rows on which the runs disagree: when they are few, one value column says the rest once.
    let differing = (0..keys.len())
        .filter(|i| columns.iter().any(|c| c[*i] != columns[0][*i]))
        .count();
    let few_differ = differing * 4 <= keys.len();
    let table = if groups.len() == 1 || (groups.len() <= MAX_RUN_COLUMNS && !few_differ) {
        by_column(keys, &groups, labels)
    } else {
        by_row(keys, &recorded, labels)
    };
    format!("<h3>Settings that change the answer</h3>\n{table}")
}

/// One column per group of runs with identical settings (`A–D (identical)`).
fn by_column(
    keys: &[SettingRow],
    groups: &[(Vec<usize>, &Vec<String>)],
    labels: &[String],
) -> String {
    let heads: Vec<String> = groups
        .iter()
        .map(|(runs, _)| match runs.as_slice() {
            [one] => labels[*one].trim().to_string(),
            _ => format!("{} (identical)", runs_named(runs, labels)),
        })
        .collect();
    let mut head = vec!["setting"];
    head.extend(heads.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let mut row = vec![key.label.to_string()];
            row.extend(groups.iter().map(|(_, col)| col[i].clone()));
            row
        })
        .collect();
    html::table(&head, &rows, &|_| "")
}

/// One value column: per setting the value every run has, or each value with its runs
/// (`A, K: CPU 0 · B: CPU 1`), the source once when the runs share it.
fn by_row(keys: &[SettingRow], recorded: &[Option<Vec<SettingRow>>], labels: &[String]) -> String {
    let head = [
        "setting",
        &format!(
            "value in runs {} (where they differ, each value with its runs)",
            runs_named(&(0..recorded.len()).collect::<Vec<_>>(), labels)
        ) as &str,
    ];
    let rows: Vec<Vec<String>> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let of_run: Vec<(&str, &str)> = recorded
                .iter()
                .map(|r| match r.as_ref().and_then(|r| r.get(i)) {
                    Some(r) => (r.value.as_str(), r.source.as_str()),
                    None => ("not recorded", ""),
                })
                .collect();
            vec![key.label.to_string(), values_with_runs(&of_run, labels)]
        })
        .collect();
    html::table(&head, &rows, &|_| "")
}

/// The cell of [`by_row`] from each run's (value, source).
fn values_with_runs(of_run: &[(&str, &str)], labels: &[String]) -> String {
    let mut values: Vec<(&str, Vec<usize>)> = Vec::new();
    for (run, (value, _)) in of_run.iter().enumerate() {
        match values.iter_mut().find(|(v, _)| v == value) {
            Some((_, runs)) => runs.push(run),
            None => values.push((value, vec![run])),
        }
    }
    let mut text = match values.as_slice() {
        [(one, _)] => one.to_string(),
        _ => values
            .iter()
            .map(|(v, runs)| format!("{}: {v}", runs_named(runs, labels)))
            .collect::<Vec<_>>()
            .join(" · "),
    };
    let first = of_run.first().map_or("", |r| r.1);
    if !first.is_empty() && of_run.iter().all(|r| r.1 == first) {
        text.push_str(&format!(" [{first}]"));
    }
    text
}

/// Row `i` of a run's settings: the value and its source, or `not recorded`.
fn cell(rows: Option<&[SettingRow]>, i: usize) -> String {
    match rows.and_then(|r| r.get(i)) {
        Some(r) if r.source.is_empty() => r.value.clone(),
        Some(r) => format!("{} [{}]", r.value, r.source),
        None => "not recorded".into(),
    }
}

/// The distinct columns in first-seen order, each with the runs (ascending) that have it.
fn identical_columns(columns: &[Vec<String>]) -> Vec<(Vec<usize>, &Vec<String>)> {
    let mut groups: Vec<(Vec<usize>, &Vec<String>)> = Vec::new();
    for (run, col) in columns.iter().enumerate() {
        match groups.iter_mut().find(|(_, c)| *c == col) {
            Some((runs, _)) => runs.push(run),
            None => groups.push((vec![run], col)),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_runs_share_a_column() {
        let a = vec!["x".to_string(), "y".to_string()];
        let b = vec!["x".to_string(), "z".to_string()];
        let cols = vec![a.clone(), a.clone(), b.clone(), a.clone()];
        let groups = identical_columns(&cols);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].0, [0, 1, 3]);
        assert_eq!(groups[1].0, [2]);
    }
}
