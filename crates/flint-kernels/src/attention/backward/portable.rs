//! The portable backward: no plane ops, no cmma, shared memory within 32 KiB where the
//! tiles are small. It serves f32 everywhere and f16/bf16 where there are no tensor cores.
//!
//! Three kernels, as FlashAttention-2's backward:
//! 1. [`attention_bwd_delta`]: `delta_i = Σ_d dO_id · O_id`, a few units per query row.
//! 2. [`attention_bwd_dkdv`]: one cube per `block_kv` keys of one (batch, kv head). It loops
//!    over every query head of the key's group (so GQA needs no atomics) and over the query
//!    tiles the mask leaves visible, recomputing `P` from the saved LSE.
//! 3. [`attention_bwd_dq`]: one cube per `block_q` query rows, looping over key tiles like
//!    the forward.
//!
//! Both are register-tiled as the portable forward is (`crate::attention::portable_tiles`):
//! `block_q · block_kv / 16` units, each computing a 4 x 4 block of a tile's scores and of
//! `dO·Vᵀ`, then adding blocks of products into its accumulators: per-unit arrays where the
//! device keeps them across barriers ([`BwdParams::reg_acc`]), else shared memory (as in the
//! forward, for lavapipe's coroutine lowering of barriers). The sliced form
//! ([`BwdParams::sliced`]) keeps nothing staged across tiles, for small shared memories.

use cubecl::prelude::*;

use crate::attention::backward::mma::dq_block_offset;
use crate::attention::dropout::uniform_cube;
use crate::attention::forward::{LOG2_E, MASKED_BELOW, PortableScalars};
use crate::attention::portable_slices::{add_chunked_products, chunk_rows, slice_len, sliced_dot};
use crate::attention::portable_tiles::{
    BlockShape, MICRO, Quad, accumulate_block, add_block_products, block_len, dot_block,
    stage_vectors, write_block, zero_array,
};

/// Compile-time shape of one backward kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BwdParams {
    /// Query rows per tile (dK/dV) or per cube (dQ), a multiple of 4.
    pub block_q: u32,
    /// Keys per cube (dK/dV) or per tile (dQ), a multiple of 4.
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
    /// The gradient accumulators (dK, dV; dQ) live in each unit's registers rather than in
    /// shared memory: only where arrays may be kept across cube barriers (not wgpu).
    pub reg_acc: bool,
    /// The dK/dV kernel also computes dQ, adding each tile's `dS·K` into an f32 accumulator
    /// through two-element atomics (five products per tile pair instead of seven); needs
    /// `reg_acc` and `D` a multiple of 8.
    pub fused_dq: bool,
    /// The products over `D` stage their operands a slice at a time, and those over a
    /// tile's rows their second operand a chunk of rows at a time
    /// (`crate::attention::portable_slices`): nothing stays staged across tiles, so large
    /// tiles fit small shared memories. Needs `reg_acc`.
    pub sliced: bool,
}

impl BwdParams {
    /// Vectors of the buffer of the query side's slices (Q, dO) and of every chunk (sliced).
    pub(crate) fn a_len(&self) -> u32 {
        slice_len(self.block_q, self.head_dim).max(slice_len(self.block_q, self.val_dim))
    }

    /// Vectors of the buffer of the key side's slices (K, V; sliced).
    pub(crate) fn b_len(&self) -> u32 {
        slice_len(self.block_kv, self.head_dim).max(slice_len(self.block_kv, self.val_dim))
    }

