//! Receiving the injection library's event streams: a Unix socket in a private temporary folder
//! (Linux) or a named pipe `\\.\pipe\pinscope-<pid>-<n>` (Windows), named in
//! `PINSCOPE_EVENTS_PIPE`, where each process of the observed program that initialises CUDA
//! connects once and sends its own stream (so library ids never collide between processes). One
//! thread accepts and reads every connection without blocking, decoding each stream with its own
//! [`Decoder`]; when the command has exited it drains what is left and hands back the events, on
//! the command's clock.

use super::wire::Decoder;
use crate::results::AllocEvent;
use std::ffi::OsStr;
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

/// The endpoint's name and the thread that reads it.
pub struct Receiver {
    endpoint: std::ffi::OsString,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Received>,
}

impl Receiver {
    /// Listens at a new endpoint; `origin_ns` is the command's start on the clock the library's
    /// times are read on ([`monotonic_ns`]).
    pub fn start(origin_ns: u64) -> std::io::Result<Receiver> {
        let mut listener = transport::Listener::open()?;
        let endpoint = listener.endpoint().to_owned();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("pinscope-events".into())
            .spawn(move || read_all(&mut listener, &flag, origin_ns))?;
        Ok(Receiver {
            endpoint,
            stop,
            thread,
        })
    }

    /// The endpoint's name, for `PINSCOPE_EVENTS_PIPE`.
    pub fn endpoint(&self) -> &OsStr {
        &self.endpoint
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
    connection: transport::Connection,
    decoder: Decoder,
    open: bool,
}

/// Accepts and reads until told to stop, then once more, so nothing sent before the command
/// exited is lost.
fn read_all(listener: &mut transport::Listener, stop: &AtomicBool, origin_ns: u64) -> Received {
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
fn accept_new(listener: &mut transport::Listener, streams: &mut Vec<Stream>) -> bool {
    let mut any = false;
    while let Some(connection) = listener.accept() {
        streams.push(Stream {
            connection,
            decoder: Decoder::default(),
            open: true,
        });
        any = true;
    }
    any
}

/// Reads what a connection holds now into `events`; whether anything came.
fn read_stream(s: &mut Stream, events: &mut Vec<AllocEvent>, origin_ns: u64) -> bool {
    let mut buf = [0u8; 64 * 1024];
    let mut any = false;
    loop {
        match s.connection.read(&mut buf) {
            transport::Read::Data(n) => {
                any = true;
                events.extend(s.decoder.push(&buf[..n]).into_iter().map(|mut e| {
                    e.time_ns = e.time_ns.saturating_sub(origin_ns);
                    e
                }));
            }
            transport::Read::Empty => return any,
            transport::Read::Closed => {
                s.open = false;
                return any;
            }
        }
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds: the clock the library stamps events with (and the one
/// `Instant` reads on Linux).
#[cfg(unix)]
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(t.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(t.tv_nsec).unwrap_or(0))
}

/// `QueryPerformanceCounter` now, in nanoseconds: the clock the library stamps events with (and
/// the one `Instant` reads on Windows).
#[cfg(windows)]
pub fn monotonic_ns() -> u64 {
    crate::probe::pipe::performance_counter_ns()
}

/// The Unix socket, in a private temporary folder.
#[cfg(unix)]
mod transport {
    use std::ffi::OsStr;
    use std::io::{ErrorKind, Read as _};
    use std::os::unix::net::{UnixListener, UnixStream};

    pub struct Listener {
        /// Holds the socket; removed with it.
        _dir: tempfile::TempDir,
        path: std::path::PathBuf,
        socket: UnixListener,
    }

    pub struct Connection(UnixStream);

    /// What a read found.
    pub enum Read {
        Data(usize),
        Empty,
        Closed,
    }

    impl Listener {
        pub fn open() -> std::io::Result<Listener> {
            let dir = tempfile::Builder::new()
                .prefix("pinscope-events-")
                .tempdir()?;
            let path = dir.path().join("events.sock");
            let socket = UnixListener::bind(&path)?;
            socket.set_nonblocking(true)?;
            Ok(Listener {
                _dir: dir,
                path,
                socket,
            })
        }

        pub fn endpoint(&self) -> &OsStr {
            self.path.as_os_str()
        }

        /// A connection made since the last call, or `None`.
        pub fn accept(&mut self) -> Option<Connection> {
            loop {
                let (socket, _) = self.socket.accept().ok()?;
                if socket.set_nonblocking(true).is_ok() {
                    return Some(Connection(socket));
                }
            }
        }
    }

    impl Connection {
        pub fn read(&mut self, buf: &mut [u8]) -> Read {
            loop {
                return match self.0.read(buf) {
                    Ok(0) => Read::Closed,
                    Ok(n) => Read::Data(n),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => Read::Empty,
                    Err(_) => Read::Closed,
                };
            }
        }
    }
}

/// The named pipe (`probe::pipe` holds its system calls).
#[cfg(windows)]
mod transport {
    use crate::probe::pipe::{PipeClient, PipeServer};
    use std::ffi::OsStr;

    pub use crate::probe::pipe::PipeRead as Read;

    pub struct Listener(PipeServer);

    pub struct Connection(PipeClient);

    impl Listener {
        pub fn open() -> std::io::Result<Listener> {
            PipeServer::create().map(Listener)
        }

        pub fn endpoint(&self) -> &OsStr {
            OsStr::new(self.0.name())
        }

        /// A connection made since the last call, or `None`.
        pub fn accept(&mut self) -> Option<Connection> {
            self.0.accept().map(Connection)
        }
    }

    impl Connection {
        pub fn read(&mut self, buf: &mut [u8]) -> Read {
            self.0.read(buf)
        }
    }
}

#[cfg(all(test, unix))]
mod tests;
