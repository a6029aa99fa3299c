//! The PTX kernels in `harness/kernels/pinscope.ptx`, loaded with the driver and launched safely.

use super::HostFlags;
use super::ffi::DeviceAccessible;
use super::host_memory::{HostBuffer, volatile_load, volatile_store};
use super::streams::{Module, Stream, launch};
use super::{CudaError, Gpu};
use Param::{U32, U64};
use cudarc::driver::sys;
use std::ffi::c_void;

/// The shipped PTX (`.version 7.0`, `.target sm_52`).
pub const PTX: &str = include_str!("../../kernels/pinscope.ptx");

/// Entry points every PTX build must define.
pub const ENTRY_POINTS: [&str; 7] = [
    "pinscope_copy_v4",
    "pinscope_read_v4",
    "pinscope_write_v4",
    "pinscope_verify_v4",
    "pinscope_spin",
    "pinscope_empty",
    "pinscope_chase",
];

const THREADS: u32 = 512;

/// The loaded kernels and the launch shape for this GPU.
pub struct Kernels {
    _module: Module,
    copy: sys::CUfunction,
    read: sys::CUfunction,
    write: sys::CUfunction,
    verify: sys::CUfunction,
    spin: sys::CUfunction,
    empty: sys::CUfunction,
    chase: sys::CUfunction,
    blocks: u32,
}

fn range_ptr(
    buf: &dyn DeviceAccessible,
    offset: usize,
    len: usize,
    what: &'static str,
) -> Result<u64, CudaError> {
    let base = buf
        .kernel_ptr()
        .ok_or_else(|| CudaError::new(what, "memory is not mapped into the GPU's address space"))?;
    if offset.checked_add(len).is_none_or(|e| e > buf.byte_len()) || !len.is_multiple_of(16) {
        return Err(CudaError::new(
            what,
            "range outside the buffer or not a multiple of 16 bytes",
        ));
    }
    Ok(base + offset as u64)
}

fn arg<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast()
}

/// A kernel parameter by value: the entry points take `.u64` addresses and counts and a `.u32`
/// seed.
#[derive(Debug, Clone, Copy)]
enum Param {
    U64(u64),
    U32(u32),
}

/// The entry points' word count: 16-byte words in `len` bytes.
fn words(len: usize) -> Param {
    Param::U64((len / 16) as u64)
}

impl Kernels {
    /// Loads the PTX module (JIT-compiled by the driver for this GPU).
    pub fn load(gpu: &Gpu) -> Result<Kernels, CudaError> {
        gpu.make_current()?;
        Kernels::load_here(gpu.facts().multiprocessors)
    }

    /// Loads the PTX module into the context current on this thread (a context of a case's own,
    /// [`super::OwnContext`]), for a GPU of `sms` multiprocessors.
    pub fn load_here(sms: u32) -> Result<Kernels, CudaError> {
        let module = Module::load(PTX)?;
        Ok(Kernels {
            copy: module.function("pinscope_copy_v4")?,
            read: module.function("pinscope_read_v4")?,
            write: module.function("pinscope_write_v4")?,
            verify: module.function("pinscope_verify_v4")?,
            spin: module.function("pinscope_spin")?,
            empty: module.function("pinscope_empty")?,
            chase: module.function("pinscope_chase")?,
            _module: module,
            // 2048 resident threads per SM on every GPU since Maxwell: fill them all.
            blocks: sms * (2048 / THREADS),
        })
    }

    /// Launches `f` over the whole GPU (every SM's resident threads) on `stream`, with `params`
    /// in the order of the entry point's parameter list.
    fn launch<const N: usize>(
        &self,
        f: sys::CUfunction,
        stream: &Stream,
        mut params: [Param; N],
    ) -> Result<(), CudaError> {
        let mut ptrs = params.each_mut().map(|p| match p {
            Param::U64(v) => arg(v),
            Param::U32(v) => arg(v),
        });
        launch(f, self.blocks, THREADS, stream, &mut ptrs)
    }

    /// SM copy of `len` bytes (a multiple of 16).
    #[allow(clippy::too_many_arguments)]
    pub fn copy(
        &self,
        stream: &Stream,
        src: &dyn DeviceAccessible,
        src_off: usize,
        dst: &dyn DeviceAccessible,
        dst_off: usize,
        len: usize,
    ) -> Result<(), CudaError> {
        let s = range_ptr(src, src_off, len, "copy kernel")?;
        let d = range_ptr(dst, dst_off, len, "copy kernel")?;
        self.launch(self.copy, stream, [U64(s), U64(d), words(len)])
    }

    /// Reads `len` bytes (zero-copy read bandwidth); `sink` receives at most one word.
    pub fn read(
        &self,
        stream: &Stream,
        src: &dyn DeviceAccessible,
        len: usize,
        sink: &dyn DeviceAccessible,
    ) -> Result<(), CudaError> {
        let s = range_ptr(src, 0, len, "read kernel")?;
        let k = range_ptr(sink, 0, 16, "read kernel")?;
        self.launch(self.read, stream, [U64(s), words(len), U64(k)])
    }

    /// Writes the verification pattern over `len` bytes.
    pub fn write(
        &self,
        stream: &Stream,
        dst: &dyn DeviceAccessible,
        len: usize,
        seed: u32,
    ) -> Result<(), CudaError> {
        let d = range_ptr(dst, 0, len, "write kernel")?;
        self.launch(self.write, stream, [U64(d), words(len), U32(seed)])
    }

