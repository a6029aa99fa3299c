//! The byte stream the CUPTI injection library sends pinscope, one stream per connection (each
//! observed process opens its own): fixed little-endian binary frames (docs/observe.md, "The
//! event stream"). Binary, not line-JSON: the library encodes an event inside a CUDA callback
//! without allocating or formatting; each frame is at most [`MAX_FRAME`] bytes and sent whole.
//!
//! Stream: `PSEV`, version u16 (2), reserved u16 (0); then frames `len u32` (bytes after it),
//! `tag u8`, body. Tag 1, a library: `id u32`, its path in UTF-8 (the rest). Tag 2, an event:
//! `time_ns u64, duration_ns u64, pid u32, tid u32, call u16, flags u32, result u32, bytes u64, address u64,
//! library u32` (0: unknown; otherwise an id sent before on this stream). Tag 3: `count u64`
//! events dropped because the connection was full. The layout and its encoders are declared
//! once in [`frame`], which the library compiles too. A stream that breaks these rules ends with
//! one sentence saying where and how; what came before it is kept.

pub mod frame;

use crate::results::{AllocEvent, CallKind};
use frame::{
    DROPPED_BODY, EVENT_BODY, EventFields, HEADER_LEN, TAG_DROPPED, TAG_EVENT, TAG_LIBRARY,
};
pub use frame::{MAGIC, MAX_FRAME, VERSION};
use std::collections::HashMap;
use std::fmt;

/// The environment variable that names the stream's endpoint to the injection library: a Unix
/// socket's path (Linux) or a named pipe's name, `\\.\pipe\pinscope-<pid>-<n>` (Windows).
pub const EVENTS_PIPE_ENV: &str = "PINSCOPE_EVENTS_PIPE";

/// What is wrong with a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    NotAStream,
    Version(u16),
    FrameLength(u32),
    UnknownTag(u8),
    UnknownCall(u16),
    LibraryPath,
    UnknownLibrary(u32),
    /// The stream ended inside a frame (or the header).
    Truncated {
        missing: usize,
    },
}

/// A fault and the byte offset of the frame (or header) it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub at: u64,
    pub fault: Fault,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at;
        let what = match &self.fault {
            Fault::NotAStream => {
                "does not start with PSEV: it is not pinscope's event stream".into()
            }
            Fault::Version(v) => format!(
                "is version {v}, this pinscope reads version {VERSION}: use the injection library of the same pinscope"
            ),
            Fault::FrameLength(n) => format!("has a frame of {n} bytes, which no record has"),
            Fault::UnknownTag(t) => format!("has a record of unknown kind {t}"),
            Fault::UnknownCall(c) => format!("has an event of unknown call {c}"),
            Fault::LibraryPath => "has a library path that is not UTF-8".into(),
            Fault::UnknownLibrary(id) => format!("names library {id} before sending it"),
            Fault::Truncated { missing } => format!("ends {missing} bytes short of a whole record"),
        };
        write!(
            f,
            "the event stream {what} (at byte {at}); the events before it are kept"
        )
    }
}

/// Turns bytes, as they arrive in any pieces, into events.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Bytes consumed before `buf`.
    offset: u64,
    header_seen: bool,
    libraries: HashMap<u32, String>,
    /// Events the writer said it dropped.
    dropped: u64,
    fault: Option<StreamError>,
}

