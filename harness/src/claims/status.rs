//! Claim metrics read from a row's status: `out_of_memory` and `mismatched_copies`. They are
//! judged on failed rows too: a failure is the answer they are about.

use crate::results::{Row, Status};
use crate::scenario::Mode;

/// `out_of_memory`: 1 when the row failed for want of memory, else 0; `None` for a skipped row,
/// which asked nothing (so the claim is not applicable).
pub fn out_of_memory(r: &Row) -> Option<f64> {
    match &r.status {
        Status::Failed(f) if f.is_out_of_memory() => Some(1.0),
        Status::Skipped(_) => None,
        _ => Some(0.0),
    }
}

/// `mismatched_copies`: how many copies of a churn row came back wrong; `None` for a skipped row
/// and for rows of other modes.
pub fn mismatched_copies(r: &Row) -> Option<f64> {
    if r.mode != Mode::Churn {
        return None;
    }
    match &r.status {
        Status::Ok => Some(0.0),
        Status::Failed(f) => f.wrong_copies().map(f64::from),
        Status::Skipped(_) => None,
    }
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
        assert_eq!(out_of_memory(&oom), Some(1.0));
        let ok = row(
            "in",
            "device_hold=free-50%",
            Lane::Device,
            Status::Ok,
            Some(3000.0),
        );
        assert_eq!(out_of_memory(&ok), Some(0.0));
        assert_eq!(mismatched_copies(&ok), None, "not a churn row");
        let mut churn = row("churn", "", Lane::H2d, Status::Ok, Some(20.0));
        churn.mode = Mode::Churn;
        assert_eq!(mismatched_copies(&churn), Some(0.0));
        churn.status = Status::Failed(Failure::new(Cause::WrongCopies {
            bad: 19,
            copies: 20,
        }));
        assert_eq!(mismatched_copies(&churn), Some(19.0));
        churn.status = Status::Failed(Failure::parse("data mismatch in 19 of 20 copies"));
        assert_eq!(mismatched_copies(&churn), Some(19.0));
    }
}
