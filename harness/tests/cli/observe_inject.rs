//! `observe` with its CUPTI injection library, on a machine without CUDA: a stand-in CUPTI and a
//! stand-in program (`harness/inject/standin/`) play the calls the CUDA driver would report, so
//! the library's loading, callbacks, attribution, per-process streams and the events CSV and
//! page are checked end to end. On Linux the stand-ins are built here with rustc, over a Unix
//! socket; on Windows (run under Wine) pinscope's build script built them beside the DLL, and
//! the events come through a named pipe.
#![cfg(any(target_os = "linux", windows))]

use crate::common::*;
use pinscope::observe::wire::Decoder;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Builds the stand-ins into `dir`: (CUPTI, program).
#[cfg(target_os = "linux")]
fn standins(dir: &Path) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("inject/standin");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let cupti = dir.join("libcupti.so.standin");
    let program = dir.join("standin-program");
    for (kind, out, file) in [
        ("cdylib", &cupti, "cupti.rs"),
        ("bin", &program, "program.rs"),
    ] {
        let ok = Command::new(&rustc)
            .args(["--edition", "2024", "--crate-type", kind, "-o"])
            .arg(out)
            .arg(src.join(file))
            .status()
            .expect("rustc runs");
        assert!(ok.success(), "building the stand-in {file}");
    }
    (cupti, program)
}

/// Copies the stand-ins the build script built into `dir`: (CUPTI, program).
#[cfg(windows)]
fn standins(dir: &Path) -> (PathBuf, PathBuf) {
    let built = Path::new(env!("OUT_DIR")).join("windows");
    let cupti = dir.join("cupti64_standin.dll");
    let program = dir.join("standin-program.exe");
    for (out, file) in [
        (&cupti, "cupti64_standin.dll"),
        (&program, "standin-program.exe"),
    ] {
        std::fs::copy(built.join(file), out).expect("the build script built the stand-ins");
    }
    (cupti, program)
}

/// The variable naming the folder the library's cache file goes in.
const CACHE_ENV: &str = if cfg!(windows) {
    "LOCALAPPDATA"
} else {
    "XDG_CACHE_HOME"
};

fn file_ending(dir: &Path, suffix: &str) -> PathBuf {
    let names = files::entry_names(dir);
    let name = names
        .iter()
        .find(|n| n.ends_with(suffix))
        .unwrap_or_else(|| panic!("no *{suffix} in {names:?}"));
    dir.join(name)
}

#[test]
fn the_library_reports_each_call_with_its_caller_and_process() {
    let d = tempfile::tempdir().expect("dir");
    let (cupti, program) = standins(d.path());
    let out = d.path().join("obs");
    let cache = d.path().join("cache");
    pinscope()
        .env(CACHE_ENV, &cache)
        .env_remove("CUDA_INJECTION64_PATH")
        .args(["observe", "-q", "--interval", "20ms", "--cupti"])
        .arg(&cupti)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&program)
        .assert()
        .success()
        .stdout(predicates::str::contains("a child pinned 2 MiB"));
    let csv = std::fs::read_to_string(file_ending(&out, ".events.csv")).expect("events");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let calls: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[4], r[5], r[8])).collect();
    assert_eq!(
        calls,
        [
            ("host_alloc", "1073741824", "0x7f0000000000"),
            ("free_host", "0", "0x7f0000000000"),
            ("device_alloc", "8388608", "0x7e0000000000"),
            ("host_alloc", "2097152", "0x7f1000000000"),
        ],
        "{csv}"
    );
    let program_path = program.to_str().expect("UTF-8");
    assert!(
        rows.iter().all(|r| r[9] == program_path),
        "the caller: {csv}"
    );
    assert_ne!(
        rows[0][2], rows[3][2],
        "the forked child is its own process"
    );
    let sidecar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(file_ending(&out, ".observed.json")).expect("sidecar"),
    )
    .expect("JSON");
    let events = &sidecar["events"];
    assert_eq!(
        (events["processes"].as_u64(), events["events"].as_u64()),
        (Some(2), Some(4))
    );
    let library = events["library"].as_str().expect("library named");
    assert!(
        library.starts_with(cache.to_str().expect("UTF-8")),
        "{library}"
    );
}

#[test]
fn a_cuda_injection_path_of_another_tool_is_left_alone_and_said() {
    let d = tempfile::tempdir().expect("dir");
    let (cupti, program) = standins(d.path());
    let out = d.path().join("obs");
    pinscope()
        .env("CUDA_INJECTION64_PATH", "/nonexistent/other-tool.so")
        .args(["observe", "--cupti"])
        .arg(&cupti)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&program)
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "CUDA_INJECTION64_PATH is already set (to /nonexistent/other-tool.so)",
        ));
}

