//! What every file-load strategy shares: the file and the page cache made cold or warm before
//! each load, one device buffer the size of the file, each load timed whole on the host clock
//! with its stages ([`LoadStages`]) said by the way it loads ([`LoadWay`]), and the device's
//! bytes compared with the file's after sampling.

use super::*;
use crate::measure::{LoadStages, Stopwatch};
use crate::scenario::{Cache, LoadSource};
use std::io::Read;
use std::sync::Arc;

/// One way of moving the file into device memory (a `load-*` mode).
pub(crate) trait LoadWay {
    /// Loads the whole file into `dev` (at the file's offsets) and says where the time went.
    fn load(
        &mut self,
        file: &LoadSource,
        dev: &DeviceBuffer,
        stream: &Stream,
    ) -> Result<LoadStages, CudaError>;
    /// Frees what the last load left behind (a fresh buffer, a mapping), after its clock has
    /// stopped: a loader frees them once the tensors are on the device, and freeing 4 GiB of
    /// touched pageable memory takes 0.1–0.2 s, which no stage of the load would show.
    fn release(&mut self) {}
    /// Host memory the way holds between loads.
    fn footprint(&self, _fp: &mut Footprint) {}
    /// The verdict on the last load when the way checked it itself (a child process); `None`:
    /// the device buffer is compared with the file.
    fn checked(&self) -> Option<Verified> {
        None
    }
    /// Whether the way needs the device buffer in this process.
    fn needs_device(&self) -> bool {
        true
    }
    /// Host buffers to free with their times.
    fn into_buffers(self: Box<Self>) -> Vec<HostBuffer> {
        Vec::new()
    }
}

/// A file-load case: the file, the cache state each load starts from, and its way.
pub(crate) struct FileLoad {
    source: Arc<LoadSource>,
    cache: Cache,
    way: Box<dyn LoadWay>,
    setup: SetupTimes,
    device: Option<(DeviceBuffer, Stream)>,
}

impl FileLoad {
    /// A load of the case's file by `way`; `setup` the allocation times of its host memory.
    pub(crate) fn new(
        case: &Case,
        cache: Cache,
        way: Box<dyn LoadWay>,
        setup: SetupTimes,
    ) -> Result<FileLoad, CudaError> {
        let source = case.source.clone().ok_or_else(|| {
            CudaError::new(
                "loading a file",
                "the case names no file to load (give --model FILE or `file = \"path\"`)",
            )
        })?;
        Ok(FileLoad {
            source,
            cache,
            way,
            setup,
            device: None,
        })
    }
}

/// The file's size as a host length.
pub(crate) fn file_len(file: &LoadSource) -> Result<usize, CudaError> {
    usize::try_from(file.file_bytes).map_err(|_| CudaError::new("loading a file", "too large"))
}

/// Opens the file to read it.
pub(crate) fn open(file: &LoadSource) -> Result<std::fs::File, CudaError> {
    std::fs::File::open(&file.path).map_err(|e| io_error("open", &e))
}

/// An I/O failure of `call` as the case's error.
pub(crate) fn io_error(call: &'static str, e: &std::io::Error) -> CudaError {
    CudaError::new(call, e.to_string())
}

/// Reads the file's bytes at `offset` into `buf` until it is full or the file (`file_len`
/// bytes) ends, `pread` after `pread` (one returns at most about 2 GiB); the bytes read. Each call
/// asks for the rest of `buf`, so an `O_DIRECT` read of the last part still asks for whole pages
/// at a page-aligned offset, and returns what the file has.
pub(crate) fn pread_full(
    file: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
    file_len: u64,
) -> Result<usize, CudaError> {
    use std::os::unix::fs::FileExt;
    let left = usize::try_from(file_len.saturating_sub(offset)).unwrap_or(usize::MAX);
    let target = buf.len().min(left);
    let mut got = 0;
    while got < target {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error("pread", &e)),
        }
    }
    Ok(got.min(target))
}

