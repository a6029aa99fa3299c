//! The event stream's byte layout, and its encoders: plain constants and functions over
//! integers, with no dependency and no allocation. pinscope's decoder (`observe::wire`) and the
//! CUPTI injection library (`harness/inject/`, which compiles this same file) share it, so the
//! format is declared once.

/// The first bytes a writer sends on its connection.
pub const MAGIC: [u8; 4] = *b"PSEV";
pub const VERSION: u16 = 2;
/// The longest frame, length field included.
pub const MAX_FRAME: usize = 4096;
pub const HEADER_LEN: usize = 8;
pub const TAG_LIBRARY: u8 = 1;
pub const TAG_EVENT: u8 = 2;
pub const TAG_DROPPED: u8 = 3;
/// An event frame's body (after the tag).
pub const EVENT_BODY: usize = 8 + 8 + 4 + 4 + 2 + 4 + 4 + 8 + 8 + 4;
/// A whole event frame: length field, tag, body.
pub const EVENT_FRAME: usize = 4 + 1 + EVENT_BODY;
/// A dropped-events frame's body: the count, u64.
pub const DROPPED_BODY: usize = 8;
pub const DROPPED_FRAME: usize = 4 + 1 + DROPPED_BODY;

/// One event's fields as the wire carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventFields {
    /// CLOCK_MONOTONIC nanoseconds at the call's return.
    pub time_ns: u64,
    /// How long the call took, from its entry to its return.
    pub duration_ns: u64,
    pub pid: u32,
    pub tid: u32,
    /// The call's number (`results::call_code`).
    pub call: u16,
    pub flags: u32,
    pub result: u32,
    pub bytes: u64,
    pub address: u64,
    /// A library id sent before on the same connection, or 0.
    pub library: u32,
}

/// The stream's header.
pub fn header() -> [u8; HEADER_LEN] {
    let v = VERSION.to_le_bytes();
    [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], v[0], v[1], 0, 0]
}

/// Writes `bytes` into `out` at `*at` and moves `*at` past them.
fn put(out: &mut [u8], at: &mut usize, bytes: &[u8]) {
    out[*at..*at + bytes.len()].copy_from_slice(bytes);
    *at += bytes.len();
}

/// An event frame.
pub fn event_frame(e: &EventFields) -> [u8; EVENT_FRAME] {
    let mut f = [0; EVENT_FRAME];
    let mut at = 0;
    put(&mut f, &mut at, &((1 + EVENT_BODY) as u32).to_le_bytes());
    put(&mut f, &mut at, &[TAG_EVENT]);
    put(&mut f, &mut at, &e.time_ns.to_le_bytes());
    put(&mut f, &mut at, &e.duration_ns.to_le_bytes());
    put(&mut f, &mut at, &e.pid.to_le_bytes());
    put(&mut f, &mut at, &e.tid.to_le_bytes());
    put(&mut f, &mut at, &e.call.to_le_bytes());
    put(&mut f, &mut at, &e.flags.to_le_bytes());
    put(&mut f, &mut at, &e.result.to_le_bytes());
    put(&mut f, &mut at, &e.bytes.to_le_bytes());
    put(&mut f, &mut at, &e.address.to_le_bytes());
    put(&mut f, &mut at, &e.library.to_le_bytes());
    f
}

/// A library frame in `out`: its length, or `None` when the path does not fit one frame.
pub fn library_frame(id: u32, path: &[u8], out: &mut [u8; MAX_FRAME]) -> Option<usize> {
    let len = 1 + 4 + path.len();
    if len + 4 > MAX_FRAME {
        return None;
    }
    let mut at = 0;
    put(out, &mut at, &(len as u32).to_le_bytes());
    put(out, &mut at, &[TAG_LIBRARY]);
    put(out, &mut at, &id.to_le_bytes());
    put(out, &mut at, path);
    Some(at)
}

/// A frame saying that `count` events were dropped since the last one said so (the
/// connection was full).
pub fn dropped_frame(count: u64) -> [u8; DROPPED_FRAME] {
    let mut f = [0; DROPPED_FRAME];
    let mut at = 0;
    put(&mut f, &mut at, &((1 + DROPPED_BODY) as u32).to_le_bytes());
    put(&mut f, &mut at, &[TAG_DROPPED]);
    put(&mut f, &mut at, &count.to_le_bytes());
    f
}
