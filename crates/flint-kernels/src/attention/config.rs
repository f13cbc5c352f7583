//! The forward kernel's tunables.

use serde::{Deserialize, Serialize};

use super::backward::cmma::BwdCmmaParams;
use super::backward::portable::BwdParams;
use super::forward::PortableParams;
use super::forward::cmma::score_vector;
use crate::wgmma::attention::WgmmaFwdParams;
use crate::wgmma::backward::WgmmaBwdParams;

/// Planes (warps) per cube of the MMA variant.
pub const MMA_PLANES: u32 = 4;

/// Which kernel variant runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// No plane ops, no cmma: a register-tiled f32 matmul per tile (each unit 4 x 4 scores),
    /// Q, K/V, scores and the output accumulator in shared memory, read as vectors of 4.
    Portable,
    /// Tensor cores through register-level MMA (f16/bf16, CUDA sm80+): one plane of 32
    /// lanes per 16 query rows, Q, S and O in registers.
    Mma,
    /// Tensor cores through cooperative matrices (`cmma`, f16/bf16, 16 x 16 x 16) where the
    /// register-level MMA is missing (Vulkan through SPIR-V): one plane of 32 lanes per 16
    /// query rows, Q and O in matrix fragments, scores and P in shared memory. In the
    /// backward, each plane owns 16 keys (dK/dV) or queries (dQ) and their gradient
    /// fragments, and the pair's scores pass through shared memory.
    Cmma,
    /// Hopper's warpgroup MMA (f16/bf16, CUDA sm_90a) in FlashAttention-3's shape
    /// (`crate::wgmma::pipelined`): `block_q / 64` consumer warpgroups of 64 query rows and a
    /// producer warpgroup that copies Q, K and V into 2-4 buffers. Forward only; no bias,
    /// softcap or dropout.
    Wgmma,
}

/// How the forward is launched: `block_q` query rows per cube (one unit per 4 x 4 block of
/// the tile's scores in the portable variant, one plane per 16 rows in the MMA one) and
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
    /// Parts the keys are split into (split-K, MMA only): each part runs as its own cube
    /// and a second kernel merges the parts. 1 (no split) when absent from a stored config.
    #[serde(default = "one_split")]
    pub splits: u32,
    /// Portable only: each unit keeps its share of the output accumulator in registers
    /// rather than in shared memory. Needs a device that keeps per-unit arrays across cube
    /// barriers ([`crate::DeviceLimits::arrays_across_barriers`]). False when absent from a
    /// stored config.
    #[serde(default)]
    pub registers: bool,
    /// Portable with `registers` only: Q and K are staged a slice of `D` at a time for each
    /// tile and V a chunk of keys at a time, so that large tiles fit a small shared memory
    /// (48 KiB through Vulkan) at large `D`. False when absent from a stored config.
    #[serde(default)]
    pub sliced: bool,
}

/// The most parts a forward may split its keys into.
pub const MAX_SPLITS: u32 = 128;

fn one_split() -> u32 {
    1
}

impl AttentionFwdConfig {
    /// A config without split-K.
    pub fn new(variant: Variant, block_q: u32, block_kv: u32) -> Self {
        Self {
            variant,
            block_q,
            block_kv,
            splits: 1,
            registers: false,
            sliced: false,
        }
    }

    /// The same tiling with its output accumulator in registers (portable only, see
    /// [`Self::registers`]).
    pub fn with_registers(self) -> Self {
        Self {
            registers: true,
            ..self
        }
    }

    /// The same tiling with its accumulator in registers and its operands staged in slices
    /// (portable only, see [`Self::sliced`]).
    pub fn with_slices(self) -> Self {
        Self {
            registers: true,
            sliced: true,
            ..self
        }
    }

