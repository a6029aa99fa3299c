//! Signals while a command is observed. A terminal's Ctrl-C reaches the whole foreground process
//! group, so the command gets its SIGINT as it would without pinscope; pinscope itself keeps
//! observing until the command exits, writes what it saw and exits with the command's status.
//! SIGTERM and SIGHUP sent to pinscope are forwarded to the command. SIGINT is not forwarded:
//! under Ctrl-C the command would get it twice (Python raises a second KeyboardInterrupt).
//!
//! Unix: right after the command is started (it inherits the signal mask, so they are blocked
//! only once it runs), the three signals are blocked in pinscope's main thread, before any other
//! thread is started, and one thread takes them with `sigwait`. A signal that arrives in the
//! microseconds between the start and the block ends pinscope as it would without this. Windows: a console control handler keeps pinscope alive on Ctrl-C and
//! Ctrl-Break, which the console sends to the command too.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// What the signal thread shares with the observer.
#[derive(Default)]
struct State {
    /// The command's pid while it may be signalled; 0 before it starts and once it is reaped.
    child: AtomicU32,
    /// The signals received, by name, in order.
    received: Mutex<Vec<String>>,
}

impl State {
    fn record(&self, name: &str) {
        if let Ok(mut r) = self.received.lock() {
            r.push(name.to_string());
        }
    }
}

/// Signals held for pinscope while a command is observed.
pub struct SignalGuard {
    state: Arc<State>,
}

impl SignalGuard {
    /// The command now has this pid: forward SIGTERM/SIGHUP to it.
    pub fn command_started(&self, pid: u32) {
        self.state.child.store(pid, Ordering::SeqCst);
    }

    /// The command was reaped: its pid may be reused, so nothing is forwarded any more.
    pub fn command_ended(&self) {
        self.state.child.store(0, Ordering::SeqCst);
    }

    /// A guard that takes no signals (when they could not be taken).
    pub fn inactive() -> SignalGuard {
        SignalGuard {
            state: Arc::new(State::default()),
        }
    }

    /// The signals pinscope received, by name (`SIGINT`, `SIGTERM (forwarded)`).
    pub fn received(&self) -> Vec<String> {
        self.state
            .received
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }
}

/// Takes SIGINT, SIGTERM and SIGHUP for pinscope. Call after starting the command (which
/// would inherit the blocked mask) and before starting any thread.
#[cfg(unix)]
pub fn hold() -> Result<SignalGuard, crate::Error> {
    use nix::sys::signal::{SigSet, Signal, kill};
    use nix::unistd::Pid;
    let mut set = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(s);
    }
    set.thread_block()
        .map_err(|e| crate::Error::System(format!("pinscope could not block signals: {e}")))?;
    let state = Arc::new(State::default());
    let shared = state.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            while let Ok(sig) = set.wait() {
                let pid = shared.child.load(Ordering::SeqCst);
                if sig == Signal::SIGINT || pid == 0 {
                    shared.record(sig.as_str());
                    continue;
                }
                let pid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
                match kill(pid, sig) {
                    Ok(()) => shared.record(&format!("{} (forwarded)", sig.as_str())),
                    Err(e) => shared.record(&format!("{} (not forwarded: {e})", sig.as_str())),
                }
            }
        })
        .map_err(|e| {
            crate::Error::System(format!("pinscope could not start its signal thread: {e}"))
        })?;
    Ok(SignalGuard { state })
}

/// Keeps pinscope alive on Ctrl-C / Ctrl-Break (the console sends them to the command too).
#[cfg(not(unix))]
pub fn hold() -> Result<SignalGuard, crate::Error> {
    let state = Arc::new(State::default());
    let shared = state.clone();
    // A handler already installed (a second observe in one process) keeps the first one, which
    // also keeps pinscope alive.
    let _ = ctrlc::set_handler(move || shared.record("Ctrl-C"));
    Ok(SignalGuard { state })
}
