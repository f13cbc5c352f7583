//! The cooperative-matrix forward: tensor cores through CubeCL's `cmma` (16 x 16 x 16, f16
//! or bf16 in, f32 accumulate), for runtimes that have cooperative matrices but not the
//! register-level MMA of [`super::mma`]: Vulkan through SPIR-V (`VK_KHR_cooperative_matrix`),
//! and CUDA's WMMA (where it is tested).
//!
//! A cube has `planes` planes of 32 lanes and each plane owns 16 query rows. Q lives in
//! `D / 16` matrix fragments for the whole key loop and the output in `Dv / 16` accumulators.
//! Per key tile, K and V are staged in shared memory; each plane computes its 16 x `block_kv`
//! scores into shared memory, where two lanes per row run the online softmax (scale, softcap,
//! bias, masks and dropout exactly as the portable kernel does) and write P in the input type
//! for `P·V`. Fragment elements cannot be addressed, so when a row's maximum grows its
//! accumulators take a trip through shared memory to be rescaled; that happens on the tiles
//! where some row of the plane finds a new maximum, rarely after the first few.

use cubecl::prelude::*;

use super::portable::PortableScalars;
use super::{MASKED_BELOW, NO_MAX};
use crate::attention::dropout::uniform_cube;

/// Lanes per plane the kernel is written for.
const LANES: u32 = 32;
/// Lanes per query row in the softmax (32 lanes, 16 rows).
const PER_ROW: u32 = 2;

/// Compile-time shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CmmaParams {
    /// Planes per cube (16 query rows each).
    pub planes: u32,
    /// Keys per shared-memory tile (a multiple of 16).
    pub block_kv: u32,
    /// `D` (a multiple of 16).
    pub head_dim: u32,
    /// `Dv` (a multiple of 16).
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

