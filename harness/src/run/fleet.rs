//! Every listed GPU at once (`--device all`, `--device 0,1`): one worker thread per GPU owns that
//! GPU's runner (context, kernels, spin gate, observers, its own staging copy crew per case) for
//! the whole run. A multi-GPU case runs on each GPU alone first, for reference, then on all of
//! them at the same time: the workers allocate and touch independently, then start every sample
//! together behind a [`Lockstep`] and stop after the same sample. Each GPU is timed with its own
//! events; the `all` row sums the per-GPU bandwidths, as nvbandwidth's `host_to_all` tests do.

use super::case::{guard, run_case_in_step};
use super::runner::{Runner, open_runner};
use super::{CaseOutcome, RowContext};
use crate::Error;
use crate::measure::Lockstep;
use crate::platform::GpuInfo;
use crate::results::{
    Cause, Device, Failure, Lane, MULTI_GPU_MARK, Row, SampleIndex, SampleRow, Series, Status,
    StopReason, Verification,
};
use crate::scenario::Case;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

/// One worker per GPU; dropping the fleet ends the workers and closes their runners.
pub struct Fleet {
    workers: Vec<Worker>,
}

struct Worker {
    info: GpuInfo,
    jobs: Option<mpsc::Sender<Job>>,
    handle: Option<JoinHandle<()>>,
}

struct Job {
    case: Case,
    allow_pinned: f64,
    step: Option<Arc<Lockstep>>,
    reply: mpsc::Sender<CaseOutcome>,
}

