//! The portable backward: no plane ops, no cmma, shared memory within 32 KiB.
//!
//! Three kernels, as FlashAttention-2's backward:
//! 1. [`attention_bwd_delta`]: `delta_i = Σ_d dO_id · O_id`, a few units per query row.
//! 2. [`attention_bwd_dkdv`]: one cube per `block_kv` keys of one (batch, kv head), one unit
//!    per key. It loops over every query head of the key's group (so GQA needs no atomics)
//!    and over the query tiles the mask leaves visible, recomputing `P` from the saved LSE.
//! 3. [`attention_bwd_dq`]: one cube per `block_q` query rows, one unit per row, looping
//!    over key tiles like the forward.
//!
//! Accumulators live in shared memory rather than per-unit arrays, for the same reason as in
//! the portable forward (lavapipe's coroutine lowering of barriers).

use cubecl::prelude::*;

use crate::attention::dropout::uniform_cube;
use crate::attention::forward::{LOG2_E, MASKED_BELOW, PortableScalars};

/// Compile-time shape of one backward kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BwdParams {
    /// Query rows per tile (dK/dV) or per cube (dQ).
    pub block_q: u32,
    /// Keys per cube (dK/dV) or per tile (dQ).
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
    /// The score gradient is written out as the bias gradient.
    pub has_dbias: bool,
    /// Softcap is applied.
    pub has_softcap: bool,
    /// Dropout is applied.
    pub has_dropout: bool,
}

/// `delta[b, h, i] = Σ_d dO[b, h, i, d] · O[b, h, i, d]` in f32. Cube `(lanes, rows)`: the
/// `lanes` units of a row read its vectors `lane, lane + lanes, ...` (adjacent units read
/// adjacent vectors, so a row is one coalesced read, not one unit's strided walk) and add
/// their sums in shared memory. Grid `(ceil(Sq / rows), B·H)`. With `N > 1` the last stride
/// is 1 and the others are multiples of `N`; `vectors` is `Dv / N`. Also writes
/// `lse2 = lse · log2 e`, the log-sum-exp in base 2 that the tensor-core kernels subtract
/// (their exponents are powers of two), so that they need no multiply per score for it.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_delta<F: Float, N: Size>(
    out: &Tensor<Vector<F, N>>,
    dout: &Tensor<Vector<F, N>>,
    lse: &Tensor<f32>,
    delta: &mut Tensor<f32>,
    lse2: &mut Tensor<f32>,
    #[comptime] vectors: u32,
    #[comptime] lanes: u32,
    #[comptime] rows: u32,
    #[define(F)] _dtype: StorageType,
) {
    let heads = out.shape(1) as u32;
    let seq_q = out.shape(2) as u32;
    let b = (CUBE_POS_Y / heads) as usize;
    let h = (CUBE_POS_Y % heads) as usize;
    let row = CUBE_POS_X * rows + UNIT_POS_Y;
    let lane = UNIT_POS_X;
    let width = N::value();
    let mut sum = 0.0f32;
    if row < seq_q {
        let r = row as usize;
        let o_base = b * out.stride(0) + h * out.stride(1) + r * out.stride(2);
        let d_base = b * dout.stride(0) + h * dout.stride(1) + r * dout.stride(2);
        let o_step = out.stride(3) * width;
        let d_step = dout.stride(3) * width;
        #[unroll]
        for k in 0..comptime!(vectors.div_ceil(lanes)) {
            let j = lane + k * lanes;
            if comptime!(vectors.is_multiple_of(lanes)) || j < vectors {
                let o = Vector::<f32, N>::cast_from(out[(o_base + j as usize * o_step) / width]);
                let g = Vector::<f32, N>::cast_from(dout[(d_base + j as usize * d_step) / width]);
                let prod = o * g;
                #[unroll]
                for i in 0..width {
                    sum += prod[i];
                }
            }
        }
    }
    let mut parts = SharedMemory::<f32>::new(comptime!((lanes * rows) as usize));
    parts[(UNIT_POS_Y * lanes + lane) as usize] = sum;
    sync_cube();
    if lane == 0 && row < seq_q {
        let mut total = 0.0f32;
        #[unroll]
        for i in 0..lanes {
            total += parts[(UNIT_POS_Y * lanes + i) as usize];
        }
        let r = row as usize;
        delta[b * delta.stride(0) + h * delta.stride(1) + r * delta.stride(2)] = total;
        lse2[b * lse2.stride(0) + h * lse2.stride(1) + r * lse2.stride(2)] =
            lse[b * lse.stride(0) + h * lse.stride(1) + r * lse.stride(2)] * LOG2_E;
    }
}

