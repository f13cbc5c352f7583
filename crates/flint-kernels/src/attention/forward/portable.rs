//! The portable forward: no plane ops, no cmma, shared memory within 32 KiB.
//!
//! Each cube owns `block_q` query rows of one (batch, head), one unit per row. The units
//! stage `block_kv` keys and values at a time in shared memory (as f32) and each runs an
//! online softmax over them. Tiles that the causal or window mask hides entirely are never
//! loaded.
//!
//! Per-row state (the output accumulator and the tile's scores) lives in shared memory, not
//! in per-unit arrays: software Vulkan (lavapipe) compiles `sync_cube()` into coroutines,
//! and arrays live across a barrier made LLVM take minutes to build their frames.

use cubecl::prelude::*;

use super::{MASKED_BELOW, NO_MAX};
use crate::attention::backward::stage_rows;
use crate::attention::dropout::uniform_cube;

/// Compile-time shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortableParams {
    /// Query rows (= units) per cube.
    pub block_q: u32,
    /// Keys per shared-memory tile.
    pub block_kv: u32,
    /// `D`.
    pub head_dim: u32,
    /// `Dv`.
    pub val_dim: u32,
    /// A window bound on the left.
    pub has_left: bool,
    /// A window bound on the right (causal).
    pub has_right: bool,
    /// An additive bias tensor is read.
    pub has_bias: bool,
    /// Softcap is applied.
    pub has_softcap: bool,
    /// Dropout is applied.
    pub has_dropout: bool,
}

/// Runtime scalars of one launch.
#[derive(CubeLaunch, CubeType)]
pub struct PortableScalars {
    /// Softmax scale.
    pub scale: f32,
    /// Softcap (unused unless `has_softcap`).
    pub softcap: f32,
    /// `-inf`, passed at run time because WGSL has no literal for it.
    pub neg_inf: f32,
    /// A NaN, passed at run time: shader compilers that assume finite math fold `-inf * 0`
    /// to 0, and CUDA cannot reinterpret a literal's bits in place.
    pub nan: f32,
    /// Window bounds (unused unless enabled).
    pub left: u32,
    /// Window bound on the right.
    pub right: u32,
    /// Dropout probability.
    pub dropout_p: f32,
    /// Folded dropout seed.
    pub seed: u32,
    /// `H / Hkv`.
    pub group: u32,
    /// Bias strides over batch and heads (0 where the bias broadcasts).
    pub bias_stride_b: u32,
    /// Bias stride over heads.
    pub bias_stride_h: u32,
    /// Keys per part of a split-K forward (unused unless split).
    pub split_keys: u32,
}