    /// Rows per chunk of a product's operand of `stride` vectors per row summed over `count`
    /// rows (sliced).
    pub(crate) fn chunk(&self, stride: u32, count: u32) -> u32 {
        chunk_rows(self.a_len(), stride, count)
    }
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

/// dQ += dS·K by query rows: a unit's 4 rows by the vectors of its stride
/// `tx + c · block_kv / 4`, summed over a tile's keys (`dS` rows `block_kv + 1` apart, K padded
/// by one vector).
fn dq_block_shape(p: BwdParams) -> BlockShape {
    BlockShape {
        w_step: p.block_kv + 1,
        j_step: 1,
        count: p.block_kv,
        m_stride: p.head_dim.div_ceil(MICRO) + 1,
        vec_step: p.block_kv / MICRO,
        vectors: p.head_dim.div_ceil(MICRO),
        acc_step: 1,
        acc_stride: p.head_dim.div_ceil(MICRO),
        rescale: false,
    }
}

/// Whether the causal/window rule shows key `key` to query `row` (`offset = Sk − Sq`).
#[cube]
pub(crate) fn visible(
    row: i32,
    key: i32,
    offset: i32,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
) -> bool {
    let mut ok = true;
    if p.has_left {
        ok = ok && key >= row + offset - s.left as i32;
    }
    if p.has_right {
        ok = ok && key <= row + offset + s.right as i32;
    }
    ok
}

/// One score's gradients from its dot products `Q·K` (`dot`) and `dO·V` (`dp_dot`):
/// `(weight, ds, g)`, where `weight` is P after dropout (what dV takes), `ds` the gradient of
/// the score after softcap (what the bias gradient is) and `g` that of `Q·Kᵀ` (what dK and dQ
/// take). `shown` is whether the mask and the lengths leave the pair in. Masked scores have
/// P = 0 and contribute nothing; a NaN score goes on to make the gradients NaN, as in an
/// unfused attention.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn grads_of(
    dot: f32,
    dp_dot: f32,
    row: i32,
    key: i32,
    lse: f32,
    delta: f32,
    bh: u32,
    bias: &Tensor<f32>,
    bias_at: usize,
    shown: bool,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
) -> (f32, f32, f32) {
    let (prob, t) = prob_of(dot, lse, bias, bias_at, shown, s, p);
    grads_from(prob, t, dp_dot, delta, row, key, bh, s, p)
}

/// The first half of [`grads_of`]: `(P, t)` of one score, P before dropout or -1 where the
/// pair is out (not `shown`, or a score at the mask's value), and `t` the softcap's tanh.
#[cube]
pub(crate) fn prob_of(
    dot: f32,
    lse: f32,
    bias: &Tensor<f32>,
    bias_at: usize,
    shown: bool,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
) -> (f32, f32) {
    let mut prob = f32::new(-1.0);
    let mut t = 0.0f32;
    if shown {
        let mut score = dot * s.scale;
        if p.has_softcap {
            t = (score / s.softcap).tanh();
            score = s.softcap * t;
        }
        if p.has_bias {
            score += bias[bias_at];
        }
        if score > MASKED_BELOW || score.is_nan() {
            prob = (score - lse).exp();
        }
    }
    (prob, t)
}

/// The second half of [`grads_of`], from [`prob_of`]'s `(prob, t)`: a kernel that keeps P
/// between its two passes over a tile computes each exponential once.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn grads_from(
    prob: f32,
    t: f32,
    dp_dot: f32,
    delta: f32,
    row: i32,
    key: i32,
    bh: u32,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
) -> (f32, f32, f32) {
    let mut weight = 0.0f32;
    let mut ds = 0.0f32;
    let mut g = 0.0f32;
    // A NaN P (from a NaN score) counts as in.
    if prob >= 0.0f32 || prob.is_nan() {
        let mut dp = dp_dot;
        weight = prob;
        if p.has_dropout {
            let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);
            let kept = uniform_cube(s.seed, bh, row as u32, key as u32) >= s.dropout_p;
            weight = select(kept, prob * keep_scale, 0.0f32);
            dp = select(kept, dp * keep_scale, 0.0f32);
        }
        ds = prob * (dp - delta);
        let mut raw = ds;
        if p.has_softcap {
            raw *= 1.0f32 - t * t;
        }
        g = raw * s.scale;
    }
    (weight, ds, g)
}

/// Stages the LSE and delta of rows `first..first + rows` of one (batch, head), zero past
/// `seq`.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_row_stats(
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    b: u32,
    h: u32,
    first: i32,
    seq: u32,
    lse_s: &mut SharedMemory<f32>,
    delta_s: &mut SharedMemory<f32>,
    #[comptime] rows: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let mut idx = tid;
    while idx < rows {
        let row = first + idx as i32;
        let mut l = 0.0f32;
        let mut dl = 0.0f32;
        if row >= 0 && row < seq as i32 {
            l = lse[b as usize * lse.stride(0)
                + h as usize * lse.stride(1)
                + row as usize * lse.stride(2)];
            dl = delta[b as usize * delta.stride(0)
                + h as usize * delta.stride(1)
                + row as usize * delta.stride(2)];
        }
        lse_s[idx as usize] = l;
        delta_s[idx as usize] = dl;
        idx += units;
    }
}

