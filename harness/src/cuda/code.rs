//! The error code of a failed CUDA call, kept as the driver's `CUresult` (cudarc's
//! `sys::CUresult`), or the words of a check pinscope makes itself around a call. Its text is
//! the code's name (`CUDA_ERROR_OUT_OF_MEMORY`); [`ErrorCode::parse`] reads a name back, which is
//! how results files written earlier get their typed codes.

use cudarc::driver::sys::CUresult;
use std::fmt;

/// What a failed call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCode {
    /// The driver's code.
    Driver(CUresult),
    /// A failure pinscope found itself (a size too large for the host, a null pointer, a thread
    /// pool that did not start, an injected fault): its words.
    Host(String),
}

impl ErrorCode {
    /// The code whose text is `s`: a driver code by its name, else words as they are.
    pub fn parse(s: &str) -> ErrorCode {
        DRIVER_CODES
            .iter()
            .find(|c| driver_name(**c) == s)
            .map_or_else(|| ErrorCode::Host(s.to_string()), |c| ErrorCode::Driver(*c))
    }

    pub fn is_out_of_memory(&self) -> bool {
        *self == ErrorCode::Driver(CUresult::CUDA_ERROR_OUT_OF_MEMORY)
    }

    /// What the user can do about a call that returned this code, in words.
    pub fn remedy(&self) -> &'static str {
        use CUresult::*;
        let ErrorCode::Driver(c) = self else {
            return "run `pinscope info` to check the driver and the GPU";
        };
        match c {
            CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
                "the NVIDIA driver is older than the PTX of pinscope's kernels (PTX 7.0, CUDA 11.0): update the driver"
            }
            CUDA_ERROR_INVALID_PTX
            | CUDA_ERROR_INVALID_IMAGE
            | CUDA_ERROR_NO_BINARY_FOR_GPU
            | CUDA_ERROR_JIT_COMPILER_NOT_FOUND
            | CUDA_ERROR_JIT_COMPILATION_DISABLED => {
                "the driver cannot compile pinscope's kernels for this GPU: update the driver (and allow JIT compilation if it was turned off)"
            }
            CUDA_ERROR_OUT_OF_MEMORY => {
                "the GPU's memory is full: end the programs using it (`nvidia-smi` lists them) and run again"
            }
            CUDA_ERROR_SYSTEM_DRIVER_MISMATCH | CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => {
                "the driver's library and its kernel module are different versions: reinstall the driver or reboot"
            }
            CUDA_ERROR_DEVICE_UNAVAILABLE | CUDA_ERROR_CONTEXT_ALREADY_IN_USE => {
                "the GPU is busy in exclusive compute mode or unavailable: check `nvidia-smi` for its compute mode and processes"
            }
            CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_NVLINK_UNCORRECTABLE => {
                "the GPU reported a fault: check `nvidia-smi -q` and the kernel log, then reset the GPU or reboot"
            }
            _ => {
                "run `pinscope info` to check the driver and the GPU, and update the driver if it is old"
            }
        }
    }
}

/// The driver's name of a code, as the CUDA headers spell it (cudarc's variant names are those).
fn driver_name(c: CUresult) -> String {
    format!("{c:?}")
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::Driver(c) => f.write_str(&driver_name(*c)),
            ErrorCode::Host(words) => f.write_str(words),
        }
    }
}

/// Written as its text (the driver's name, or the words), read back with [`ErrorCode::parse`].
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(ErrorCode::parse(&text))
    }
}

