//! pinscope's CUPTI injection library (Linux). `pinscope observe` writes it to a cache file and
//! names it in `CUDA_INJECTION64_PATH`; the CUDA driver loads it at `cuInit` in every process of
//! the observed program that initialises CUDA and calls [`InitializeInjection`]. That loads
//! CUPTI from the path in `PINSCOPE_CUPTI_LIBRARY` (pinscope found it), subscribes to the
//! driver-API callbacks of the allocation and free calls, and at each call's return sends one
//! event frame (format: `../src/observe/wire/frame.rs`, compiled here too) to the Unix socket
//! named in `PINSCOPE_EVENTS_PIPE`.
//!
//! Built by pinscope's build script with the `rustc` cargo uses (`--crate-type cdylib`), with no
//! dependency but std, and no CUDA or CUPTI at build time: CUPTI is opened with `dlopen`.
//!
//! The program stays its own: the socket is non-blocking and sent to with `MSG_NOSIGNAL`, so a
//! full connection drops the event (counted, and the count sent with the next frame that gets
//! through) and a vanished pinscope raises no SIGPIPE; nothing is printed unless CUPTI cannot be
//! used (one line on stderr) or `PINSCOPE_INJECT_DEBUG` is set (each event's stack objects).

#![allow(clippy::missing_safety_doc)]

#[allow(dead_code)]
#[path = "../src/observe/wire/frame.rs"]
mod frame;

#[allow(dead_code)]
#[path = "../src/results/call_code.rs"]
mod call_code;

#[path = "attribution.rs"]
mod attribution;

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

// ---- libc (glibc), declared by hand: the library has no dependency. ----