/// Writes `rows` rows of a shared-memory accumulator (`stride` vectors per row) from row
/// `first` of `t` (a `[B, H, S, width]` tensor at `base`), rows past `seq` left out.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_rows<F: Float>(
    acc: &SharedMemory<Vector<f32, Quad>>,
    t: &mut Tensor<F>,
    base: usize,
    first: u32,
    seq: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] stride: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let per_row = comptime!(width.div_ceil(MICRO));
    let mut idx = tid;
    while idx < rows * per_row {
        let r = idx / per_row;
        let c4 = idx % per_row;
        if first + r < seq {
            let o = acc[(r * stride + c4) as usize];
            let at = base + (first + r) as usize * t.stride(2);
            #[unroll]
            for e in 0..MICRO {
                let col = c4 * MICRO + e;
                if col < width {
                    t[at + col as usize * t.stride(3)] = F::cast_from(o[e as usize]);
                }
            }
        }
        idx += units;
    }
}

/// Sets `len` vectors of `acc` to zero.
#[cube]
fn zero_vectors(
    acc: &mut SharedMemory<Vector<f32, Quad>>,
    #[comptime] len: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let mut idx = tid;
    while idx < len {
        acc[idx as usize] = Vector::new(0.0f32);
        idx += units;
    }
}

/// dQ += this tile's `dS·K` (`sum`, the unit's share as [`add_block_products`] leaves it)
/// for the unit's 4 query rows `start + row0 + r` (those below `q_hi`) by its vectors
/// `tx + c · vec_step`, through two-element atomic adds into `dq_acc` (each head in 8x8
/// blocks from `head_base`, see `dq_block_offset`; `D` a multiple of 8, so a vector of 4
/// lies inside one block row).
#[cube]
#[allow(clippy::too_many_arguments)]
fn add_dq_tile<NA: Size>(
    sum: &Array<f32>,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    head_base: usize,
    start: i32,
    q_hi: i32,
    row0: u32,
    tx: u32,
    #[comptime] head_dim: u32,
    #[comptime] g: BlockShape,
) {
    let n_vecs = comptime!(g.vectors.div_ceil(g.vec_step));
    #[unroll]
    for r in 0..MICRO {
        let row = start + (row0 + r) as i32;
        if row < q_hi {
            #[unroll]
            for c in 0..n_vecs {
                let vc = tx + c * g.vec_step;
                if vc < g.vectors {
                    let at = (head_base
                        + dq_block_offset(row as u32, vc * MICRO, head_dim) as usize)
                        / 2;
                    let i = (r * n_vecs + c) * MICRO;
                    #[unroll]
                    for half in 0..2u32 {
                        let mut pair = Vector::<f32, NA>::new(0.0f32);
                        pair[0] = sum[(i + 2 * half) as usize];
                        pair[1] = sum[(i + 2 * half + 1) as usize];
                        dq_acc[at + half as usize].fetch_add(pair);
                    }
                }
            }
        }
    }
}

/// Sliced: `dot` becomes the unit's 4 x 4 block of `Q·Kᵀ` and `dp` that of `dO·Vᵀ`, for
/// the tile of query rows from `q_first` and keys from `k_first` (see [`sliced_dot`]).
#[cube]
#[allow(clippy::too_many_arguments)]
fn sliced_dots<F: Float>(
    q: &Tensor<F>,
    k: &Tensor<F>,
    v: &Tensor<F>,
    dout: &Tensor<F>,
    q_base: usize,
    k_base: usize,
    v_base: usize,
    do_base: usize,
    q_first: i32,
    k_first: i32,
    a_s: &mut SharedMemory<Vector<f32, Quad>>,
    b_s: &mut SharedMemory<Vector<f32, Quad>>,
    row0: u32,
    tx: u32,
    dot: &mut Array<f32>,
    dp: &mut Array<f32>,
    #[comptime] p: BwdParams,
    #[comptime] units: u32,
    tid: u32,
) {
    let (seq_q, seq_kv) = (q.shape(2) as u32, k.shape(2) as u32);
    let (bq, bkv) = (p.block_q, p.block_kv);
    sliced_dot::<F>(
        q, q_base, q_first, seq_q, k, k_base, k_first, seq_kv, a_s, b_s, row0, tx, dot, bq, bkv,
        p.head_dim, units, tid,
    );
    sliced_dot::<F>(
        dout, do_base, q_first, seq_q, v, v_base, k_first, seq_kv, a_s, b_s, row0, tx, dp, bq, bkv,
        p.val_dim, units, tid,
    );
}

