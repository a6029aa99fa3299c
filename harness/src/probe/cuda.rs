//! `cuda`: free/total/used device memory as the CUDA driver reports it (`cuMemGetInfo`), through
//! a closure the CUDA layer supplies (this module does not touch CUDA itself).

use super::{Observer, Reading};
use crate::accounting::ObserverId;

/// Returns `(free, total)` bytes of the current CUDA context's device.
pub type CudaMemFn = Box<dyn FnMut() -> Result<(u64, u64), String> + Send>;

pub struct CudaObserver {
    mem: Option<CudaMemFn>,
}

impl CudaObserver {
    pub fn new(mem: Option<CudaMemFn>) -> CudaObserver {
        CudaObserver { mem }
    }
}

impl Observer for CudaObserver {
    fn id(&self) -> ObserverId {
        ObserverId::Cuda
    }

    fn unavailable(&self) -> Option<String> {
        self.mem
            .is_none()
            .then(|| "no CUDA context (driver missing or no device)".into())
    }

    fn read(&mut self) -> Result<Vec<Reading>, String> {
        let f = self.mem.as_mut().ok_or("no CUDA context")?;
        let (free, total) = f()?;
        Ok(vec![
            Reading::bytes("free", free),
            Reading::bytes("total", total),
            Reading::bytes("used", total.saturating_sub(free)),
        ])
    }
}