    /// The portable kernel's compile-time shape for this tiling, without masks or features.
    pub(crate) fn portable_params(&self, head_dim: usize, val_dim: usize) -> PortableParams {
        PortableParams {
            block_q: self.block_q,
            block_kv: self.block_kv,
            head_dim: head_dim as u32,
            val_dim: val_dim as u32,
            has_left: false,
            has_right: false,
            has_bias: false,
            has_softcap: false,
            has_dropout: false,
            reg_acc: self.registers,
            sliced: self.sliced,
        }
    }

    /// Shared memory per cube. Portable, all f32: Q, one buffer for K then V, the output
    /// accumulator (rows in vectors of 4, those of Q and K padded by one; sliced, a slice of
    /// Q's and K's rows and chunks of V's), the tile's scores and the rows' partial
    /// reductions. MMA, in 16-bit elements: the Q, K and V tiles, rows
    /// padded by 8. Cmma: the K and V tiles and the tile's P in 16-bit elements (rows padded
    /// by 8), its scores in f32 (rows padded by 4).
    pub fn smem_bytes(&self, head_dim: usize, val_dim: usize) -> usize {
        let (bq, bkv) = (self.block_q as usize, self.block_kv as usize);
        match self.variant {
            Variant::Portable => {
                let p = self.portable_params(head_dim, val_dim);
                // The accumulator in registers keeps one vector in shared memory.
                let acc = if self.registers {
                    1
                } else {
                    bq * val_dim.div_ceil(4)
                };
                let vectors = (p.q_len() + p.kv_len()) as usize + acc;
                let rows = bq * (bkv + 1) + bq * bkv / 4 + 2 * bq;
                16 * vectors + 4 * rows
            }
            Variant::Mma => 2 * ((bq + bkv) * (head_dim + 8) + bkv * (val_dim + 8)),
            Variant::Cmma => {
                2 * (bkv * (head_dim + val_dim + 16) + bq * (bkv + 8)) + 4 * bq * (bkv + 4)
            }
            Variant::Wgmma => {
                // The launch stores O by TMA where the output allows it, which may add a
                // second Q buffer (`WgmmaFwdParams::q_buffers`): count the larger form.
                let p = self.wgmma_params(head_dim, val_dim);
                let stored = WgmmaFwdParams {
                    tma: true,
                    tma_store: true,
                    ..p
                };
                let stored = if stored.tma_store_fits() {
                    stored.shared_bytes()
                } else {
                    0
                };
                p.shared_bytes().max(stored) as usize
            }
        }
    }

    /// The warpgroup-MMA kernel's compile-time shape for this tiling, without masks, at
    /// [`wgmma_width`]s (the output's extra columns in `WgmmaFwdParams::val_pad`).
    pub(crate) fn wgmma_params(&self, head_dim: usize, val_dim: usize) -> WgmmaFwdParams {
        let (d, dv) = (head_dim as u32, val_dim as u32);
        WgmmaFwdParams {
            warpgroups: self.block_q / 64,
            block_kv: self.block_kv,
            head_dim: wgmma_width(d),
            val_dim: wgmma_width(dv),
            val_pad: wgmma_width(dv) - dv,
            pipelined: true,
            ..WgmmaFwdParams::default()
        }
    }

    /// Units per cube.
    pub fn units(&self) -> u32 {
        match self.variant {
            Variant::Portable => self.block_q * self.block_kv / 16,
            Variant::Mma | Variant::Cmma | Variant::Wgmma => self.planes() * 32,
        }
    }

    /// Planes of the tensor-core variants. MMA: [`MMA_PLANES`], or one for `block_q` 16
    /// (short query blocks, as in decoding, where 64 rows would be mostly padding). Cmma:
    /// one per 16 query rows up to four, each holding `block_q / 64` row fragments beyond.
    /// Wgmma: one per 16 query rows, plus the producer's four.
    pub fn planes(&self) -> u32 {
        match self.variant {
            Variant::Cmma => (self.block_q / 16).clamp(1, 4),
            Variant::Wgmma => self.block_q / 16 + 4,
            _ if self.block_q == 16 => 1,
            _ => MMA_PLANES,
        }
    }