/// The forward kernel. Grid: `(ceil(Sq / (16 · planes)), B·H)`, cubes of `32 x planes` units.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd_cmma<E: Float>(
    q: &Tensor<E>,
    k: &Tensor<E>,
    v: &Tensor<E>,
    bias: &Tensor<f32>,
    out: &mut Tensor<E>,
    lse: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: CmmaParams,
    #[define(E)] _dtype: StorageType,
) {
    let units = comptime!(p.planes * LANES);
    let block_q = comptime!(p.planes * 16);
    let bkv = p.block_kv;
    let d_chunks = comptime!((p.head_dim / 16) as usize);
    let o_chunks = comptime!((p.val_dim / 16) as usize);
    let k_chunks = comptime!((p.block_kv / 16) as usize);
    // Softmax columns per lane, and accumulator columns per lane when one is bounced.
    let cols = comptime!(p.block_kv / PER_ROW);
    let bounce_cols = comptime!(16 / PER_ROW);

    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let bh = CUBE_POS_Y;
    let b = bh / heads;
    let h = bh % heads;
    let kvh = h / s.group;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * LANES + lane;
    let q_first = CUBE_POS_X * block_q;
    let plane_first = q_first + plane * 16;
    // In the softmax, lane l serves row l / 2 of the plane, columns [c0, c0 + cols).
    let my_row = lane / PER_ROW;
    let part = lane % PER_ROW;
    let c0 = part * cols;
    let row = plane_first + my_row;
    let row_ok = row < seq_q;

    // Bottom-right alignment, as Burn's causal mask: query i sees key i + Sk - Sq.
    let offset = seq_kv as i32 - seq_q as i32;
    let q_last = min(q_first + block_q, seq_q) as i32 - 1;
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

    let k_len = comptime!((p.block_kv * p.head_dim) as usize);
    let v_len = comptime!((p.block_kv * p.val_dim) as usize);
    let tile_len = comptime!((block_q * p.block_kv) as usize);
    let mut k_s = SharedMemory::<E>::new(k_len);
    let mut v_s = SharedMemory::<E>::new(v_len);
    // Per plane, 16 rows of `block_kv`: the scores (then a 16 x 16 accumulator being
    // rescaled or written out), and P (first a 16 x 16 block of Q being loaded).
    let mut s_s = SharedMemory::<f32>::new(tile_len);
    let mut p_s = SharedMemory::<E>::new(tile_len);
    let at0 = (plane * 16 * bkv) as usize;

    // Q fragments, one per 16 columns, through the plane's P area (zero past the sequence).
    let mut q_frags = Sequence::<cmma::Matrix<E>>::new();
    #[unroll]
    for c in 0..d_chunks {
        let col0 = comptime!(c as u32 * 16);
        for it in 0..comptime!(256 / LANES) {
            let idx = it * LANES + lane;
            let r = plane_first + idx / 16;
            let mut val = E::cast_from(0.0f32);
            if r < seq_q {
                val =
                    q[q_base + r as usize * q.stride(2) + (col0 + idx % 16) as usize * q.stride(3)];
            }
            p_s[at0 + idx as usize] = val;
        }
        sync_plane();
        let frag = fragment::<E>(cmma::MatrixIdent::A, cmma::MatrixLayout::RowMajor);
        cmma::load(&frag, &p_s.slice(at0, at0 + 256), 16u32);
        q_frags.push(frag);
        sync_plane();
    }

    let mut o_acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..o_chunks {
        o_acc.push(zeros());
    }

    let mut m = f32::new(NO_MAX);
    // This lane's share of its row's sum; the two lanes of a row add theirs at the end.
    let mut l = 0.0f32;
    // A NaN score (from NaN or infinite q, k or bias) makes the row NaN, as in an unfused
    // attention; the max and the masking compares would otherwise drop it silently.
    let mut saw_nan = false;
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);

    let mut start = kv_lo;
    while start < kv_hi {
        // Stage the tiles; keys past the end read as zero and are masked below.
        stage_tile::<E>(
            k, k_base, start, seq_kv, &mut k_s, bkv, p.head_dim, units, tid,
        );
        stage_tile::<E>(
            v, v_base, start, seq_kv, &mut v_s, bkv, p.val_dim, units, tid,
        );
        sync_cube();

        // S = Q·Kᵀ, 16 keys at a time, into the plane's score rows.
        #[unroll]
        for n in 0..k_chunks {
            let acc = zeros();
            #[unroll]
            for c in 0..d_chunks {
                // Kᵀ as B (dims x keys): K's rows are keys, so column-major with stride D.
                let kt = fragment::<E>(cmma::MatrixIdent::B, cmma::MatrixLayout::ColMajor);
                let at = comptime!((n as u32 * 16 * p.head_dim + c as u32 * 16) as usize);
                cmma::load(&kt, &k_s.slice(at, k_len), p.head_dim);
                cmma::execute::<E, E, f32, f32>(q_frags.index(c), &kt, &acc, &acc);
            }
            let at = at0 + comptime!(n * 16);
            cmma::store(
                &mut s_s.slice_mut(at, tile_len),
                &acc,
                bkv,
                cmma::MatrixLayout::RowMajor,
            );
        }
        sync_plane();

        // Online softmax over this lane's columns of its row.
        let mut tile_max = f32::new(NO_MAX);
        for j in 0..cols {
            let col = c0 + j;
            let key = start + col as i32;
            let mut visible = row_ok && key < kv_hi;
            if p.has_left {
                visible = visible && key >= row as i32 + offset - s.left as i32;
            }
            if p.has_right {
                visible = visible && key <= row as i32 + offset + s.right as i32;
            }
            let at = at0 + (my_row * bkv + col) as usize;
            let mut score = f32::new(NO_MAX);
            if visible {
                score = s_s[at] * s.scale;
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
            s_s[at] = score;
            tile_max = max(tile_max, score);
        }
        tile_max = max(tile_max, plane_shuffle_xor(tile_max, 1u32));
        let m_new = max(m, tile_max);
        // O is still zero until the row's first visible score: nothing to rescale then.
        let moved = m_new > m && m > MASKED_BELOW;
        let correction = select(moved, (m - m_new).exp(), 1.0f32);
        l *= correction;
        for j in 0..cols {
            let col = c0 + j;
            let at = at0 + (my_row * bkv + col) as usize;
            let score = s_s[at];
            let mut prob = 0.0f32;
            if score > MASKED_BELOW {
                prob = (score - m_new).exp();
            }
            l += prob;
            let mut weight = prob;
            if p.has_dropout {
                let u = uniform_cube(s.seed, bh, row, (start + col as i32) as u32);
                let dropped = 0.0f32;
                weight = select(u >= s.dropout_p, prob * keep_scale, dropped);
            }
            p_s[at] = E::cast_from(weight);
        }
        m = m_new;
        sync_plane();

        // Rows whose maximum grew: their accumulators are rescaled through shared memory.
        if plane_any(moved) {
            #[unroll]
            for o in 0..o_chunks {
                to_shared(o_acc.index(o), &mut s_s, at0);
                for j in 0..bounce_cols {
                    let at = at0 + (my_row * 16 + part * bounce_cols + j) as usize;
                    s_s[at] *= correction;
                }
                sync_plane();
                cmma::load_with_layout(
                    o_acc.index(o),
                    &s_s.slice(at0, at0 + 256),
                    16u32,
                    cmma::MatrixLayout::RowMajor,
                );
                sync_plane();
            }
        }

        // O += P·V.
        #[unroll]
        for kk in 0..k_chunks {
            let pf = fragment::<E>(cmma::MatrixIdent::A, cmma::MatrixLayout::RowMajor);
            cmma::load(&pf, &p_s.slice(at0 + comptime!(kk * 16), tile_len), bkv);
            #[unroll]
            for o in 0..o_chunks {
                let vf = fragment::<E>(cmma::MatrixIdent::B, cmma::MatrixLayout::RowMajor);
                let at = comptime!((kk as u32 * 16 * p.val_dim + o as u32 * 16) as usize);
                cmma::load(&vf, &v_s.slice(at, v_len), p.val_dim);
                cmma::execute::<E, E, f32, f32>(&pf, &vf, o_acc.index(o), o_acc.index(o));
            }
        }
        // The next tile overwrites K, V and this plane's scores and P.
        sync_cube();
        start += bkv as i32;
    }

    // The row's two lanes combine their sums and NaN flags.
    l += plane_shuffle_xor(l, 1u32);
    let mut nan_flag = select(saw_nan, 1u32, 0u32);
    nan_flag = max(nan_flag, plane_shuffle_xor(nan_flag, 1u32));
    // An infinite score makes l NaN (inf - inf in the exponent): NaN as well.
    let is_nan = nan_flag == 1u32 || l.is_nan();
    let inv = select(l > 0.0f32, 1.0f32 / l, 0.0f32);
    let o_base = b as usize * out.stride(0) + h as usize * out.stride(1);
    #[unroll]
    for o in 0..o_chunks {
        to_shared(o_acc.index(o), &mut s_s, at0);
        if row_ok {
            for j in 0..bounce_cols {
                let col = part * bounce_cols + j;
                let val = s_s[at0 + (my_row * 16 + col) as usize] * inv;
                // A row with every key masked has l = 0: its output is 0, as Burn's
                // NaN-safe softmax gives.
                let val = select(is_nan, s.nan, val);
                out[o_base
                    + row as usize * out.stride(2)
                    + (comptime!(o as u32 * 16) + col) as usize * out.stride(3)] =
                    E::cast_from(val);
            }
        }
        sync_plane();
    }
    if row_ok && part == 0 {
        let at =
            b as usize * lse.stride(0) + h as usize * lse.stride(1) + row as usize * lse.stride(2);
        let mut value = s.neg_inf;
        if l > 0.0f32 {
            value = m + l.ln();
        }
        lse[at] = select(is_nan, s.nan, value);
    }
}

