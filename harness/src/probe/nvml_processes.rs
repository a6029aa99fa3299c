//! NVML's device memory per process, for processes other than pinscope (`observe`): every GPU's
//! compute and graphics processes with the bytes each holds, and the GPUs' free memory. Under WDDM and in WSL2 NVML lists
//! the processes without their bytes; NVML does not count managed memory (pynvml#63).

use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;
use std::collections::BTreeMap;

/// NVML loaded, with the number of GPUs it sees.
pub struct NvmlProcesses {
    nvml: Nvml,
    devices: u32,
}

/// One read: device bytes per process id (summed over the GPUs), and what could not be read.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ProcessMemory {
    pub bytes: BTreeMap<u32, u64>,
    /// Free device memory summed over the GPUs (`nvmlDeviceGetMemoryInfo`): what `cudaMemGetInfo`
    /// reports as free, read without a CUDA context; `None` when no GPU answered.
    pub device_free: Option<u64>,
    /// Processes NVML listed without their bytes (WDDM, WSL2), and failed queries, as sentences.
    pub notes: Vec<String>,
}

impl NvmlProcesses {
    /// Loads NVML, or says why it cannot be used here (no driver, no GPU).
    pub fn open() -> Result<NvmlProcesses, String> {
        let nvml = Nvml::init().map_err(|e| format!("NVML not loaded: {e}"))?;
        let devices = nvml
            .device_count()
            .map_err(|e| format!("NVML counts no GPU: {e}"))?;
        if devices == 0 {
            return Err("NVML sees no GPU".into());
        }
        Ok(NvmlProcesses { nvml, devices })
    }

    /// The device memory of every process on every GPU now.
    pub fn read(&self) -> ProcessMemory {
        let mut out = ProcessMemory::default();
        for index in 0..self.devices {
            let dev = match self.nvml.device_by_index(index) {
                Ok(d) => d,
                Err(e) => {
                    out.notes.push(format!("GPU {index}: {e}"));
                    continue;
                }
            };
            match dev.memory_info() {
                Ok(m) => *out.device_free.get_or_insert(0) += m.free,
                Err(e) => out
                    .notes
                    .push(format!("GPU {index}: free memory unavailable: {e}")),
            }
            let lists = [
                dev.running_compute_processes(),
                dev.running_graphics_processes(),
            ];
            for list in lists {
                match list {
                    Ok(procs) => {
                        for p in procs {
                            match p.used_gpu_memory {
                                UsedGpuMemory::Used(b) => {
                                    *out.bytes.entry(p.pid).or_default() += b;
                                }
                                UsedGpuMemory::Unavailable => out.notes.push(format!(
                                    "GPU {index} lists process {} without its bytes (WDDM/WSL2)",
                                    p.pid
                                )),
                            }
                        }
                    }
                    Err(e) => out
                        .notes
                        .push(format!("GPU {index}: per-process memory unavailable: {e}")),
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_or_says_why_never_panics() {
        match NvmlProcesses::open() {
            Ok(n) => {
                let _ = n.read();
            }
            Err(why) => assert!(why.contains("NVML"), "{why}"),
        }
    }
}
