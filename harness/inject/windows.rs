//! The injection library's Windows parts: the named pipe its events go to, the clock
//! (`QueryPerformanceCounter`, which pinscope reads too), the thread id, the stack's modules
//! (`RtlCaptureStackBackTrace`, `GetModuleHandleExW`, `GetModuleFileNameW`) and loading CUPTI
//! (`LoadLibraryW`, `GetProcAddress`). kernel32 is declared by hand: the library has no
//! dependency.
//!
//! The pipe is opened as a file and switched to `PIPE_NOWAIT`, so a write never waits: it puts
//! what fits in the pipe's buffer, possibly nothing (the event is then dropped and counted). A
//! pipe that cannot be switched is not used, since a waiting write would hold the program
//! whenever pinscope stopped reading.

use super::cupti_abi::{EnableCallback, Subscribe};
use super::{Frame, Io};
use std::ffi::{OsStr, c_char, c_void};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::AsRawHandle;
use std::sync::Mutex;

type Handle = *mut c_void;
type Module = *mut c_void;

#[link(name = "kernel32")]
unsafe extern "system" {
    fn LoadLibraryW(name: *const u16) -> Module;
    fn GetProcAddress(module: Module, name: *const c_char) -> *mut c_void;
    fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut Module) -> i32;
    fn GetModuleFileNameW(module: Module, name: *mut u16, size: u32) -> u32;
    fn RtlCaptureStackBackTrace(
        skip: u32,
        count: u32,
        frames: *mut *mut c_void,
        hash: *mut u32,
    ) -> u16;
    fn GetCurrentThreadId() -> u32;
    fn GetCurrentProcess() -> Handle;
    fn QueryPerformanceCounter(count: *mut i64) -> i32;
    fn QueryPerformanceFrequency(frequency: *mut i64) -> i32;
    fn K32EnumProcessModules(
        process: Handle,
        modules: *mut Module,
        size: u32,
        needed: *mut u32,
    ) -> i32;
    fn SetNamedPipeHandleState(
        pipe: Handle,
        mode: *const u32,
        max_collection: *const u32,
        timeout: *const u32,
    ) -> i32;
    fn WaitNamedPipeW(name: *const u16, timeout_ms: u32) -> i32;
}

const GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT: u32 = 2;
const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 4;
/// `PIPE_READMODE_BYTE | PIPE_NOWAIT`.
const PIPE_NOWAIT: u32 = 1;
const ERROR_PIPE_BUSY: i32 = 231;
/// How long opening the pipe waits for a free instance, per try (pinscope makes a new one as
/// soon as one is taken).
const BUSY_WAIT_MS: u32 = 50;
const BUSY_TRIES: usize = 4;

/// The pipe's name, `\\.\pipe\pinscope-<pid>-<n>`.
pub struct Endpoint(std::path::PathBuf);