/// A 16 x 16 x 16 fragment of `E` in the role `ident`, to be loaded.
#[cube]
fn fragment<E: CubePrimitive>(
    #[comptime] ident: cmma::MatrixIdent,
    #[comptime] layout: cmma::MatrixLayout,
) -> cmma::Matrix<E> {
    unsafe { cmma::Matrix::<E>::uninitialized(ident, 16usize, 16usize, 16usize, layout) }
}

/// A 16 x 16 f32 accumulator of zeros.
#[cube]
fn zeros() -> cmma::Matrix<f32> {
    cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    )
}

/// Stores `acc` row-major at `smem[at..at + 256]`, visible to the whole plane on return.
#[cube]
fn to_shared(acc: &cmma::Matrix<f32>, smem: &mut SharedMemory<f32>, at: usize) {
    cmma::store(
        &mut smem.slice_mut(at, at + 256),
        acc,
        16u32,
        cmma::MatrixLayout::RowMajor,
    );
    sync_plane();
}

/// Stages `rows` rows of `cols` elements of `t` (a `[B, H, S, cols]` tensor at `base`),
/// starting at row `start`, into `tile` (row-major), zero past row `seq`; `units` units share
/// the copy.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_tile<E: Float>(
    t: &Tensor<E>,
    base: usize,
    start: i32,
    seq: u32,
    tile: &mut SharedMemory<E>,
    #[comptime] rows: u32,
    #[comptime] cols: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    for it in 0..comptime!((rows * cols).div_ceil(units)) {
        let idx = it * units + tid;
        if idx < rows * cols {
            let key = start + (idx / cols) as i32;
            let mut val = E::cast_from(0.0f32);
            if key < seq as i32 {
                val = t[base + key as usize * t.stride(2) + (idx % cols) as usize * t.stride(3)];
            }
            tile[idx as usize] = val;
        }
    }
}
