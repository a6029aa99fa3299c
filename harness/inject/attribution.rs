//! Which stack frame is "the calling library" of a CUDA allocation: the first frame whose loaded
//! object is neither CUDA's own (the driver, the runtime, CUPTI) nor the injection library
//! itself. Pure logic over (object base, object path) pairs, so pinscope's tests run it on
//! fixture stacks; the library feeds it what `backtrace` and `dladdr` say (Linux), or
//! `RtlCaptureStackBackTrace` and `GetModuleFileNameW` (Windows).

/// File-name prefixes of CUDA's own libraries, compared without case: a frame in one of them is
/// inside the call, not its caller (`libcudart.so` and `cudart64_*.dll` are the runtime a
/// program like PyTorch calls `cudaHostAlloc` in; `nvcuda*.dll` is the Windows driver).
pub const CUDA_OWN: [&str; 6] = [
    "libcuda.so",
    "libcudart.so",
    "libcupti.so",
    "nvcuda",
    "cudart64_",
    "cupti64_",
];

/// The file name of a path (after its last `/`, or `\` as Windows writes paths).
pub fn file_name(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/' || b == b'\\') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Whether a loaded object, by its path, is one of CUDA's own libraries.
pub fn is_cuda_own(path: &[u8]) -> bool {
    let name = file_name(path);
    CUDA_OWN
        .iter()
        .any(|p| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
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

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: usize = 0x1000;

    fn frames<'a>(list: &[(usize, &'a str)]) -> Vec<Option<(usize, &'a [u8])>> {
        list.iter()
            .map(|&(base, path)| (base != 0).then_some((base, path.as_bytes())))
            .collect()
    }

    #[test]
    fn the_caller_is_the_first_frame_outside_cuda_and_this_library() {
        // PyTorch's pinned allocation: callback, CUPTI, driver, runtime, then libtorch_cuda.so.
        let torch = frames(&[
            (OWN, "/home/u/.cache/pinscope/libpinscope_inject-0123.so"),
            (
                0x2000,
                "/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12",
            ),
            (0x3000, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            (
                0x4000,
                "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12",
            ),
            (
                0x5000,
                "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
            ),
            (
                0x6000,
                "/venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so",
            ),
        ]);
        assert_eq!(caller(&torch, OWN), Some(4));
        // Generated code (no object) is skipped; a program linked with the static runtime is
        // its own caller.
        let program = frames(&[
            (OWN, "inject.so"),
            (0, "?"),
            (0x3000, "libcuda.so.1"),
            (0x7000, ""),
        ]);
        assert_eq!(caller(&program, OWN), Some(3));
        assert_eq!(
            caller(&frames(&[(OWN, "x"), (0x3000, "/lib/libcuda.so")]), OWN),
            None
        );
    }

    #[test]
    fn only_cuda_s_own_file_names_are_skipped() {
        assert!(is_cuda_own(b"/usr/lib64/libcuda.so.580.65.06"));
        assert!(is_cuda_own(b"libcupti.so.2025.1.0"));
        assert!(!is_cuda_own(b"/opt/libcudart_wrapper/libtorch_cuda.so"));
        assert!(!is_cuda_own(b"/usr/lib/ollama/libggml-cuda.so"));
        assert_eq!(file_name(b"/a/b/libc10_cuda.so"), b"libc10_cuda.so");
    }

    #[test]
    fn windows_modules_of_cuda_are_skipped_by_file_name_without_case() {
        assert!(is_cuda_own(br"C:\Windows\System32\nvcuda.dll"));
        assert!(is_cuda_own(br"C:\Windows\System32\NVCUDA64.DLL"));
        assert!(is_cuda_own(
            br"C:\venv\Lib\site-packages\nvidia\cuda_runtime\bin\cudart64_12.dll"
        ));
        assert!(is_cuda_own(br"Z:\tmp\cupti64_2025.1.0.dll"));
        assert!(!is_cuda_own(
            br"C:\venv\Lib\site-packages\torch\lib\torch_cuda.dll"
        ));
        assert_eq!(file_name(br"C:\a\b\c10_cuda.dll"), b"c10_cuda.dll");
    }
}
