//! The portable forward: no plane ops, no cmma, shared memory within 32 KiB where the tiles
//! are small. It serves f32 everywhere and f16/bf16 where there are no tensor cores.
//!
//! Each cube owns `block_q` query rows of one (batch, head) and walks the keys `block_kv` at
//! a time, as a register-tiled matmul does: its `block_q · block_kv / 16` units each compute
//! a 4 x 4 block of the tile's scores (4 rows by 4 keys, the keys strided by the units across
//! a row) and then 4 rows of the output by the columns of their stride. Q stays in shared
//! memory for the whole walk; K and then V are staged through one buffer; rows of Q, K and V
//! are read as vectors of 4 f32 (rows of Q and K padded by one vector, so that the units
//! reading different keys hit different banks). Rows are reduced through shared memory: a
//! unit per query row keeps its running maximum and sum. Tiles that the causal or window
//! mask hides entirely are never loaded.
//!
//! No per-unit array lives across a barrier: software Vulkan (lavapipe) compiles
//! `sync_cube()` into coroutines, and arrays kept across one made LLVM take minutes to build
//! their frames. There the output accumulator is in shared memory and each tile's product is
//! summed in registers and added to it once; on CUDA and ROCm ([`PortableParams::reg_acc`])
//! each unit keeps its share of the output in registers for the whole walk.
//!
//! Where whole rows of Q do not fit the shared memory (48 KiB through Vulkan at D = 128), the
//! sliced form ([`PortableParams::sliced`]) stages Q and K 32 columns at a time for each tile
//! and V a chunk of keys at a time (`crate::attention::portable_slices`).

use cubecl::prelude::*;

use super::{MASKED_BELOW, NO_MAX};
use crate::attention::dropout::uniform_cube;
use crate::attention::portable_slices::{add_chunked_products, chunk_rows, slice_len, sliced_dot};
use crate::attention::portable_tiles::{
    BlockShape, MICRO, Quad, accumulate_block, add_block_products, block_len, dot_block,
    scale_block, stage_vectors, zero_array,
};

/// Compile-time shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortableParams {
    /// Query rows per cube (a multiple of 4).
    pub block_q: u32,
    /// Keys per shared-memory tile (a multiple of 16, so that each query row has a unit).
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
    /// The output accumulator lives in each unit's registers rather than in shared memory:
    /// only where arrays may be kept across cube barriers (not lavapipe, see above).
    pub reg_acc: bool,
    /// Q and K are staged a slice of `D` at a time for each tile, and V a chunk of keys at a
    /// time (`crate::attention::portable_slices`), so that large tiles fit small shared
    /// memories. Needs `reg_acc`.
    pub sliced: bool,
}

impl PortableParams {
    /// Vectors of the buffer Q (sliced: a slice of it) is staged into.
    pub(crate) fn q_len(&self) -> u32 {
        if self.sliced {
            slice_len(self.block_q, self.head_dim)
        } else {
            self.block_q * (self.head_dim.div_ceil(MICRO) + 1)
        }
    }

    /// Vectors of the buffer K then V (sliced: a slice of K, then chunks of V) are staged
    /// into.
    pub(crate) fn kv_len(&self) -> u32 {
        let v4 = self.val_dim.div_ceil(MICRO);
        if self.sliced {
            // A chunk of V takes at least 4 keys, or the slice's size if larger.
            slice_len(self.block_kv, self.head_dim).max(4 * v4)
        } else {
            (self.block_kv * (self.head_dim.div_ceil(MICRO) + 1)).max(self.block_kv * v4)
        }
    }

