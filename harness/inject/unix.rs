//! The injection library's Linux parts: the Unix socket its events go to, the clock, the thread
//! id, the stack's objects (`backtrace`, `dladdr`) and loading CUPTI (`dlopen`). libc (glibc) is
//! declared by hand: the library has no dependency.

use super::cupti_abi::{EnableCallback, Subscribe};
use super::{Frame, Io};
use std::ffi::{CStr, CString, OsStr, c_char, c_int, c_void};

#[repr(C)]
struct DlInfo {
    dli_fname: *const c_char,
    dli_fbase: *mut c_void,
    dli_sname: *const c_char,
    dli_saddr: *mut c_void,
}

impl DlInfo {
    const EMPTY: DlInfo = DlInfo {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
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

/// The socket's path, checked to fit a `sockaddr_un`.
pub struct Endpoint(Vec<u8>);

/// The endpoint named by `PINSCOPE_EVENTS_PIPE`, when it is a path that fits.
pub fn endpoint(value: &OsStr) -> Option<Endpoint> {
    let path = value.as_encoded_bytes();
    if path.is_empty() || path.len() >= 108 || path.contains(&0) {
        return None;
    }
    Some(Endpoint(path.to_vec()))
}

/// A connected, non-blocking socket; closed when dropped.
pub struct Channel(c_int);

impl Channel {
    /// Connects to pinscope's socket, or `None`.
    pub fn open(endpoint: &Endpoint) -> Option<Channel> {
        let mut addr = SockaddrUn {
            sun_family: AF_UNIX as u16,
            sun_path: [0; 108],
        };
        addr.sun_path[..endpoint.0.len()].copy_from_slice(&endpoint.0);
        // SAFETY: plain socket creation.
        let fd = unsafe { socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return None;
        }
        let channel = Channel(fd);
        let len = std::mem::size_of::<SockaddrUn>() as u32;
        // SAFETY: `addr` is a valid, NUL-terminated `sockaddr_un` of `len` bytes.
        if unsafe { connect(fd, &addr, len) } != 0 {
            return None;
        }
        Some(channel)
    }

    /// Sends what fits of `bytes` now, without waiting; `MSG_NOSIGNAL`: a closed peer raises no
    /// SIGPIPE.
    pub fn send(&mut self, bytes: &[u8]) -> Io {
        // SAFETY: `bytes` is a live slice; the fd is this channel's socket.
        let n = unsafe {
            send(
                self.0,
                bytes.as_ptr().cast(),
                bytes.len(),
                MSG_DONTWAIT | MSG_NOSIGNAL,
            )
        };
        if n > 0 {
            return Io::Wrote(n as usize);
        }
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if n < 0 && errno == EAGAIN {
            Io::Full
        } else {
            Io::Failed
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // SAFETY: the fd is this channel's and is not used after.
        unsafe { close(self.0) };
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock pinscope's timeline is on.
pub fn monotonic_ns() -> u64 {
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

pub fn thread_id() -> u32 {
    if SYS_GETTID < 0 {
        return 0;
    }
    // SAFETY: gettid takes no argument and cannot fail.
    unsafe { syscall(SYS_GETTID) as u32 }
}

/// Fills `frames` with the objects of this thread's stack, innermost first; how many.
pub fn stack_objects(frames: &mut [Frame]) -> usize {
    let mut addrs = [std::ptr::null_mut::<c_void>(); super::DEPTH];
    let want = addrs.len().min(frames.len());
    // SAFETY: `addrs` holds at least `want` pointers.
    let n = unsafe { backtrace(addrs.as_mut_ptr(), want as c_int) };
    let n = usize::try_from(n).unwrap_or(0).min(want);
    for (slot, &addr) in frames.iter_mut().zip(&addrs[..n]) {
        let mut info = DlInfo::EMPTY;
        // SAFETY: `info` is writable; dladdr only reads the address.
        if unsafe { dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
            *slot = None;
            continue;
        }
        // SAFETY: dladdr's file name is a NUL-terminated string that lives as long as the
        // object stays loaded; a library that allocates through CUDA is not unloaded mid-call,
        // and the bytes are copied into a frame before this callback returns.
        let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
        *slot = Some((info.dli_fbase as usize, path));
    }
    n
}

/// The path sent for an object: its own, or this program's for the main executable (whose
/// `dladdr` name is empty).
pub fn object_path(path: &[u8]) -> Vec<u8> {
    if !path.is_empty() {
        return path.to_vec();
    }
    std::fs::read_link("/proc/self/exe")
        .map(|p| p.into_os_string().into_encoded_bytes())
        .unwrap_or_else(|_| b"(the program)".to_vec())
}

/// Where this library is loaded.
pub fn own_base() -> usize {
    let mut info = DlInfo::EMPTY;
    let here = own_base as *const c_void;
    // SAFETY: `info` is writable; `here` is a function of this library.
    if unsafe { dladdr(here, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
}

/// What is done once before the first CUDA call: the first `backtrace` loads libgcc_s, which
/// must not happen inside a CUDA call.
pub fn prepare() {
    let mut warm = [std::ptr::null_mut::<c_void>(); 4];
    // SAFETY: `warm` holds 4 pointers.
    unsafe { backtrace(warm.as_mut_ptr(), 4) };
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
    if super::attribution::file_name(name.to_bytes()).starts_with(b"libcupti.so") {
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

/// CUPTI's `cuptiSubscribe` and `cuptiEnableCallback`: of the CUPTI loaded already, else of
/// `given`; or why not.
pub fn cupti_entry_points(given: &OsStr) -> Result<(Subscribe, EnableCallback), String> {
    let given = CString::new(given.as_encoded_bytes())
        .map_err(|_| "its path holds a NUL byte".to_string())?;
    let cupti = loaded_cupti().unwrap_or(given);
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
    Ok(unsafe {
        (
            std::mem::transmute::<*mut c_void, Subscribe>(sub),
            std::mem::transmute::<*mut c_void, EnableCallback>(enable),
        )
    })
}
