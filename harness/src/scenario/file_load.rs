//! What a file-load case loads: the file ([`LoadSource`]: its path, format, size and the regions
//! a per-tensor loader copies), the page-cache state it loads from (`cache`), and making the
//! cache that state before each load ([`LoadSource::prepare`]).

use super::named::{named_enum, setting_enum};
use crate::Error;
use crate::modelfile::{Format, TensorTable, page_cache};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

setting_enum! {
    /// The page cache a file-load case loads from (`cache`).
    pub enum Cache {
        /// Whatever the file left cached, after reading it through once: the loads read memory.
        #[default]
        Warm,
        /// The file's pages dropped (`posix_fadvise(POSIX_FADV_DONTNEED)`) before each load.
        Cold,
    }
    names Warm = "warm", Cold = "cold";
}

setting_enum! {
    /// What a loaded file is (the results' `file_format`).
    pub enum FileKind {
        /// A data file that is no model file pinscope reads: loaded as one region.
        #[default]
        Data,
        Gguf,
        Safetensors,
    }
    names Data = "data", Gguf = "gguf", Safetensors = "safetensors";
}

impl From<Format> for FileKind {
    fn from(f: Format) -> FileKind {
        match f {
            Format::Gguf => FileKind::Gguf,
            Format::Safetensors => FileKind::Safetensors,
        }
    }
}

setting_enum! {
    /// How cuFile moved the file (`load-cufile`, the results' `cufile_mode`).
    pub enum CufileMode {
        /// Storage to GPU by DMA: the `nvidia-fs` driver is loaded.
        #[default]
        Direct,
        /// POSIX reads through cuFile's own bounce buffers: no `nvidia-fs` driver.
        Compatibility,
    }
    names Direct = "direct", Compatibility = "compatibility";
}

/// A byte range of the file that a per-tensor loader copies in one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub offset: u64,
    pub bytes: u64,
}

/// The file a file-load case loads.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSource {
    pub path: PathBuf,
    pub kind: FileKind,
    pub file_bytes: u64,
    /// Tensors in the file's table (0 for a data file).
    pub tensors: u32,
    /// The file cut where a per-tensor loader copies: the header and any gap between tensors
    /// each one region, each tensor one; together they cover the file once, in order.
    pub regions: Vec<Region>,
}

/// The page cache just before a load: how much of the file was resident.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheState {
    /// Bytes of the file in the page cache when the load started; `None` when they could not be
    /// counted (no `fincore`, not Linux).
    pub resident_before: Option<u64>,
}

impl LoadSource {
    /// The file at `path` with the tensor table `table` (`None`: a data file, one region).
    pub fn new(path: &Path, file_bytes: u64, table: Option<&TensorTable>) -> LoadSource {
        let (kind, tensors, regions) = match table {
            Some(t) => (
                FileKind::from(t.format),
                u32::try_from(t.tensors.len()).unwrap_or(u32::MAX),
                regions(t, file_bytes),
            ),
            None => (
                FileKind::Data,
                0,
                vec![Region {
                    offset: 0,
                    bytes: file_bytes,
                }],
            ),
        };
        LoadSource {
            path: path.to_path_buf(),
            kind,
            file_bytes,
            tensors,
            regions,
        }
    }

    /// Reads the file at `path` as a model file when it is one (a malformed model file is
    /// refused), else takes it as data.
    pub fn read(path: &Path) -> Result<LoadSource, Error> {
        let len = crate::input::check_regular(path, &DATA_FILE)?;
        if len == 0 {
            return Err(Error::Input {
                path: path.to_path_buf(),
                reason: "the file is empty: give the file to load".into(),
            });
        }
        match crate::modelfile::read(path) {
            Ok(t) => Ok(LoadSource::new(path, len, Some(&t))),
            Err(Error::Input { .. }) => Ok(LoadSource::new(path, len, None)),
            Err(e) => Err(e),
        }
    }

    /// Makes the page cache `cache` for the next load and says what was resident then: `cold`
    /// drops the file's pages, `warm` reads the file through when part of it is not cached.
    pub fn prepare(&self, cache: Cache) -> Result<CacheState, Error> {
        let resident_before = match cache {
            Cache::Cold => page_cache::drop_cached(&self.path, resident)?
                .resident_after
                .ok(),
            Cache::Warm => {
                let now = resident(&self.path).ok();
                if now.is_none_or(|r| r < self.file_bytes) {
                    read_through(&self.path)?;
                }
                resident(&self.path).ok()
            }
        };
        Ok(CacheState { resident_before })
    }
}

impl LoadSource {
    /// Bytes of the file in the page cache now (`None`: not counted here).
    pub fn resident(&self) -> Option<u64> {
        resident(&self.path).ok()
    }
}

/// Bytes of the file at `path` in the page cache now: `mincore` over a mapping of it, else
/// util-linux's `fincore` (a program not every machine has).
pub fn resident(path: &Path) -> page_cache::Resident {
    #[cfg(target_os = "linux")]
    {
        if let Ok(bytes) = crate::cuda::MappedFile::resident_of(path) {
            return Ok(bytes);
        }
        page_cache::resident(path).map_err(|_| page_cache::Unavailable::MincoreFailed)
    }
    #[cfg(not(target_os = "linux"))]
    page_cache::resident(path)
}

