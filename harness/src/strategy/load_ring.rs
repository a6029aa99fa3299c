//! `load-pread` and `load-direct`: the file `pread` chunk by chunk into a ring of pinned buffers,
//! each chunk copied asynchronously while the next is read, an event per slot saying when it may
//! be refilled (llama.cpp `--no-mmap`). `load-direct` opens the file `O_DIRECT`: the reads bypass
//! the page cache, into page-aligned buffers of whole pages; a file system that refuses
//! `O_DIRECT` fails the case with the reason. `read_ms` is the time inside `pread`, `dma_ms` the
//! time the reader waited for a slot's copy and for the last copies.

use super::file_load::{LoadWay, io_error, pread_full};
use super::*;
use crate::cuda::Event;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::{HostFlags, LoadSource};

/// The ring: `chunk`-byte pinned buffers and an event per slot.
pub(crate) struct LoadRing {
    ring: Vec<HostBuffer>,
    events: Vec<Event>,
    chunk: usize,
    threads: usize,
    direct: bool,
}

impl LoadRing {
    pub(crate) fn allocate(
        chunk: u64,
        slots: u32,
        threads: u32,
        direct: bool,
    ) -> Result<(LoadRing, SetupTimes), CudaError> {
        let chunk = usize::try_from(chunk).map_err(|_| CudaError::new("chunk", "too large"))?;
        let ring = (0..slots.max(1))
            .map(|_| HostBuffer::pinned(chunk, HostFlags::default()))
            .collect::<Result<Vec<_>, _>>()?;
        let events = ring
            .iter()
            .map(|_| Event::new())
            .collect::<Result<Vec<_>, _>>()?;
        let setup = SetupTimes::of_all(&ring.iter().collect::<Vec<_>>());
        Ok((
            LoadRing {
                ring,
                events,
                chunk,
                threads: threads.max(1) as usize,
                direct,
            },
            setup,
        ))
    }

    fn open(&self, file: &LoadSource) -> Result<std::fs::File, CudaError> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        o.read(true);
        if self.direct {
            o.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
        }
        o.open(&file.path).map_err(|e| {
            let call = if self.direct {
                "open(O_DIRECT) (the file system may not allow direct I/O)"
            } else {
                "open"
            };
            io_error(call, &e)
        })
    }
}

/// Reads `buf` at `offset` in `threads` page-aligned parts at once (one thread: plainly); the
/// bytes read before the end of the file.
fn read_parts(
    f: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
    file_len: u64,
    threads: usize,
) -> Result<usize, CudaError> {
    if threads <= 1 {
        return pread_full(f, buf, offset, file_len);
    }
    const PAGE: usize = 4096;
    let part = buf.len().div_ceil(threads).div_ceil(PAGE).max(1) * PAGE;
    let got: Vec<Result<usize, CudaError>> = std::thread::scope(|s| {
        let handles: Vec<_> = buf
            .chunks_mut(part)
            .enumerate()
            .map(|(i, p)| s.spawn(move || pread_full(f, p, offset + (i * part) as u64, file_len)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(CudaError::new("pread", "a reading thread panicked")))
            })
            .collect()
    });
    // The parts are contiguous: the bytes read end at the first part that came back short.
    let mut total = 0;
    for (i, g) in got.into_iter().enumerate() {
        let n = g?;
        total = i * part + n;
        if n < part {
            break;
        }
    }
    Ok(total)
}

impl LoadWay for LoadRing {
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        stream: &Stream,
    ) -> Result<LoadStages, CudaError> {
        let f = self.open(file)?;
        let (mut read_ms, mut wait_ms) = (0.0, 0.0);
        let n = self.ring.len();
        let total = dev.len();
        let mut at = 0usize;
        let mut k = 0usize;
        while at < total {
            let slot = k % n;
            if k >= n {
                let wait = Stopwatch::start();
                self.events[slot].synchronize()?;
                wait_ms += wait.ms();
            }
            let read = Stopwatch::start();
            // O_DIRECT reads whole pages: the buffer is a whole number of them, and the last
            // read may return fewer bytes than it asked.
            let got = read_parts(
                &f,
                self.ring[slot].as_mut_slice(),
                at as u64,
                file.file_bytes,
                self.threads,
            )?;
            read_ms += read.ms();
            let len = got.min(total - at);
            if len == 0 {
                return Err(CudaError::new("pread", "the file ended before its size"));
            }
            stream.copy_h2d(dev, at, &self.ring[slot], 0, len)?;
            self.events[slot].record(stream)?;
            at += len;
            k += 1;
        }
        let wait = Stopwatch::start();
        stream.synchronize()?;
        wait_ms += wait.ms();
        Ok(LoadStages {
            read_ms: Some(read_ms),
            dma_ms: Some(wait_ms),
            ..LoadStages::default()
        })
    }

    fn footprint(&self, fp: &mut Footprint) {
        fp.staging += (self.chunk * self.ring.len()) as u64;
    }

    fn into_buffers(self: Box<Self>) -> Vec<HostBuffer> {
        self.ring
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_read_by_several_threads_join_into_the_files_bytes() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).expect("written");
        let f = std::fs::File::open(&path).expect("opened");
        for threads in [1, 3, 8] {
            let mut buf = vec![0u8; 65_536];
            assert_eq!(
                read_parts(&f, &mut buf, 0, 100_000, threads).expect("read"),
                65_536
            );
            assert_eq!(buf, bytes[..65_536], "{threads} threads");
            // The last chunk runs past the end: only the file's bytes count.
            let mut tail = vec![0u8; 65_536];
            let got = read_parts(&f, &mut tail, 65_536, 100_000, threads).expect("read");
            assert_eq!(got, 100_000 - 65_536, "{threads} threads");
            assert_eq!(tail[..got], bytes[65_536..]);
        }
    }

    /// `O_DIRECT` reads of a file whose size is no whole number of pages: the last chunk asks for
    /// whole pages and gets the file's tail. Skipped where the file system refuses `O_DIRECT`.
    #[test]
    fn direct_reads_take_a_tail_that_is_no_whole_page() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..50_000u32).map(|i| (i * 13 % 251) as u8).collect();
        std::fs::write(&path, &bytes).expect("written");
        let ring = LoadRing {
            ring: Vec::new(),
            events: Vec::new(),
            chunk: 16_384,
            threads: 1,
            direct: true,
        };
        let source = LoadSource::new(&path, 50_000, None);
        let Ok(f) = ring.open(&source) else {
            eprintln!("this file system refuses O_DIRECT: not checked here");
            return;
        };
        for threads in [1, 2] {
            let mut got = Vec::new();
            let mut at = 0u64;
            while at < 50_000 {
                let mut buf = HostBuffer::pageable(16_384).expect("page-aligned memory");
                let n = read_parts(&f, buf.as_mut_slice(), at, 50_000, threads).expect("read");
                got.extend_from_slice(&buf.as_slice()[..n]);
                at += n as u64;
            }
            assert_eq!(got, bytes, "{threads} threads");
        }
    }
}
