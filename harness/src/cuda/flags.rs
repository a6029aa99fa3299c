//! Flags of page-locked host memory, as the CUDA layer takes them (the scenario model re-exports
//! this type).

use serde::{Deserialize, Serialize};

/// Flags of `cuMemHostAlloc` / `cuMemHostRegister`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostFlags {
    /// `CU_MEMHOSTALLOC_PORTABLE` / `CU_MEMHOSTREGISTER_PORTABLE`.
    pub portable: bool,
    /// `CU_MEMHOSTALLOC_DEVICEMAP` / `CU_MEMHOSTREGISTER_DEVICEMAP`: mapped into the GPU's address space.
    pub mapped: bool,
    /// `CU_MEMHOSTALLOC_WRITECOMBINED` (alloc only).
    pub write_combined: bool,
}

impl HostFlags {
    pub const NAMES: [&'static str; 3] = ["portable", "mapped", "write-combined"];
    pub fn is_empty(&self) -> bool {
        !(self.portable || self.mapped || self.write_combined)
    }
    /// `portable+mapped`, or `none`.
    pub fn label(&self) -> String {
        let mut v = Vec::new();
        if self.portable {
            v.push("portable");
        }
        if self.mapped {
            v.push("mapped");
        }
        if self.write_combined {
            v.push("write-combined");
        }
        if v.is_empty() {
            "none".into()
        } else {
            v.join("+")
        }
    }
    /// Inverse of [`HostFlags::label`].
    pub fn from_label(s: &str) -> Option<Self> {
        let mut f = Self::default();
        if s == "none" || s.is_empty() {
            return Some(f);
        }
        for part in s.split('+') {
            match part {
                "portable" => f.portable = true,
                "mapped" => f.mapped = true,
                "write-combined" => f.write_combined = true,
                _ => return None,
            }
        }
        Some(f)
    }
}