impl Decoder {
    /// The events completed by `bytes`. At a fault decoding stops for good: the events before
    /// it are returned, [`Decoder::fault`] says what it was.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<AllocEvent> {
        if self.fault.is_some() {
            return Vec::new();
        }
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut pos = 0;
        loop {
            match self.record(pos) {
                Ok(Some((used, event))) => {
                    pos += used;
                    out.extend(event);
                }
                Ok(None) => break,
                Err(fault) => {
                    self.fault = Some(StreamError {
                        at: self.offset + pos as u64,
                        fault,
                    });
                    break;
                }
            }
        }
        self.buf.drain(..pos);
        self.offset += pos as u64;
        out
    }

    /// How many events the writer said it dropped (its connection was full).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The fault that stopped decoding, if any.
    pub fn fault(&self) -> Option<&StreamError> {
        self.fault.as_ref()
    }

    /// The stream has ended: a fault, or bytes left over that make no whole record.
    pub fn finish(self) -> Option<StreamError> {
        if self.fault.is_some() {
            return self.fault;
        }
        let need = if self.header_seen {
            frame_len(&self.buf).map_or(4, |n| n + 4)
        } else {
            HEADER_LEN
        };
        (!self.buf.is_empty()).then(|| StreamError {
            at: self.offset,
            fault: Fault::Truncated {
                missing: need.saturating_sub(self.buf.len()),
            },
        })
    }

    /// The record at `pos` of the buffer: bytes used and the event it is (a header or a
    /// library is none); `None` when it is not all there yet.
    fn record(&mut self, pos: usize) -> Result<Option<(usize, Option<AllocEvent>)>, Fault> {
        let b = &self.buf[pos..];
        if !self.header_seen {
            if b.len() < HEADER_LEN {
                return if MAGIC.starts_with(&b[..b.len().min(4)]) {
                    Ok(None)
                } else {
                    Err(Fault::NotAStream)
                };
            }
            if b[..4] != MAGIC {
                return Err(Fault::NotAStream);
            }
            let version = u16::from_le_bytes([b[4], b[5]]);
            if version != VERSION {
                return Err(Fault::Version(version));
            }
            self.header_seen = true;
            return Ok(Some((HEADER_LEN, None)));
        }
        let Some(len) = frame_len(b) else {
            return Ok(None);
        };
        if len < 1 || len + 4 > MAX_FRAME {
            return Err(Fault::FrameLength(len as u32));
        }
        let Some(frame) = b.get(4..4 + len) else {
            return Ok(None);
        };
        let event = frame_event(&mut self.libraries, &mut self.dropped, frame)?;
        Ok(Some((4 + len, event)))
    }
}

/// The event a frame is (`None` for a library, which is remembered in `libraries`, and for a
/// count of dropped events, added to `dropped`).
fn frame_event(
    libraries: &mut HashMap<u32, String>,
    dropped: &mut u64,
    frame: &[u8],
) -> Result<Option<AllocEvent>, Fault> {
    let (tag, body) = (frame[0], &frame[1..]);
    match tag {
        TAG_LIBRARY if body.len() >= 4 => {
            let mut r = Fields(body);
            let id = r.u32();
            let path = std::str::from_utf8(r.0).map_err(|_| Fault::LibraryPath)?;
            libraries.insert(id, path.to_string());
            Ok(None)
        }
        TAG_EVENT if body.len() == EVENT_BODY => event(libraries, body).map(Some),
        TAG_DROPPED if body.len() == DROPPED_BODY => {
            *dropped = dropped.saturating_add(Fields(body).u64());
            Ok(None)
        }
        TAG_LIBRARY | TAG_EVENT | TAG_DROPPED => Err(Fault::FrameLength(frame.len() as u32)),
        t => Err(Fault::UnknownTag(t)),
    }
}

/// An event frame's body.
fn event(libraries: &HashMap<u32, String>, body: &[u8]) -> Result<AllocEvent, Fault> {
    let mut r = Fields(body);
    let (time_ns, duration_ns, pid, tid) = (r.u64(), r.u64(), r.u32(), r.u32());
    let code = r.u16();
    let call = CallKind::from_code(code).ok_or(Fault::UnknownCall(code))?;
    let (flags, result, bytes, address) = (r.u32(), r.u32(), r.u64(), r.u64());
    let library = match r.u32() {
        0 => None,
        id => Some(
            libraries
                .get(&id)
                .cloned()
                .ok_or(Fault::UnknownLibrary(id))?,
        ),
    };
    Ok(AllocEvent {
        time_ns,
        duration_ns,
        pid,
        tid,
        call,
        bytes,
        flags,
        result,
        address,
        library,
    })
}

/// The length field of a frame, when its 4 bytes are there.
fn frame_len(b: &[u8]) -> Option<usize> {
    let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?);
    usize::try_from(n).ok()
}

/// Little-endian fields read in order from a slice whose length was checked.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

/// The stream's header.
pub fn encode_header() -> [u8; HEADER_LEN] {
    frame::header()
}

/// A library frame (`None` when the path makes the frame longer than [`MAX_FRAME`]).
pub fn encode_library(id: u32, path: &str) -> Option<Vec<u8>> {
    let mut f = [0; MAX_FRAME];
    let n = frame::library_frame(id, path.as_bytes(), &mut f)?;
    Some(f[..n].to_vec())
}

/// An event frame; `library` is an id sent before in a library frame, or 0.
pub fn encode_event(e: &AllocEvent, library: u32) -> [u8; frame::EVENT_FRAME] {
    frame::event_frame(&EventFields {
        time_ns: e.time_ns,
        duration_ns: e.duration_ns,
        pid: e.pid,
        tid: e.tid,
        call: e.call.code(),
        flags: e.flags,
        result: e.result,
        bytes: e.bytes,
        address: e.address,
        library,
    })
}

#[cfg(test)]
mod tests;