/// The score of query `row` against key `key` (staged rows `qi` of `q_s` and `kj` of
/// `k_s`), with scale, softcap and bias, and `tanh` of the capped value for the softcap's
/// derivative. Returns `(score, tanh)`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn score_of(
    q_s: &SharedMemory<f32>,
    qi: u32,
    k_s: &SharedMemory<f32>,
    kj: u32,
    bias: &Tensor<f32>,
    bias_at: usize,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
) -> (f32, f32) {
    let mut dot = 0.0f32;
    for d in 0..p.head_dim {
        dot += q_s[(qi * p.head_dim + d) as usize] * k_s[(kj * p.head_dim + d) as usize];
    }
    let mut score = dot * s.scale;
    let mut t = 0.0f32;
    if p.has_softcap {
        t = (score / s.softcap).tanh();
        score = s.softcap * t;
    }
    if p.has_bias {
        score += bias[bias_at];
    }
    (score, t)
}

/// Whether the causal/window rule shows key `key` to query `row` (`offset = Sk − Sq`).
#[cube]
fn visible(row: i32, key: i32, offset: i32, s: &PortableScalars, #[comptime] p: BwdParams) -> bool {
    let mut ok = true;
    if p.has_left {
        ok = ok && key >= row + offset - s.left as i32;
    }
    if p.has_right {
        ok = ok && key <= row + offset + s.right as i32;
    }
    ok
}

/// Copies rows `start..start + rows` of one (batch, head) of `src` into `tile` as f32, spread
/// over `units` units; rows at or past `seq` read as zero.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_rows<F: Float>(
    src: &Tensor<F>,
    base: usize,
    start: i32,
    seq: u32,
    tile: &mut SharedMemory<f32>,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] units: u32,
) {
    let mut idx = UNIT_POS_X;
    while idx < rows * width {
        let r = start + (idx / width) as i32;
        let mut x = 0.0f32;
        if r >= 0 && r < seq as i32 {
            x = f32::cast_from(
                src[base + r as usize * src.stride(2) + (idx % width) as usize * src.stride(3)],
            );
        }
        tile[idx as usize] = x;
        idx += units;
    }
}