/// The forward kernel. Grid: `(ceil(Sq / block_q), B·H)`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd_portable<F: Float>(
    q: &Tensor<F>,
    k: &Tensor<F>,
    v: &Tensor<F>,
    bias: &Tensor<f32>,
    out: &mut Tensor<F>,
    lse: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: PortableParams,
    #[define(F)] _dtype: StorageType,
) {
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let bh = CUBE_POS_Y;
    let b = bh / heads;
    let h = bh % heads;
    let kvh = h / s.group;
    let q_first = CUBE_POS_X * p.block_q;
    let row = q_first + UNIT_POS_X;
    let row_ok = row < seq_q;

    // Bottom-right alignment, as Burn's causal mask: query i sees key i + Sk - Sq.
    let offset = seq_kv as i32 - seq_q as i32;
    let q_last = min(q_first + p.block_q, seq_q) as i32 - 1;
    let mut kv_lo = 0i32;
    let mut kv_hi = seq_kv as i32;
    if p.has_left {
        kv_lo = max(0i32, q_first as i32 + offset - s.left as i32);
    }
    if p.has_right {
        kv_hi = min(kv_hi, q_last + offset + s.right as i32 + 1);
    }

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1) + row as usize * q.stride(2);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);

    let unit = UNIT_POS_X;
    let mut acc = SharedMemory::<f32>::new((p.block_q * p.val_dim) as usize);
    let mut scores = SharedMemory::<f32>::new((p.block_q * p.block_kv) as usize);
    let acc_at = unit * p.val_dim;
    let score_at = unit * p.block_kv;
    for d in 0..p.val_dim {
        acc[(acc_at + d) as usize] = 0.0;
    }
    let mut m = f32::new(NO_MAX);
    // A NaN score (from NaN or infinite q, k or bias) makes the row NaN, as in an unfused
    // attention; the max and the masking compares would otherwise drop it silently.
    let mut saw_nan = false;
    let mut l = 0.0f32;

    let mut k_tile = SharedMemory::<f32>::new((p.block_kv * p.head_dim) as usize);
    let mut v_tile = SharedMemory::<f32>::new((p.block_kv * p.val_dim) as usize);
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);

    let mut start = kv_lo;
    while start < kv_hi {
        // Stage the tiles; keys past the end read as zero and are masked below.
        stage_rows::<F>(
            k,
            k_base,
            start,
            seq_kv,
            &mut k_tile,
            p.block_kv,
            p.head_dim,
            p.block_q,
        );
        stage_rows::<F>(
            v,
            v_base,
            start,
            seq_kv,
            &mut v_tile,
            p.block_kv,
            p.val_dim,
            p.block_q,
        );
        sync_cube();

        if row_ok {
            let mut tile_max = f32::new(NO_MAX);
            for j in 0..p.block_kv {
                let key = start + j as i32;
                let mut visible = key < kv_hi;
                if p.has_left {
                    visible = visible && key >= row as i32 + offset - s.left as i32;
                }
                if p.has_right {
                    visible = visible && key <= row as i32 + offset + s.right as i32;
                }
                let mut score = f32::new(NO_MAX);
                if visible {
                    let mut dot = 0.0f32;
                    for d in 0..p.head_dim {
                        let qd = f32::cast_from(q[q_base + d as usize * q.stride(3)]);
                        dot += qd * k_tile[(j * p.head_dim + d) as usize];
                    }
                    score = dot * s.scale;
                    if p.has_softcap {
                        score = s.softcap * (score / s.softcap).tanh();
                    }
                    if p.has_bias {
                        score += bias[b as usize * s.bias_stride_b as usize
                            + h as usize * s.bias_stride_h as usize
                            + row as usize * bias.stride(2)
                            + key as usize * bias.stride(3)];
                    }
                    saw_nan = saw_nan || score.is_nan();
                    if score <= MASKED_BELOW {
                        score = f32::new(NO_MAX);
                    }
                }
                scores[(score_at + j) as usize] = score;
                tile_max = max(tile_max, score);
            }
            let m_new = max(m, tile_max);
            if m_new > MASKED_BELOW {
                let correction = (m - m_new).exp();
                l *= correction;
                for d in 0..p.val_dim {
                    acc[(acc_at + d) as usize] *= correction;
                }
                for j in 0..p.block_kv {
                    let score = scores[(score_at + j) as usize];
                    if score > MASKED_BELOW {
                        let prob = (score - m_new).exp();
                        l += prob;
                        let mut weight = prob;
                        if p.has_dropout {
                            let u = uniform_cube(s.seed, bh, row, (start + j as i32) as u32);
                            let dropped = 0.0f32;
                            weight = select(u >= s.dropout_p, prob * keep_scale, dropped);
                        }
                        for d in 0..p.val_dim {
                            acc[(acc_at + d) as usize] +=
                                weight * v_tile[(j * p.val_dim + d) as usize];
                        }
                    }
                }
                m = m_new;
            }
        }
        sync_cube();
        start += p.block_kv as i32;
    }

    if row_ok {
        let o_base =
            b as usize * out.stride(0) + h as usize * out.stride(1) + row as usize * out.stride(2);
        let lse_at =
            b as usize * lse.stride(0) + h as usize * lse.stride(1) + row as usize * lse.stride(2);
        // An infinite score makes l NaN (inf - inf in the exponent): NaN as well.
        if saw_nan || l.is_nan() {
            let nan = s.nan;
            for d in 0..p.val_dim as usize {
                out[o_base + d * out.stride(3)] = F::cast_from(nan);
            }
            lse[lse_at] = nan;
        } else if l > 0.0 {
            let inv = 1.0f32 / l;
            for d in 0..p.val_dim {
                out[o_base + d as usize * out.stride(3)] =
                    F::cast_from(acc[(acc_at + d) as usize] * inv);
            }
            lse[lse_at] = m + l.ln();
        } else {
            // Every key is masked: the output is 0 (as Burn's NaN-safe softmax gives) and
            // the log-sum-exp is -inf.
            for d in 0..p.val_dim as usize {
                out[o_base + d * out.stride(3)] = F::cast_from(0.0f32);
            }
            lse[lse_at] = s.neg_inf;
        }
    }
}