    /// 16-row tiles per plane of the MMA and cmma variants: `block_q` 16 and 64 give one,
    /// 128 two.
    pub fn m_tiles(&self) -> u32 {
        (self.block_q / (16 * self.planes())).max(1)
    }
}

/// The width at which the warpgroup kernels run a head dim: above 64, a multiple of 64, so
/// that every tile is in 128-byte swizzled rows (96 runs as 128, TMA filling the extra
/// columns with zeros and clipping them from its stores); 64 and below as they are (padding
/// would double their products; the forward keeps 16-byte columns there).
pub(crate) const fn wgmma_width(x: u32) -> u32 {
    if x > 64 { x.next_multiple_of(64) } else { x }
}

/// How the backward is launched. Portable: the dK/dV kernel runs one cube per `block_kv`
/// keys and walks the queries `block_q` at a time; the dQ kernel runs one cube per `block_q`
/// queries and walks the keys `block_kv` at a time. MMA: both kernels own 16 rows per plane
/// (`16 · planes` per cube); dK/dV walks the queries `block_q` at a time and dQ the keys
/// `block_kv` at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttentionBwdConfig {
    /// The variant.
    pub variant: Variant,
    /// Query rows per tile (dK/dV) and per cube (dQ).
    pub block_q: u32,
    /// Keys per cube (dK/dV) and per tile (dQ).
    pub block_kv: u32,
    /// MMA, and portable with `registers`: the dK/dV kernel also computes dQ, adding each
    /// tile's share into an f32 accumulator through atomics (five matmuls per tile pair
    /// instead of seven; the sum order, hence dQ's last bits, varies from run to run). In the
    /// MMA variant `block_kv` is then unused. False when absent from a stored config.
    #[serde(default)]
    pub fused_dq: bool,
    /// MMA: planes per cube, 4 or 8 (64 or 128 keys per dK/dV cube, queries per dQ
    /// cube). More keys per cube share each Q and dO tile they load (and, fused, each dQ
    /// atomic). Cmma: 1, 2 or 4, 16 rows each. [`MMA_PLANES`] when absent from a stored
    /// config; the portable variant keeps that value.
    #[serde(default = "mma_planes")]
    pub planes: u32,
    /// MMA only: the dK/dV kernel's planes share each tile's products as a grid, as
    /// FlashAttention-2's warps do: a plane computes `Sᵀ` and `dPᵀ` for 32 keys by half the
    /// query tile, passes `Pᵀ` and `dSᵀ` through shared memory, and accumulates dK and dV
    /// for its 32 keys by half the columns. Each plane then reads fewer operand bytes per
    /// tile than with 16 keys by the whole tile. Needs `D` and `Dv` multiples of 32.
    /// Cmma: each 16 rows of both kernels belong to a pair of planes, each taking half of
    /// every tile, and the pair adds its gradients at the end: twice the planes on the same
    /// shared memory. False when absent from a stored config.
    #[serde(default)]
    pub grid: bool,
    /// Portable only: the gradient accumulators (dK, dV; dQ) live in each unit's registers
    /// rather than in shared memory, which frees two fifths of the dK/dV kernel's shared
    /// memory for larger tiles. Needs a device that keeps per-unit arrays across cube barriers
    /// ([`crate::DeviceLimits::arrays_across_barriers`]). False when absent from a stored
    /// config.
    #[serde(default)]
    pub registers: bool,
    /// Portable with `registers` only: the products over `D` stage their operands a slice of
    /// 32 columns at a time and those over a tile's rows a chunk of rows at a time, so that
    /// nothing stays staged across tiles and large tiles fit a small shared memory (48 KiB
    /// through Vulkan) at large `D`. False when absent from a stored config.
    #[serde(default)]
    pub sliced: bool,
}