impl Fleet {
    /// Opens a runner on each of `devices` in its own thread; the first failure is returned.
    pub fn open(
        devices: &[u32],
        anonymize: bool,
        pinned_cap: u64,
        stop: Arc<AtomicBool>,
    ) -> Result<Fleet, Error> {
        let mut workers = Vec::new();
        for &d in devices {
            let (ready_tx, ready_rx) = mpsc::channel::<Result<GpuInfo, Error>>();
            let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
            let stop = Arc::clone(&stop);
            let handle = std::thread::Builder::new()
                .name(format!("pinscope-gpu-{d}"))
                .spawn(move || {
                    let mut runner = match open_runner(d, anonymize) {
                        Ok(s) => s,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    runner.pinned_cap = pinned_cap;
                    let mut info = runner.machine.gpu.clone().unwrap_or_default();
                    info.numa_node = crate::platform::numa_node_of(&info.pci_bus_id);
                    if ready_tx.send(Ok(info)).is_err() {
                        return;
                    }
                    for job in jobs_rx {
                        let out = work(&mut runner, &job, &stop);
                        if job.reply.send(out).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| Error::System(format!("could not start a thread for GPU {d}: {e}")))?;
            let info = match ready_rx.recv() {
                Ok(Ok(info)) => info,
                Ok(Err(e)) => {
                    let _ = handle.join();
                    return Err(e);
                }
                Err(_) => {
                    let _ = handle.join();
                    return Err(Error::System(format!(
                        "the thread for GPU {d} ended before it opened the GPU"
                    )));
                }
            };
            workers.push(Worker {
                info,
                jobs: Some(jobs_tx),
                handle: Some(handle),
            });
        }
        Ok(Fleet { workers })
    }

    /// The GPUs, in the order given.
    pub fn gpus(&self) -> Vec<GpuInfo> {
        self.workers.iter().map(|w| w.info.clone()).collect()
    }

    pub fn len(&self) -> usize {
        self.workers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    fn send(
        &self,
        i: usize,
        case: &Case,
        allow_pinned: f64,
        step: Option<Arc<Lockstep>>,
    ) -> mpsc::Receiver<CaseOutcome> {
        let (tx, rx) = mpsc::channel();
        let job = Job {
            case: case.clone(),
            allow_pinned,
            step,
            reply: tx,
        };
        if let Some(jobs) = &self.workers[i].jobs {
            // A worker that ended drops the job's reply sender: the receive below then fails.
            let _ = jobs.send(job);
        }
        rx
    }

    /// The case on GPU number `i` of the fleet alone.
    pub fn run_alone(&self, i: usize, case: &Case, allow_pinned: f64) -> CaseOutcome {
        self.send(i, case, allow_pinned, None)
            .recv()
            .unwrap_or_else(|_| lost(case, &self.workers[i].info))
    }

    /// The case on every GPU of the fleet at the same time, one outcome per GPU in fleet order.
    pub fn run_together(&self, case: &Case, allow_pinned: f64) -> Vec<CaseOutcome> {
        let step = Arc::new(Lockstep::new(self.workers.len()));
        let pending: Vec<_> = (0..self.workers.len())
            .map(|i| self.send(i, case, allow_pinned, Some(Arc::clone(&step))))
            .collect();
        pending
            .into_iter()
            .zip(&self.workers)
            .map(|(rx, w)| rx.recv().unwrap_or_else(|_| lost(case, &w.info)))
            .collect()
    }
}

fn lost(case: &Case, gpu: &GpuInfo) -> CaseOutcome {
    CaseOutcome::empty(
        case,
        Status::Failed(Failure::new(Cause::WorkerLost { gpu: gpu.index })),
    )
}

/// One job on a worker: the guard, then the case (in step with the other GPUs when `step`).
fn work(runner: &mut Runner, job: &Job, stop: &AtomicBool) -> CaseOutcome {
    let ram = runner.machine.ram_bytes;
    match guard(&job.case, ram, job.allow_pinned, &runner.gpu) {
        Some(reason) => {
            if let Some(s) = &job.step {
                s.leave();
            }
            CaseOutcome::skipped(&job.case, reason)
        }
        None => run_case_in_step(runner, &job.case, stop, job.step.as_deref()),
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for w in &mut self.workers {
            // Closing the job channel ends the worker's loop; it then closes its runner.
            w.jobs = None;
        }
        for w in &mut self.workers {
            if let Some(h) = w.handle.take() {
                let _ = h.join();
            }
        }
    }
}

/// The rows of a multi-GPU case: each GPU alone, each GPU while all ran at once, and `all` (the
/// sum over the GPUs that ran at once), with their samples; case keys carry the placement
/// (see [`MULTI_GPU_MARK`]).
pub fn multi_gpu_rows(
    case: &Case,
    ctx: &RowContext,
    gpus: &[GpuInfo],
    alone: &[CaseOutcome],
    together: &[CaseOutcome],
) -> (Vec<Row>, Vec<SampleRow>) {
    let n = gpus.len() as u32;
    let mut rows = Vec::new();
    let mut samples = Vec::new();
    let place = |o: &CaseOutcome, gpu: &GpuInfo, at_once: u32| {
        let (mut r, mut s) = Row::from_outcome(o, ctx, case);
        let mark = if at_once <= 1 {
            format!("{MULTI_GPU_MARK}gpu{}", gpu.index)
        } else {
            format!("{MULTI_GPU_MARK}gpu{}/{at_once}", gpu.index)
        };
        for row in &mut r {
            row.case_key.push_str(&mark);
            row.device = Some(Device::Gpu(gpu.index));
            row.gpus_at_once = at_once;
            std::sync::Arc::make_mut(&mut row.machine).gpu = gpu.name.clone();
        }
        for sr in &mut s {
            sr.case_key.push_str(&mark);
        }
        (r, s)
    };
    for (o, g) in alone.iter().zip(gpus) {
        let (r, s) = place(o, g, 1);
        rows.extend(r);
        samples.extend(s);
    }
    let first_together = rows.len();
    for (o, g) in together.iter().zip(gpus) {
        let (r, s) = place(o, g, n);
        rows.extend(r);
        samples.extend(s);
    }
    let (sum_rows, sum_samples) = sum_over_gpus(&rows[first_together..], &samples, n);
    rows.extend(sum_rows);
    samples.extend(sum_samples);
    (rows, samples)
}

/// The GPU a row was measured on, as the `device` column writes it.
fn gpu_of(r: &Row) -> String {
    r.device.map(|d| d.to_string()).unwrap_or_default()
}

/// The `all` rows: per lane, the sum of the GPUs' bandwidths (median, min and max summed; the
/// samples summed sample by sample, which the lockstep aligns).
fn sum_over_gpus(together: &[Row], samples: &[SampleRow], n: u32) -> (Vec<Row>, Vec<SampleRow>) {
    let mut rows = Vec::new();
    let mut out_samples = Vec::new();
    let Some(first) = together.first() else {
        return (rows, out_samples);
    };
    let key = format!("{}{MULTI_GPU_MARK}all/{n}", first.base_key());
    let lanes: Vec<_> = together
        .iter()
        .filter(|r| r.device == first.device)
        .map(|r| r.lane)
        .collect();
    for lane in lanes {
        let per: Vec<&Row> = together.iter().filter(|r| r.lane == lane).collect();
        let r = sum_row(&per, &key, n);
        // Sample i of the sum: the GPUs' sample i added (they started together).
        if r.status.is_ok() {
            out_samples.extend(summed_samples(&per, samples, lane, &key));
        }
        rows.push(r);
    }
    (rows, out_samples)
}

/// The first failure or skip among the GPUs' rows, said of its GPU; `ok` when every GPU was.
fn sum_status(per: &[&Row]) -> Status {
    per.iter()
        .find(|x| !x.status.is_ok())
        .map(|x| match &x.status {
            Status::Failed(e) => Status::Failed(match x.device {
                Some(Device::Gpu(g)) => e.on_gpu(g),
                _ => e.clone(),
            }),
            Status::Skipped(e) => Status::Skipped(format!("GPU {}: {e}", gpu_of(x))),
            Status::Ok => Status::Ok,
        })
        .unwrap_or(Status::Ok)
}

/// The sum over the GPUs of one measure; none unless every GPU finished and has it.
fn sum_of(per: &[&Row], all_ok: bool, f: fn(&Row) -> Option<f64>) -> Option<f64> {
    if !all_ok {
        return None;
    }
    per.iter().map(|x| f(x)).sum()
}

/// The machine of the `all` row: the host's, with every GPU's model when they differ.
fn machine_of_all(per: &[&Row]) -> Arc<crate::platform::MachineKey> {
    let first = &per[0].machine;
    if per.iter().all(|x| x.machine.gpu == first.gpu) {
        return Arc::clone(first);
    }
    let names: Vec<&str> = per.iter().map(|x| x.machine.gpu.as_str()).collect();
    let mut m = (**first).clone();
    m.gpu = names.join(" + ");
    Arc::new(m)
}

/// The `all` row of one lane from the GPUs' rows `per`: the case as every GPU ran it, the
/// bandwidths summed (when every GPU finished), the memory held summed, the fewest samples.
/// Times, spread, setup costs, latencies and the memory probes are one GPU's each and stay on
/// the per-GPU rows. Every column is named here, so a new one must be decided, not copied.
fn sum_row(per: &[&Row], key: &str, n: u32) -> Row {
    let first = per[0];
    let all_ok = per.iter().all(|x| x.status.is_ok());
    Row {
        run_id: Arc::clone(&first.run_id),
        started_at: Arc::clone(&first.started_at),
        machine: machine_of_all(per),
        scenario: Arc::clone(&first.scenario),
        case_label: first.case_label.clone(),
        case_index: first.case_index,
        case_key: key.to_string(),
        lane: first.lane,
        host: first.host,
        flags: first.flags,
        engine: first.engine,
        direction: first.direction,
        mode: first.mode,
        size_bytes: first.size_bytes,
        chunk_bytes: first.chunk_bytes,
        ring: first.ring,
        streams: first.streams,
        threads: first.threads,
        batch: first.batch,
        axes: first.axes.clone(),
        wait: first.wait,
        status: sum_status(per),
        samples: per.iter().map(|x| x.samples).min().unwrap_or(0),
        outliers: 0,
        bw_median_gbs: sum_of(per, all_ok, |x| x.bw_median_gbs),
        bw_min_gbs: sum_of(per, all_ok, |x| x.bw_min_gbs),
        bw_max_gbs: sum_of(per, all_ok, |x| x.bw_max_gbs),
        bw_spread_pct: None,
        time_median_ms: None,
        time_min_ms: None,
        time_max_ms: None,
        wall_median_ms: None,
        verified: per
            .iter()
            .map(|x| x.verified)
            .find(|v| *v != Verification::Yes)
            .unwrap_or(Verification::Yes),
        alloc_ms: None,
        register_ms: None,
        unregister_ms: None,
        free_ms: None,
        pinned_bytes: per.iter().map(|x| x.pinned_bytes).sum(),
        device_bytes: per.iter().map(|x| x.device_bytes).sum(),
        accounting: Vec::new(),
        max_alloc_held_mib: None,
        max_alloc_free_mib: None,
        max_alloc_host_mib: None,
        pinned_ceiling_mib: None,
        pinned_ceiling_cap_mib: None,
        // The GPU that ended the lockstep says why; the others say another GPU stopped.
        stopped_by: per
            .iter()
            .filter_map(|x| x.stopped_by)
            .find(|s| *s != StopReason::AnotherGpuStopped)
            .or(first.stopped_by),
        device: Some(Device::All),
        gpus_at_once: n,
        lat_min_us: None,
        lat_p50_us: None,
        lat_p90_us: None,
        lat_p99_us: None,
        lat_event_p50_us: None,
        ..Row::default()
    }
}

/// The bandwidth samples of the `all` row of `lane`: sample i is the GPUs' samples i added, up
/// to the fewest any GPU has.
fn summed_samples(per: &[&Row], samples: &[SampleRow], lane: Lane, key: &str) -> Vec<SampleRow> {
    let series: Vec<Vec<f64>> = per
        .iter()
        .map(|x| {
            samples
                .iter()
                .filter(|s| {
                    s.case_key == x.case_key
                        && s.lane == Some(lane)
                        && s.series == Series::Bandwidth
                })
                .map(|s| s.value)
                .collect()
        })
        .collect();
    let len = series.iter().map(Vec::len).min().unwrap_or(0);
    (0..len)
        .map(|i| SampleRow {
            case_key: key.to_string(),
            lane: Some(lane),
            series: Series::Bandwidth,
            index: SampleIndex::Number(i),
            t_ms: None,
            value: series.iter().map(|s| s[i]).sum(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Measured, SampleTimes};
    use crate::scenario::{Direction, Lane};

    /// An outcome whose samples move `size` bytes at the given GB/s.
    fn outcome(case: &Case, gbs: &[f64]) -> CaseOutcome {
        let mut o = CaseOutcome::empty(case, Status::Ok);
        o.verified = Verification::Yes;
        o.measured = Measured {
            batch: 1,
            samples: gbs
                .iter()
                .map(|g| {
                    let ms = case.size as f64 / (g * 1e9) * 1e3;
                    SampleTimes::host_timed(Lane::H2d, ms, Some(ms))
                })
                .collect(),
            stopped_by: Some(crate::results::StopReason::MaxSamples),
        };
        o
    }

    fn gpu(i: u32) -> GpuInfo {
        GpuInfo {
            index: i,
            name: "NVIDIA H200".into(),
            ..Default::default()
        }
    }

    #[test]
    fn rows_for_each_gpu_alone_together_and_their_sum() {
        let mut case = crate::strategy::tests::test_case();
        case.direction = Direction::H2d;
        case.size = 1 << 30;
        let machine = crate::platform::this_machine(true);
        let ctx = RowContext {
            run_id: "r",
            started_at: "t",
            machine: &machine,
        };
        let alone = vec![
            outcome(&case, &[55.0, 55.2, 55.4]),
            outcome(&case, &[55.1, 55.3, 55.5]),
        ];
        let together = vec![
            outcome(&case, &[54.0, 54.8, 55.0]),
            outcome(&case, &[53.0, 53.5, 54.0]),
        ];
        let (rows, samples) = multi_gpu_rows(&case, &ctx, &[gpu(0), gpu(1)], &alone, &together);
        let shape: Vec<(String, u32, bool)> = rows
            .iter()
            .map(|r| (gpu_of(r), r.gpus_at_once, r.status.is_ok()))
            .collect();
        assert_eq!(
            shape,
            vec![
                ("0".into(), 1, true),
                ("1".into(), 1, true),
                ("0".into(), 2, true),
                ("1".into(), 2, true),
                ("all".into(), 2, true)
            ]
        );
        let keys: Vec<&str> = rows
            .iter()
            .map(|r| r.case_key.rsplit('@').next().unwrap_or(""))
            .collect();
        assert_eq!(keys, vec!["gpu0", "gpu1", "gpu0/2", "gpu1/2", "all/2"]);
        let all = &rows[4];
        let med = all.bw_median_gbs.expect("a sum");
        assert!((med - (54.8 + 53.5)).abs() < 1e-6, "{med}");
        assert_eq!(all.placement().as_deref(), Some("all 2 GPUs at once"));
        assert_eq!(rows[2].placement().as_deref(), Some("GPU 0 of 2 at once"));
        assert_eq!(rows[1].placement().as_deref(), Some("GPU 1 alone"));
        let sums: Vec<f64> = samples
            .iter()
            .filter(|s| s.case_key.ends_with("@all/2") && s.series == Series::Bandwidth)
            .map(|s| s.value)
            .collect();
        assert_eq!(sums.len(), 3);
        assert!(
            (sums[0] - 107.0).abs() < 1e-6 && (sums[2] - 109.0).abs() < 1e-6,
            "{sums:?}"
        );
        // Each placement keeps its own samples.
        assert_eq!(
            samples
                .iter()
                .filter(|s| s.case_key.ends_with("@gpu1/2") && s.series == Series::Bandwidth)
                .count(),
            3
        );
        let lines = crate::report::answer::multi_gpu_lines(&rows);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("2 GPUs at once, c h2d: 108.3 GB/s in all; each keeps GPU 0 54.8 of 55.2 GB/s alone (99%), GPU 1 53.5 of 55.3 GB/s alone (97%)"), "{}", lines[0]);
    }

    /// A latency case on 2 GPUs: each GPU's row keeps its own latencies; the `all` row carries
    /// none of them (a time of one GPU is not the time of all), only what sums.
    #[test]
    fn the_all_row_of_a_latency_case_carries_no_gpus_latency() {
        let case = crate::strategy::tests::test_case();
        let machine = crate::platform::this_machine(true);
        let ctx = RowContext {
            run_id: "r",
            started_at: "t",
            machine: &machine,
        };
        let o = || outcome(&case, &[0.5, 0.6, 0.7]);
        let (mut rows, _) =
            multi_gpu_rows(&case, &ctx, &[gpu(0), gpu(1)], &[o(), o()], &[o(), o()]);
        // The per-GPU rows of the case, with latencies as a latency case records them.
        for (i, r) in rows
            .iter_mut()
            .enumerate()
            .filter(|(_, r)| r.device != Some(Device::All))
        {
            let us = 2.0 + i as f64;
            r.lat_min_us = Some(us);
            r.lat_p50_us = Some(us + 0.1);
            r.lat_p90_us = Some(us + 0.2);
            r.lat_p99_us = Some(us + 0.3);
            r.lat_event_p50_us = Some(us - 0.5);
            r.time_median_ms = Some(us / 1e3);
        }
        let together: Vec<&Row> = rows
            .iter()
            .filter(|r| r.gpus_at_once == 2 && r.device != Some(Device::All))
            .collect();
        let all = sum_row(&together, "k@all/2", 2);
        let lat = [
            all.lat_min_us,
            all.lat_p50_us,
            all.lat_p90_us,
            all.lat_p99_us,
            all.lat_event_p50_us,
            all.time_median_ms,
        ];
        assert_eq!(lat, [None; 6], "{all:?}");
        assert_eq!(all.device, Some(Device::All));
        assert_eq!(all.samples, 3);
        let med = all.bw_median_gbs.expect("a sum");
        let each = together[0].bw_median_gbs.expect("a median");
        assert!((med - 2.0 * each).abs() < 1e-9, "{med} vs 2 x {each}");
        assert_eq!(all.machine.gpu, "NVIDIA H200");
    }

    #[test]
    fn a_failed_gpu_makes_the_sum_a_failure_that_names_it() {
        let case = crate::strategy::tests::test_case();
        let machine = crate::platform::this_machine(true);
        let ctx = RowContext {
            run_id: "r",
            started_at: "t",
            machine: &machine,
        };
        let ok = outcome(&case, &[50.0]);
        let bad = CaseOutcome::empty(
            &case,
            Status::Failed(crate::results::Failure::call(
                &crate::cuda::CudaError::driver(
                    "cuMemAlloc",
                    cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                ),
                crate::results::Phase::DeviceAllocation,
            )),
        );
        let (rows, _) = multi_gpu_rows(
            &case,
            &ctx,
            &[gpu(0), gpu(1)],
            &[outcome(&case, &[50.0]), outcome(&case, &[50.0])],
            &[ok, bad],
        );
        let all = rows
            .iter()
            .find(|r| r.device == Some(Device::All))
            .expect("sum row");
        assert_eq!(
            all.status.to_field(),
            "failed: GPU 1: cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (device allocation)"
        );
        assert!(all.status.failure().is_some_and(|f| f.is_out_of_memory()));
        assert_eq!(all.bw_median_gbs, None);
    }
}
