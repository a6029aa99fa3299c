//! Claim metrics read from a row's status: `out_of_memory` and `mismatched_copies`. They are
//! judged on failed rows too: a failure is the answer they are about.

use crate::results::{Row, Status};
use crate::scenario::Mode;

/// `out_of_memory` and `mismatched_copies`: claim metrics read from a row's status, so they are
/// judged on failed rows too (a failure is the answer they are about).
pub fn status_metric(r: &Row, metric: &str) -> Option<f64> {
    match metric {
        // A skipped row asked nothing: not observable, so the claim is not applicable.
        "out_of_memory" => match &r.status {
            Status::Failed(f) if f.is_out_of_memory() => Some(1.0),
            Status::Skipped(_) => None,
            _ => Some(0.0),
        },
        "mismatched_copies" if r.mode == Mode::Churn => match &r.status {
            Status::Ok => Some(0.0),
            Status::Failed(f) => f.wrong_copies().map(f64::from),
            Status::Skipped(_) => None,
        },
        _ => None,
    }
}

/// True for metrics [`status_metric`] answers: a failed row is judged, not skipped.
pub fn judged_on_failure(metric: &str) -> bool {
    matches!(metric, "out_of_memory" | "mismatched_copies")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::CudaError;
    use crate::results::fixtures::device_row as row;
    use crate::results::{Cause, Failure, Lane, Phase};
    use cudarc::driver::sys::CUresult;

    #[test]
    fn status_metrics_judge_failed_rows() {
        let oom = row(
            "over",
            "device_hold=free+5%",
            Lane::Device,
            Status::Failed(Failure::call(
                &CudaError::driver("cuMemAlloc", CUresult::CUDA_ERROR_OUT_OF_MEMORY),
                Phase::DeviceAllocation,
            )),
            None,
        );
        assert_eq!(status_metric(&oom, "out_of_memory"), Some(1.0));
        let ok = row(
            "in",
            "device_hold=free-50%",
            Lane::Device,
            Status::Ok,
            Some(3000.0),
        );
        assert_eq!(status_metric(&ok, "out_of_memory"), Some(0.0));
        assert_eq!(
            status_metric(&ok, "mismatched_copies"),
            None,
            "not a churn row"
        );
        let mut churn = row("churn", "", Lane::H2d, Status::Ok, Some(20.0));
        churn.mode = Mode::Churn;
        assert_eq!(status_metric(&churn, "mismatched_copies"), Some(0.0));
        churn.status = Status::Failed(Failure::new(Cause::WrongCopies {
            bad: 19,
            copies: 20,
        }));
        assert_eq!(status_metric(&churn, "mismatched_copies"), Some(19.0));
        churn.status = Status::Failed(Failure::parse("data mismatch in 19 of 20 copies"));
        assert_eq!(status_metric(&churn, "mismatched_copies"), Some(19.0));
        assert!(judged_on_failure("mismatched_copies") && judged_on_failure("out_of_memory"));
        assert!(!judged_on_failure("bw_median_gbs"));
    }
}
