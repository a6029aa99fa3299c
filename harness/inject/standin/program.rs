//! A stand-in for a CUDA program, for testing the injection library where there is no CUDA: it
//! does what the driver does at `cuInit` (loads the library named in `CUDA_INJECTION64_PATH`
//! and calls its `InitializeInjection`), then plays allocation calls through the CUPTI
//! stand-in (`cupti.rs`): a 1 GiB pinned allocation and its free, a device allocation never
//! freed, and, in a forked child, a 2 MiB pinned allocation. Prints what it did; exits 0.

#[allow(dead_code)]
#[path = "../../src/results/call_code.rs"]
mod call_code;

#[allow(dead_code)]
#[path = "../cbid.rs"]
mod cbid;

use std::ffi::{CString, c_char, c_int, c_void};

#[link(name = "dl")]
unsafe extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

unsafe extern "C" {
    fn fork() -> c_int;
    fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
}

type Play = unsafe extern "C" fn(u32, *const c_void, u32) -> c_int;

/// Loads `path` and returns its symbol `name` (exits 1 with a sentence if either is missing).
fn symbol(path: &std::ffi::OsStr, name: &std::ffi::CStr) -> *mut c_void {
    let c = CString::new(path.as_encoded_bytes()).expect("a path without NUL");
    // SAFETY: a NUL-terminated path; RTLD_NOW.
    let lib = unsafe { dlopen(c.as_ptr(), 2) };
    let sym = if lib.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: `lib` is a loaded object; the name is NUL-terminated.
        unsafe { dlsym(lib, name.as_ptr()) }
    };
    if sym.is_null() {
        eprintln!("standin: {name:?} not found in {}", path.display());
        std::process::exit(1);
    }
    sym
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

fn main() {
    let Some(injection) = std::env::var_os("CUDA_INJECTION64_PATH") else {
        println!("standin: no injection library named");
        return;
    };
    let init = symbol(&injection, c"InitializeInjection");
    // SAFETY: the library's entry point, `int InitializeInjection(void)`.
    let init: extern "C" fn() -> c_int = unsafe { std::mem::transmute(init) };
    init();
    let cupti = std::env::var_os("PINSCOPE_CUPTI_LIBRARY").unwrap_or_default();
    // SAFETY: the stand-in's `standin_call`, of this signature.
    let play: Play = unsafe { std::mem::transmute(symbol(&cupti, c"standin_call")) };
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
    // SAFETY: the child only plays one call and exits.
    let child = unsafe { fork() };
    if child == 0 {
        host_alloc(play, 2 << 20, 0x7f10_0000_0000);
        std::process::exit(0);
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    unsafe { waitpid(child, &mut status, 0) };
    println!(
        "standin: pinned 1 GiB and freed it, allocated 8 MiB on the device, a child pinned 2 MiB"
    );
}
