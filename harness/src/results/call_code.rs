//! The wire number of each allocation call an event reports (`CallKind::code`). Plain constants
//! with no dependency: the CUPTI injection library (`harness/inject/`) compiles this same file,
//! so pinscope and the library cannot disagree on a number. 0 is never a call.

pub const HOST_ALLOC: u16 = 1;
pub const HOST_REGISTER: u16 = 2;
pub const HOST_UNREGISTER: u16 = 3;
pub const FREE_HOST: u16 = 4;
pub const DEVICE_ALLOC: u16 = 5;
pub const DEVICE_FREE: u16 = 6;
pub const MANAGED_ALLOC: u16 = 7;
pub const VMM_CREATE: u16 = 8;
pub const VMM_MAP: u16 = 9;
pub const VMM_RELEASE: u16 = 10;
pub const ASYNC_ALLOC: u16 = 11;
pub const ASYNC_FREE: u16 = 12;
