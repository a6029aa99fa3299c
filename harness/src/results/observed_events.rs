//! The allocation events of an observed run: what the CUPTI injection library reports of each
//! CUDA allocation, registration and free call of the observed program, typed, and the events
//! CSV (`<stem>.events.csv`) that holds them. The byte stream they arrive in is read by
//! `observe::wire`.

use super::call_code;
use crate::Error;
use std::io::Write;
use std::path::Path;

/// Which CUDA driver call an event reports. The wire code is the enum's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// `cuMemHostAlloc`, `cuMemAllocHost`: page-locked host memory allocated.
    HostAlloc,
    /// `cuMemHostRegister`: existing host memory page-locked.
    HostRegister,
    /// `cuMemHostUnregister`.
    HostUnregister,
    /// `cuMemFreeHost`.
    FreeHost,
    /// `cuMemAlloc`, `cuMemAllocPitch`.
    DeviceAlloc,
    /// `cuMemFree`.
    DeviceFree,
    /// `cuMemAllocManaged`.
    ManagedAlloc,
    /// `cuMemCreate` (virtual memory management: a physical allocation).
    VmmCreate,
    /// `cuMemMap`.
    VmmMap,
    /// `cuMemRelease`.
    VmmRelease,
    /// `cuMemAllocAsync`, `cuMemAllocFromPoolAsync` (stream-ordered).
    AsyncAlloc,
    /// `cuMemFreeAsync`.
    AsyncFree,
}

impl CallKind {
    pub const ALL: [CallKind; 12] = [
        CallKind::HostAlloc,
        CallKind::HostRegister,
        CallKind::HostUnregister,
        CallKind::FreeHost,
        CallKind::DeviceAlloc,
        CallKind::DeviceFree,
        CallKind::ManagedAlloc,
        CallKind::VmmCreate,
        CallKind::VmmMap,
        CallKind::VmmRelease,
        CallKind::AsyncAlloc,
        CallKind::AsyncFree,
    ];

    /// The number the wire format carries (1-based; 0 is never a call): [`call_code`].
    pub fn code(self) -> u16 {
        match self {
            CallKind::HostAlloc => call_code::HOST_ALLOC,
            CallKind::HostRegister => call_code::HOST_REGISTER,
            CallKind::HostUnregister => call_code::HOST_UNREGISTER,
            CallKind::FreeHost => call_code::FREE_HOST,
            CallKind::DeviceAlloc => call_code::DEVICE_ALLOC,
            CallKind::DeviceFree => call_code::DEVICE_FREE,
            CallKind::ManagedAlloc => call_code::MANAGED_ALLOC,
            CallKind::VmmCreate => call_code::VMM_CREATE,
            CallKind::VmmMap => call_code::VMM_MAP,
            CallKind::VmmRelease => call_code::VMM_RELEASE,
            CallKind::AsyncAlloc => call_code::ASYNC_ALLOC,
            CallKind::AsyncFree => call_code::ASYNC_FREE,
        }
    }

    pub fn from_name(name: &str) -> Option<CallKind> {
        CallKind::ALL.into_iter().find(|c| c.name() == name)
    }

    pub fn from_code(code: u16) -> Option<CallKind> {
        CallKind::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The name the events CSV writes.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::HostAlloc => "host_alloc",
            CallKind::HostRegister => "host_register",
            CallKind::HostUnregister => "host_unregister",
            CallKind::FreeHost => "free_host",
            CallKind::DeviceAlloc => "device_alloc",
            CallKind::DeviceFree => "device_free",
            CallKind::ManagedAlloc => "managed_alloc",
            CallKind::VmmCreate => "vmm_create",
            CallKind::VmmMap => "vmm_map",
            CallKind::VmmRelease => "vmm_release",
            CallKind::AsyncAlloc => "async_alloc",
            CallKind::AsyncFree => "async_free",
        }
    }
}

/// One allocation event of the observed program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocEvent {
    /// Nanoseconds since the command was started, on pinscope's monotonic clock.
    pub time_ns: u64,
    /// How long the call took, from its entry to its return (`time_ns`).
    pub duration_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub call: CallKind,
    /// Bytes asked for (0 for a free, which names only its address).
    pub bytes: u64,
    /// The call's flags argument, as passed (`CU_MEMHOSTALLOC_*`, `CU_MEMHOSTREGISTER_*`).
    pub flags: u32,
    /// The call's `CUresult` (0 = success).
    pub result: u32,
    /// The address returned (an allocation) or passed (a free, a registration).
    pub address: u64,
    /// The calling library: the first stack frame outside CUDA's own libraries, when known.
    pub library: Option<String>,
}

