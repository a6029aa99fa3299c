//! The per-case timeout (`--case-timeout`).

use crate::results::{CaseTimeout, Sidecar};
use std::path::PathBuf;
use std::sync::{Arc, mpsc};

/// Ends the run cleanly when one case takes longer than `--case-timeout` (a hung driver call
/// cannot be cancelled): marks the sidecar partial with the reason, writes it, exits with 124.
/// Every finished case is already on disk (rows are flushed per case).
pub struct Watchdog {
    shared: Arc<std::sync::Mutex<Watch>>,
    /// Dropped to stop the thread: its wait for the next check returns at once, so ending a run
    /// costs no part of a check interval.
    stop: Option<mpsc::Sender<()>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// How often the thread looks at the running case's age.
const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

struct Watch {
    sidecar: Sidecar,
    json: PathBuf,
    case: Option<(std::time::Instant, String)>,
}

impl Watchdog {
    pub fn start(sidecar: Sidecar, json: PathBuf, timeout: std::time::Duration) -> Watchdog {
        Self::start_with(sidecar, json, timeout, CHECK_EVERY, || {
            std::process::exit(124)
        })
    }

    /// Checks every `every`; `on_timeout` runs after the sidecar was written (the process exits
    /// there; tests observe).
    fn start_with(
        sidecar: Sidecar,
        json: PathBuf,
        timeout: std::time::Duration,
        every: std::time::Duration,
        on_timeout: impl Fn() + Send + 'static,
    ) -> Watchdog {
        let shared = Arc::new(std::sync::Mutex::new(Watch {
            sidecar,
            json,
            case: None,
        }));
        let (stop, stopped) = mpsc::channel::<()>();
        let sh = shared.clone();
        let handle = std::thread::spawn(move || {
            // Nothing is ever sent: the wait ends by timing out (check) or by the sender's drop.
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let Ok(mut w) = sh.lock() else { return };
                let Some((t, title)) = w.case.clone() else {
                    continue;
                };
                if t.elapsed() < timeout {
                    continue;
                }
                let ended = CaseTimeout {
                    case: title,
                    limit_ms: timeout.as_millis().try_into().unwrap_or(u64::MAX),
                };
                let msg = ended.to_string();
                w.sidecar.partial = true;
                w.sidecar.finished_at = Some(chrono::Local::now().to_rfc3339());
                w.sidecar.timed_out = Some(ended);
                let _ = w.sidecar.write_atomic(&w.json);
                eprintln!(
                    "error: {msg}; every finished case is in {}",
                    w.json.with_extension("csv").display()
                );
                w.case = None;
                on_timeout();
            }
        });
        Watchdog {
            shared,
            stop: Some(stop),
            handle: Some(handle),
        }
    }
    pub fn case_started(&self, title: &str) {
        if let Ok(mut w) = self.shared.lock() {
            w.case = Some((std::time::Instant::now(), title.to_string()));
        }
    }
    pub fn case_finished(&self, sidecar: &Sidecar) {
        if let Ok(mut w) = self.shared.lock() {
            w.case = None;
            w.sidecar = sidecar.clone();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    pub(crate) fn sidecar() -> Sidecar {
        crate::results::Sidecar::empty_for_tests()
    }

    /// A watchdog over `dir/run.json` with a `limit_ms` case limit, the JSON's path, and the
    /// flag its interrupt sets.
    fn watched(
        dir: &std::path::Path,
        limit_ms: u64,
    ) -> (Watchdog, std::path::PathBuf, Arc<AtomicBool>) {
        let json = dir.join("run.json");
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        let w = Watchdog::start_with(
            sidecar(),
            json.clone(),
            std::time::Duration::from_millis(limit_ms),
            CHECK_EVERY,
            move || f.store(true, Ordering::SeqCst),
        );
        (w, json, fired)
    }

    #[test]
    fn watchdog_marks_the_run_partial_when_a_case_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let (w, json, fired) = watched(dir.path(), 300);
        w.case_started("stuck case");
        std::thread::sleep(std::time::Duration::from_millis(1200));
        drop(w);
        assert!(fired.load(Ordering::SeqCst), "the watchdog did not fire");
        let back = Sidecar::read(&json).unwrap();
        assert!(back.partial);
        let stuck = CaseTimeout {
            case: "stuck case".into(),
            limit_ms: 300,
        };
        assert_eq!(back.timed_out, Some(stuck));
    }

    #[test]
    fn watchdog_stays_quiet_for_cases_that_finish() {
        let dir = tempfile::tempdir().unwrap();
        let (w, json, fired) = watched(dir.path(), 500);
        for _ in 0..3 {
            w.case_started("quick case");
            std::thread::sleep(std::time::Duration::from_millis(100));
            w.case_finished(&sidecar());
        }
        std::thread::sleep(std::time::Duration::from_millis(700));
        drop(w);
        assert!(!fired.load(Ordering::SeqCst));
        assert!(!json.exists(), "nothing written when no case hangs");
    }

    #[test]
    fn stopping_does_not_wait_for_the_next_check() {
        let dir = tempfile::tempdir().unwrap();
        let hour = std::time::Duration::from_secs(3600);
        let w = Watchdog::start_with(sidecar(), dir.path().join("run.json"), hour, hour, || {});
        let t = std::time::Instant::now();
        drop(w);
        // The old loop slept out its interval before it looked at the stop flag: an hour here.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            t.elapsed()
        );
    }
}
