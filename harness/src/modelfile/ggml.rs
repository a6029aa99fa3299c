//! The ggml tensor types a GGUF file names by number: how many elements a block holds and how
//! many bytes a block takes (ggml's `type_traits`). Codes missing here (4, 5, 31–33, 36–38) were
//! removed from ggml; a file that uses one, or a newer code, is refused with the code.

/// One ggml type: its code in the file, its name, elements per block, bytes per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GgmlType {
    pub code: u32,
    pub name: &'static str,
    pub block: u64,
    pub block_bytes: u64,
}

const fn t(code: u32, name: &'static str, block: u64, block_bytes: u64) -> GgmlType {
    GgmlType {
        code,
        name,
        block,
        block_bytes,
    }
}

/// Every type a GGUF file may name.
pub const GGML_TYPES: &[GgmlType] = &[
    t(0, "F32", 1, 4),
    t(1, "F16", 1, 2),
    t(2, "Q4_0", 32, 18),
    t(3, "Q4_1", 32, 20),
    t(6, "Q5_0", 32, 22),
    t(7, "Q5_1", 32, 24),
    t(8, "Q8_0", 32, 34),
    // ggml's block_q8_1 holds two halves and 32 bytes (Python's gguf table says 40).
    t(9, "Q8_1", 32, 36),
    t(10, "Q2_K", 256, 84),
    t(11, "Q3_K", 256, 110),
    t(12, "Q4_K", 256, 144),
    t(13, "Q5_K", 256, 176),
    t(14, "Q6_K", 256, 210),
    t(15, "Q8_K", 256, 292),
    t(16, "IQ2_XXS", 256, 66),
    t(17, "IQ2_XS", 256, 74),
    t(18, "IQ3_XXS", 256, 98),
    t(19, "IQ1_S", 256, 50),
    t(20, "IQ4_NL", 32, 18),
    t(21, "IQ3_S", 256, 110),
    t(22, "IQ2_S", 256, 82),
    t(23, "IQ4_XS", 256, 136),
    t(24, "I8", 1, 1),
    t(25, "I16", 1, 2),
    t(26, "I32", 1, 4),
    t(27, "I64", 1, 8),
    t(28, "F64", 1, 8),
    t(29, "IQ1_M", 256, 56),
    t(30, "BF16", 1, 2),
    t(34, "TQ1_0", 256, 54),
    t(35, "TQ2_0", 256, 66),
    t(39, "MXFP4", 32, 17),
    t(40, "NVFP4", 64, 36),
    t(41, "Q1_0", 128, 18),
];

/// The type with this code, if ggml has one.
pub fn ggml_type(code: u32) -> Option<GgmlType> {
    GGML_TYPES.iter().copied().find(|t| t.code == code)
}

impl GgmlType {
    /// Bytes of a tensor of this type with these dimensions (ggml order: `dims[0]` is the row),
    /// or why there are none: a row that is not whole blocks, or a product past `u64`.
    pub fn bytes(&self, dims: &[u64]) -> Result<u64, String> {
        let row = dims.first().copied().unwrap_or(1);
        if row % self.block != 0 {
            return Err(format!(
                "a row of {row} elements is not whole {}-element blocks of {}",
                self.block, self.name
            ));
        }
        let row_bytes = (row / self.block).checked_mul(self.block_bytes);
        dims.iter()
            .skip(1)
            .fold(row_bytes, |acc, &d| acc.and_then(|a| a.checked_mul(d)))
            .ok_or_else(|| "its size overflows 64 bits".to_string())
    }
}