/// dK and dV. Grid: `(ceil(Sk / block_kv), B·Hkv)`, `block_kv` units.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dkdv<F: Float>(
    q: &Tensor<F>,
    k: &Tensor<F>,
    v: &Tensor<F>,
    dout: &Tensor<F>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dk: &mut Tensor<F>,
    dv: &mut Tensor<F>,
    dbias: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
    #[define(F)] _dtype: StorageType,
) {
    let kv_heads = k.shape(1) as u32;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let b = CUBE_POS_Y / kv_heads;
    let kvh = CUBE_POS_Y % kv_heads;
    let k_first = CUBE_POS_X * p.block_kv;
    let unit = UNIT_POS_X;
    let key = k_first + unit;
    let key_ok = key < seq_kv;
    let offset = seq_kv as i32 - seq_q as i32;

    // Queries that can see any key of this block: i >= j - offset - right and
    // i <= j - offset + left.
    let k_last = min(k_first + p.block_kv, seq_kv) as i32 - 1;
    let mut q_lo = 0i32;
    let mut q_hi = seq_q as i32;
    if p.has_right {
        q_lo = max(0i32, k_first as i32 - offset - s.right as i32);
    }
    if p.has_left {
        q_hi = min(q_hi, k_last - offset + s.left as i32 + 1);
    }

    let mut k_s = SharedMemory::<f32>::new((p.block_kv * p.head_dim) as usize);
    let mut v_s = SharedMemory::<f32>::new((p.block_kv * p.val_dim) as usize);
    let mut q_s = SharedMemory::<f32>::new((p.block_q * p.head_dim) as usize);
    let mut do_s = SharedMemory::<f32>::new((p.block_q * p.val_dim) as usize);
    let mut lse_s = SharedMemory::<f32>::new(p.block_q as usize);
    let mut delta_s = SharedMemory::<f32>::new(p.block_q as usize);
    let mut dk_acc = SharedMemory::<f32>::new((p.block_kv * p.head_dim) as usize);
    let mut dv_acc = SharedMemory::<f32>::new((p.block_kv * p.val_dim) as usize);

    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
    stage_rows::<F>(
        k,
        k_base,
        k_first as i32,
        seq_kv,
        &mut k_s,
        p.block_kv,
        p.head_dim,
        p.block_kv,
    );
    stage_rows::<F>(
        v,
        v_base,
        k_first as i32,
        seq_kv,
        &mut v_s,
        p.block_kv,
        p.val_dim,
        p.block_kv,
    );
    for d in 0..p.head_dim {
        dk_acc[(unit * p.head_dim + d) as usize] = 0.0;
    }
    for d in 0..p.val_dim {
        dv_acc[(unit * p.val_dim + d) as usize] = 0.0;
    }
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);

    for g in 0..s.group {
        let h = kvh * s.group + g;
        let bh = b * heads + h;
        let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
        let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
        let mut start = q_lo;
        while start < q_hi {
            sync_cube();
            stage_rows::<F>(
                q, q_base, start, seq_q, &mut q_s, p.block_q, p.head_dim, p.block_kv,
            );
            stage_rows::<F>(
                dout, do_base, start, seq_q, &mut do_s, p.block_q, p.val_dim, p.block_kv,
            );
            let mut idx = unit;
            while idx < p.block_q {
                let row = start + idx as i32;
                let mut l = 0.0f32;
                let mut dl = 0.0f32;
                if row < seq_q as i32 {
                    let at = b as usize * lse.stride(0)
                        + h as usize * lse.stride(1)
                        + row as usize * lse.stride(2);
                    l = lse[at];
                    dl = delta[b as usize * delta.stride(0)
                        + h as usize * delta.stride(1)
                        + row as usize * delta.stride(2)];
                }
                lse_s[idx as usize] = l;
                delta_s[idx as usize] = dl;
                idx += p.block_kv;
            }
            sync_cube();

            if key_ok {
                for i in 0..p.block_q {
                    let row = start + i as i32;
                    if row < q_hi && visible(row, key as i32, offset, s, p) {
                        let bias_at = b as usize * s.bias_stride_b as usize
                            + h as usize * s.bias_stride_h as usize
                            + row as usize * bias.stride(2)
                            + key as usize * bias.stride(3);
                        let (score, t) = score_of(&q_s, i, &k_s, unit, bias, bias_at, s, p);
                        // Masked scores have P = 0 and contribute nothing, not even to dbias; a NaN score
                        // goes on to make the gradients NaN, as in an unfused attention.
                        let mut ds = 0.0f32;
                        if score > MASKED_BELOW || score.is_nan() {
                            let prob = (score - lse_s[i as usize]).exp();
                            let mut dp = 0.0f32;
                            for d in 0..p.val_dim {
                                dp += do_s[(i * p.val_dim + d) as usize]
                                    * v_s[(unit * p.val_dim + d) as usize];
                            }
                            let mut weight = prob;
                            if p.has_dropout {
                                let u = uniform_cube(s.seed, bh, row as u32, key);
                                let kept = u >= s.dropout_p;
                                weight = select(kept, prob * keep_scale, 0.0f32);
                                dp = select(kept, dp * keep_scale, 0.0f32);
                            }
                            for d in 0..p.val_dim {
                                dv_acc[(unit * p.val_dim + d) as usize] +=
                                    weight * do_s[(i * p.val_dim + d) as usize];
                            }
                            ds = prob * (dp - delta_s[i as usize]);
                            let mut ds_raw = ds;
                            if p.has_softcap {
                                ds_raw *= 1.0f32 - t * t;
                            }
                            let g_scaled = ds_raw * s.scale;
                            for d in 0..p.head_dim {
                                dk_acc[(unit * p.head_dim + d) as usize] +=
                                    g_scaled * q_s[(i * p.head_dim + d) as usize];
                            }
                        }
                        if p.has_dbias {
                            // By strides: a fresh device buffer may have padded rows.
                            dbias[b as usize * dbias.stride(0)
                                + h as usize * dbias.stride(1)
                                + row as usize * dbias.stride(2)
                                + key as usize * dbias.stride(3)] = ds;
                        }
                    }
                }
            }
            start += p.block_q as i32;
        }
    }

    if key_ok {
        let dk_base =
            b as usize * dk.stride(0) + kvh as usize * dk.stride(1) + key as usize * dk.stride(2);
        for d in 0..p.head_dim {
            dk[dk_base + d as usize * dk.stride(3)] =
                F::cast_from(dk_acc[(unit * p.head_dim + d) as usize]);
        }
        let dv_base =
            b as usize * dv.stride(0) + kvh as usize * dv.stride(1) + key as usize * dv.stride(2);
        for d in 0..p.val_dim {
            dv[dv_base + d as usize * dv.stride(3)] =
                F::cast_from(dv_acc[(unit * p.val_dim + d) as usize]);
        }
    }
}

