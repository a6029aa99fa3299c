//! A file mapped read-only into the address space (`mmap`, shared), as loaders map model files,
//! and its page-locking for the GPU (`cuMemHostRegister` with `CU_MEMHOSTREGISTER_READ_ONLY`).
//! Unmapped (and unregistered first) on drop. The mapping lives here because creating one is an
//! `unsafe` call and pinscope keeps `unsafe` in its CUDA layer. For the same reason the count of
//! a file's pages in the page cache (`mincore` over such a mapping) is here.

use super::CudaError;
use super::ffi::{check, ms_since, record_drop_error};
use cudarc::driver::sys;
use std::time::Instant;

/// A read-only shared mapping of a whole file.
pub struct MappedFile {
    ptr: *mut std::ffi::c_void,
    len: usize,
    registered: bool,
}

// SAFETY: the mapping is read-only and owned by this value; reading it from any thread is sound.
unsafe impl Send for MappedFile {}
// SAFETY: as above, only shared `&[u8]` access is given out.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Maps the first `len` bytes of `file` read-only (`len` > 0, at most the file's length).
    pub fn map(file: &std::fs::File, len: usize) -> Result<MappedFile, CudaError> {
        if len == 0 {
            return Err(CudaError::new("mmap", "the file is empty"));
        }
        use rustix::mm::{MapFlags, ProtFlags, mmap};
        // SAFETY: a fresh mapping at an address the kernel picks, read-only and shared, of a file
        // this process opened; nothing else aliases it, and it is unmapped once, on drop.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::SHARED,
                file,
                0,
            )
        }
        .map_err(|e| CudaError::new("mmap", e.to_string()))?;
        Ok(MappedFile {
            ptr,
            len,
            registered: false,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mapped bytes. Reading them faults the file's pages in (from the page cache, or from
    /// the disk when they are not cached).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives; the file is opened
        // read-only by pinscope, so the bytes are not changed through this process.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }

    /// Bytes of the mapping whose pages are in the page cache now (`mincore`: it reads the
    /// kernel's page tables of the file and faults nothing in). The last page counts whole.
    pub fn resident_bytes(&self) -> Result<u64, CudaError> {
        let page = rustix::param::page_size();
        let mut vec = vec![0u8; self.len.div_ceil(page)];
        // SAFETY: [ptr, ptr+len) is a live mapping owned by `self`; `vec` holds one byte per page
        // of it, as mincore writes.
        let rc = unsafe { libc::mincore(self.ptr, self.len, vec.as_mut_ptr()) };
        if rc != 0 {
            return Err(CudaError::new(
                "mincore",
                std::io::Error::last_os_error().to_string(),
            ));
        }
        let pages = vec.iter().filter(|b| *b & 1 == 1).count() as u64;
        Ok((pages * page as u64).min(self.len as u64))
    }

    /// Bytes of the file at `path` in the page cache now, counted with [`Self::resident_bytes`]
    /// over a fresh mapping; an empty file has none.
    pub fn resident_of(path: &std::path::Path) -> Result<u64, CudaError> {
        let file = std::fs::File::open(path).map_err(|e| CudaError::new("open", e.to_string()))?;
        let len = usize::try_from(
            file.metadata()
                .map_err(|e| CudaError::new("stat", e.to_string()))?
                .len(),
        )
        .map_err(|_| CudaError::new("mmap", "too large"))?;
        if len == 0 {
            return Ok(0);
        }
        MappedFile::map(&file, len)?.resident_bytes()
    }

    /// Page-locks the whole mapping for the GPU, read-only; returns how long the call took (ms).
    /// Registering a private mapping of a large file did not return on driver 580 (an H200 and
    /// an H100, 4 GiB); this mapping is shared, and that returned. Callers still run it in a
    /// process they can kill.
    pub fn register_read_only(&mut self) -> Result<f64, CudaError> {
        if self.registered {
            return Ok(0.0);
        }
        // The mapping covers whole pages: the last one's tail past the file reads as zeros.
        let pages = self.len.div_ceil(super::ffi::PAGE) * super::ffi::PAGE;
        let t = Instant::now();
        // SAFETY: [ptr, ptr+pages) is a live mapping owned by `self` (mmap maps whole pages);
        // read-only registration never writes it; it is unregistered before it is unmapped (drop).
        check("cuMemHostRegister", unsafe {
            sys::cuMemHostRegister_v2(self.ptr, pages, sys::CU_MEMHOSTREGISTER_READ_ONLY)
        })?;
        self.registered = true;
        Ok(ms_since(t))
    }

    /// Unregisters the mapping; returns how long it took (ms), 0 when it was not registered.
    pub fn unregister(&mut self) -> Result<f64, CudaError> {
        if !self.registered {
            return Ok(0.0);
        }
        let t = Instant::now();
        self.registered = false;
        // SAFETY: registered by `register_read_only`, unregistered once.
        check("cuMemHostUnregister", unsafe {
            sys::cuMemHostUnregister(self.ptr)
        })?;
        Ok(ms_since(t))
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        record_drop_error(
            "unregistering a file mapping",
            self.unregister().map(|_| ()),
        );
        // SAFETY: mapped by `map` with this length; unmapped once.
        if let Err(e) = unsafe { rustix::mm::munmap(self.ptr, self.len) } {
            record_drop_error(
                "unmapping a file",
                Err(CudaError::new("munmap", e.to_string())),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_reads_the_files_bytes() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).expect("written");
        let f = std::fs::File::open(&path).expect("opened");
        let m = MappedFile::map(&f, bytes.len()).expect("mapped");
        assert_eq!(m.as_slice(), &bytes[..]);
        assert!(MappedFile::map(&f, 0).is_err());
    }

    #[test]
    fn a_file_just_written_is_resident_whole_and_agrees_with_fincore() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("f.bin");
        let len = 3 * 4096 + 100;
        std::fs::write(&path, vec![5u8; len]).expect("written");
        let counted = MappedFile::resident_of(&path).expect("counted");
        assert_eq!(
            counted, len as u64,
            "the written pages are cached, the tail page capped"
        );
        let empty = dir.path().join("e.bin");
        std::fs::write(&empty, b"").expect("written");
        assert_eq!(MappedFile::resident_of(&empty).expect("counted"), 0);
        assert!(MappedFile::resident_of(&dir.path().join("missing")).is_err());
        // util-linux's fincore counts the same pages, where it is installed (whole pages).
        if let Ok(out) = std::process::Command::new("fincore")
            .args(["--bytes", "--noheadings", "--raw", "--output", "RES", "--"])
            .arg(&path)
            .output()
        {
            let theirs: u64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .expect("a number");
            assert_eq!(theirs, 4 * 4096);
        }
    }
}
