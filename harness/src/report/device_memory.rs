//! Plain-words lines about device memory: device bandwidth, allocations past the card, pinned
//! ceilings with device memory held and pinned churn (the console summary and the report say them).

use crate::results::{Lane, Row, Status};
use crate::scenario::{CaseKey, DeviceHold, Mode};
use crate::units::{MIB, format_size};

/// The `device_hold=` value of a row's axes, if it was swept.
fn hold_axis(r: &Row) -> Option<&str> {
    r.axes.get(CaseKey::DeviceHold)
}

fn title(r: &Row) -> String {
    r.title()
}

/// One plain-words sentence: its topic (`device memory`, `past the card`, …) and what it says.
/// The console prints `topic: text`; the report puts the topic first in bold.
pub type Said = (String, String);

/// Plain-words sentences about device bandwidth, allocations past the card, pinned ceilings with
/// device memory held and pinned churn. Empty when the rows hold none of these.
pub fn answer_lines<R: std::borrow::Borrow<Row>>(rows: &[R]) -> Vec<Said> {
    let rows: Vec<&Row> = rows.iter().map(R::borrow).collect();
    let device = rows
        .iter()
        .copied()
        .filter(|r| r.lane == Lane::Device && !r.measures_time());
    let (past, within): (Vec<&Row>, Vec<&Row>) = device.partition(|r| is_past_the_card(r));
    let within: Vec<&Row> = within
        .into_iter()
        .filter(|r| r.status.is_ok() && r.bw_median_gbs.is_some())
        .collect();
    let mut out: Vec<Said> = within
        .iter()
        .map(|r| {
            let text = format!(
                "{} at {:.0} GB/s.",
                title(r),
                r.bw_median_gbs.unwrap_or(0.0)
            );
            ("device memory".to_string(), text)
        })
        .collect();
    let best_within = within
        .iter()
        .copied()
        .max_by(|a, b| a.bw_median_gbs.total_cmp_opt(b.bw_median_gbs))
        .and_then(|b| b.bw_median_gbs);
    out.extend(
        past.iter()
            .map(|r| ("past the card".to_string(), past_the_card(r, best_within))),
    );
    out.extend(rows.iter().filter_map(|r| pinned_ceiling(r)));
    out.extend(rows.iter().filter_map(|r| churn(r)));
    out
}

/// [`answer_lines`] as the console says them: `topic: text`.
pub fn console_lines(rows: &[Row]) -> Vec<String> {
    answer_lines(rows)
        .into_iter()
        .map(|(topic, text)| format!("{topic}: {text}"))
        .collect()
}

/// Whether the row's `device_hold` asks for more device memory than was free.
fn is_past_the_card(r: &Row) -> bool {
    hold_axis(r)
        .and_then(|h| DeviceHold::parse(h).ok())
        .is_some_and(DeviceHold::reaches_free)
}

/// What an allocation past the card did: failed out of memory, spilled into host memory (and how
/// much slower than the fastest device bandwidth within the card, `best_within` GB/s), was not
/// tried, or failed otherwise.
fn past_the_card(r: &Row, best_within: Option<f64>) -> String {
    match &r.status {
        Status::Failed(f) if f.is_out_of_memory() => format!(
            "{} failed with CUDA_ERROR_OUT_OF_MEMORY: CUDA did not spill device memory into host memory here.",
            title(r)
        ),
        Status::Ok => {
            let bw = r.bw_median_gbs.unwrap_or(0.0);
            let mut s = format!("{} succeeded and ran at {bw:.1} GB/s", title(r));
            if let Some(b) = best_within {
                s.push_str(&format!(
                    ", {:.0}x slower than within the card ({b:.0} GB/s): the allocation spilled into shared (host) memory.",
                    b / bw.max(1e-9)
                ));
            } else {
                s.push('.');
            }
            s
        }
        Status::Skipped(why) => format!("{} was not tried: {why}.", title(r)),
        Status::Failed(why) => format!("{} failed: {why}.", title(r)),
    }
}