/// The file cut into regions: each tensor, and the bytes before, between and after them.
fn regions(t: &TensorTable, file_bytes: u64) -> Vec<Region> {
    let mut out = Vec::with_capacity(t.tensors.len() * 2 + 1);
    let mut at = 0;
    let mut sorted: Vec<(u64, u64)> = t.tensors.iter().map(|x| (x.offset, x.bytes)).collect();
    sorted.sort_unstable();
    for (offset, bytes) in sorted {
        if offset > at {
            out.push(Region {
                offset: at,
                bytes: offset - at,
            });
        }
        if bytes > 0 {
            out.push(Region { offset, bytes });
        }
        at = at.max(offset + bytes);
    }
    if file_bytes > at {
        out.push(Region {
            offset: at,
            bytes: file_bytes - at,
        });
    }
    out
}

/// Reads the whole file once, so the page cache holds it.
fn read_through(path: &Path) -> Result<(), Error> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    std::io::copy(&mut f, &mut std::io::sink()).map_err(|e| Error::io(path, e))?;
    Ok(())
}

/// A file to load is read whatever its size.
pub(super) const DATA_FILE: crate::input::InputKind = crate::input::InputKind {
    what: "a data file",
    max_bytes: u64::MAX,
    max_line: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn table(tensors: &[(u64, u64)]) -> TensorTable {
        TensorTable {
            format: Format::Gguf,
            version: Some(3),
            file_bytes: 1000,
            data_offset: 96,
            alignment: Some(32),
            architecture: None,
            tensors: tensors
                .iter()
                .enumerate()
                .map(|(i, &(offset, bytes))| crate::modelfile::Tensor {
                    name: format!("t{i}"),
                    dtype: crate::modelfile::Dtype::Ggml(crate::modelfile::GGML_TYPES[0]),
                    shape: vec![bytes / 4],
                    bytes,
                    offset,
                    layer: None,
                })
                .collect(),
        }
    }

    #[test]
    fn regions_cover_the_file_once_header_gaps_and_tail_included() {
        let t = table(&[(96, 100), (224, 32)]);
        let s = LoadSource::new(Path::new("m.gguf"), 1000, Some(&t));
        let r: Vec<(u64, u64)> = s.regions.iter().map(|r| (r.offset, r.bytes)).collect();
        assert_eq!(r, [(0, 96), (96, 100), (196, 28), (224, 32), (256, 744)]);
        assert_eq!(s.regions.iter().map(|r| r.bytes).sum::<u64>(), 1000);
        assert_eq!((s.kind, s.tensors), (FileKind::Gguf, 2));
    }

    #[test]
    fn a_data_file_is_one_region() {
        let s = LoadSource::new(Path::new("d.bin"), 4096, None);
        assert_eq!(
            s.regions,
            [Region {
                offset: 0,
                bytes: 4096
            }]
        );
        assert_eq!((s.kind, s.tensors), (FileKind::Data, 0));
    }

    #[test]
    fn a_directory_an_empty_file_and_a_malformed_model_are_refused() {
        let dir = tempfile::tempdir().expect("a temp dir");
        assert!(LoadSource::read(dir.path()).is_err());
        let empty = dir.path().join("e.bin");
        std::fs::write(&empty, b"").expect("written");
        assert!(LoadSource::read(&empty).is_err());
        let bad = dir.path().join("bad.gguf");
        std::fs::write(&bad, b"GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff").expect("written");
        let e = LoadSource::read(&bad).expect_err("malformed");
        assert!(matches!(e, Error::BadModel { .. }), "{e:?}");
        let data = dir.path().join("d.bin");
        std::fs::write(&data, vec![7u8; 8192]).expect("written");
        let s = LoadSource::read(&data).expect("a data file");
        assert_eq!((s.kind, s.file_bytes), (FileKind::Data, 8192));
    }

    /// Linux only: elsewhere pinscope cannot drop a file's cached pages.
    #[cfg(target_os = "linux")]
    #[test]
    fn warm_reads_the_file_in_and_cold_drops_it_where_the_counts_exist() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("d.bin");
        std::fs::write(&path, vec![1u8; 1 << 20]).expect("written");
        let s = LoadSource::read(&path).expect("a data file");
        let warm = s.prepare(Cache::Warm).expect("warm");
        let cold = s.prepare(Cache::Cold).expect("cold");
        // Counted with mincore, with or without util-linux's fincore. On a file system that
        // keeps its pages (tmpfs) cold stays resident: the state says what was found, never
        // more than the file.
        let (Some(w), Some(c)) = (warm.resident_before, cold.resident_before) else {
            panic!("both counted: {warm:?} {cold:?}");
        };
        assert_eq!(w, 1 << 20);
        assert!(c <= w);
    }
}