/// dK and dV (and with `fused_dq`, dQ into `dq_acc`). Grid: `(ceil(Sk / block_kv), B·Hkv)`,
/// `block_q · block_kv / 16` units.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dkdv<F: Float, NA: Size>(
    q: &Tensor<F>,
    k: &Tensor<F>,
    v: &Tensor<F>,
    dout: &Tensor<F>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dk: &mut Tensor<F>,
    dv: &mut Tensor<F>,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    dbias: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: BwdParams,
    #[define(F)] _dtype: StorageType,
) {
    let bq = p.block_q;
    let bkv = p.block_kv;
    let d4 = comptime!(p.head_dim.div_ceil(MICRO));
    let v4 = comptime!(p.val_dim.div_ceil(MICRO));
    // Rows read by key are padded by one vector; so are the accumulators' (written by key).
    let kw = comptime!(p.head_dim.div_ceil(MICRO) + 1);
    let vw = comptime!(p.val_dim.div_ceil(MICRO) + 1);
    let cols_n = comptime!(p.block_kv / MICRO);
    let units = comptime!(p.block_q * p.block_kv / (MICRO * MICRO));
    let t_stride = comptime!(p.block_kv + 1);

    let kv_heads = k.shape(1) as u32;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let b = CUBE_POS_Y / kv_heads;
    let kvh = CUBE_POS_Y % kv_heads;
    let k_first = CUBE_POS_X * bkv;
    let tid = UNIT_POS_X;
    let tx = tid % cols_n;
    let ty = tid / cols_n;
    let row0 = ty * MICRO;
    let offset = seq_kv as i32 - seq_q as i32;

    // Queries that can see any key of this block: i >= j - offset - right and
    // i <= j - offset + left.
    let k_last = min(k_first + bkv, seq_kv) as i32 - 1;
    let mut q_lo = 0i32;
    let mut q_hi = seq_q as i32;
    if p.has_right {
        q_lo = max(0i32, k_first as i32 - offset - s.right as i32);
    }
    if p.has_left {
        q_hi = min(q_hi, k_last - offset + s.left as i32 + 1);
    }

    // Sliced, K's buffer takes the key side's slices, Q's the query side's and the chunks.
    let k_len = comptime!(if p.sliced { p.b_len() } else { p.block_kv * kw });
    let v_len = comptime!(if p.sliced { 1 } else { p.block_kv * vw });
    let q_len = comptime!(if p.sliced { p.a_len() } else { p.block_q * kw });
    let do_len = comptime!(if p.sliced { 1 } else { p.block_q * vw });
    let mut k_s = SharedMemory::<Vector<f32, Quad>>::new(k_len as usize);
    let mut v_s = SharedMemory::<Vector<f32, Quad>>::new(v_len as usize);
    let mut q_s = SharedMemory::<Vector<f32, Quad>>::new(q_len as usize);
    let mut do_s = SharedMemory::<Vector<f32, Quad>>::new(do_len as usize);
    // With the accumulators in registers, their shared memory shrinks to one vector.
    let dk_len = comptime!(if p.reg_acc { 1 } else { p.block_kv * kw });
    let dv_len = comptime!(if p.reg_acc { 1 } else { p.block_kv * vw });
    let mut dk_acc = SharedMemory::<Vector<f32, Quad>>::new(dk_len as usize);
    let mut dv_acc = SharedMemory::<Vector<f32, Quad>>::new(dv_len as usize);
    // The tile's P (after dropout) and dS (scaled), by query row.
    let mut p_s = SharedMemory::<f32>::new(comptime!((p.block_q * (p.block_kv + 1)) as usize));
    let mut ds_s = SharedMemory::<f32>::new(comptime!((p.block_q * (p.block_kv + 1)) as usize));
    let mut lse_s = SharedMemory::<f32>::new(p.block_q as usize);
    let mut delta_s = SharedMemory::<f32>::new(p.block_q as usize);

    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
    // Sliced, K and V are staged with each query tile.
    if comptime!(!p.sliced) {
        stage_vectors::<F>(
            k,
            k_base,
            k_first as i32,
            seq_kv,
            &mut k_s,
            bkv,
            p.head_dim,
            kw,
            units,
            tid,
        );
        stage_vectors::<F>(
            v,
            v_base,
            k_first as i32,
            seq_kv,
            &mut v_s,
            bkv,
            p.val_dim,
            vw,
            units,
            tid,
        );
    }
    zero_vectors(&mut dk_acc, dk_len, units, tid);
    zero_vectors(&mut dv_acc, dv_len, units, tid);
    // dV += Pᵀ·dO and dK += dSᵀ·Q: this unit's 4 keys tx + r · cols_n by the vectors of its
    // stride ty + c · (block_q / 4), summed over the tile's query rows.
    let dv_shape = comptime!(BlockShape {
        w_step: p.block_kv / MICRO,
        j_step: p.block_kv + 1,
        count: p.block_q,
        m_stride: p.val_dim.div_ceil(MICRO) + 1,
        vec_step: p.block_q / MICRO,
        vectors: p.val_dim.div_ceil(MICRO),
        acc_step: p.block_kv / MICRO,
        acc_stride: p.val_dim.div_ceil(MICRO) + 1,
        rescale: false,
    });
    let dk_shape = comptime!(BlockShape {
        m_stride: p.head_dim.div_ceil(MICRO) + 1,
        vectors: p.head_dim.div_ceil(MICRO),
        acc_stride: p.head_dim.div_ceil(MICRO) + 1,
        ..dv_shape
    });
    // dQ += dS·K (fused), one tile at a time.
    let dq_shape = comptime!(dq_block_shape(p));
    let dk_regs = comptime!(if p.reg_acc { block_len(dk_shape) } else { 1 });
    let dv_regs = comptime!(if p.reg_acc { block_len(dv_shape) } else { 1 });
    let mut dk_r = Array::<f32>::new(dk_regs as usize);
    let mut dv_r = Array::<f32>::new(dv_regs as usize);
    zero_array(&mut dk_r, dk_regs);
    zero_array(&mut dv_r, dv_regs);

    for g in 0..s.group {
        let h = kvh * s.group + g;
        let bh = b * heads + h;
        let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
        let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
        let bias_bh = b as usize * s.bias_stride_b as usize + h as usize * s.bias_stride_h as usize;
        let mut start = q_lo;
        while start < q_hi {
            sync_cube();
            if comptime!(!p.sliced) {
                stage_vectors::<F>(
                    q, q_base, start, seq_q, &mut q_s, bq, p.head_dim, kw, units, tid,
                );
                stage_vectors::<F>(
                    dout, do_base, start, seq_q, &mut do_s, bq, p.val_dim, vw, units, tid,
                );
            }
            stage_row_stats(
                lse,
                delta,
                b,
                h,
                start,
                seq_q,
                &mut lse_s,
                &mut delta_s,
                bq,
                units,
                tid,
            );
            let mut dot = Array::<f32>::new(comptime!((MICRO * MICRO) as usize));
            let mut dp = Array::<f32>::new(comptime!((MICRO * MICRO) as usize));
            if comptime!(p.sliced) {
                // The row statistics are read after the slices' barriers.
                sliced_dots::<F>(
                    q,
                    k,
                    v,
                    dout,
                    q_base,
                    k_base,
                    v_base,
                    do_base,
                    start,
                    k_first as i32,
                    &mut q_s,
                    &mut k_s,
                    row0,
                    tx,
                    &mut dot,
                    &mut dp,
                    p,
                    units,
                    tid,
                );
            } else {
                sync_cube();
                dot_block(&q_s, row0, &k_s, tx, cols_n, d4, kw, &mut dot);
                dot_block(&do_s, row0, &v_s, tx, cols_n, v4, vw, &mut dp);
            }
            #[unroll]
            for r in 0..MICRO {
                let row = start + (row0 + r) as i32;
                #[unroll]
                for c in 0..MICRO {
                    let col = tx + c * cols_n;
                    let key = (k_first + col) as i32;
                    let shown =
                        row < q_hi && key < seq_kv as i32 && visible(row, key, offset, s, p);
                    let bias_at =
                        bias_bh + row as usize * bias.stride(2) + key as usize * bias.stride(3);
                    let at = r * MICRO;
                    let (weight, ds, grad) = grads_of(
                        dot[(at + c) as usize],
                        dp[(at + c) as usize],
                        row,
                        key,
                        lse_s[(row0 + r) as usize],
                        delta_s[(row0 + r) as usize],
                        bh,
                        bias,
                        bias_at,
                        shown,
                        s,
                        p,
                    );
                    let t_at = ((row0 + r) * t_stride + col) as usize;
                    p_s[t_at] = weight;
                    ds_s[t_at] = grad;
                    if p.has_dbias && shown {
                        // By strides: a fresh device buffer may have padded rows.
                        dbias[b as usize * dbias.stride(0)
                            + h as usize * dbias.stride(1)
                            + row as usize * dbias.stride(2)
                            + key as usize * dbias.stride(3)] = ds;
                    }
                }
            }
            sync_cube();

            if comptime!(p.sliced) {
                add_chunked_products::<F>(
                    &p_s,
                    tx,
                    dout,
                    do_base,
                    start,
                    seq_q,
                    &mut q_s,
                    ty,
                    &mut dv_r,
                    p.val_dim,
                    comptime!(p.chunk(vw, bq)),
                    dv_shape,
                    units,
                    tid,
                );
                add_chunked_products::<F>(
                    &ds_s,
                    tx,
                    q,
                    q_base,
                    start,
                    seq_q,
                    &mut q_s,
                    ty,
                    &mut dk_r,
                    p.head_dim,
                    comptime!(p.chunk(kw, bq)),
                    dk_shape,
                    units,
                    tid,
                );
                if comptime!(p.fused_dq) {
                    let mut sum = Array::<f32>::new(comptime!(block_len(dq_shape) as usize));
                    zero_array(&mut sum, comptime!(block_len(dq_shape)));
                    add_chunked_products::<F>(
                        &ds_s,
                        row0 * dq_shape.w_step,
                        k,
                        k_base,
                        k_first as i32,
                        seq_kv,
                        &mut q_s,
                        tx,
                        &mut sum,
                        p.head_dim,
                        comptime!(p.chunk(kw, bkv)),
                        dq_shape,
                        units,
                        tid,
                    );
                    let head_base = (bh * seq_q.div_ceil(8) * 8) as usize * p.head_dim as usize;
                    add_dq_tile::<NA>(
                        &sum, dq_acc, head_base, start, q_hi, row0, tx, p.head_dim, dq_shape,
                    );
                }
            } else if comptime!(p.reg_acc) {
                add_block_products(&p_s, tx, &do_s, ty, &mut dv_r, dv_shape);
                add_block_products(&ds_s, tx, &q_s, ty, &mut dk_r, dk_shape);
                if comptime!(p.fused_dq) {
                    // The accumulator is ours, contiguous: each head `ceil(Sq / 8) · 8` rows.
                    let head_base = (bh * seq_q.div_ceil(8) * 8) as usize * p.head_dim as usize;
                    let mut sum = Array::<f32>::new(comptime!(block_len(dq_shape) as usize));
                    zero_array(&mut sum, comptime!(block_len(dq_shape)));
                    add_block_products(&ds_s, row0 * dq_shape.w_step, &k_s, tx, &mut sum, dq_shape);
                    add_dq_tile::<NA>(
                        &sum, dq_acc, head_base, start, q_hi, row0, tx, p.head_dim, dq_shape,
                    );
                }
            } else {
                accumulate_block(&p_s, tx, &do_s, ty, &mut dv_acc, tx, &lse_s, 0u32, dv_shape);
                accumulate_block(&ds_s, tx, &q_s, ty, &mut dk_acc, tx, &lse_s, 0u32, dk_shape);
            }
            start += bq as i32;
        }
    }

    let dk_base = b as usize * dk.stride(0) + kvh as usize * dk.stride(1);
    let dv_base = b as usize * dv.stride(0) + kvh as usize * dv.stride(1);
    if comptime!(p.reg_acc) {
        write_block::<F>(
            &dk_r, dk, dk_base, k_first, seq_kv, tx, ty, p.head_dim, dk_shape,
        );
        write_block::<F>(
            &dv_r, dv, dv_base, k_first, seq_kv, tx, ty, p.val_dim, dv_shape,
        );
    } else {
        sync_cube();
        write_rows::<F>(
            &dk_acc, dk, dk_base, k_first, seq_kv, bkv, p.head_dim, kw, units, tid,
        );
        write_rows::<F>(
            &dv_acc, dv, dv_base, k_first, seq_kv, bkv, p.val_dim, vw, units, tid,
        );
    }
}

