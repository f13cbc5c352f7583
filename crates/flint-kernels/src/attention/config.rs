//! The forward kernel's tunables.

use serde::{Deserialize, Serialize};

/// Which kernel variant runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// No plane ops, no cmma: one unit per query row, K/V tiles in shared memory.
    Portable,
}

/// How the forward is launched: `block_q` query rows per cube (one unit each) and
/// `block_kv` keys per shared-memory tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttentionFwdConfig {
    /// The variant.
    pub variant: Variant,
    /// Query rows per cube.
    pub block_q: u32,
    /// Keys per tile.
    pub block_kv: u32,
}

impl AttentionFwdConfig {
    /// Shared memory the portable variant uses, all f32: the K and V tiles, plus each row's
    /// output accumulator and tile scores.
    pub fn smem_bytes(&self, head_dim: usize, val_dim: usize) -> usize {
        let (bq, bkv) = (self.block_q as usize, self.block_kv as usize);
        4 * (bkv * (head_dim + val_dim) + bq * val_dim + bq * bkv)
    }

    /// Units per cube.
    pub fn units(&self) -> u32 {
        self.block_q
    }
}
