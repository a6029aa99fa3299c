//! pinscope's CUPTI injection library (Linux and Windows). `pinscope observe` writes it to a
//! cache file and names it in `CUDA_INJECTION64_PATH`; the CUDA driver loads it at `cuInit` in
//! every process of the observed program that initialises CUDA and calls
//! [`InitializeInjection`]. That loads CUPTI from the path in `PINSCOPE_CUPTI_LIBRARY` (pinscope
//! found it), subscribes to the driver-API callbacks of the allocation and free calls, and at
//! each call's return sends one event frame (format: `../src/observe/wire/frame.rs`, compiled
//! here too) to the endpoint named in `PINSCOPE_EVENTS_PIPE`: a Unix socket on Linux
//! (`unix.rs`), a named pipe on Windows (`windows.rs`).
//!
//! Built by pinscope's build script as a `cdylib` for the build's target, with no dependency but
//! std, and no CUDA or CUPTI at build time: CUPTI is opened at run time.
//!
//! The program stays its own: writes never wait (a non-blocking socket sent to with
//! `MSG_NOSIGNAL` on Linux, a `PIPE_NOWAIT` pipe on Windows), so a full connection drops the
//! event (counted, and the count sent with the next frame that gets through) and a vanished
//! pinscope raises no SIGPIPE; nothing is printed unless CUPTI cannot be used (one line on
//! stderr) or `PINSCOPE_INJECT_DEBUG` is set (each event's stack objects).

#![allow(clippy::missing_safety_doc)]

#[allow(dead_code)]
#[path = "../src/observe/wire/frame.rs"]
mod frame;

#[allow(dead_code)]
#[path = "../src/results/call_code.rs"]
mod call_code;

#[path = "attribution.rs"]
mod attribution;