    /// Keys per chunk of V (sliced), or the whole tile.
    pub(crate) fn v_chunk(&self) -> u32 {
        if self.sliced {
            chunk_rows(self.kv_len(), self.val_dim.div_ceil(MICRO), self.block_kv)
        } else {
            self.block_kv
        }
    }
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

/// A raw score `Q·Kᵀ` of `row` and `key` as the softmax takes it: times the scale, then
/// softcapped and biased where enabled (the bias of batch `b`, head `h`).
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scaled_score(
    raw: f32,
    s: &PortableScalars,
    bias: &Tensor<f32>,
    b: u32,
    h: u32,
    row: u32,
    key: i32,
    #[comptime] has_softcap: bool,
    #[comptime] has_bias: bool,
) -> f32 {
    let mut score = raw * s.scale;
    if has_softcap {
        score = s.softcap * (score / s.softcap).tanh();
    }
    if has_bias {
        score += bias[b as usize * s.bias_stride_b as usize
            + h as usize * s.bias_stride_h as usize
            + row as usize * bias.stride(2)
            + key as usize * bias.stride(3)];
    }
    score
}

/// The forward kernel. Grid: `(ceil(Sq / block_q), B·H)`, `block_q · block_kv / 16` units.
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
    let bq = p.block_q;
    let bkv = p.block_kv;
    let dk = p.head_dim;
    let dv = p.val_dim;
    // Vectors per row of Q and K (padded by one), and of V and O.
    let d4 = comptime!(p.head_dim.div_ceil(MICRO));
    let row_w = comptime!(p.head_dim.div_ceil(MICRO) + 1);
    let v4 = comptime!(p.val_dim.div_ceil(MICRO));
    // Units across a row of the tile, and the output vectors of each.
    let cols_n = comptime!(p.block_kv / MICRO);
    let units = comptime!(p.block_q * p.block_kv / (MICRO * MICRO));
    let p_stride = comptime!(p.block_kv + 1);

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