/// Fills the device buffer with `0xA5` (the first touch, and before each load): not zeros, so
/// that a file of zeros, or a load that wrote nothing, does not pass the comparison by what was
/// there before.
fn overwrite(dev: &DeviceBuffer, stream: &Stream) -> Result<(), CudaError> {
    if dev.is_empty() {
        return Ok(());
    }
    dev.memset(stream, 0xA5)?;
    stream.synchronize()
}

impl HostSide for FileLoad {
    fn touch(&mut self) {}

    fn footprint(&self) -> Footprint {
        let mut fp = Footprint::default();
        self.way.footprint(&mut fp);
        fp
    }

    fn add_device(mut self: Box<Self>, _gpu: &Gpu) -> Result<Box<dyn Transfer>, CudaError> {
        // A way that loads in another process gets an empty buffer here.
        let len = if self.way.needs_device() {
            file_len(&self.source)?
        } else {
            0
        };
        let dev = DeviceBuffer::new(len)?;
        let stream = Stream::new()?;
        overwrite(&dev, &stream)?;
        self.device = Some((dev, stream));
        Ok(self)
    }
}

impl Measurable for FileLoad {
    fn moves(&self) -> Moves {
        Moves::OneWay(Lane::H2d, self.source.file_bytes)
    }

    /// One load per transfer, each from the page cache the case asks for (made so before the
    /// clock starts): the host clock around the whole load is the headline.
    fn sample(&mut self, _gpu: &Gpu, batch: u32) -> Result<SampleTimes, CudaError> {
        let mut total = 0.0;
        let mut stages = LoadStages::default();
        for _ in 0..batch.max(1) {
            let state = self
                .source
                .prepare(self.cache)
                .map_err(|e| CudaError::new("preparing the page cache", e.to_string()))?;
            let Some((dev, stream)) = &self.device else {
                return Err(CudaError::new("loading a file", "no device buffer"));
            };
            overwrite(dev, stream)?;
            let clock = Stopwatch::start();
            stages = self.way.load(&self.source, dev, stream)?;
            total += clock.ms();
            self.way.release();
            stages.resident_before = state.resident_before;
            stages.resident_after = self.source.resident();
        }
        let mut t = SampleTimes::host_timed(Lane::H2d, total, None);
        t.load = Some(stages);
        Ok(t)
    }
}

impl Transfer for FileLoad {
    fn verify(&mut self, _gpu: &Gpu) -> Result<Verified, CudaError> {
        if let Some(v) = self.way.checked() {
            return Ok(v);
        }
        match &self.device {
            Some((dev, _)) if !dev.is_empty() => compare_with_file(dev, &self.source.path),
            _ => Ok(Verified::NotApplicable),
        }
    }

    fn setup(&self) -> SetupTimes {
        self.setup.clone()
    }

    fn footprint(&self) -> Footprint {
        let mut fp = HostSide::footprint(self);
        if let Some((dev, _)) = &self.device {
            fp.device += dev.len() as u64;
        }
        fp
    }

    fn free(self: Box<Self>) -> Result<SetupTimes, CudaError> {
        let FileLoad { way, setup, .. } = *self;
        free_all(way.into_buffers(), setup)
    }
}

/// Compares the device buffer with the file, 64 MiB at a time: mismatching 32-bit words and the
/// first one.
pub(crate) fn compare_with_file(
    dev: &DeviceBuffer,
    path: &std::path::Path,
) -> Result<Verified, CudaError> {
    const PART: usize = 64 << 20;
    let mut f = std::fs::File::open(path).map_err(|e| io_error("open", &e))?;
    let (mut want, mut got) = (vec![0u8; PART], vec![0u8; PART]);
    let (mut bad, mut first, mut at) = (0u64, None, 0usize);
    while at < dev.len() {
        let n = PART.min(dev.len() - at);
        f.read_exact(&mut want[..n])
            .map_err(|e| io_error("read", &e))?;
        dev.read(at, &mut got[..n])?;
        if want[..n] == got[..n] {
            at += n;
            continue;
        }
        for (i, (a, b)) in want[..n].chunks(4).zip(got[..n].chunks(4)).enumerate() {
            if a != b {
                bad += 1;
                first.get_or_insert((at / 4 + i) as u64);
            }
        }
        at += n;
    }
    Ok(Verified::of(Lane::H2d, bad, first))
}
