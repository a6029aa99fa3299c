//! `load-register`: the file mapped, the mapping page-locked read-only (`cuMemHostRegister`),
//! then one copy at the pinned speed. Registering a private mapping of a 4 GiB file did not
//! return on driver 580 (the mapping here is shared, as llama.cpp's is, and that returned), and a
//! registration that hangs cannot be interrupted, so each load runs in a child process (pinscope
//! re-run with a hidden command) with a deadline, `measure.time_limit`: when it passes, the child
//! is killed and the case fails with "did not return in N s" — that is the result. The child
//! compares what landed on the device with the file and reports it.

use super::file_load::{LoadWay, compare_with_file, file_len, io_error, open};
use super::*;
use crate::cuda::MappedFile;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::LoadSource;
use std::time::Duration;

/// The hidden command the child runs: `pinscope <CHILD_COMMAND> FILE ORDINAL`.
pub const CHILD_COMMAND: &str = "load-register-child";

/// What the child reports on its standard output (one JSON line).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChildReport {
    pub map_ms: f64,
    pub register_ms: f64,
    pub copy_ms: f64,
    pub unregister_ms: f64,
    pub bad_words: u64,
    pub first_bad: Option<u64>,
}

/// The child's side: on GPU `ordinal`, map `path`, register it read-only, copy it into a device
/// buffer, compare, unregister.
pub fn child_load(path: &std::path::Path, ordinal: u32) -> Result<ChildReport, CudaError> {
    let gpu = crate::cuda::Gpu::open(ordinal)
        .map_err(|e| CudaError::new("opening the GPU", e.sentence()))?;
    let file = std::fs::File::open(path).map_err(|e| io_error("open", &e))?;
    let len = usize::try_from(file.metadata().map_err(|e| io_error("stat", &e))?.len())
        .map_err(|_| CudaError::new("mmap", "too large"))?;
    let clock = Stopwatch::start();
    let mut map = MappedFile::map(&file, len)?;
    let map_ms = clock.ms();
    let register_ms = map.register_read_only()?;
    let dev = DeviceBuffer::new(len)?;
    let copy = Stopwatch::start();
    dev.write(0, map.as_slice())?;
    let copy_ms = copy.ms();
    let unregister_ms = map.unregister()?;
    drop(map);
    let (bad_words, first_bad) = match compare_with_file(&dev, path)? {
        Verified::Mismatch {
            bad_words, first, ..
        } => (bad_words, first),
        _ => (0, None),
    };
    drop(gpu);
    Ok(ChildReport {
        map_ms,
        register_ms,
        copy_ms,
        unregister_ms,
        bad_words,
        first_bad,
    })
}

/// The parent's side: runs each load in a child with `deadline`.
pub(crate) struct LoadRegister {
    deadline: Duration,
    last: Option<ChildReport>,
}

impl LoadRegister {
    pub(crate) fn new(deadline: Duration) -> LoadRegister {
        LoadRegister {
            deadline,
            last: None,
        }
    }
}

impl LoadWay for LoadRegister {
    fn load(
        &mut self,
        file: &LoadSource,
        _dev: &DeviceBuffer,
        _stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        // The file must open and be non-empty here, where the error is plain.
        drop(open(file)?);
        file_len(file)?;
        let report = run_child(&file.path, self.deadline)?;
        let stages = LoadStages {
            fault_ms: Some(report.map_ms),
            pin_ms: Some(report.register_ms + report.unregister_ms),
            dma_ms: Some(report.copy_ms),
            ..LoadStages::default()
        };
        self.last = Some(report);
        Ok(stages)
    }

    fn checked(&self) -> Option<Verified> {
        let r = self.last.as_ref()?;
        Some(Verified::of(Lane::H2d, r.bad_words, r.first_bad))
    }

    fn needs_device(&self) -> bool {
        false
    }
}

/// Starts the child on this thread's GPU, waits at most `deadline`, and reads its report; kills
/// it when the deadline passes.
fn run_child(path: &std::path::Path, deadline: Duration) -> Result<ChildReport, CudaError> {
    use std::process::{Command, Stdio};
    let ordinal = crate::cuda::current_device()?;
    let exe = std::env::current_exe().map_err(|e| io_error("finding pinscope itself", &e))?;
    let mut child = Command::new(exe)
        .arg(CHILD_COMMAND)
        .arg(path)
        .arg(ordinal.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| io_error("starting the registering child process", &e))?;
    let clock = Stopwatch::start();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if clock.ms() < deadline.as_secs_f64() * 1e3 => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) => return Err(kill(child, deadline)),
            Err(e) => return Err(io_error("waiting for the child process", &e)),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| io_error("reading the child process", &e))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(CudaError::new("the registering child process", said));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| CudaError::new("reading the child process's report", e.to_string()))
}

/// Kills a child that passed its deadline and waits briefly for it to go; the case's error.
fn kill(mut child: std::process::Child, deadline: Duration) -> CudaError {
    let _ = child.kill();
    let clock = Stopwatch::start();
    let mut gone = false;
    while clock.ms() < 10_000.0 {
        if let Ok(Some(_)) = child.try_wait() {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = if gone {
        "the child was killed".to_string()
    } else {
        format!(
            "the child (pid {}) was killed and had not exited 10 s later",
            child.id()
        )
    };
    deadline_error(deadline, &after)
}

/// The case's error when the child passed its deadline (`after`: what became of the child).
fn deadline_error(deadline: Duration, after: &str) -> CudaError {
    CudaError::new(
        "cuMemHostRegister(READ_ONLY) of the file mapping, in a child process,",
        format!(
            "no return: it did not return in {} s and {after}",
            deadline.as_secs_f64()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Failure, Phase, Status};

    /// The deadline's expiry is the row's result: its sentence says so and reads back the same.
    #[test]
    fn a_deadline_is_a_failed_row_that_says_it_did_not_return() {
        let e = deadline_error(Duration::from_secs(15), "the child was killed");
        let status = Status::Failed(Failure::call(&e, Phase::Transfer));
        let text = status.to_field();
        assert!(
            text.contains("did not return in 15 s and the child was killed"),
            "{text}"
        );
        assert_eq!(Status::from_field(&text), Some(status));
    }

    #[test]
    fn the_childs_report_reads_back() {
        let r = ChildReport {
            map_ms: 0.1,
            register_ms: 30.0,
            copy_ms: 75.0,
            unregister_ms: 2.0,
            bad_words: 0,
            first_bad: None,
        };
        let line = serde_json::to_string(&r).expect("JSON");
        assert_eq!(serde_json::from_str::<ChildReport>(&line).expect("read"), r);
    }
}