    // Bottom-right alignment, as Burn's causal mask: query i sees key i + Sk - Sq.
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

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);

    let mut q_s = SharedMemory::<Vector<f32, Quad>>::new(comptime!(p.q_len() as usize));
    let mut kv = SharedMemory::<Vector<f32, Quad>>::new(comptime!(p.kv_len() as usize));
    // With the accumulator in registers, its shared memory shrinks to one vector.
    let acc_len = comptime!(if p.reg_acc { 1 } else { p.block_q * v4 });
    let mut acc = SharedMemory::<Vector<f32, Quad>>::new(acc_len as usize);
    let mut probs = SharedMemory::<f32>::new(comptime!((p.block_q * (p.block_kv + 1)) as usize));
    // Per row and unit across it: partial maxima, then partial sums (NaN marks a NaN score).
    let mut part = SharedMemory::<f32>::new(comptime!((p.block_q * p.block_kv / MICRO) as usize));
    // Per row: the running maximum, and the factor the accumulator is rescaled by.
    let mut row_max = SharedMemory::<f32>::new(p.block_q as usize);
    let mut row_scale = SharedMemory::<f32>::new(p.block_q as usize);

    // Q; rows past the sequence read as zero. Sliced, each tile stages its slices.
    if comptime!(!p.sliced) {
        stage_vectors::<F>(
            q,
            q_base,
            q_first as i32,
            seq_q,
            &mut q_s,
            bq,
            dk,
            row_w,
            units,
            tid,
        );
    }
    let mut idx = tid;
    while idx < acc_len {
        acc[idx as usize] = Vector::new(0.0f32);
        idx += units;
    }
    // O = O · scale + P·V over this unit's 4 rows and vectors tx + c · cols_n.
    let pv = comptime!(BlockShape {
        w_step: p_stride,
        j_step: 1,
        count: p.block_kv,
        m_stride: v4,
        vec_step: cols_n,
        vectors: v4,
        acc_step: 1,
        acc_stride: v4,
        rescale: true,
    });
    let o_regs = comptime!(if p.reg_acc { block_len(pv) } else { 1 });
    let mut o_r = Array::<f32>::new(o_regs as usize);
    zero_array(&mut o_r, o_regs);

    // The unit of row `tid` (for `tid < block_q`) keeps that row's running sum and NaN flag.
    let mut m = f32::new(NO_MAX);
    let mut l = 0.0f32;
    let mut saw_nan = false;
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);

    let mut start = kv_lo;
    while start < kv_hi {
        // This unit's 4 x 4 block of scores: rows row0.., keys tx + c · cols_n. Keys past
        // the end read as zero and are masked below.
        let mut dot = Array::<f32>::new(comptime!((MICRO * MICRO) as usize));
        if comptime!(p.sliced) {
            sliced_dot::<F>(
                q,
                q_base,
                q_first as i32,
                seq_q,
                k,
                k_base,
                start,
                seq_kv,
                &mut q_s,
                &mut kv,
                row0,
                tx,
                &mut dot,
                bq,
                bkv,
                dk,
                units,
                tid,
            );
        } else {
            stage_vectors::<F>(
                k, k_base, start, seq_kv, &mut kv, bkv, dk, row_w, units, tid,
            );
            sync_cube();
            dot_block(&q_s, row0, &kv, tx, cols_n, d4, row_w, &mut dot);
        }
        #[unroll]
        for r in 0..MICRO {
            let row = q_first + row0 + r;
            let mut most = f32::new(NO_MAX);
            let mut nan_here = false;
            #[unroll]
            for c in 0..MICRO {
                let col = tx + c * cols_n;
                let key = start + col as i32;
                let mut visible = row < seq_q && key < kv_hi;
                if p.has_left {
                    visible = visible && key >= row as i32 + offset - s.left as i32;
                }
                if p.has_right {
                    visible = visible && key <= row as i32 + offset + s.right as i32;
                }
                let mut score = f32::new(NO_MAX);
                if visible {
                    score = scaled_score(
                        dot[(r * MICRO + c) as usize],
                        s,
                        bias,
                        b,
                        h,
                        row,
                        key,
                        p.has_softcap,
                        p.has_bias,
                    );
                    nan_here = nan_here || score.is_nan();
                    if score <= MASKED_BELOW {
                        score = f32::new(NO_MAX);
                    }
                }
                probs[((row0 + r) * p_stride + col) as usize] = score;
                most = max(most, score);
            }
            part[((row0 + r) * cols_n + tx) as usize] = select(nan_here, s.nan, most);
        }
        sync_cube();

        // V over K, while each row's unit folds the partial maxima into its own (sliced, V
        // comes in chunks with the products).
        if comptime!(!p.sliced) {
            stage_vectors::<F>(v, v_base, start, seq_kv, &mut kv, bkv, dv, v4, units, tid);
        }
        if tid < bq {
            let mut tile_max = f32::new(NO_MAX);
            for t in 0..cols_n {
                let x = part[(tid * cols_n + t) as usize];
                saw_nan = saw_nan || x.is_nan();
                if !x.is_nan() {
                    tile_max = max(tile_max, x);
                }
            }
            let m_new = max(m, tile_max);
            let mut scale = 1.0f32;
            // Until the row's first visible score its sum and output stay zero.
            if m_new > MASKED_BELOW {
                scale = (m - m_new).exp();
                l *= scale;
                m = m_new;
            }
            row_max[tid as usize] = m;
            row_scale[tid as usize] = scale;
        }
        sync_cube();

        // Probabilities (dropout applied to the weights, not the sums), and partial sums.
        #[unroll]
        for r in 0..MICRO {
            let row = q_first + row0 + r;
            let top = row_max[(row0 + r) as usize];
            let mut sum = 0.0f32;
            #[unroll]
            for c in 0..MICRO {
                let col = tx + c * cols_n;
                let at = ((row0 + r) * p_stride + col) as usize;
                let score = probs[at];
                let mut prob = 0.0f32;
                if score > MASKED_BELOW {
                    prob = (score - top).exp();
                }
                sum += prob;
                let mut weight = prob;
                if p.has_dropout {
                    let u = uniform_cube(s.seed, bh, row, (start + col as i32) as u32);
                    let dropped = 0.0f32;
                    weight = select(u >= s.dropout_p, prob * keep_scale, dropped);
                }
                probs[at] = weight;
            }
            part[((row0 + r) * cols_n + tx) as usize] = sum;
        }
        sync_cube();

        if tid < bq {
            for t in 0..cols_n {
                l += part[(tid * cols_n + t) as usize];
            }
        }
        if comptime!(p.sliced) {
            scale_block(&mut o_r, &row_scale, row0, pv);
            add_chunked_products::<F>(
                &probs,
                row0 * p_stride,
                v,
                v_base,
                start,
                seq_kv,
                &mut kv,
                tx,
                &mut o_r,
                dv,
                comptime!(p.v_chunk()),
                pv,
                units,
                tid,
            );
        } else if comptime!(p.reg_acc) {
            scale_block(&mut o_r, &row_scale, row0, pv);
            add_block_products(&probs, row0 * p_stride, &kv, tx, &mut o_r, pv);
        } else {
            accumulate_block(
                &probs,
                row0 * p_stride,
                &kv,
                tx,
                &mut acc,
                row0,
                &row_scale,
                row0,
                pv,
            );
        }
        // The next tile overwrites K, V and the probabilities (sliced, the chunks' last
        // barrier has passed).
        if comptime!(!p.sliced) {
            sync_cube();
        }
        start += bkv as i32;
    }

    // Each row's unit turns its sum into the factor its outputs take.
    if tid < bq {
        let row = q_first + tid;
        // An infinite score makes l NaN (inf - inf in the exponent): NaN as well.
        let is_nan = saw_nan || l.is_nan();
        let mut inv = 0.0f32;
        if is_nan {
            inv = s.nan;
        } else if l > 0.0 {
            inv = 1.0f32 / l;
        }
        row_scale[tid as usize] = inv;
        if row < seq_q {
            let lse_at = b as usize * lse.stride(0)
                + h as usize * lse.stride(1)
                + row as usize * lse.stride(2);
            // Every key masked: the output is 0 (as Burn's NaN-safe softmax gives) and the
            // log-sum-exp is -inf.
            let mut value = s.neg_inf;
            if is_nan {
                value = s.nan;
            } else if l > 0.0 {
                value = m + l.ln();
            }
            lse[lse_at] = value;
        }
    }
    sync_cube();
    let o_base = b as usize * out.stride(0) + h as usize * out.stride(1);
    if comptime!(p.reg_acc) {
        let n_vecs = comptime!(v4.div_ceil(cols_n));
        #[unroll]
        for r in 0..MICRO {
            let row = q_first + row0 + r;
            if row < seq_q {
                let inv = row_scale[(row0 + r) as usize];
                let at = o_base + row as usize * out.stride(2);
                #[unroll]
                for c in 0..n_vecs {
                    let vc = tx + c * cols_n;
                    #[unroll]
                    for e in 0..MICRO {
                        let col = vc * MICRO + e;
                        if vc < v4 && col < dv {
                            let mut val = o_r[((r * n_vecs + c) * MICRO + e) as usize] * inv;
                            if inv.is_nan() {
                                val = s.nan;
                            }
                            out[at + col as usize * out.stride(3)] = F::cast_from(val);
                        }
                    }
                }
            }
        }
    } else {
        let mut idx = tid;
        while idx < acc_len {
            let r = idx / v4;
            let c4 = idx % v4;
            if q_first + r < seq_q {
                let inv = row_scale[r as usize];
                let o = acc[idx as usize];
                let at = o_base + (q_first + r) as usize * out.stride(2);
                #[unroll]
                for e in 0..MICRO {
                    let col = c4 * MICRO + e;
                    if col < dv {
                        let mut val = o[e as usize] * inv;
                        if inv.is_nan() {
                            val = s.nan;
                        }
                        out[at + col as usize * out.stride(3)] = F::cast_from(val);
                    }
                }
            }
            idx += units;
        }
    }
}