/// The events CSV's columns, in order (see docs/observe.md).
pub const EVENTS_HEADER: [&str; 10] = [
    "t_s",
    "duration_s",
    "pid",
    "tid",
    "call",
    "bytes",
    "flags",
    "result",
    "address",
    "library",
];

/// Creates `path` (never replacing a file) with the header and `events`.
pub fn write_events(
    policy: &super::OutputPolicy,
    path: &Path,
    events: &[AllocEvent],
) -> Result<(), Error> {
    let file = policy.create_new(path)?;
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(file));
    let fail = |e: csv::Error| Error::Output(format!("writing {}: {e}", path.display()));
    w.write_record(EVENTS_HEADER).map_err(fail)?;
    for e in events {
        w.write_record([
            format!("{:.6}", e.time_ns as f64 / 1e9),
            format!("{:.6}", e.duration_ns as f64 / 1e9),
            e.pid.to_string(),
            e.tid.to_string(),
            e.call.name().to_string(),
            e.bytes.to_string(),
            format!("{:#x}", e.flags),
            e.result.to_string(),
            format!("{:#x}", e.address),
            e.library.clone().unwrap_or_default(),
        ])
        .map_err(fail)?;
    }
    let mut inner = w
        .into_inner()
        .map_err(|e| Error::Output(format!("writing {}: {e}", path.display())))?;
    inner.flush().map_err(|e| Error::io(path, e))
}

/// Reads an events CSV written by [`write_events`].
pub fn read_events(path: &Path) -> Result<Vec<AllocEvent>, Error> {
    super::observed::read_csv_rows(
        path,
        &EVENTS_HEADER,
        "an events CSV's",
        "an event row",
        event,
    )
}

fn hex_u64(cell: &str) -> Option<u64> {
    u64::from_str_radix(cell.strip_prefix("0x")?, 16).ok()
}

/// Seconds as written (`{:.6}`, at least 0) to nanoseconds.
fn seconds_ns(cell: &str) -> Option<u64> {
    let t: f64 = cell
        .parse()
        .ok()
        .filter(|t: &f64| t.is_finite() && *t >= 0.0)?;
    Some((t * 1e9).round() as u64)
}

fn event(rec: &csv::StringRecord) -> Option<AllocEvent> {
    let library = rec.get(9)?;
    Some(AllocEvent {
        time_ns: seconds_ns(rec.get(0)?)?,
        duration_ns: seconds_ns(rec.get(1)?)?,
        pid: rec.get(2)?.parse().ok()?,
        tid: rec.get(3)?.parse().ok()?,
        call: CallKind::from_name(rec.get(4)?)?,
        bytes: rec.get(5)?.parse().ok()?,
        flags: u32::try_from(hex_u64(rec.get(6)?)?).ok()?,
        result: rec.get(7)?.parse().ok()?,
        address: hex_u64(rec.get(8)?)?,
        library: (!library.is_empty()).then(|| library.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_one_to_one() {
        for c in CallKind::ALL {
            assert_eq!(CallKind::from_code(c.code()), Some(c));
        }
        assert_eq!(CallKind::from_code(0), None);
        let mut names: Vec<_> = CallKind::ALL.iter().map(|c| c.name()).collect();
        names.dedup();
        assert_eq!(names.len(), CallKind::ALL.len());
    }

    #[test]
    fn events_csv_has_its_header_and_rows() {
        let d = tempfile::tempdir().expect("dir");
        let path = d.path().join("x.events.csv");
        let policy = super::super::OutputPolicy::default();
        write_events(&policy, &path, &[]).expect("empty");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, EVENTS_HEADER.join(",") + "\n");
        assert!(write_events(&policy, &path, &[]).is_err(), "never replaced");
        let path = d.path().join("y.events.csv");
        let e = AllocEvent {
            time_ns: 3_200_000_000,
            duration_ns: 250_000_000,
            pid: 7,
            tid: 8,
            call: CallKind::HostAlloc,
            bytes: 1 << 30,
            flags: 0,
            result: 0,
            address: 0x7f00_0000_0000,
            library: Some("libtorch_cuda.so".into()),
        };
        write_events(&policy, &path, std::slice::from_ref(&e)).expect("one");
        assert_eq!(read_events(&path).expect("read back"), [e]);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.contains(
                "3.200000,0.250000,7,8,host_alloc,1073741824,0x0,0,0x7f0000000000,libtorch_cuda.so"
            ),
            "{text}"
        );
    }
}
