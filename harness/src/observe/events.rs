//! Receiving the injection library's event streams: a Unix socket in a private temporary folder
//! (its path in `PINSCOPE_EVENTS_PIPE`), where each process of the observed program that
//! initialises CUDA connects once and sends its own stream (so library ids never collide between
//! processes). One thread accepts and reads every connection without blocking, decoding each
//! stream with its own [`Decoder`]; when the command has exited it drains what is left and
//! hands back the events, on the command's clock.

use super::wire::Decoder;
use crate::results::AllocEvent;
use std::io::{ErrorKind, Read};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the reading thread rests when nothing arrived.
const IDLE: Duration = Duration::from_millis(5);

/// What the streams came to.
#[derive(Debug, Default)]
pub struct Received {
    /// Every event, in time order, `time_ns` since the command started.
    pub events: Vec<AllocEvent>,
    /// Connections made (one per process that initialised CUDA).
    pub processes: u64,
    pub dropped: u64,
    /// One sentence per stream that broke the format.
    pub faults: Vec<String>,
}

/// The listening socket and the thread that reads it.
pub struct Receiver {
    /// Holds the socket; removed with it.
    _dir: tempfile::TempDir,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Received>,
}

impl Receiver {
    /// Listens at a new socket; `origin_ns` is the command's start on CLOCK_MONOTONIC, which
    /// the library's times are read on.
    pub fn start(origin_ns: u64) -> std::io::Result<Receiver> {
        let dir = tempfile::Builder::new()
            .prefix("pinscope-events-")
            .tempdir()?;
        let path = dir.path().join("events.sock");
        let listener = UnixListener::bind(&path)?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("pinscope-events".into())
            .spawn(move || read_all(&listener, &flag, origin_ns))?;
        Ok(Receiver {
            _dir: dir,
            path,
            stop,
            thread,
        })
    }

    /// The socket's path, for `PINSCOPE_EVENTS_PIPE`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Drains what was sent and returns it (the command has exited).
    pub fn finish(self) -> Received {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap_or_else(|_| Received {
            faults: vec!["the thread reading the event stream failed; no events were kept".into()],
            ..Received::default()
        })
    }
}

/// One process's connection.
struct Stream {
    socket: UnixStream,
    decoder: Decoder,
    open: bool,
}

/// Accepts and reads until told to stop, then once more, so nothing sent before the command
/// exited is lost.
fn read_all(listener: &UnixListener, stop: &AtomicBool, origin_ns: u64) -> Received {
    let mut streams: Vec<Stream> = Vec::new();
    let mut out = Received::default();
    loop {
        let last = stop.load(Ordering::SeqCst);
        let mut moved = accept_new(listener, &mut streams);
        for s in streams.iter_mut().filter(|s| s.open) {
            moved |= read_stream(s, &mut out.events, origin_ns);
        }
        if last {
            break;
        }
        if !moved {
            std::thread::sleep(IDLE);
        }
    }
    out.processes = streams.len() as u64;
    for s in streams {
        out.dropped += s.decoder.dropped();
        if let Some(fault) = s.decoder.finish() {
            out.faults.push(fault.to_string());
        }
    }
    out.events.sort_by_key(|e| e.time_ns);
    out
}

/// Accepts every pending connection; whether there was one.
fn accept_new(listener: &UnixListener, streams: &mut Vec<Stream>) -> bool {
    let mut any = false;
    while let Ok((socket, _)) = listener.accept() {
        if socket.set_nonblocking(true).is_ok() {
            streams.push(Stream {
                socket,
                decoder: Decoder::default(),
                open: true,
            });
            any = true;
        }
    }
    any
}

/// Reads what a connection holds now into `events`; whether anything came.
fn read_stream(s: &mut Stream, events: &mut Vec<AllocEvent>, origin_ns: u64) -> bool {
    let mut buf = [0u8; 64 * 1024];
    let mut any = false;
    loop {
        match s.socket.read(&mut buf) {
            Ok(0) => {
                s.open = false;
                return any;
            }
            Ok(n) => {
                any = true;
                events.extend(s.decoder.push(&buf[..n]).into_iter().map(|mut e| {
                    e.time_ns = e.time_ns.saturating_sub(origin_ns);
                    e
                }));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return any,
            Err(_) => {
                s.open = false;
                return any;
            }
        }
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds: the clock the library stamps events with (and the one
/// `Instant` reads on Linux).
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(t.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(t.tv_nsec).unwrap_or(0))
}

#[cfg(test)]
mod tests;
