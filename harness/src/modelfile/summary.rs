//! What a tensor table adds up to: bytes by layer and by type, and the largest tensors.

use super::{Tensor, TensorTable};
use std::collections::BTreeMap;

/// Bytes and tensors of one layer (`None`: tensors outside every layer, such as embeddings).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayerBytes {
    pub layer: Option<u32>,
    pub tensors: usize,
    pub bytes: u64,
}

/// Bytes and tensors of one type.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DtypeBytes {
    pub dtype: String,
    pub tensors: usize,
    pub bytes: u64,
}

/// The totals of a table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub tensor_count: usize,
    pub tensor_bytes: u64,
    pub layer_count: u32,
    /// Layers in order, tensors outside every layer first.
    pub by_layer: Vec<LayerBytes>,
    /// Largest total first.
    pub by_dtype: Vec<DtypeBytes>,
    /// The `largest` largest tensors, largest first (ties in file order).
    pub largest: Vec<Tensor>,
}

impl Summary {
    pub fn of(table: &TensorTable, largest: usize) -> Summary {
        let mut layers: BTreeMap<Option<u32>, (usize, u64)> = BTreeMap::new();
        let mut dtypes: BTreeMap<String, (usize, u64)> = BTreeMap::new();
        for t in &table.tensors {
            let l = layers.entry(t.layer).or_default();
            l.0 += 1;
            l.1 += t.bytes;
            let d = dtypes.entry(t.dtype.name()).or_default();
            d.0 += 1;
            d.1 += t.bytes;
        }
        let by_layer = layers
            .into_iter()
            .map(|(layer, (tensors, bytes))| LayerBytes {
                layer,
                tensors,
                bytes,
            })
            .collect();
        let mut by_dtype: Vec<DtypeBytes> = dtypes
            .into_iter()
            .map(|(dtype, (tensors, bytes))| DtypeBytes {
                dtype,
                tensors,
                bytes,
            })
            .collect();
        by_dtype.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.dtype.cmp(&b.dtype)));
        let mut big: Vec<&Tensor> = table.tensors.iter().collect();
        big.sort_by_key(|t| std::cmp::Reverse(t.bytes));
        Summary {
            tensor_count: table.tensors.len(),
            tensor_bytes: table.tensor_bytes(),
            layer_count: table.layer_count(),
            by_layer,
            by_dtype,
            largest: big.into_iter().take(largest).cloned().collect(),
        }
    }

    /// Bytes of layer `l`'s tensors (0 when the file has none in it).
    pub fn layer_bytes(&self, l: u32) -> u64 {
        self.by_layer
            .iter()
            .find(|b| b.layer == Some(l))
            .map_or(0, |b| b.bytes)
    }
}
