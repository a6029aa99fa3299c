//! A reader over an untrusted header: every read is bounded by the file's length, and every
//! failure keeps the byte offset it happened at, so a refusal can name it.

use crate::error::ModelProblem;
use std::io::{Read, Seek, SeekFrom};

/// Skips up to this many bytes by reading them, longer ones by seeking.
const SKIP_BY_READING: u64 = 64 * 1024;

/// Where a header stopped being readable, and why (the path and format are added above).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub offset: u64,
    pub problem: ModelProblem,
}

/// Either an I/O failure of the file itself or a malformed header.
#[derive(Debug)]
pub enum Failure {
    Io(std::io::Error),
    Malformed(Stop),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Io(e)
    }
}

pub type Parsed<T> = Result<T, Failure>;

/// The file being read: its bytes through `R`, its length, and the position reached.
pub struct Source<R> {
    inner: R,
    len: u64,
    pos: u64,
}

impl<R: Read + Seek> Source<R> {
    pub fn new(inner: R, len: u64) -> Source<R> {
        Source { inner, len, pos: 0 }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Bytes left after the position.
    pub fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    /// A refusal at `offset`.
    pub fn stop_at<T>(&self, offset: u64, problem: ModelProblem) -> Parsed<T> {
        Err(Failure::Malformed(Stop { offset, problem }))
    }

    /// A refusal at the position.
    pub fn stop<T>(&self, problem: ModelProblem) -> Parsed<T> {
        self.stop_at(self.pos, problem)
    }

    /// Refuses unless `n` more bytes exist.
    pub fn need(&self, n: u64) -> Parsed<()> {
        if n > self.remaining() {
            return self.stop(ModelProblem::Truncated {
                needed: n - self.remaining(),
            });
        }
        Ok(())
    }

    /// Refuses a count whose items (each at least `min_each` bytes) cannot fit in what is left.
    pub fn bound_count(&self, what: &'static str, count: u64, min_each: u64) -> Parsed<usize> {
        let fits = count
            .checked_mul(min_each.max(1))
            .is_some_and(|b| b <= self.remaining());
        match usize::try_from(count) {
            Ok(n) if fits => Ok(n),
            _ => self.stop(ModelProblem::Count { what, count }),
        }
    }

    pub fn array<const N: usize>(&mut self) -> Parsed<[u8; N]> {
        self.need(N as u64)?;
        let mut b = [0u8; N];
        self.inner.read_exact(&mut b)?;
        self.pos += N as u64;
        Ok(b)
    }

    pub fn u32(&mut self) -> Parsed<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Parsed<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// `n` bytes, after checking that the file holds them and that `n` is at most `limit`.
    pub fn bytes(&mut self, what: &'static str, n: u64, limit: u64) -> Parsed<Vec<u8>> {
        if n > limit {
            return self.stop(ModelProblem::TooLong {
                what,
                length: n,
                limit,
            });
        }
        self.need(n)?;
        let len = usize::try_from(n).map_err(|_| std::io::Error::other("length"))?;
        let mut b = vec![0u8; len];
        self.inner.read_exact(&mut b)?;
        self.pos += n;
        Ok(b)
    }

    /// Moves past `n` bytes the file must hold.
    pub fn skip(&mut self, n: u64) -> Parsed<()> {
        self.need(n)?;
        let to = self.pos + n;
        if n <= SKIP_BY_READING {
            // Reading keeps a buffered reader's buffer, which a seek would throw away: a GGUF
            // vocabulary is a hundred thousand short strings in a row.
            let copied = std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())?;
            if copied != n {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
        } else {
            self.inner.seek(SeekFrom::Start(to))?;
        }
        self.pos = to;
        Ok(())
    }
}
