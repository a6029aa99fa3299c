//! The server end of a named pipe that `observe` receives the injection library's events on, and
//! the clock the library stamps them with. Each process of the observed command opens the pipe
//! once; the server keeps one instance waiting for the next client and makes a new one as each
//! is taken. Every handle is in `PIPE_NOWAIT` mode, so connecting and reading are polled and
//! never wait: one thread serves every client, as the Unix socket's reader does on Linux.

use std::sync::atomic::{AtomicU32, Ordering};
use windows::Win32::Foundation::{CloseHandle, ERROR_NO_DATA, ERROR_PIPE_CONNECTED, HANDLE};
use windows::Win32::Storage::FileSystem::{
    FILE_FLAG_FIRST_PIPE_INSTANCE, PIPE_ACCESS_INBOUND, ReadFile,
};
use windows::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
use windows::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, PIPE_NOWAIT, PIPE_READMODE_BYTE,
    PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_UNLIMITED_INSTANCES,
};
use windows::core::HSTRING;

/// Each instance's inbound buffer: what a process can send before pinscope reads (a suggestion
/// to Windows, which sizes pipe buffers itself).
const IN_BUFFER: u32 = 1 << 20;

/// A pipe handle, closed when dropped.
struct OwnedPipe(HANDLE);

impl Drop for OwnedPipe {
    fn drop(&mut self) {
        // SAFETY: the handle was created here and is closed once.
        let _ = unsafe { CloseHandle(self.0) };
    }
}

// SAFETY: a pipe handle may be used and closed from any thread.
unsafe impl Send for OwnedPipe {}

/// The pipe's name and its instance waiting for a client (none for a moment when a new one
/// could not be made: it is tried again at the next [`PipeServer::accept`]).
pub struct PipeServer {
    name: String,
    waiting: Option<OwnedPipe>,
}

/// What a poll of a client's pipe found.
pub enum PipeRead {
    /// Bytes read into the buffer.
    Data(usize),
    /// Nothing now.
    Empty,
    /// The client closed its end (everything it sent was read) or the pipe failed.
    Closed,
}

/// One client's instance.
pub struct PipeClient(OwnedPipe);

