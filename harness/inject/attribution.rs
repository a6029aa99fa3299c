//! Which stack frame is "the calling library" of a CUDA allocation: the first frame whose loaded
//! object is neither CUDA's own (the driver, the runtime, CUPTI) nor the injection library
//! itself. Pure logic over (object base, object path) pairs, so pinscope's tests run it on
//! fixture stacks; the library feeds it what `backtrace` and `dladdr` say.

/// File-name prefixes of CUDA's own libraries: a frame in one of them is inside the call, not
/// its caller (`libcudart.so` is the runtime a program like PyTorch calls `cudaHostAlloc` in).
pub const CUDA_OWN: [&str; 3] = ["libcuda.so", "libcudart.so", "libcupti.so"];

/// The file name of a path (after its last `/`).
pub fn file_name(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Whether a loaded object, by its path, is one of CUDA's own libraries.
pub fn is_cuda_own(path: &[u8]) -> bool {
    let name = file_name(path);
    CUDA_OWN.iter().any(|p| name.starts_with(p.as_bytes()))
}

/// The index of the calling frame in `frames` (innermost first): each frame's object as (base
/// address, path), `None` where no object holds the frame (generated code, which is skipped).
/// `own_base` is the injection library's base. `None` when no frame is outside CUDA.
pub fn caller(frames: &[Option<(usize, &[u8])>], own_base: usize) -> Option<usize> {
    frames.iter().position(|f| match f {
        Some((base, path)) => *base != own_base && !is_cuda_own(path),
        None => false,
    })
}