#[repr(C)]
struct DlInfo {
    dli_fname: *const c_char,
    dli_fbase: *mut c_void,
    dli_sname: *const c_char,
    dli_saddr: *mut c_void,
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

#[repr(C)]
struct SockaddrUn {
    sun_family: u16,
    sun_path: [u8; 108],
}

/// The first fields of `struct dl_phdr_info`.
#[repr(C)]
struct PhdrInfo {
    dlpi_addr: usize,
    dlpi_name: *const c_char,
}

type PhdrCallback = unsafe extern "C" fn(*mut PhdrInfo, usize, *mut c_void) -> c_int;

#[link(name = "dl")]
unsafe extern "C" {
    fn dl_iterate_phdr(callback: PhdrCallback, data: *mut c_void) -> c_int;
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
}

unsafe extern "C" {
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    fn getpid() -> c_int;
    fn syscall(number: i64, ...) -> i64;
    fn socket(domain: c_int, kind: c_int, protocol: c_int) -> c_int;
    fn connect(fd: c_int, addr: *const SockaddrUn, len: u32) -> c_int;
    fn send(fd: c_int, buf: *const c_void, len: usize, flags: c_int) -> isize;
    fn close(fd: c_int) -> c_int;
}

const RTLD_NOW: c_int = 2;
const CLOCK_MONOTONIC: c_int = 1;
const AF_UNIX: c_int = 1;
const SOCK_STREAM: c_int = 1;
const SOCK_NONBLOCK: c_int = 0o4000;
const SOCK_CLOEXEC: c_int = 0o2000000;
const MSG_DONTWAIT: c_int = 0x40;
const MSG_NOSIGNAL: c_int = 0x4000;
const EAGAIN: i32 = 11;
/// `SYS_gettid` (glibc 2.28, the oldest supported, has no `gettid` wrapper); 0 elsewhere.
#[cfg(target_arch = "x86_64")]
const SYS_GETTID: i64 = 186;
#[cfg(target_arch = "aarch64")]
const SYS_GETTID: i64 = 178;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYS_GETTID: i64 = -1;

#[path = "cupti_abi.rs"]
mod cupti_abi;

use cupti_abi::{API_ENTER, API_EXIT, CallbackData, DOMAIN_DRIVER_API, EnableCallback, Subscribe};

mod cbid;

// ---- What the library keeps. ----

/// Read once at initialisation.
struct Setup {
    /// The socket's address.
    endpoint: SockaddrUn,
    /// Where this library is loaded: its frames are not the caller.
    own_base: usize,
    debug: bool,
}

// SAFETY: `SockaddrUn` is plain bytes; the setup is written once and then only read.
unsafe impl Sync for Setup {}
// SAFETY: as above.
unsafe impl Send for Setup {}

static SETUP: OnceLock<Setup> = OnceLock::new();
static STARTED: AtomicBool = AtomicBool::new(false);
static CONN: Mutex<Conn> = Mutex::new(Conn::NONE);

/// This process's connection to pinscope. A forked child finds the parent's pid here and opens
/// its own (its library ids start again), so no two processes share a stream.
struct Conn {
    pid: u32,
    fd: c_int,
    /// Objects (by base address) already sent as library frames, with their ids.
    sent: Vec<(usize, u32)>,
    /// Events dropped since the last dropped-frame got through.
    dropped: u64,
}

impl Conn {
    const NONE: Conn = Conn {
        pid: 0,
        fd: -1,
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

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Sends one whole frame, or none of it.
fn send_frame(conn: &mut Conn, bytes: &[u8]) -> Sent {
    if conn.fd < 0 {
        return Sent::Lost;
    }
    let mut at = 0;
    let mut tries = 0;
    while at < bytes.len() {
        // SAFETY: `bytes[at..]` is a live slice; the fd is this connection's socket.
        let n = unsafe {
            send(
                conn.fd,
                bytes[at..].as_ptr().cast(),
                bytes.len() - at,
                MSG_DONTWAIT | MSG_NOSIGNAL,
            )
        };
        if n > 0 {
            at += n as usize;
            continue;
        }
        let full = n < 0 && errno() == EAGAIN;
        if full && at == 0 {
            return Sent::Full;
        }
        // Part of a frame is out: finish it (a brief wait) or the stream would be corrupt.
        tries += 1;
        if !full || tries > 1000 {
            disconnect(conn);
            return Sent::Lost;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    Sent::Whole
}

fn disconnect(conn: &mut Conn) {
    if conn.fd >= 0 {
        // SAFETY: the fd is this connection's and is not used after.
        unsafe { close(conn.fd) };
    }
    conn.fd = -1;
}

/// Opens this process's connection when it has none (or holds its parent's) and sends the
/// stream's header.
fn connect_here(conn: &mut Conn, setup: &Setup, pid: u32) {
    if conn.pid == pid {
        return;
    }
    // A forked child: the parent's socket stays the parent's.
    disconnect(conn);
    *conn = Conn { pid, ..Conn::NONE };
    // SAFETY: plain socket creation.
    let fd = unsafe { socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return;
    }
    let len = std::mem::size_of::<SockaddrUn>() as u32;
    // SAFETY: `endpoint` is a valid, NUL-terminated `sockaddr_un` of `len` bytes.
    if unsafe { connect(fd, &setup.endpoint, len) } != 0 {
        // SAFETY: the fd was just created here.
        unsafe { close(fd) };
        return;
    }
    conn.fd = fd;
    if !matches!(send_frame(conn, &frame::header()), Sent::Whole) {
        disconnect(conn);
    }
}

/// The calling library of this call: (object base, path) of the first frame outside CUDA.
fn calling_object(setup: &Setup) -> Option<(usize, &'static [u8])> {
    let mut addrs = [std::ptr::null_mut::<c_void>(); 48];
    // SAFETY: `addrs` holds 48 pointers.
    let n = unsafe { backtrace(addrs.as_mut_ptr(), addrs.len() as c_int) };
    let n = usize::try_from(n).unwrap_or(0).min(addrs.len());
    let mut frames: [Option<(usize, &'static [u8])>; 48] = [None; 48];
    for (slot, &addr) in frames.iter_mut().zip(&addrs[..n]) {
        let mut info = DlInfo {
            dli_fname: std::ptr::null(),
            dli_fbase: std::ptr::null_mut(),
            dli_sname: std::ptr::null(),
            dli_saddr: std::ptr::null_mut(),
        };
        // SAFETY: `info` is writable; dladdr only reads the address.
        if unsafe { dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
            continue;
        }
        // SAFETY: dladdr's file name is a NUL-terminated string that lives as long as the
        // object stays loaded; a library that allocates through CUDA is not unloaded mid-call,
        // and the bytes are copied into a frame before this callback returns.
        let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
        *slot = Some((info.dli_fbase as usize, path));
    }
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

/// The path sent for an object: its own, or this program's for the main executable (whose
/// `dladdr` name is empty).
fn object_path(path: &[u8]) -> Vec<u8> {
    if !path.is_empty() {
        return path.to_vec();
    }
    std::fs::read_link("/proc/self/exe")
        .map(|p| p.into_os_string().into_encoded_bytes())
        .unwrap_or_else(|_| b"(the program)".to_vec())
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
    let path = object_path(path);
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
    if conn.fd < 0 {
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

fn monotonic_ns() -> u64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

fn thread_id() -> u32 {
    if SYS_GETTID < 0 {
        return 0;
    }
    // SAFETY: gettid takes no argument and cannot fail.
    unsafe { syscall(SYS_GETTID) as u32 }
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
        ENTERED_NS.with(|t| t.set(monotonic_ns()));
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
    let now = monotonic_ns();
    let event = frame::EventFields {
        time_ns: now,
        duration_ns: match ENTERED_NS.with(|t| t.get()) {
            0 => 0,
            entered => now.saturating_sub(entered),
        },
        // SAFETY: getpid cannot fail.
        pid: unsafe { getpid() } as u32,
        tid: thread_id(),
        call: call.code,
        flags: call.flags,
        result,
        bytes: call.bytes,
        address: call.address,
        library: 0,
    };
    report(setup, event);
}

/// The socket address of `path`, when it fits.
fn endpoint(path: &[u8]) -> Option<SockaddrUn> {
    let mut a = SockaddrUn {
        sun_family: AF_UNIX as u16,
        sun_path: [0; 108],
    };
    if path.is_empty() || path.len() >= a.sun_path.len() || path.contains(&0) {
        return None;
    }
    a.sun_path[..path.len()].copy_from_slice(path);
    Some(a)
}

/// `dl_iterate_phdr`'s callback: stops at the first loaded object named `libcupti.so*` and
/// keeps its path in `*data` (an `Option<CString>`).
unsafe extern "C" fn find_cupti(info: *mut PhdrInfo, _size: usize, data: *mut c_void) -> c_int {
    // SAFETY: glibc passes a valid `dl_phdr_info`; `data` is the `Option<CString>` below.
    let (info, found) = unsafe { (&*info, &mut *data.cast::<Option<CString>>()) };
    if info.dlpi_name.is_null() {
        return 0;
    }
    // SAFETY: `dlpi_name` is a NUL-terminated string of the loaded object.
    let name = unsafe { CStr::from_ptr(info.dlpi_name) };
    if attribution::file_name(name.to_bytes()).starts_with(b"libcupti.so") {
        *found = Some(name.to_owned());
        return 1;
    }
    0
}

/// The CUPTI this process loaded already (a program that links CUPTI, e.g. for its own
/// profiler): two different CUPTIs in one process are not to be risked.
fn loaded_cupti() -> Option<CString> {
    let mut found: Option<CString> = None;
    // SAFETY: `find_cupti` only writes `found`, which outlives the call.
    unsafe { dl_iterate_phdr(find_cupti, (&raw mut found).cast()) };
    found
}

/// Why CUPTI could not be used, for the one line on stderr.
fn subscribe(given: &CStr) -> Result<(), String> {
    let cupti = loaded_cupti().unwrap_or_else(|| given.to_owned());
    // SAFETY: a NUL-terminated path; dlopen runs CUPTI's initialisers, as linking would.
    let lib = unsafe { dlopen(cupti.as_ptr(), RTLD_NOW) };
    if lib.is_null() {
        return Err(format!("{} could not be loaded", cupti.to_string_lossy()));
    }
    // SAFETY: `lib` is a loaded object; the names are NUL-terminated.
    let (sub, enable) = unsafe {
        (
            dlsym(lib, c"cuptiSubscribe".as_ptr()),
            dlsym(lib, c"cuptiEnableCallback".as_ptr()),
        )
    };
    if sub.is_null() || enable.is_null() {
        return Err("it has no cuptiSubscribe or cuptiEnableCallback".into());
    }
    // SAFETY: the symbols are CUPTI's functions of these signatures (cupti_callbacks.h).
    let (sub, enable) = unsafe {
        (
            std::mem::transmute::<*mut c_void, Subscribe>(sub),
            std::mem::transmute::<*mut c_void, EnableCallback>(enable),
        )
    };
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

/// Where this library is loaded.
fn own_base() -> usize {
    let mut info = DlInfo {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    let here = own_base as *const c_void;
    // SAFETY: `info` is writable; `here` is a function of this library.
    if unsafe { dladdr(here, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
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
    let Some(endpoint) = endpoint(pipe.as_encoded_bytes()) else {
        return 1;
    };
    let Ok(cupti) = CString::new(cupti.into_encoded_bytes()) else {
        return 1;
    };
    // The first `backtrace` loads libgcc_s: do it here, not inside a CUDA call.
    let mut warm = [std::ptr::null_mut::<c_void>(); 4];
    // SAFETY: `warm` holds 4 pointers.
    unsafe { backtrace(warm.as_mut_ptr(), 4) };
    let _ = SETUP.set(Setup {
        endpoint,
        own_base: own_base(),
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
