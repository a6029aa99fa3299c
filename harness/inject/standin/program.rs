//! A stand-in for a CUDA program, for testing the injection library where there is no CUDA: it
//! does what the driver does at `cuInit` (loads the library named in `CUDA_INJECTION64_PATH`
//! and calls its `InitializeInjection`), then plays allocation calls through the CUPTI
//! stand-in (`cupti.rs`): a 1 GiB pinned allocation and its free, a device allocation never
//! freed, and, in a child process, a 2 MiB pinned allocation (forked on Linux; on Windows this
//! program started again with `child`, which initialises the library itself, as the driver
//! would in a new process). Prints what it did; exits 0. With `many N` it plays N pinned
//! allocations instead, prints `played N`, and after a line on its standard input plays one
//! more (for testing a reader that falls behind).

#[allow(dead_code)]
#[path = "../../src/results/call_code.rs"]
mod call_code;

#[allow(dead_code)]
#[path = "../cbid.rs"]
mod cbid;

use std::ffi::{CStr, OsStr, c_int, c_void};

type Play = unsafe extern "C" fn(u32, *const c_void, u32) -> c_int;

/// Loads `path` and returns its symbol `name` (exits 1 with a sentence if either is missing).
fn symbol(path: &OsStr, name: &CStr) -> *mut c_void {
    let sym = os::symbol(path, name);
    if sym.is_null() {
        eprintln!("standin: {name:?} not found in {}", path.display());
        std::process::exit(1);
    }
    sym
}

#[cfg(unix)]
mod os {
    use std::ffi::{CStr, CString, OsStr, c_char, c_int, c_void};

    #[link(name = "dl")]
    unsafe extern "C" {
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }

    unsafe extern "C" {
        fn fork() -> c_int;
        fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
    }

    /// `name` in the library at `path`, or null.
    pub fn symbol(path: &OsStr, name: &CStr) -> *mut c_void {
        let c = CString::new(path.as_encoded_bytes()).expect("a path without NUL");
        // SAFETY: a NUL-terminated path; RTLD_NOW.
        let lib = unsafe { dlopen(c.as_ptr(), 2) };
        if lib.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: `lib` is a loaded object; the name is NUL-terminated.
        unsafe { dlsym(lib, name.as_ptr()) }
    }

    /// Runs `child` in a forked child process and waits for it.
    pub fn in_child(child: impl FnOnce()) {
        // SAFETY: the child only plays one call and exits.
        let pid = unsafe { fork() };
        if pid == 0 {
            child();
            std::process::exit(0);
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { waitpid(pid, &mut status, 0) };
    }
}

#[cfg(windows)]
mod os {
    use std::ffi::{CStr, OsStr, c_char, c_void};
    use std::os::windows::ffi::OsStrExt;

    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn LoadLibraryW(name: *const u16) -> *mut c_void;
        fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *mut c_void;
    }

    /// `name` in the library at `path`, or null.
    pub fn symbol(path: &OsStr, name: &CStr) -> *mut c_void {
        let wide: Vec<u16> = path.encode_wide().chain([0]).collect();
        // SAFETY: a NUL-terminated UTF-16 path.
        let lib = unsafe { LoadLibraryW(wide.as_ptr()) };
        if lib.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: `lib` is a loaded module; the name is NUL-terminated.
        unsafe { GetProcAddress(lib, name.as_ptr()) }
    }

    /// Runs this program again as `child` (a new process, as Windows has no fork) and waits.
    pub fn in_child(_child: impl FnOnce()) {
        let me = std::env::current_exe().expect("the program's own path");
        let status = std::process::Command::new(me).arg("child").status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "the child process failed"
        );
    }
}

/// One pinned allocation of `bytes` at `address`, played through CUPTI.
fn host_alloc(play: Play, bytes: usize, address: u64) {
    let p = cbid::OutSizeFlags {
        out: &address,
        bytesize: bytes,
        flags: 0,
    };
    // SAFETY: the parameter struct of cuMemHostAlloc.
    unsafe { play(cbid::MEM_HOST_ALLOC, (&raw const p).cast(), 0) };
}

/// What the driver does at `cuInit`: the injection library's `InitializeInjection`; then the
/// stand-in CUPTI's `standin_call`, which plays a driver call.
fn initialise() -> Option<Play> {
    let Some(injection) = std::env::var_os("CUDA_INJECTION64_PATH") else {
        println!("standin: no injection library named");
        return None;
    };
    let init = symbol(&injection, c"InitializeInjection");
    // SAFETY: the library's entry point, `int InitializeInjection(void)`.
    let init: extern "C" fn() -> c_int = unsafe { std::mem::transmute(init) };
    init();
    let cupti = std::env::var_os("PINSCOPE_CUPTI_LIBRARY").unwrap_or_default();
    // SAFETY: the stand-in's `standin_call`, of this signature.
    Some(unsafe { std::mem::transmute::<*mut c_void, Play>(symbol(&cupti, c"standin_call")) })
}

/// `many N`: N pinned allocations of 4 KiB, then `played N`; after a line on standard input,
/// one more.
fn many(play: Play) {
    let n: u64 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    for i in 0..n {
        host_alloc(play, 4096, 0x7f20_0000_0000 + i * 4096);
    }
    println!("played {n}");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    host_alloc(play, 4096, 0x7f30_0000_0000);
}

fn main() {
    let Some(play) = initialise() else {
        return;
    };
    match std::env::args().nth(1).as_deref() {
        Some("child") => return host_alloc(play, 2 << 20, 0x7f10_0000_0000),
        Some("many") => return many(play),
        _ => {}
    }
    host_alloc(play, 1 << 30, 0x7f00_0000_0000);
    let free = cbid::One {
        value: 0x7f00_0000_0000,
    };
    // SAFETY: the parameter struct of cuMemFreeHost.
    unsafe { play(cbid::MEM_FREE_HOST, (&raw const free).cast(), 0) };
    let device = cbid::OutSize {
        out: &0x7e00_0000_0000,
        bytesize: 8 << 20,
    };
    // SAFETY: the parameter struct of cuMemAlloc_v2.
    unsafe { play(cbid::MEM_ALLOC_V2, (&raw const device).cast(), 0) };
    os::in_child(|| host_alloc(play, 2 << 20, 0x7f10_0000_0000));
    println!(
        "standin: pinned 1 GiB and freed it, allocated 8 MiB on the device, a child pinned 2 MiB"
    );
}