/// The pinned ceiling measured with `device_hold` device memory held, if the row has both.
fn pinned_ceiling(r: &Row) -> Option<Said> {
    let hold = hold_axis(r)?;
    let (c, at_cap) = (r.pinned_ceiling_mib?, r.pinned_ceiling_at_cap()?);
    let size = format_size((c * MIB as f64) as u64);
    let c = if at_cap {
        format!("≥ {size}, the probe's cap, not the machine's limit (raise it with --pinned-cap)")
    } else {
        format!("{size}, where the driver refused more")
    };
    let topic = format!(
        "pinned ceiling with device_hold={hold} held ({})",
        r.case_label
    );
    Some((topic, format!("{c}.")))
}

/// A churn row: every copy verified, or how many copies left wrong data.
fn churn(r: &Row) -> Option<Said> {
    if r.mode != Mode::Churn {
        return None;
    }
    let text = match &r.status {
        Status::Ok => format!("{}: all {} copies verified.", title(r), r.samples),
        Status::Failed(why) if why.wrong_copies().is_some() => format!(
            "{}: {why}: copies returned success and left wrong data.",
            title(r)
        ),
        _ => return None,
    };
    Some(("pinned churn".to_string(), text))
}

trait TotalCmpOpt {
    fn total_cmp_opt(&self, other: Option<f64>) -> std::cmp::Ordering;
}

impl TotalCmpOpt for Option<f64> {
    fn total_cmp_opt(&self, other: Option<f64>) -> std::cmp::Ordering {
        self.unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&other.unwrap_or(f64::NEG_INFINITY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Failure;
    use crate::results::fixtures::device_row as row;

    /// A device-memory row that fit: 3000 GB/s with half the free memory held.
    fn within_the_card() -> Row {
        let ok = Status::Ok;
        row(
            "read",
            "device_hold=free-50%",
            Lane::Device,
            ok,
            Some(3000.0),
        )
    }

    /// A row past the card that failed as a results file says `failure`.
    fn past_the_card(failure: &str) -> Row {
        let failed = Status::Failed(Failure::parse(failure));
        row("read", "device_hold=free+5%", Lane::Device, failed, None)
    }

    #[test]
    fn plain_words_name_the_oom_row_and_the_spill() {
        let rows = vec![
            within_the_card(),
            past_the_card(
                "cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (device_hold: 80 GiB of 147 GiB allocated, 140 GiB was free)",
            ),
            row(
                "read",
                "device_hold=free+20%",
                Lane::Device,
                Status::Ok,
                Some(25.0),
            ),
        ];
        assert_eq!(
            console_lines(&rows),
            vec![
                "device memory: read (device_hold=free-50%) at 3000 GB/s.".to_string(),
                "past the card: read (device_hold=free+5%) failed with CUDA_ERROR_OUT_OF_MEMORY: CUDA did not spill device memory into host memory here.".into(),
                "past the card: read (device_hold=free+20%) succeeded and ran at 25.0 GB/s, 120x slower than within the card (3000 GB/s): the allocation spilled into shared (host) memory.".into(),
            ]
        );
    }

    #[test]
    fn plain_words_count_churn_copies() {
        let mut ok = row("churn", "", Lane::H2d, Status::Ok, Some(20.0));
        ok.mode = Mode::Churn;
        let mut bad = ok.clone();
        bad.case_label = "churn-register".into();
        bad.status = Status::Failed(Failure::parse("data mismatch in 19 of 20 copies"));
        assert_eq!(
            console_lines(&[ok, bad]),
            vec![
                "pinned churn: churn: all 20 copies verified.".to_string(),
                "pinned churn: churn-register: data mismatch in 19 of 20 copies: copies returned success and left wrong data.".into(),
            ]
        );
    }

    #[test]
    fn the_report_says_it_in_plain_words_too() {
        let rows = [
            within_the_card(),
            past_the_card("cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (allocation)"),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        let said = crate::report::answer::answer(&refs, &Default::default(), None, "s");
        assert!(
            said.iter().any(|s| s.topic == "Past the card"
                && s.text.starts_with(
                    "read (device_hold=free+5%) failed with CUDA_ERROR_OUT_OF_MEMORY"
                )),
            "{said:#?}"
        );
        assert!(said.iter().any(|s| s.topic == "Device memory"), "{said:#?}");
    }
}