/// The endpoint named by `PINSCOPE_EVENTS_PIPE`, when it names a pipe.
pub fn endpoint(value: &OsStr) -> Option<Endpoint> {
    let text = value.to_str()?;
    text.starts_with(r"\\.\pipe\")
        .then(|| Endpoint(value.into()))
}

/// The pipe's client end, in non-blocking mode; closed when dropped.
pub struct Channel(std::fs::File);

impl Channel {
    /// Opens pinscope's pipe (waiting at most `BUSY_TRIES` × `BUSY_WAIT_MS` for a free
    /// instance) and makes its writes non-blocking, or `None`.
    pub fn open(endpoint: &Endpoint) -> Option<Channel> {
        let wide: Vec<u16> = endpoint.0.as_os_str().encode_wide().chain([0]).collect();
        let mut tries = 0;
        let file = loop {
            match std::fs::OpenOptions::new().write(true).open(&endpoint.0) {
                Ok(f) => break f,
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) && tries < BUSY_TRIES => {
                    tries += 1;
                    // SAFETY: `wide` is the pipe's NUL-terminated UTF-16 name. Returns when an
                    // instance is free or after the timeout; either way the open is tried again.
                    unsafe { WaitNamedPipeW(wide.as_ptr(), BUSY_WAIT_MS) };
                }
                Err(_) => return None,
            }
        };
        let mode = PIPE_NOWAIT;
        // SAFETY: the handle is this file's, open for writing; `mode` lives across the call and
        // the other two settings are left as they are (null).
        let ok = unsafe {
            SetNamedPipeHandleState(
                file.as_raw_handle(),
                &mode,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        (ok != 0).then_some(Channel(file))
    }

    /// Writes what fits of `bytes` in the pipe's buffer now, without waiting.
    pub fn send(&mut self, bytes: &[u8]) -> Io {
        match std::io::Write::write(&mut self.0, bytes) {
            Ok(0) => Io::Full,
            Ok(n) => Io::Wrote(n),
            Err(_) => Io::Failed,
        }
    }
}

/// `QueryPerformanceCounter` in nanoseconds (pinscope converts it the same way).
pub fn monotonic_ns() -> u64 {
    let (mut count, mut frequency) = (0i64, 0i64);
    // SAFETY: both are writable; neither call fails on Windows XP or later.
    unsafe {
        QueryPerformanceCounter(&mut count);
        QueryPerformanceFrequency(&mut frequency);
    }
    if frequency <= 0 || count < 0 {
        return 0;
    }
    let ns = u128::from(count as u64) * 1_000_000_000 / u128::from(frequency as u64);
    u64::try_from(ns).unwrap_or(u64::MAX)
}

pub fn thread_id() -> u32 {
    // SAFETY: takes nothing and cannot fail.
    unsafe { GetCurrentThreadId() }
}

/// Module paths met on stacks, UTF-8, kept for the process's life (a few per program): a
/// frame refers to them as `dladdr`'s names are referred to on Linux. Keyed by base and the
/// module's current UTF-16 name, so a module unloaded and another loaded at its base is not
/// confused with it.
static MODULE_NAMES: Mutex<Vec<Named>> = Mutex::new(Vec::new());

/// A module met on a stack: its base, its UTF-16 path and that path in UTF-8.
struct Named {
    base: usize,
    wide: Vec<u16>,
    path: &'static [u8],
}

/// The module holding `addr`, or `None` (generated code).
fn module_at(addr: *const c_void) -> Option<Module> {
    let mut module: Module = std::ptr::null_mut();
    let flags =
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT;
    // SAFETY: with FROM_ADDRESS the name argument is an address, only looked up; `module` is
    // writable; UNCHANGED_REFCOUNT leaves the module's count as it is.
    let ok = unsafe { GetModuleHandleExW(flags, addr.cast(), &mut module) };
    (ok != 0 && !module.is_null()).then_some(module)
}

/// The path of a loaded module, in UTF-16, written into `buf`.
fn module_path(module: Module, buf: &mut [u16; 1024]) -> &[u16] {
    // SAFETY: `buf` holds `buf.len()` UTF-16 units; `module` is a loaded module.
    let n = unsafe { GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32) } as usize;
    &buf[..n.min(buf.len())]
}

/// The module holding `addr`: (base, path), its path kept in `names`; or `None`.
fn module_of(addr: *const c_void, names: &mut Vec<Named>) -> Frame {
    let module = module_at(addr)?;
    let mut buf = [0u16; 1024];
    let wide = module_path(module, &mut buf);
    let base = module as usize;
    if let Some(n) = names.iter().find(|n| n.base == base && n.wide == wide) {
        return Some((base, n.path));
    }
    let path = String::from_utf16_lossy(wide).into_bytes();
    let path: &'static [u8] = Box::leak(path.into_boxed_slice());
    names.push(Named {
        base,
        wide: wide.to_vec(),
        path,
    });
    Some((base, path))
}

/// Fills `frames` with the modules of this thread's stack, innermost first; how many.
pub fn stack_objects(frames: &mut [Frame]) -> usize {
    let mut addrs = [std::ptr::null_mut::<c_void>(); super::DEPTH];
    let want = addrs.len().min(frames.len());
    // SAFETY: `addrs` holds at least `want` pointers; no hash is asked for.
    let n = unsafe {
        RtlCaptureStackBackTrace(0, want as u32, addrs.as_mut_ptr(), std::ptr::null_mut())
    };
    let n = usize::from(n).min(want);
    let Ok(mut names) = MODULE_NAMES.lock() else {
        return 0;
    };
    for (slot, &addr) in frames.iter_mut().zip(&addrs[..n]) {
        *slot = module_of(addr, &mut names);
    }
    n
}

/// The path sent for a module: its own (the executable's is its full path too).
pub fn object_path(path: &[u8]) -> Vec<u8> {
    path.to_vec()
}

/// Where this library is loaded.
pub fn own_base() -> usize {
    let here = own_base as *const c_void;
    module_at(here).map_or(0, |m| m as usize)
}

/// Nothing to do before the first CUDA call on Windows.
pub fn prepare() {}

/// The CUPTI this process loaded already (a program that links CUPTI, e.g. for its own
/// profiler): two different CUPTIs in one process are not to be risked.
fn loaded_cupti() -> Option<Module> {
    let mut modules = [std::ptr::null_mut::<c_void>(); 1024];
    let mut needed = 0u32;
    let size = std::mem::size_of_val(&modules) as u32;
    // SAFETY: `modules` holds `size` bytes of handles; `needed` is writable; the pseudo-handle
    // of this process needs no closing.
    if unsafe {
        K32EnumProcessModules(GetCurrentProcess(), modules.as_mut_ptr(), size, &mut needed)
    } == 0
    {
        return None;
    }
    let n = (needed as usize / std::mem::size_of::<Module>()).min(modules.len());
    let mut buf = [0u16; 1024];
    modules[..n].iter().copied().find(|&m| {
        let path = String::from_utf16_lossy(module_path(m, &mut buf)).to_ascii_lowercase();
        let name = super::attribution::file_name(path.as_bytes());
        name.starts_with(b"cupti64_") && name.ends_with(b".dll")
    })
}

/// CUPTI's `cuptiSubscribe` and `cuptiEnableCallback`: of the CUPTI loaded already, else of
/// `given`; or why not.
pub fn cupti_entry_points(given: &OsStr) -> Result<(Subscribe, EnableCallback), String> {
    let lib = match loaded_cupti() {
        Some(m) => m,
        None => {
            let wide: Vec<u16> = given.encode_wide().chain([0]).collect();
            // SAFETY: a NUL-terminated UTF-16 path; LoadLibraryW runs CUPTI's DllMain, as
            // linking would.
            unsafe { LoadLibraryW(wide.as_ptr()) }
        }
    };
    if lib.is_null() {
        return Err(format!("{} could not be loaded", given.to_string_lossy()));
    }
    // SAFETY: `lib` is a loaded module; the names are NUL-terminated.
    let (sub, enable) = unsafe {
        (
            GetProcAddress(lib, c"cuptiSubscribe".as_ptr()),
            GetProcAddress(lib, c"cuptiEnableCallback".as_ptr()),
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