/// dQ. Grid: `(ceil(Sq / block_q), B·H)`, `block_q` units.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dq<F: Float>(
    q: &Tensor<F>,
    k: &Tensor<F>,
    v: &Tensor<F>,
    dout: &Tensor<F>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dq: &mut Tensor<F>,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
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
    let unit = UNIT_POS_X;
    let row = q_first + unit;
    let row_ok = row < seq_q;
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

    let mut q_s = SharedMemory::<f32>::new((p.block_q * p.head_dim) as usize);
    let mut do_s = SharedMemory::<f32>::new((p.block_q * p.val_dim) as usize);
    let mut dq_acc = SharedMemory::<f32>::new((p.block_q * p.head_dim) as usize);
    let mut k_s = SharedMemory::<f32>::new((p.block_kv * p.head_dim) as usize);
    let mut v_s = SharedMemory::<f32>::new((p.block_kv * p.val_dim) as usize);

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
    stage_rows::<F>(
        q,
        q_base,
        q_first as i32,
        seq_q,
        &mut q_s,
        p.block_q,
        p.head_dim,
        p.block_q,
    );
    stage_rows::<F>(
        dout,
        do_base,
        q_first as i32,
        seq_q,
        &mut do_s,
        p.block_q,
        p.val_dim,
        p.block_q,
    );
    for d in 0..p.head_dim {
        dq_acc[(unit * p.head_dim + d) as usize] = 0.0;
    }
    let mut l = 0.0f32;
    let mut dl = 0.0f32;
    if row_ok {
        l = lse[b as usize * lse.stride(0)
            + h as usize * lse.stride(1)
            + row as usize * lse.stride(2)];
        dl = delta[b as usize * delta.stride(0)
            + h as usize * delta.stride(1)
            + row as usize * delta.stride(2)];
    }
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);

    let mut start = kv_lo;
    while start < kv_hi {
        sync_cube();
        stage_rows::<F>(
            k, k_base, start, seq_kv, &mut k_s, p.block_kv, p.head_dim, p.block_q,
        );
        stage_rows::<F>(
            v, v_base, start, seq_kv, &mut v_s, p.block_kv, p.val_dim, p.block_q,
        );
        sync_cube();
        if row_ok {
            for j in 0..p.block_kv {
                let key = start + j as i32;
                if key < kv_hi && visible(row as i32, key, offset, s, p) {
                    let bias_at = b as usize * s.bias_stride_b as usize
                        + h as usize * s.bias_stride_h as usize
                        + row as usize * bias.stride(2)
                        + key as usize * bias.stride(3);
                    let (score, t) = score_of(&q_s, unit, &k_s, j, bias, bias_at, s, p);
                    if score > MASKED_BELOW || score.is_nan() {
                        let prob = (score - l).exp();
                        let mut dp = 0.0f32;
                        for d in 0..p.val_dim {
                            dp += do_s[(unit * p.val_dim + d) as usize]
                                * v_s[(j * p.val_dim + d) as usize];
                        }
                        if p.has_dropout {
                            let u = uniform_cube(s.seed, bh, row, key as u32);
                            dp = select(u >= s.dropout_p, dp * keep_scale, 0.0f32);
                        }
                        let mut ds = prob * (dp - dl);
                        if p.has_softcap {
                            ds *= 1.0f32 - t * t;
                        }
                        let g_scaled = ds * s.scale;
                        for d in 0..p.head_dim {
                            dq_acc[(unit * p.head_dim + d) as usize] +=
                                g_scaled * k_s[(j * p.head_dim + d) as usize];
                        }
                    }
                }
            }
        }
        start += p.block_kv as i32;
    }

    if row_ok {
        let base =
            b as usize * dq.stride(0) + h as usize * dq.stride(1) + row as usize * dq.stride(2);
        for d in 0..p.head_dim {
            dq[base + d as usize * dq.stride(3)] =
                F::cast_from(dq_acc[(unit * p.head_dim + d) as usize]);
        }
    }
}
