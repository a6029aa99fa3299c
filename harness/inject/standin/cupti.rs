//! A stand-in for CUPTI, for testing the injection library where there is no CUDA: it exports
//! `cuptiSubscribe` and `cuptiEnableCallback` as CUPTI does, and `standin_call`, which plays a
//! driver call: it calls the subscriber's callback at the call's entry and exit, as CUPTI does
//! for an enabled driver-API callback. Built as `libcupti.so.standin` (Linux) or
//! `cupti64_standin.dll` (Windows), so the injection library counts its frames as CUDA's own.

#[allow(dead_code)]
#[path = "../cupti_abi.rs"]
mod cupti_abi;

use cupti_abi::{API_ENTER, API_EXIT, Callback, CallbackData, DOMAIN_DRIVER_API};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

struct Subscriber {
    callback: Callback,
    user: usize,
    enabled: Vec<u32>,
}

static SUBSCRIBER: Mutex<Option<Subscriber>> = Mutex::new(None);

/// # Safety
/// `handle` is null or writable, as CUPTI's callers pass it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuptiSubscribe(
    handle: *mut *mut c_void,
    callback: Callback,
    user: *mut c_void,
) -> c_int {
    let Ok(mut s) = SUBSCRIBER.lock() else {
        return 999;
    };
    if s.is_some() || handle.is_null() {
        // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
        return 39;
    }
    *s = Some(Subscriber {
        callback,
        user: user as usize,
        enabled: Vec::new(),
    });
    // SAFETY: `handle` is the caller's writable out-pointer (checked non-null).
    unsafe { *handle = std::ptr::dangling_mut::<c_void>() };
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn cuptiEnableCallback(
    enable: u32,
    _handle: *mut c_void,
    domain: u32,
    id: u32,
) -> c_int {
    let Ok(mut s) = SUBSCRIBER.lock() else {
        return 999;
    };
    match s.as_mut() {
        Some(s) if domain == DOMAIN_DRIVER_API => {
            if enable != 0 {
                s.enabled.push(id);
            }
            0
        }
        // CUPTI_ERROR_INVALID_PARAMETER
        _ => 1,
    }
}

/// Plays driver call `id` with parameters `params` returning `result`: the callback at entry
/// and at exit when `id` is enabled. Returns whether it was.
///
/// # Safety
/// `params` points to call `id`'s parameter struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn standin_call(id: u32, params: *const c_void, result: u32) -> c_int {
    let (callback, user) = match SUBSCRIBER.lock().ok().as_deref() {
        Some(Some(s)) if s.enabled.contains(&id) => (s.callback, s.user),
        _ => return 0,
    };
    for site in [API_ENTER, API_EXIT] {
        let data = CallbackData {
            callback_site: site,
            function_name: c"standin".as_ptr(),
            function_params: params,
            function_return_value: (&raw const result).cast(),
            symbol_name: std::ptr::null(),
            context: std::ptr::null_mut(),
            context_uid: 0,
            correlation_data: std::ptr::null_mut(),
            correlation_id: 0,
        };
        // SAFETY: the subscriber's callback, with a `CUpti_CallbackData` for the driver domain.
        unsafe {
            callback(
                user as *mut c_void,
                DOMAIN_DRIVER_API,
                id,
                (&raw const data).cast(),
            )
        };
    }
    1
}