/// dQ. Grid: `(ceil(Sq / block_q), B·H)`, `block_q · block_kv / 16` units.
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
    let bq = p.block_q;
    let bkv = p.block_kv;
    let d4 = comptime!(p.head_dim.div_ceil(MICRO));
    let v4 = comptime!(p.val_dim.div_ceil(MICRO));
    let kw = comptime!(p.head_dim.div_ceil(MICRO) + 1);
    let vw = comptime!(p.val_dim.div_ceil(MICRO) + 1);
    let cols_n = comptime!(p.block_kv / MICRO);
    let units = comptime!(p.block_q * p.block_kv / (MICRO * MICRO));
    let t_stride = comptime!(p.block_kv + 1);

    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let bh = CUBE_POS_Y;
    let b = bh / heads;
    let h = bh % heads;
    let kvh = h / s.group;
    let q_first = CUBE_POS_X * bq;
    let tid = UNIT_POS_X;
    let tx = tid % cols_n;
    let row0 = (tid / cols_n) * MICRO;
    let offset = seq_kv as i32 - seq_q as i32;

    let q_last = min(q_first + bq, seq_q) as i32 - 1;
    let mut kv_lo = 0i32;
    let mut kv_hi = seq_kv as i32;
    if p.has_left {
        kv_lo = max(0i32, q_first as i32 + offset - s.left as i32);
    }
    if p.has_right {
        kv_hi = min(kv_hi, q_last + offset + s.right as i32 + 1);
    }

    // Sliced, Q's buffer takes the query side's slices and the chunks, K's the key side's.
    let q_len = comptime!(if p.sliced { p.a_len() } else { p.block_q * kw });
    let do_len = comptime!(if p.sliced { 1 } else { p.block_q * vw });
    let k_len = comptime!(if p.sliced { p.b_len() } else { p.block_kv * kw });
    let v_len = comptime!(if p.sliced { 1 } else { p.block_kv * vw });
    let mut q_s = SharedMemory::<Vector<f32, Quad>>::new(q_len as usize);
    let mut do_s = SharedMemory::<Vector<f32, Quad>>::new(do_len as usize);
    let mut k_s = SharedMemory::<Vector<f32, Quad>>::new(k_len as usize);
    let mut v_s = SharedMemory::<Vector<f32, Quad>>::new(v_len as usize);
    let dq_len = comptime!(if p.reg_acc { 1 } else { p.block_q * d4 });
    let mut dq_acc = SharedMemory::<Vector<f32, Quad>>::new(dq_len as usize);
    let mut ds_s = SharedMemory::<f32>::new(comptime!((p.block_q * (p.block_kv + 1)) as usize));
    let mut lse_s = SharedMemory::<f32>::new(p.block_q as usize);
    let mut delta_s = SharedMemory::<f32>::new(p.block_q as usize);

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
    // Sliced, Q and dO are staged with each key tile.
    if comptime!(!p.sliced) {
        stage_vectors::<F>(
            q,
            q_base,
            q_first as i32,
            seq_q,
            &mut q_s,
            bq,
            p.head_dim,
            kw,
            units,
            tid,
        );
        stage_vectors::<F>(
            dout,
            do_base,
            q_first as i32,
            seq_q,
            &mut do_s,
            bq,
            p.val_dim,
            vw,
            units,
            tid,
        );
    }
    stage_row_stats(
        lse,
        delta,
        b,
        h,
        q_first as i32,
        seq_q,
        &mut lse_s,
        &mut delta_s,
        bq,
        units,
        tid,
    );
    zero_vectors(&mut dq_acc, dq_len, units, tid);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
    let bias_bh = b as usize * s.bias_stride_b as usize + h as usize * s.bias_stride_h as usize;
    let dq_shape = comptime!(dq_block_shape(p));
    let dq_regs = comptime!(if p.reg_acc { block_len(dq_shape) } else { 1 });
    let mut dq_r = Array::<f32>::new(dq_regs as usize);
    zero_array(&mut dq_r, dq_regs);

    let mut start = kv_lo;
    while start < kv_hi {
        sync_cube();
        let mut dot = Array::<f32>::new(comptime!((MICRO * MICRO) as usize));
        let mut dp = Array::<f32>::new(comptime!((MICRO * MICRO) as usize));
        if comptime!(p.sliced) {
            sliced_dots::<F>(
                q,
                k,
                v,
                dout,
                q_base,
                k_base,
                v_base,
                do_base,
                q_first as i32,
                start,
                &mut q_s,
                &mut k_s,
                row0,
                tx,
                &mut dot,
                &mut dp,
                p,
                units,
                tid,
            );
        } else {
            stage_vectors::<F>(
                k, k_base, start, seq_kv, &mut k_s, bkv, p.head_dim, kw, units, tid,
            );
            stage_vectors::<F>(
                v, v_base, start, seq_kv, &mut v_s, bkv, p.val_dim, vw, units, tid,
            );
            sync_cube();
            dot_block(&q_s, row0, &k_s, tx, cols_n, d4, kw, &mut dot);
            dot_block(&do_s, row0, &v_s, tx, cols_n, v4, vw, &mut dp);
        }
        #[unroll]
        for r in 0..MICRO {
            let row = (q_first + row0 + r) as i32;
            #[unroll]
            for c in 0..MICRO {
                let col = tx + c * cols_n;
                let key = start + col as i32;
                let shown = row < seq_q as i32 && key < kv_hi && visible(row, key, offset, s, p);
                let bias_at =
                    bias_bh + row as usize * bias.stride(2) + key as usize * bias.stride(3);
                let at = r * MICRO;
                let (_weight, _ds, grad) = grads_of(
                    dot[(at + c) as usize],
                    dp[(at + c) as usize],
                    row,
                    key,
                    lse_s[(row0 + r) as usize],
                    delta_s[(row0 + r) as usize],
                    bh,
                    bias,
                    bias_at,
                    shown,
                    s,
                    p,
                );
                ds_s[((row0 + r) * t_stride + col) as usize] = grad;
            }
        }
        sync_cube();
        if comptime!(p.sliced) {
            add_chunked_products::<F>(
                &ds_s,
                row0 * t_stride,
                k,
                k_base,
                start,
                seq_kv,
                &mut q_s,
                tx,
                &mut dq_r,
                p.head_dim,
                comptime!(p.chunk(kw, bkv)),
                dq_shape,
                units,
                tid,
            );
        } else if comptime!(p.reg_acc) {
            add_block_products(&ds_s, row0 * t_stride, &k_s, tx, &mut dq_r, dq_shape);
        } else {
            accumulate_block(
                &ds_s,
                row0 * t_stride,
                &k_s,
                tx,
                &mut dq_acc,
                row0,
                &lse_s,
                0u32,
                dq_shape,
            );
        }
        start += bkv as i32;
    }

    let dq_base = b as usize * dq.stride(0) + h as usize * dq.stride(1);
    if comptime!(p.reg_acc) {
        write_block::<F>(
            &dq_r, dq, dq_base, q_first, seq_q, row0, tx, p.head_dim, dq_shape,
        );
    } else {
        sync_cube();
        write_rows::<F>(
            &dq_acc, dq, dq_base, q_first, seq_q, bq, p.head_dim, d4, units, tid,
        );
    }
}