impl PipeServer {
    /// Creates `\\.\pipe\pinscope-<pid>-<n>`, `n` counting the pipes this process made, for the
    /// first `n` no other pipe has taken (Wine lets a first instance join an existing pipe: the
    /// count keeps this process's pipes apart there).
    pub fn create() -> std::io::Result<PipeServer> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let mut last = None;
        for _ in 0..64 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let name = format!(r"\\.\pipe\pinscope-{}-{n}", std::process::id());
            match ffi_create_instance(&name, true) {
                Ok(waiting) => {
                    let waiting = Some(waiting);
                    return Ok(PipeServer { name, waiting });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no pipe name was free")))
    }

    /// The pipe's name, for `PINSCOPE_EVENTS_PIPE`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The waiting instance when a client has opened it (a new instance then waits for the
    /// next client); `None` while none has.
    pub fn accept(&mut self) -> Option<PipeClient> {
        if self.waiting.is_none() {
            self.waiting = ffi_create_instance(&self.name, false).ok();
        }
        if !ffi_has_client(self.waiting.as_ref()?) {
            return None;
        }
        let taken = self.waiting.take()?;
        self.waiting = ffi_create_instance(&self.name, false).ok();
        Some(PipeClient(taken))
    }
}

impl PipeClient {
    /// Reads what the client sent, without waiting.
    pub fn read(&mut self, buf: &mut [u8]) -> PipeRead {
        ffi_read(&self.0, buf)
    }
}

/// `QueryPerformanceCounter` in nanoseconds, converted as the injection library converts it.
pub fn performance_counter_ns() -> u64 {
    let (mut count, mut frequency) = (0i64, 0i64);
    // SAFETY: both are writable; neither call fails on Windows XP or later.
    let ok = unsafe {
        QueryPerformanceCounter(&mut count).is_ok()
            && QueryPerformanceFrequency(&mut frequency).is_ok()
    };
    if !ok || frequency <= 0 || count < 0 {
        return 0;
    }
    let ns = u128::from(count as u64) * 1_000_000_000 / u128::from(frequency as u64);
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// A new inbound, byte-mode, non-blocking instance of pipe `name`, local clients only; `first`:
/// fails when a pipe of that name exists already (so no other program's pipe is joined).
fn ffi_create_instance(name: &str, first: bool) -> std::io::Result<OwnedPipe> {
    let wide = HSTRING::from(name);
    let mut open = PIPE_ACCESS_INBOUND;
    if first {
        open |= FILE_FLAG_FIRST_PIPE_INSTANCE;
    }
    let mode = PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_NOWAIT | PIPE_REJECT_REMOTE_CLIENTS;
    // SAFETY: `wide` is a NUL-terminated UTF-16 name that outlives the call; no security
    // attributes (the default descriptor: this user and administrators).
    let handle = unsafe {
        CreateNamedPipeW(
            &wide,
            open,
            mode,
            PIPE_UNLIMITED_INSTANCES,
            0,
            IN_BUFFER,
            0,
            None,
        )
    };
    if handle.is_invalid() {
        return Err(std::io::Error::last_os_error());
    }
    Ok(OwnedPipe(handle))
}

/// Whether a client has opened `pipe` (connected now, or came and closed already).
fn ffi_has_client(pipe: &OwnedPipe) -> bool {
    // SAFETY: a valid pipe handle in non-blocking mode: returns at once, with no OVERLAPPED.
    match unsafe { ConnectNamedPipe(pipe.0, None) } {
        Ok(()) => false,
        // ERROR_PIPE_LISTENING: none yet.
        Err(e) => [ERROR_PIPE_CONNECTED, ERROR_NO_DATA]
            .map(|c| c.to_hresult())
            .contains(&e.code()),
    }
}

fn ffi_read(pipe: &OwnedPipe, buf: &mut [u8]) -> PipeRead {
    let mut n = 0u32;
    // SAFETY: `buf` is writable for its length and `n` is writable; a non-blocking handle with
    // no OVERLAPPED returns at once.
    match unsafe { ReadFile(pipe.0, Some(buf), Some(&mut n), None) } {
        Ok(()) if n > 0 => PipeRead::Data(n as usize),
        Ok(()) => PipeRead::Empty,
        Err(e) if e.code() == ERROR_NO_DATA.to_hresult() => PipeRead::Empty,
        // ERROR_BROKEN_PIPE: the client closed its end and all it sent was read.
        Err(_) => PipeRead::Closed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Polls `f` until it gives something (at most 5 s).
    fn soon<T>(mut f: impl FnMut() -> Option<T>) -> T {
        for _ in 0..500 {
            if let Some(v) = f() {
                return v;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("nothing came");
    }

    fn read_all(client: &mut PipeClient) -> Vec<u8> {
        let (mut got, mut buf) = (Vec::new(), [0u8; 64]);
        soon(|| match client.read(&mut buf) {
            PipeRead::Data(n) => {
                got.extend_from_slice(&buf[..n]);
                None
            }
            PipeRead::Empty => None,
            PipeRead::Closed => Some(()),
        });
        got
    }

    #[test]
    fn each_client_gets_its_own_instance_and_its_end_is_seen() {
        let mut server = PipeServer::create().expect("pipe");
        assert!(server.name().starts_with(r"\\.\pipe\pinscope-"));
        assert!(server.accept().is_none(), "no client yet");
        let name = server.name().to_string();
        let open = || std::fs::OpenOptions::new().write(true).open(&name);
        let mut a = open().expect("first client");
        let mut first = soon(|| server.accept());
        let mut b = open().expect("second client, on the new instance");
        let mut second = soon(|| server.accept());
        a.write_all(b"from a").expect("a");
        b.write_all(b"from b").expect("b");
        drop((a, b));
        assert_eq!(read_all(&mut first), b"from a");
        assert_eq!(read_all(&mut second), b"from b");
        // A second pinscope's pipe never joins this one.
        let other = PipeServer::create().expect("another pipe");
        assert_ne!(other.name(), name);
    }
}