/// Every code of the driver API this crate is built against (cudarc's `cuda-12080` bindings), for
/// reading names back.
const DRIVER_CODES: &[CUresult] = &[
    CUresult::CUDA_SUCCESS,
    CUresult::CUDA_ERROR_INVALID_VALUE,
    CUresult::CUDA_ERROR_OUT_OF_MEMORY,
    CUresult::CUDA_ERROR_NOT_INITIALIZED,
    CUresult::CUDA_ERROR_DEINITIALIZED,
    CUresult::CUDA_ERROR_PROFILER_DISABLED,
    CUresult::CUDA_ERROR_PROFILER_NOT_INITIALIZED,
    CUresult::CUDA_ERROR_PROFILER_ALREADY_STARTED,
    CUresult::CUDA_ERROR_PROFILER_ALREADY_STOPPED,
    CUresult::CUDA_ERROR_STUB_LIBRARY,
    CUresult::CUDA_ERROR_DEVICE_UNAVAILABLE,
    CUresult::CUDA_ERROR_NO_DEVICE,
    CUresult::CUDA_ERROR_INVALID_DEVICE,
    CUresult::CUDA_ERROR_DEVICE_NOT_LICENSED,
    CUresult::CUDA_ERROR_INVALID_IMAGE,
    CUresult::CUDA_ERROR_INVALID_CONTEXT,
    CUresult::CUDA_ERROR_CONTEXT_ALREADY_CURRENT,
    CUresult::CUDA_ERROR_MAP_FAILED,
    CUresult::CUDA_ERROR_UNMAP_FAILED,
    CUresult::CUDA_ERROR_ARRAY_IS_MAPPED,
    CUresult::CUDA_ERROR_ALREADY_MAPPED,
    CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU,
    CUresult::CUDA_ERROR_ALREADY_ACQUIRED,
    CUresult::CUDA_ERROR_NOT_MAPPED,
    CUresult::CUDA_ERROR_NOT_MAPPED_AS_ARRAY,
    CUresult::CUDA_ERROR_NOT_MAPPED_AS_POINTER,
    CUresult::CUDA_ERROR_ECC_UNCORRECTABLE,
    CUresult::CUDA_ERROR_UNSUPPORTED_LIMIT,
    CUresult::CUDA_ERROR_CONTEXT_ALREADY_IN_USE,
    CUresult::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
    CUresult::CUDA_ERROR_INVALID_PTX,
    CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT,
    CUresult::CUDA_ERROR_NVLINK_UNCORRECTABLE,
    CUresult::CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
    CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
    CUresult::CUDA_ERROR_JIT_COMPILATION_DISABLED,
    CUresult::CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
    CUresult::CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC,
    CUresult::CUDA_ERROR_CONTAINED,
    CUresult::CUDA_ERROR_INVALID_SOURCE,
    CUresult::CUDA_ERROR_FILE_NOT_FOUND,
    CUresult::CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND,
    CUresult::CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
    CUresult::CUDA_ERROR_OPERATING_SYSTEM,
    CUresult::CUDA_ERROR_INVALID_HANDLE,
    CUresult::CUDA_ERROR_ILLEGAL_STATE,
    CUresult::CUDA_ERROR_LOSSY_QUERY,
    CUresult::CUDA_ERROR_NOT_FOUND,
    CUresult::CUDA_ERROR_NOT_READY,
    CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
    CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
    CUresult::CUDA_ERROR_LAUNCH_TIMEOUT,
    CUresult::CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
    CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
    CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
    CUresult::CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
    CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
    CUresult::CUDA_ERROR_ASSERT,
    CUresult::CUDA_ERROR_TOO_MANY_PEERS,
    CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
    CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
    CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR,
    CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
    CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
    CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE,
    CUresult::CUDA_ERROR_INVALID_PC,
    CUresult::CUDA_ERROR_LAUNCH_FAILED,
    CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
    CUresult::CUDA_ERROR_TENSOR_MEMORY_LEAK,
    CUresult::CUDA_ERROR_NOT_PERMITTED,
    CUresult::CUDA_ERROR_NOT_SUPPORTED,
    CUresult::CUDA_ERROR_SYSTEM_NOT_READY,
    CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
    CUresult::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
    CUresult::CUDA_ERROR_MPS_CONNECTION_FAILED,
    CUresult::CUDA_ERROR_MPS_RPC_FAILURE,
    CUresult::CUDA_ERROR_MPS_SERVER_NOT_READY,
    CUresult::CUDA_ERROR_MPS_MAX_CLIENTS_REACHED,
    CUresult::CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED,
    CUresult::CUDA_ERROR_MPS_CLIENT_TERMINATED,
    CUresult::CUDA_ERROR_CDP_NOT_SUPPORTED,
    CUresult::CUDA_ERROR_CDP_VERSION_MISMATCH,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_MERGE,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
    CUresult::CUDA_ERROR_CAPTURED_EVENT,
    CUresult::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
    CUresult::CUDA_ERROR_TIMEOUT,
    CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
    CUresult::CUDA_ERROR_EXTERNAL_DEVICE,
    CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE,
    CUresult::CUDA_ERROR_FUNCTION_NOT_LOADED,
    CUresult::CUDA_ERROR_INVALID_RESOURCE_TYPE,
    CUresult::CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
    CUresult::CUDA_ERROR_KEY_ROTATION,
    CUresult::CUDA_ERROR_UNKNOWN,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_code_reads_back_from_its_name() {
        for c in DRIVER_CODES {
            assert_eq!(ErrorCode::parse(&driver_name(*c)), ErrorCode::Driver(*c));
        }
        let oom = ErrorCode::parse("CUDA_ERROR_OUT_OF_MEMORY");
        assert!(oom.is_out_of_memory());
        assert_eq!(oom.to_string(), "CUDA_ERROR_OUT_OF_MEMORY");
        let json = serde_json::to_string(&oom).expect("serializes");
        assert_eq!(json, "\"CUDA_ERROR_OUT_OF_MEMORY\"");
        assert_eq!(serde_json::from_str::<ErrorCode>(&json).ok(), Some(oom));
    }

    #[test]
    fn other_words_stay_words() {
        let c = ErrorCode::parse("range outside the buffer");
        assert_eq!(c, ErrorCode::Host("range outside the buffer".into()));
        assert!(!c.is_out_of_memory());
        assert_eq!(c.to_string(), "range outside the buffer");
    }
}