    /// Counts words of `buf[..len]` that differ from the pattern; result buffer must hold 16 bytes.
    /// Returns (mismatches, first bad word) after synchronising `stream`.
    pub fn verify(
        &self,
        stream: &Stream,
        buf: &dyn DeviceAccessible,
        len: usize,
        seed: u32,
        result: &super::DeviceBuffer,
    ) -> Result<(u64, Option<u64>), CudaError> {
        let b = range_ptr(buf, 0, len, "verify kernel")?;
        let r = range_ptr(result, 0, 16, "verify kernel")?;
        let init: [u8; 8] = [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        result.write(0, &init)?;
        let params = [U64(b), words(len), U32(seed), U64(r)];
        self.launch(self.verify, stream, params)?;
        stream.synchronize()?;
        let mut out = [0u8; 8];
        result.read(0, &mut out)?;
        let bad = u32::from_le_bytes([out[0], out[1], out[2], out[3]]);
        let first = u32::from_le_bytes([out[4], out[5], out[6], out[7]]);
        Ok((u64::from(bad), (bad > 0).then_some(u64::from(first))))
    }
}

impl Kernels {
    /// Launches the empty kernel (one block of one thread) on `stream`.
    pub fn empty(&self, stream: &Stream) -> Result<(), CudaError> {
        launch(self.empty, 1, 1, stream, &mut [])
    }

    /// Follows the pointer chain in `chain` from byte `start` for `steps` loads with one thread;
    /// the last pointer lands in the first 8 bytes of `out`. Every pointer of the chain must be
    /// a device address inside `chain` (the caller builds it so).
    pub fn chase(
        &self,
        stream: &Stream,
        chain: &dyn DeviceAccessible,
        start: usize,
        steps: u64,
        out: &dyn DeviceAccessible,
    ) -> Result<(), CudaError> {
        let first = range_ptr(chain, start, 16, "chase kernel")?;
        let o = range_ptr(out, 0, 16, "chase kernel")?;
        let (mut first, mut steps, mut o) = (first, steps, o);
        launch(
            self.chase,
            1,
            1,
            stream,
            &mut [arg(&mut first), arg(&mut steps), arg(&mut o)],
        )
    }
}

/// Holds streams on a spin kernel until every copy of a batch is queued, so enqueue overhead is
/// not timed (nvbandwidth's method). The flag lives in mapped pinned memory.
pub struct Gate {
    word: HostBuffer,
}

/// How long the spin kernel waits before giving up.
pub const GATE_TIMEOUT_NS: u64 = 20_000_000_000;

impl Gate {
    pub fn new() -> Result<Gate, CudaError> {
        let flags = HostFlags {
            portable: true,
            mapped: true,
            write_combined: false,
        };
        Ok(Gate {
            word: HostBuffer::pinned(4096, flags)?,
        })
    }

    /// Queues a spin kernel on `stream` that holds it until [`Gate::release`].
    pub fn hold(&self, kernels: &Kernels, stream: &Stream) -> Result<(), CudaError> {
        volatile_store(&self.word, 0, 0);
        volatile_store(&self.word, 1, 0);
        let base = range_ptr(&self.word, 0, 16, "spin kernel")?;
        let (mut flag, mut status) = (base, base + 4);
        let mut timeout = GATE_TIMEOUT_NS;
        launch(
            kernels.spin,
            1,
            1,
            stream,
            &mut [arg(&mut flag), arg(&mut timeout), arg(&mut status)],
        )
    }

    /// Lets every held stream go.
    pub fn release(&self) {
        volatile_store(&self.word, 0, 1);
    }

    /// True when a spin kernel gave up waiting (the sample it gated is not valid).
    pub fn timed_out(&self) -> bool {
        volatile_load(&self.word, 1) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_loads_on_old_drivers() {
        let version = PTX
            .lines()
            .find_map(|l| l.trim().strip_prefix(".version "))
            .expect("a .version line");
        let (major, minor) = version.trim().split_once('.').expect("major.minor");
        let v: (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
        assert!(v <= (7, 0), ".version {version} is newer than 7.0");
        let target = PTX
            .lines()
            .find_map(|l| l.trim().strip_prefix(".target sm_"))
            .expect("a .target line");
        assert!(
            target.trim().parse::<u32>().unwrap() <= 52,
            "target sm_{target}"
        );
        assert!(PTX.contains(".address_size 64"));
    }

    #[test]
    fn ptx_defines_every_entry_point_once() {
        for e in ENTRY_POINTS {
            let n = PTX.matches(&format!(".visible .entry {e}(")).count();
            assert_eq!(n, 1, "{e} defined {n} times");
        }
        assert_eq!(PTX.matches(".visible .entry").count(), ENTRY_POINTS.len());
    }

    #[test]
    fn ptx_is_ascii() {
        // ptxas and the driver's JIT reject any non-ASCII byte, even in comments.
        let bad = PTX.lines().position(|l| !l.is_ascii());
        assert_eq!(
            bad,
            None,
            "non-ASCII character on line {:?}",
            bad.map(|i| i + 1)
        );
    }

    #[test]
    fn ptx_braces_balance() {
        let code: String = PTX
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect();
        assert_eq!(code.matches('{').count(), code.matches('}').count());
    }
}