use std::ffi::{OsStr, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

#[cfg(unix)]
#[path = "unix.rs"]
mod sys;

#[cfg(windows)]
#[path = "windows.rs"]
mod sys;

#[path = "cupti_abi.rs"]
mod cupti_abi;

use cupti_abi::{API_ENTER, API_EXIT, CallbackData, DOMAIN_DRIVER_API};

mod cbid;

/// How many stack frames are looked at for the calling library.
const DEPTH: usize = 48;

/// One stack frame's object: (base address, path), or `None` where no object holds it.
type Frame = Option<(usize, &'static [u8])>;

/// What one non-blocking write came to.
enum Io {
    /// Some bytes (not always all) went out.
    Wrote(usize),
    /// The connection was full: nothing went out.
    Full,
    /// The connection failed (pinscope is gone).
    Failed,
}

// ---- What the library keeps. ----

/// Read once at initialisation.
struct Setup {
    endpoint: sys::Endpoint,
    /// Where this library is loaded: its frames are not the caller.
    own_base: usize,
    debug: bool,
}

static SETUP: OnceLock<Setup> = OnceLock::new();
static STARTED: AtomicBool = AtomicBool::new(false);
static CONN: Mutex<Conn> = Mutex::new(Conn::NONE);

/// This process's connection to pinscope. A forked child finds the parent's pid here and opens
/// its own (its library ids start again), so no two processes share a stream.
struct Conn {
    pid: u32,
    channel: Option<sys::Channel>,
    /// Objects (by base address) already sent as library frames, with their ids.
    sent: Vec<(usize, u32)>,
    /// Events dropped since the last dropped-frame got through.
    dropped: u64,
}

impl Conn {
    const NONE: Conn = Conn {
        pid: 0,
        channel: None,
        sent: Vec::new(),
        dropped: 0,
    };
}

/// What one send came to.
enum Sent {
    Whole,
    /// The connection was full: the frame was not sent.
    Full,
    /// The connection is gone (closed here).
    Lost,
}

/// Sends one whole frame, or none of it.
fn send_frame(conn: &mut Conn, bytes: &[u8]) -> Sent {
    let Some(channel) = conn.channel.as_mut() else {
        return Sent::Lost;
    };
    let mut at = 0;
    let mut tries = 0;
    while at < bytes.len() {
        let full = match channel.send(&bytes[at..]) {
            Io::Wrote(n) => {
                at += n;
                continue;
            }
            Io::Full => true,
            Io::Failed => false,
        };
        if full && at == 0 {
            return Sent::Full;
        }
        // Part of a frame is out: finish it (at most 0.1 s) or the stream would be corrupt.
        tries += 1;
        if !full || tries > 1000 {
            conn.channel = None;
            return Sent::Lost;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    Sent::Whole
}

/// Opens this process's connection when it has none (or holds its parent's) and sends the
/// stream's header.
fn connect_here(conn: &mut Conn, setup: &Setup, pid: u32) {
    if conn.pid == pid {
        return;
    }
    // A forked child: the parent's socket stays the parent's (closed here, in the child).
    *conn = Conn { pid, ..Conn::NONE };
    conn.channel = sys::Channel::open(&setup.endpoint);
    if !matches!(send_frame(conn, &frame::header()), Sent::Whole) {
        conn.channel = None;
    }
}

/// The calling library of this call: (object base, path) of the first frame outside CUDA.
fn calling_object(setup: &Setup) -> Option<(usize, &'static [u8])> {
    let mut frames: [Frame; DEPTH] = [None; DEPTH];
    let n = sys::stack_objects(&mut frames);
    if setup.debug {
        let names: Vec<String> = frames[..n]
            .iter()
            .map(|f| f.map_or("?".into(), |(_, p)| String::from_utf8_lossy(p).into_owned()))
            .collect();
        eprintln!("pinscope-inject: stack objects: {}", names.join(" < "));
    }
    let i = attribution::caller(&frames[..n], setup.own_base)?;
    frames[i]
}

/// The library id of `object` on this connection, sending its frame first when new (0 when it
/// cannot be sent or is not UTF-8).
fn library_id(conn: &mut Conn, object: Option<(usize, &[u8])>) -> u32 {
    let Some((base, path)) = object else {
        return 0;
    };
    if let Some(&(_, id)) = conn.sent.iter().find(|(b, _)| *b == base) {
        return id;
    }
    let path = sys::object_path(path);
    if std::str::from_utf8(&path).is_err() {
        return 0;
    }
    let id = conn.sent.len() as u32 + 1;
    let mut buf = [0; frame::MAX_FRAME];
    let Some(len) = frame::library_frame(id, &path, &mut buf) else {
        return 0;
    };
    match send_frame(conn, &buf[..len]) {
        Sent::Whole => {
            conn.sent.push((base, id));
            id
        }
        Sent::Full | Sent::Lost => 0,
    }
}

/// Sends one event of this process.
fn report(setup: &Setup, mut event: frame::EventFields) {
    let object = calling_object(setup);
    let Ok(mut conn) = CONN.lock() else {
        return;
    };
    connect_here(&mut conn, setup, event.pid);
    if conn.channel.is_none() {
        return;
    }
    if conn.dropped > 0 {
        let dropped = frame::dropped_frame(conn.dropped);
        if let Sent::Whole = send_frame(&mut conn, &dropped) {
            conn.dropped = 0;
        }
    }
    event.library = library_id(&mut conn, object);
    if let Sent::Full = send_frame(&mut conn, &frame::event_frame(&event)) {
        conn.dropped += 1;
    }
}

thread_local! {
    /// When this thread entered its current driver call.
    static ENTERED_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// CUPTI's callback: at the return of an enabled driver call, its event.
unsafe extern "C" fn on_call(_user: *mut c_void, domain: u32, id: u32, data: *const c_void) {
    if domain != DOMAIN_DRIVER_API || data.is_null() {
        return;
    }
    let Some(setup) = SETUP.get() else {
        return;
    };
    // SAFETY: for the driver-API domain CUPTI passes a `CUpti_CallbackData`.
    let data = unsafe { &*data.cast::<CallbackData>() };
    if data.callback_site == API_ENTER {
        ENTERED_NS.with(|t| t.set(sys::monotonic_ns()));
        return;
    }
    if data.callback_site != API_EXIT
        || data.function_params.is_null()
        || data.function_return_value.is_null()
    {
        return;
    }
    // SAFETY: a driver call's return value is its `CUresult`, an int.
    let result = unsafe { *data.function_return_value.cast::<u32>() };
    // SAFETY: `function_params` is the parameter struct of call `id`, read after the call.
    let Some(call) = (unsafe { cbid::decode(id, data.function_params, result == 0) }) else {
        return;
    };
    let now = sys::monotonic_ns();
    let event = frame::EventFields {
        time_ns: now,
        duration_ns: match ENTERED_NS.with(|t| t.get()) {
            0 => 0,
            entered => now.saturating_sub(entered),
        },
        pid: std::process::id(),
        tid: sys::thread_id(),
        call: call.code,
        flags: call.flags,
        result,
        bytes: call.bytes,
        address: call.address,
        library: 0,
    };
    report(setup, event);
}

/// Subscribes [`on_call`] to CUPTI's driver-API callbacks; why CUPTI could not be used, for the
/// one line on stderr.
fn subscribe(given: &OsStr) -> Result<(), String> {
    let (sub, enable) = sys::cupti_entry_points(given)?;
    let mut handle = std::ptr::null_mut();
    // SAFETY: `handle` is writable; `on_call` lives as long as the process.
    let r = unsafe { sub(&mut handle, on_call, std::ptr::null_mut()) };
    if r != 0 {
        return Err(format!(
            "cuptiSubscribe returned {r} (another profiler may hold CUPTI)"
        ));
    }
    // A CUPTI older than a call (`cuMemAllocFromPoolAsync` came with CUDA 11.2) refuses its id:
    // the others are still recorded.
    let (mut enabled, mut refused) = (0, None);
    for &id in cbid::ENABLED {
        // SAFETY: `handle` is the subscriber just made; the ids are driver-API callback ids.
        let r = unsafe { enable(1, handle, DOMAIN_DRIVER_API, id) };
        if r == 0 {
            enabled += 1;
        } else {
            refused.get_or_insert((id, r));
        }
    }
    if let (0, Some((id, r))) = (enabled, refused) {
        return Err(format!("cuptiEnableCallback({id}) returned {r}"));
    }
    Ok(())
}

/// Called by the CUDA driver at `cuInit` when `CUDA_INJECTION64_PATH` names this library.
/// Returns 1 (success) in every case: a failure here must not fail the program's CUDA.
#[unsafe(no_mangle)]
pub extern "C" fn InitializeInjection() -> c_int {
    if STARTED.swap(true, Ordering::SeqCst) {
        return 1;
    }
    let (Some(pipe), Some(cupti)) = (
        std::env::var_os("PINSCOPE_EVENTS_PIPE"),
        std::env::var_os("PINSCOPE_CUPTI_LIBRARY"),
    ) else {
        return 1;
    };
    let Some(endpoint) = sys::endpoint(&pipe) else {
        return 1;
    };
    sys::prepare();
    let _ = SETUP.set(Setup {
        endpoint,
        own_base: sys::own_base(),
        debug: std::env::var_os("PINSCOPE_INJECT_DEBUG").is_some(),
    });
    if let Err(why) = subscribe(&cupti) {
        eprintln!(
            "pinscope: CUPTI could not be used in process {}, so its CUDA allocations are not recorded: {why}",
            std::process::id()
        );
    }
    1
}