fn mma_planes() -> u32 {
    MMA_PLANES
}

impl AttentionBwdConfig {
    /// A config of the two-kernel backward.
    pub fn new(variant: Variant, block_q: u32, block_kv: u32) -> Self {
        Self {
            variant,
            block_q,
            block_kv,
            fused_dq: false,
            planes: MMA_PLANES,
            grid: false,
            registers: false,
            sliced: false,
        }
    }

    /// The same tiling with its accumulators in registers and its operands staged in slices
    /// (portable only, see [`Self::sliced`]).
    pub fn with_slices(self) -> Self {
        Self {
            registers: true,
            sliced: true,
            ..self
        }
    }

    /// The portable kernels' compile-time shape for this tiling, without masks or features.
    pub(crate) fn portable_params(&self, head_dim: usize, val_dim: usize) -> BwdParams {
        BwdParams {
            block_q: self.block_q,
            block_kv: self.block_kv,
            head_dim: head_dim as u32,
            val_dim: val_dim as u32,
            has_left: false,
            has_right: false,
            has_bias: false,
            has_dbias: false,
            has_softcap: false,
            has_dropout: false,
            reg_acc: self.registers,
            fused_dq: self.fused_dq,
            sliced: self.sliced,
        }
    }

    /// The same tiling with its accumulators in registers (portable only, see
    /// [`Self::registers`]).
    pub fn with_registers(self) -> Self {
        Self {
            registers: true,
            ..self
        }
    }

    /// The same tiling with the dK/dV kernel's planes as a grid (MMA only, see
    /// [`Self::grid`]).
    pub fn with_grid(self) -> Self {
        Self { grid: true, ..self }
    }

    /// The same tiling with `planes` planes per cube (MMA: 4 or 8; cmma: 1, 2 or 4).
    pub fn with_planes(self, planes: u32) -> Self {
        Self { planes, ..self }
    }

    /// The same tiling with dQ fused into the dK/dV kernel (MMA, or portable with registers).
    pub fn with_fused_dq(self) -> Self {
        Self {
            fused_dq: true,
            ..self
        }
    }

    /// Shared memory per cube of the larger of the two kernels, all f32 in the portable
    /// variant. dK/dV: the block's K and V, their gradient accumulators, a Q and dO tile and
    /// the tile's LSE and delta. dQ: the block's Q, dO and dQ accumulator, a K and V tile.
    ///
    /// MMA, in 16-bit elements with rows padded by 8: dK/dV holds its `16 · planes` keys' K
    /// and V and two `block_q` tiles of Q and dO (plus the tiles' f32 LSE and delta); dQ
    /// holds its `16 · planes` queries' Q and dO and two `block_kv` tiles of K and V. The
    /// second tile is the one being loaded while the first is used. The dK/dV kernel also
    /// keeps the tile's dSᵀ with the fused dQ or as a grid, and its Pᵀ as a grid.
    pub fn smem_bytes(&self, head_dim: usize, val_dim: usize) -> usize {
        let (bq, bkv) = (self.block_q as usize, self.block_kv as usize);
        let (d, dv) = (head_dim, val_dim);
        match self.variant {
            Variant::Portable => {
                // Rows in vectors of 4 f32, those read or written by key padded by one.
                let (kw, vw) = (d.div_ceil(4) + 1, dv.div_ceil(4) + 1);
                // Accumulators in registers keep one vector each in shared memory.
                let (acc_rows, dq_acc) = if self.registers {
                    (0, 1)
                } else {
                    (bkv, bq * d.div_ceil(4))
                };
                // Sliced: a buffer of query-side slices and chunks, one of key-side slices,
                // and one vector for each of the two buffers left unused.
                let p = self.portable_params(d, dv);
                let staged = |rows: usize| {
                    if self.sliced {
                        (p.a_len() + p.b_len() + 2) as usize
                    } else {
                        rows * (kw + vw)
                    }
                };
                let dkdv = 16 * (staged(bkv + bq) + acc_rows * (kw + vw))
                    + 16 * 2 * usize::from(self.registers)
                    + 4 * (2 * bq * (bkv + 1) + 2 * bq);
                let dq = 16 * (staged(bq + bkv) + dq_acc) + 4 * (bq * (bkv + 1) + 2 * bq);
                // The fused dQ runs no dQ kernel.
                if self.fused_dq { dkdv } else { dkdv.max(dq) }
            }
            Variant::Mma => {
                let rows = 16 * self.planes as usize;
                let dkdv = 2 * (rows + 2 * bq) * (d + dv + 16) + 16 * bq;
                // The tile's dSᵀ (fused dQ, grid) and Pᵀ (grid), rows padded by 8.
                let tile_t = 2 * rows * (bq + 8);
                let dkdv = dkdv
                    + tile_t * (usize::from(self.fused_dq || self.grid) + usize::from(self.grid));
                if self.fused_dq {
                    return dkdv;
                }
                let dq = 2 * (rows + 2 * bkv) * (d + dv + 16);
                dkdv.max(dq)
            }
            // The larger of the two kernels', at the widest vectors (the fewest padding
            // bytes are the same at every width).
            Variant::Cmma => {
                let (dkdv, dq) = (
                    self.cmma_params(d, dv, 8, true),
                    self.cmma_params(d, dv, 8, false),
                );
                dkdv.shared_bytes().max(dq.shared_bytes()) as usize
            }
            // The larger of the dK/dV and dQ kernels' (the same shape, mirrored).
            Variant::Wgmma => self.wgmma_params(d, dv).shared_bytes() as usize,
        }
    }

