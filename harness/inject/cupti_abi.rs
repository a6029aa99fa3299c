//! CUPTI's callback API (`cupti_callbacks.h`), the parts the injection library uses; its test
//! stand-in for CUPTI (`standin/cupti.rs`) compiles this same file.

use std::ffi::{c_char, c_int, c_void};

/// `CUPTI_CB_DOMAIN_DRIVER_API`.
pub const DOMAIN_DRIVER_API: u32 = 1;
/// `CUPTI_API_ENTER`.
pub const API_ENTER: u32 = 0;
/// `CUPTI_API_EXIT`.
pub const API_EXIT: u32 = 1;

/// `CUpti_CallbackData`.
#[repr(C)]
#[allow(dead_code)] // fields of the layout that are not read
pub struct CallbackData {
    /// `CUpti_ApiCallbackSite`: [`API_ENTER`] or [`API_EXIT`].
    pub callback_site: u32,
    pub function_name: *const c_char,
    /// The call's parameter struct (`<call>_params`).
    pub function_params: *const c_void,
    /// The call's `CUresult`, at exit.
    pub function_return_value: *const c_void,
    pub symbol_name: *const c_char,
    pub context: *mut c_void,
    pub context_uid: u32,
    pub correlation_data: *mut u64,
    pub correlation_id: u32,
}

/// `CUpti_CallbackFunc`.
pub type Callback = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);
/// `cuptiSubscribe`.
pub type Subscribe = unsafe extern "C" fn(*mut *mut c_void, Callback, *mut c_void) -> c_int;
/// `cuptiEnableCallback`.
pub type EnableCallback = unsafe extern "C" fn(u32, *mut c_void, u32, u32) -> c_int;