/// The library built into pinscope, as the build script left it.
fn built_library() -> PathBuf {
    let out = Path::new(env!("OUT_DIR"));
    if cfg!(windows) {
        out.join("windows").join("pinscope_inject.dll")
    } else {
        out.join("libpinscope_inject.so")
    }
}

/// A reader of the library's stream that reads only when told to: the Unix socket on Linux.
#[cfg(target_os = "linux")]
mod reader {
    use std::io::{ErrorKind, Read as _};
    use std::os::unix::net::{UnixListener, UnixStream};

    pub struct Server(UnixListener, tempfile::TempDir);
    pub struct Client(UnixStream);

    pub enum Read {
        Data(usize),
        Empty,
        Closed,
    }

    impl Server {
        pub fn open() -> Server {
            let dir = tempfile::tempdir().expect("dir");
            let listener = UnixListener::bind(dir.path().join("s")).expect("listen");
            Server(listener, dir)
        }

        pub fn endpoint(&self) -> std::ffi::OsString {
            self.1.path().join("s").into_os_string()
        }

        pub fn accept(&mut self) -> Option<Client> {
            let (s, _) = self.0.accept().ok()?;
            s.set_nonblocking(true).expect("non-blocking");
            Some(Client(s))
        }
    }

    impl Client {
        pub fn read(&mut self, buf: &mut [u8]) -> Read {
            match self.0.read(buf) {
                Ok(0) => Read::Closed,
                Ok(n) => Read::Data(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => Read::Empty,
                Err(e) => panic!("reading the socket: {e}"),
            }
        }
    }
}

/// A reader of the library's stream that reads only when told to: pinscope's named pipe.
#[cfg(windows)]
mod reader {
    pub use pinscope::probe::pipe::{PipeClient as Client, PipeRead as Read};

    pub struct Server(pinscope::probe::pipe::PipeServer);

    impl Server {
        pub fn open() -> Server {
            Server(pinscope::probe::pipe::PipeServer::create().expect("pipe"))
        }

        pub fn endpoint(&self) -> std::ffi::OsString {
            self.0.name().into()
        }

        pub fn accept(&mut self) -> Option<Client> {
            for _ in 0..1000 {
                if let Some(c) = self.0.accept() {
                    return Some(c);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            None
        }
    }
}

/// Reads until nothing is waiting (`to_end`: until the writer has closed); the events decoded.
fn drain(client: &mut reader::Client, decoder: &mut Decoder, to_end: bool) -> u64 {
    let mut buf = vec![0; 64 * 1024];
    let mut events = 0;
    for _ in 0..100_000 {
        match client.read(&mut buf) {
            reader::Read::Data(n) => events += decoder.push(&buf[..n]).len() as u64,
            reader::Read::Empty if !to_end => return events,
            reader::Read::Empty => std::thread::sleep(Duration::from_millis(1)),
            reader::Read::Closed => return events,
        }
    }
    panic!("the stream did not end");
}

#[test]
fn a_reader_that_falls_behind_never_holds_the_program_and_learns_what_was_dropped() {
    // More than a named pipe's 1 MiB buffer holds (59 bytes an event).
    const CALLS: u64 = 25_000;
    let d = tempfile::tempdir().expect("dir");
    let (cupti, program) = standins(d.path());
    let mut server = reader::Server::open();
    let mut child = Command::new(&program)
        .args(["many", &CALLS.to_string()])
        .env("CUDA_INJECTION64_PATH", built_library())
        .env("PINSCOPE_CUPTI_LIBRARY", &cupti)
        .env("PINSCOPE_EVENTS_PIPE", server.endpoint())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the stand-in starts");
    // Nobody reads while the program plays its calls: it must still get to their end.
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(300));
    assert_eq!(
        line.as_deref().map(str::trim),
        Ok(format!("played {CALLS}").as_str()),
        "the program was held while nobody read"
    );
    let mut client = server.accept().expect("the program connected");
    let mut decoder = Decoder::default();
    let mut events = drain(&mut client, &mut decoder, false);
    // Caught up: the next call carries the count of the events that did not fit.
    let mut stdin = child.stdin.take().expect("piped");
    std::io::Write::write_all(&mut stdin, b"go\n").expect("stdin");
    drop(stdin);
    assert!(child.wait().expect("waits").success());
    events += drain(&mut client, &mut decoder, true);
    let dropped = decoder.dropped();
    assert!(dropped > 0, "{events} events arrived and none was dropped");
    assert_eq!(
        events + dropped,
        CALLS + 1,
        "{events} events, {dropped} dropped"
    );
    assert_eq!(decoder.finish(), None, "only whole frames were sent");
}