    /// The cooperative-matrix kernels' compile-time shape, without masks or features: the
    /// dK/dV kernel's (`planes` planes of 16 keys walking `block_q` queries at a time) when
    /// `dkdv`, else the dQ kernel's (16 queries a plane, `block_kv` keys at a time), reading
    /// inputs `vec` elements at a time.
    pub(crate) fn cmma_params(
        &self,
        head_dim: usize,
        val_dim: usize,
        vec: u32,
        dkdv: bool,
    ) -> BwdCmmaParams {
        BwdCmmaParams {
            planes: self.planes,
            split: if self.grid { 2 } else { 1 },
            tile: if dkdv { self.block_q } else { self.block_kv },
            head_dim: head_dim as u32,
            val_dim: val_dim as u32,
            vec,
            svec: score_vector(vec),
            has_left: false,
            has_right: false,
            has_bias: false,
            has_dbias: false,
            has_softcap: false,
            has_dropout: false,
        }
    }

    /// The warpgroup-MMA backward's compile-time shape: two consumer warpgroups, dQ fused
    /// or in a kernel of its own, at [`wgmma_width`]s (the extra columns in
    /// `WgmmaBwdParams::head_pad` and `val_pad`).
    pub(crate) fn wgmma_params(&self, head_dim: usize, val_dim: usize) -> WgmmaBwdParams {
        let (d, dv) = (head_dim as u32, val_dim as u32);
        let (d_run, dv_run) = (wgmma_width(d), wgmma_width(dv));
        WgmmaBwdParams {
            warpgroups: 2,
            head_dim: d_run,
            val_dim: dv_run,
            head_pad: d_run - d,
            val_pad: dv_run - dv,
            out_vec: 2,
            fused_dq: self.fused_dq,
            ..WgmmaBwdParams::default()
        }
    }

    /// The most units either kernel runs per cube.
    pub fn units(&self) -> u32 {
        match self.variant {
            Variant::Portable => self.block_q * self.block_kv / 16,
            Variant::Mma | Variant::Cmma => self.planes * 32,
            // Two consumer warpgroups and the producer's.
            Variant::Wgmma => 3 * 128,
        }
    }
}
