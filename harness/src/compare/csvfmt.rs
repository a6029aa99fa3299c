//! CSV in long form: one row per case, lane and run, so spreadsheets can pivot it.

use super::{Comparison, Exporter};

pub struct CsvExporter;

fn num(v: Option<f64>) -> String {
    v.map(|v| format!("{v}")).unwrap_or_default()
}

impl Exporter for CsvExporter {
    fn render(&self, cmp: &Comparison) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut head: Vec<String> = [
            "case_key",
            "case_label",
            "scenario",
            "lane",
            "size_bytes",
            "run",
            "path",
            "status",
            "median_gbs",
            "samples",
            "ratio",
            "ci_lo",
            "ci_hi",
            "verdict",
            "host_phase",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        head.extend(cmp.accounting_columns.iter().cloned());
        // Writing to a Vec cannot fail.
        let _ = w.write_record(&head);
        for e in &cmp.entries {
            for (c, r) in e.cells.iter().zip(&cmp.runs) {
                let mut rec = vec![
                    e.case_key.clone(),
                    e.case_label.clone(),
                    e.scenario.clone(),
                    e.lane.name().to_string(),
                    e.size_bytes.to_string(),
                    r.label.clone(),
                    r.path.clone(),
                ];
                match c {
                    None => {
                        rec.push("absent".into());
                        rec.resize(head.len(), String::new());
                    }
                    Some(c) => {
                        let ch = c.change.as_ref();
                        rec.extend([
                            c.status.to_field(),
                            num(c.median_gbs),
                            c.samples.to_string(),
                            num(ch.map(|c| c.ratio)),
                            num(ch.and_then(|c| c.ci).map(|x| x.0)),
                            num(ch.and_then(|c| c.ci).map(|x| x.1)),
                            ch.map(|c| c.verdict.name().to_string()).unwrap_or_default(),
                            c.host_phase.name().to_string(),
                        ]);
                        rec.extend(c.accounting.iter().map(|v| num(*v)));
                    }
                }
                let _ = w.write_record(&rec);
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
