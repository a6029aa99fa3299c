//! One of the two homes of `unsafe` code (the other is `probe/windows/`, the Win32 calls of the
//! Windows observers): the CUDA driver API through cudarc's raw bindings
//! (`cudarc::driver::sys` / `result`), wrapped in safe RAII types.
//!
//! Layers (as in cudarc): the FFI calls are in `ffi` (what every wrapper shares and the calls
//! that need no object), `device`, `host_memory`, `device_memory`, `streams` and `kernels`, each
//! `unsafe` block with a `// SAFETY:` line; the types they export ([`Gpu`], [`HostBuffer`],
//! [`DeviceBuffer`], [`Stream`], [`Event`], [`Kernels`]) are safe to use. Errors raised while freeing (in `Drop`) are kept and can be
//! collected with [`take_drop_errors`] instead of being lost.

mod code;
pub mod crew;
mod device;
mod device_memory;
#[cfg(any(test, feature = "fault-injection"))]
pub mod fault;
mod ffi;
mod flags;
#[cfg(target_os = "linux")]
mod gds;
mod host_memory;
mod kernels;
#[cfg(target_os = "linux")]
mod mapped_file;
mod streams;

pub use code::ErrorCode;
pub use crew::CopyCrew;
pub use device::*;
pub use device_memory::*;
pub use ffi::*;
pub use flags::HostFlags;
#[cfg(target_os = "linux")]
pub use gds::{CuFile, cufile_direct, cufile_present};
pub use host_memory::*;
pub use kernels::*;
#[cfg(target_os = "linux")]
pub use mapped_file::MappedFile;
pub use streams::*;

/// A failed CUDA driver call: which call, and what it returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed with {code}")]
pub struct CudaError {
    pub call: &'static str,
    pub code: ErrorCode,
}

impl CudaError {
    /// A failure pinscope found itself around `call`, in words.
    pub fn new(call: &'static str, words: impl Into<String>) -> Self {
        Self {
            call,
            code: ErrorCode::Host(words.into()),
        }
    }
    /// The driver's code `r` returned by `call`.
    pub fn driver(call: &'static str, r: cudarc::driver::sys::CUresult) -> Self {
        Self {
            call,
            code: ErrorCode::Driver(r),
        }
    }
    pub fn is_out_of_memory(&self) -> bool {
        self.code.is_out_of_memory()
    }
}

/// 32-bit word `j` of every verified buffer holds `pattern_word(j, seed)`; the kernels in
/// `harness/kernels/pinscope.ptx` compute the same function.
pub fn pattern_word(j: u64, seed: u32) -> u32 {
    (j as u32).wrapping_mul(0x9E37_79B1) ^ seed
}

/// Fills `buf` with the pattern (words numbered from `first_word`), using every core.
pub fn fill_pattern(buf: &mut [u8], first_word: u64, seed: u32) {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 20;
    buf.par_chunks_mut(BLOCK)
        .enumerate()
        .for_each(|(b, chunk)| {
            let base = first_word + (b * BLOCK / 4) as u64;
            for (i, w) in chunk.chunks_exact_mut(4).enumerate() {
                w.copy_from_slice(&pattern_word(base + i as u64, seed).to_le_bytes());
            }
        });
}

/// Fills `buf` with zeros using every core (the first touch of large pageable buffers is page
/// faults, which one thread takes seconds to serve for a few GiB).
pub fn fill_zero(buf: &mut [u8]) {
    use rayon::prelude::*;
    buf.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
}

/// Counts words of `buf` that differ from the pattern, and the first bad word index.
pub fn check_pattern(buf: &[u8], first_word: u64, seed: u32) -> (u64, Option<u64>) {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 20;
    buf.par_chunks(BLOCK)
        .enumerate()
        .map(|(b, chunk)| {
            let base = first_word + (b * BLOCK / 4) as u64;
            let mut bad = 0u64;
            let mut first = None;
            for (i, w) in chunk.chunks_exact(4).enumerate() {
                let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                if v != pattern_word(base + i as u64, seed) {
                    bad += 1;
                    first.get_or_insert(base + i as u64);
                }
            }
            (bad, first)
        })
        .reduce(
            || (0, None),
            |a, b| {
                (
                    a.0 + b.0,
                    match (a.1, b.1) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    },
                )
            },
        )
}

/// Copies `src` into `dst` with `threads` threads (the staging memcpy).
pub fn parallel_copy(dst: &mut [u8], src: &[u8], threads: usize) {
    use rayon::prelude::*;
    let n = dst.len().min(src.len());
    let part = n.div_ceil(threads.max(1)).max(1 << 16);
    dst[..n]
        .par_chunks_mut(part)
        .zip(src[..n].par_chunks(part))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_roundtrip_and_detects_corruption() {
        let mut buf = vec![0u8; 3 << 20];
        fill_pattern(&mut buf, 0, 7);
        assert_eq!(check_pattern(&buf, 0, 7), (0, None));
        assert_eq!(check_pattern(&buf, 0, 8).0, (3 << 20) / 4);
        buf[4 * 1000 + 1] ^= 0xff;
        assert_eq!(check_pattern(&buf, 0, 7), (1, Some(1000)));
        let zeros = vec![0u8; 4096];
        assert_eq!(
            check_pattern(&zeros, 0, 7),
            (1024, Some(0)),
            "zeros never match the pattern"
        );
    }

    #[test]
    fn pattern_matches_the_kernel_formula() {
        // word j = (j * 0x9E3779B1) ^ seed, low 32 bits (see harness/kernels/pinscope.cu)
        assert_eq!(pattern_word(0, 0), 0);
        assert_eq!(pattern_word(1, 0), 0x9E37_79B1);
        assert_eq!(pattern_word(2, 5), 0x9E37_79B1u32.wrapping_mul(2) ^ 5);
        assert_eq!(
            pattern_word(1 << 32, 3),
            3,
            "only the low 32 bits of j count"
        );
    }

    #[test]
    fn parallel_copy_copies_everything() {
        let src: Vec<u8> = (0..1_000_003u32).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        parallel_copy(&mut dst, &src, 7);
        assert_eq!(dst, src);
    }
}
