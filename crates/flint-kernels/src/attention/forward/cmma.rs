//! The cooperative-matrix forward: tensor cores through CubeCL's `cmma` (16 x 16 x 16, f16
//! or bf16 in, f32 accumulate), for runtimes that have cooperative matrices but not the
//! register-level MMA of [`super::mma`]: Vulkan through SPIR-V (`VK_KHR_cooperative_matrix`),
//! and CUDA's WMMA (where it is tested).
//!
//! A cube has up to four planes of 32 lanes and each plane owns `16 · m_frags` query rows.
//! Q lives in matrix fragments for the whole key loop and the output in `Dv / 16`
//! accumulators per 16 rows; each K or V fragment read from shared memory feeds every row
//! fragment of the plane. Per key tile, K and V are staged in padded shared-memory rows
//! (vectors of up to 8 elements); each plane stores its scores there, and two lanes per row
//! run the online softmax over them in vectors of 4 and write P in the input type for `P·V`.
//!
//! The softmax does per score only what the tile needs: tiles that every row of the cube sees
//! in full skip the mask, and without bias or softcap (and with a positive scale) the scores
//! stay raw, the scale folded into the exponent. A row's reference maximum moves only when a
//! tile's score exceeds it by more than [`RESCALE_SLACK`] (probabilities stay below 256), so
//! the accumulators, whose elements cannot be addressed, take their trip through shared
//! memory to be rescaled only on the rare tiles where that happens.

use cubecl::prelude::*;

use super::MASKED_BELOW;
use super::mma::{RESCALE_SLACK, block_and_head, stage};
use super::portable::{PortableScalars, scaled_score};
use crate::attention::dropout::uniform_cube;

/// Lanes per plane the kernel is written for.
pub(crate) const LANES: u32 = 32;
/// Lanes per query row in the softmax (32 lanes, 16 rows).
pub(crate) const PER_ROW: u32 = 2;
/// Padding of the 16-bit tiles' rows, in elements (16 bytes): fragment loads of rows a power
/// of two apart would fall on the same banks.
pub(crate) const PAD: u32 = 8;
/// Padding of the f32 score rows, in elements (16 bytes).
pub(crate) const PAD_S: u32 = 4;

/// Compile-time shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CmmaParams {
    /// Planes per cube.
    pub planes: u32,
    /// 16-row fragments per plane.
    pub m_frags: u32,
    /// Keys per shared-memory tile (a multiple of 16).
    pub block_kv: u32,
    /// `D` (a multiple of 16).
    pub head_dim: u32,
    /// `Dv` (a multiple of 16).
    pub val_dim: u32,
    /// Elements per vector of q, k, v and the 16-bit tiles (`N`): 8, 4 or 1.
    pub vec: u32,
    /// Elements per vector of the f32 scores (`NS`): 4 where `vec` is at least 4, else 1.
    pub svec: u32,
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
    /// Scores stay raw until the exponent (no bias, no softcap, a positive scale).
    pub raw_max: bool,
}

/// The f32 scores' vector width (`CmmaParams::svec`) for inputs read `vec` elements at a
/// time: 4 where `vec` is at least 4 (the softmax packs P from whole score vectors), else 1.
pub(crate) fn score_vector(vec: u32) -> u32 {
    if vec >= 4 { 4 } else { 1 }
}

/// The forward kernel. Grid: `(ceil(Sq / (16 · planes · m_frags)), B·H)`, cubes of
/// `32 x planes` units. q, k and v are read `N` elements at a time (their last dim
/// contiguous and every other stride a multiple of `N`).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd_cmma<E: Float, N: Size, NS: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    bias: &Tensor<f32>,
    out: &mut Tensor<E>,
    lse: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: CmmaParams,
    #[define(E)] _dtype: StorageType,
) {
    let vec = p.vec;
    let sv = p.svec;
    let mf = p.m_frags;
    let units = comptime!(p.planes * LANES);
    let plane_rows = comptime!(16 * p.m_frags);
    let block_q = comptime!(p.planes * plane_rows);
    let bkv = p.block_kv;
    let ld_k = comptime!(p.head_dim + PAD);
    let ld_v = comptime!(p.val_dim + PAD);
    let ld_p = comptime!(p.block_kv + PAD);
    let ld_s = comptime!(p.block_kv + PAD_S);
    let d_chunks = comptime!(p.head_dim / 16);
    let o_chunks = comptime!(p.val_dim / 16);
    let k_chunks = comptime!(p.block_kv / 16);
    // Softmax columns per lane.
    let cols = comptime!(p.block_kv / PER_ROW);

    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    // Last query blocks first: under a causal mask they see the most keys, and starting the
    // heaviest cubes first leaves light ones for the tail of the grid.
    let order = block_and_head(false, true);
    let bh = order[1];
    let b = bh / heads;
    let h = bh % heads;
    let kvh = h / s.group;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * LANES + lane;
    let q_first = order[0] * block_q;
    let plane_first = q_first + plane * plane_rows;
    // In the softmax, lane l serves row l / 2 of each of the plane's fragments, columns
    // [c0, c0 + cols).
    let my_row = lane / PER_ROW;
    let part = lane % PER_ROW;
    let c0 = part * cols;

    // Bottom-right alignment, as Burn's causal mask: query i sees key i + Sk - Sq.
    let offset = seq_kv as i32 - seq_q as i32;
    let q_last = min(q_first + block_q, seq_q) as i32 - 1;
    let mut kv_lo = 0i32;
    let mut kv_hi = seq_kv as i32;
    // Keys in [vis_lo, vis_hi) are visible to every row of the cube: tiles inside need no
    // mask. (Rows past Sq are never written, so they may see anything.)
    let mut vis_lo = 0i32;
    let mut vis_hi = seq_kv as i32;
    if p.has_left {
        kv_lo = max(0i32, q_first as i32 + offset - s.left as i32);
        vis_lo = (q_first + block_q - 1) as i32 + offset - s.left as i32;
    }
    if p.has_right {
        kv_hi = min(kv_hi, q_last + offset + s.right as i32 + 1);
        vis_hi = min(vis_hi, q_first as i32 + offset + s.right as i32 + 1);
    }
    // Raw scores take the scale in the exponent; transformed ones already carry it.
    let mut kx = 1.0f32;
    if p.raw_max {
        kx = s.scale;
    }

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);

    let k_len = comptime!((p.block_kv * ld_k / p.vec) as usize);
    let v_len = comptime!((p.block_kv * ld_v / p.vec) as usize);
    let p_len = comptime!((block_q * ld_p / p.vec) as usize);
    let s_len = comptime!((block_q * ld_s / p.svec) as usize);
    // 16-byte aligned: fragment loads and vector accesses need it.
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(k_len, 16usize);
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(v_len, 16usize);
    // Per plane, its rows of the tile's P (first the 16 x 16 blocks of Q being loaded), and
    // of its scores (then a 16 x 16 accumulator being rescaled or written out).
    let mut p_s = SharedMemory::<Vector<E, N>>::new_aligned(p_len, 16usize);
    let mut s_s = SharedMemory::<Vector<f32, NS>>::new_aligned(s_len, 16usize);
    let p_at = (plane * plane_rows * ld_p / vec) as usize;
    let s_at = (plane * plane_rows * ld_s / sv) as usize;

    // Q fragments, fragment mi's column block c at mi · d_chunks + c, through the plane's
    // P area (zero past the sequence).
    let mut q_frags = Sequence::<cmma::Matrix<E>>::new();
    #[unroll]
    for mi in 0..mf {
        #[unroll]
        for c in 0..d_chunks {
            let per_row = comptime!(16 / p.vec);
            for it in 0..comptime!((256 / p.vec).div_ceil(LANES)) {
                let idx = it * LANES + lane;
                if idx < comptime!(256 / p.vec) {
                    let r = plane_first + comptime!(mi * 16) + idx / per_row;
                    let mut val = Vector::<E, N>::new(E::from_int(0));
                    if r < seq_q {
                        val = q[(q_base + r as usize * q.stride(2)) / vec as usize
                            + comptime!((c * 16 / p.vec) as usize)
                            + (idx % per_row) as usize];
                    }
                    p_s[p_at + idx as usize] = val;
                }
            }
            sync_plane();
            let frag = fragment::<E>(cmma::MatrixIdent::A, cmma::MatrixLayout::RowMajor);
            cmma::load(&frag, &p_s.slice(p_at, p_len), 16u32);
            q_frags.push(frag);
            sync_plane();
        }
    }

    let mut o_acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..comptime!(p.m_frags * o_chunks) {
        o_acc.push(zeros());
    }

    // Per row fragment: the reference maximum (raw or scaled, as the scores), this lane's
    // share of the row's sum (the two lanes of a row add theirs at the end), and the
    // factor a rescale applies.
    let mut m_run = Array::<f32>::new(comptime!(p.m_frags as usize));
    let mut l_run = Array::<f32>::new(comptime!(p.m_frags as usize));
    let mut alpha = Array::<f32>::new(comptime!(p.m_frags as usize));
    #[unroll]
    for mi in 0..mf {
        m_run[mi as usize] = s.neg_inf;
        l_run[mi as usize] = 0.0f32;
    }
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);

    let mut start = kv_lo;
    while start < kv_hi {
        // Stage the tiles; keys past the end read as zero and are masked below.
        stage::<E, N>(
            k, k_base, start, seq_kv, &mut k_s, bkv, p.head_dim, ld_k, vec, units, tid,
        );
        stage::<E, N>(
            v, v_base, start, seq_kv, &mut v_s, bkv, p.val_dim, ld_v, vec, units, tid,
        );
        sync_cube();

        // S = Q·Kᵀ, 16 keys at a time: each K fragment serves every row fragment.
        #[unroll]
        for n in 0..k_chunks {
            let mut acc = Sequence::<cmma::Matrix<f32>>::new();
            #[unroll]
            for _ in 0..mf {
                acc.push(zeros());
            }
            #[unroll]
            for c in 0..d_chunks {
                // Kᵀ as B (dims x keys): K's rows are keys, so column-major with stride ld_k.
                let kt = fragment::<E>(cmma::MatrixIdent::B, cmma::MatrixLayout::ColMajor);
                let at = comptime!(((n * 16 * ld_k + c * 16) / p.vec) as usize);
                cmma::load(&kt, &k_s.slice(at, k_len), ld_k);
                #[unroll]
                for mi in 0..mf {
                    let qf = q_frags.index(comptime!((mi * d_chunks + c) as usize));
                    let a = acc.index(mi as usize);
                    cmma::execute::<E, E, f32, f32>(qf, &kt, a, a);
                }
            }
            #[unroll]
            for mi in 0..mf {
                let at = s_at + comptime!(((mi * 16 * ld_s + n * 16) / p.svec) as usize);
                cmma::store(
                    &mut s_s.slice_mut(at, s_len),
                    acc.index(mi as usize),
                    ld_s,
                    cmma::MatrixLayout::RowMajor,
                );
            }
        }
        sync_plane();

        // The online softmax, row fragment by row fragment.
        let full = start >= vis_lo && start + bkv as i32 <= vis_hi;
        let mut trip = false;
        #[unroll]
        for mi in 0..mf {
            let r_loc = comptime!(mi * 16) + my_row;
            let row = plane_first + r_loc;
            let at = s_at + ((r_loc * ld_s + c0) / sv) as usize;
            // Two copies of the pass, so that tiles inside the cube's visible range carry no
            // mask work.
            let mut tile_max = if full {
                tile_scores::<NS>(
                    &mut s_s,
                    at,
                    bias,
                    s,
                    b,
                    h,
                    row,
                    start + c0 as i32,
                    seq_q,
                    kv_hi,
                    offset,
                    p,
                    false,
                )
            } else {
                tile_scores::<NS>(
                    &mut s_s,
                    at,
                    bias,
                    s,
                    b,
                    h,
                    row,
                    start + c0 as i32,
                    seq_q,
                    kv_hi,
                    offset,
                    p,
                    true,
                )
            };
            tile_max = max(tile_max, plane_shuffle_xor(tile_max, 1u32));
            let m_old = m_run[mi as usize];
            // -inf - -inf is NaN: a row with nothing visible yet does not grow.
            let grow = (tile_max - m_old) * kx > RESCALE_SLACK;
            // O and l are still zero until a row's first visible score: no rescale then.
            let moved = grow && m_old != s.neg_inf;
            let m_new = select(grow, tile_max, m_old);
            let a = select(moved, ((m_old - m_new) * kx).exp(), 1.0f32);
            alpha[mi as usize] = a;
            m_run[mi as usize] = m_new;
            trip = trip || moved;

            // P = exp(S - m) in the input type, and this lane's share of the row's sum.
            let m_sub = select(m_new == s.neg_inf, 0.0f32, m_new) * kx;
            let mut sum = 0.0f32;
            let p_row = p_at + ((r_loc * ld_p + c0) / vec) as usize;
            #[unroll]
            for jv in 0..comptime!(cols / p.vec) {
                let mut pv = Vector::<E, N>::new(E::from_int(0));
                #[unroll]
                for js in 0..comptime!(p.vec / p.svec) {
                    let x = s_s[at + comptime!(((jv * p.vec + js * p.svec) / p.svec) as usize)];
                    #[unroll]
                    for e in 0..sv {
                        let prob = (x[e as usize] * kx - m_sub).exp();
                        sum += prob;
                        let mut weight = prob;
                        if p.has_dropout {
                            let key = start + (c0 + comptime!(jv * p.vec + js * p.svec) + e) as i32;
                            let u = uniform_cube(s.seed, bh, row, key as u32);
                            weight = select(u >= s.dropout_p, prob * keep_scale, 0.0f32);
                        }
                        pv[comptime!((js * p.svec) as usize) + e as usize] = E::cast_from(weight);
                    }
                }
                p_s[p_row + jv as usize] = pv;
            }
            l_run[mi as usize] = l_run[mi as usize] * a + sum;
        }
        sync_plane();

        // Rows whose maximum moved: the plane's accumulators are rescaled through shared
        // memory (the scores are no longer needed).
        if plane_any(trip) {
            #[unroll]
            for mi in 0..mf {
                let scale = Vector::<f32, NS>::new(alpha[mi as usize]);
                #[unroll]
                for o in 0..o_chunks {
                    let acc = o_acc.index(comptime!((mi * o_chunks + o) as usize));
                    to_shared(acc, &mut s_s, s_at, s_len);
                    #[unroll]
                    for j in 0..comptime!(8 / p.svec) {
                        let at = s_at + ((my_row * 16 + part * 8) / sv + j) as usize;
                        s_s[at] = s_s[at] * scale;
                    }
                    sync_plane();
                    cmma::load_with_layout(
                        acc,
                        &s_s.slice(s_at, s_len),
                        16u32,
                        cmma::MatrixLayout::RowMajor,
                    );
                    sync_plane();
                }
            }
        }

        // O += P·V: each V fragment serves every row fragment.
        #[unroll]
        for kk in 0..k_chunks {
            let mut pf = Sequence::<cmma::Matrix<E>>::new();
            #[unroll]
            for mi in 0..mf {
                let frag = fragment::<E>(cmma::MatrixIdent::A, cmma::MatrixLayout::RowMajor);
                let at = p_at + comptime!(((mi * 16 * ld_p + kk * 16) / p.vec) as usize);
                cmma::load(&frag, &p_s.slice(at, p_len), ld_p);
                pf.push(frag);
            }
            #[unroll]
            for o in 0..o_chunks {
                let vf = fragment::<E>(cmma::MatrixIdent::B, cmma::MatrixLayout::RowMajor);
                let at = comptime!(((kk * 16 * ld_v + o * 16) / p.vec) as usize);
                cmma::load(&vf, &v_s.slice(at, v_len), ld_v);
                #[unroll]
                for mi in 0..mf {
                    let acc = o_acc.index(comptime!((mi * o_chunks + o) as usize));
                    cmma::execute::<E, E, f32, f32>(pf.index(mi as usize), &vf, acc, acc);
                }
            }
        }
        // The next tile overwrites K, V and this plane's scores and P.
        sync_cube();
        start += bkv as i32;
    }

    let o_base = b as usize * out.stride(0) + h as usize * out.stride(1);
    #[unroll]
    for mi in 0..mf {
        let row = plane_first + comptime!(mi * 16) + my_row;
        let row_ok = row < seq_q;
        // The row's two lanes combine their sums. A NaN score (NaN in q, k or bias) or an
        // infinite one (inf - inf in the exponent) makes l NaN, and the row NaN, as in an
        // unfused attention.
        let l = l_run[mi as usize] + plane_shuffle_xor(l_run[mi as usize], 1u32);
        let is_nan = l.is_nan();
        let inv = select(l > 0.0f32, 1.0f32 / l, 0.0f32);
        #[unroll]
        for o in 0..o_chunks {
            to_shared(
                o_acc.index(comptime!((mi * o_chunks + o) as usize)),
                &mut s_s,
                s_at,
                s_len,
            );
            if row_ok {
                #[unroll]
                for j in 0..comptime!(8 / p.svec) {
                    let x = s_s[s_at + ((my_row * 16 + part * 8) / sv + j) as usize];
                    #[unroll]
                    for e in 0..sv {
                        let col = part * 8 + comptime!(j * p.svec) + e;
                        // A row with every key masked has l = 0: its output is 0, as Burn's
                        // NaN-safe softmax gives.
                        let val = select(is_nan, s.nan, x[e as usize] * inv);
                        out[o_base
                            + row as usize * out.stride(2)
                            + (comptime!(o * 16) + col) as usize * out.stride(3)] =
                            E::cast_from(val);
                    }
                }
            }
            sync_plane();
        }
        if row_ok && part == 0 {
            let at = b as usize * lse.stride(0)
                + h as usize * lse.stride(1)
                + row as usize * lse.stride(2);
            let m = m_run[mi as usize];
            let mut value = s.neg_inf;
            if l > 0.0f32 {
                value = m * kx + l.ln();
            }
            lse[at] = select(is_nan, s.nan, value);
        }
    }
}

/// One lane's pass over its `cols` scores of one row (from vector `at` of `s_s`, keys from
/// `key0`): the scale, softcap and bias unless the scores stay raw, then the mask where
/// `masked` (keys past `kv_hi` or outside the row's window, rows past Sq). Masked and
/// below-threshold scores become -inf; the transformed scores are written back. Returns the
/// lane's maximum.
#[cube]
#[allow(clippy::too_many_arguments)]
fn tile_scores<NS: Size>(
    s_s: &mut SharedMemory<Vector<f32, NS>>,
    at: usize,
    bias: &Tensor<f32>,
    s: &PortableScalars,
    b: u32,
    h: u32,
    row: u32,
    key0: i32,
    seq_q: u32,
    kv_hi: i32,
    offset: i32,
    #[comptime] p: CmmaParams,
    #[comptime] masked: bool,
) -> f32 {
    let sv = p.svec;
    let mut tile_max = s.neg_inf;
    let rewrite = comptime!(masked || !p.raw_max);
    #[unroll]
    for j in 0..comptime!(p.block_kv / PER_ROW / p.svec) {
        let mut x = s_s[at + j as usize];
        #[unroll]
        for e in 0..sv {
            let key = key0 + comptime!((j * p.svec) as i32) + e as i32;
            let mut score = x[e as usize];
            if comptime!(!p.raw_max) {
                score = scaled_score(score, s, bias, b, h, row, key, p.has_softcap, p.has_bias);
                // A bias of -inf (or near it) masks the key; NaN stays NaN.
                score = select(score <= MASKED_BELOW, s.neg_inf, score);
            }
            if masked {
                let mut visible = row < seq_q && key < kv_hi;
                if p.has_left {
                    visible = visible && key >= row as i32 + offset - s.left as i32;
                }
                if p.has_right {
                    visible = visible && key <= row as i32 + offset + s.right as i32;
                }
                score = select(visible, score, s.neg_inf);
            }
            x[e as usize] = score;
            tile_max = max(tile_max, score);
        }
        if rewrite {
            s_s[at + j as usize] = x;
        }
    }
    tile_max
}

/// A 16 x 16 x 16 fragment of `E` in the role `ident`, to be loaded.
#[cube]
pub(crate) fn fragment<E: CubePrimitive>(
    #[comptime] ident: cmma::MatrixIdent,
    #[comptime] layout: cmma::MatrixLayout,
) -> cmma::Matrix<E> {
    unsafe { cmma::Matrix::<E>::uninitialized(ident, 16usize, 16usize, 16usize, layout) }
}

/// A 16 x 16 f32 accumulator of zeros.
#[cube]
pub(crate) fn zeros() -> cmma::Matrix<f32> {
    cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    )
}

/// Stores `acc` row-major (row stride 16) from vector `at` of `smem`, visible to the whole
/// plane on return.
#[cube]
pub(crate) fn to_shared<NS: Size>(
    acc: &cmma::Matrix<f32>,
    smem: &mut SharedMemory<Vector<f32, NS>>,
    at: usize,
    #[comptime] len: usize,
) {
    cmma::store(
        &mut smem.slice_mut(at, len),
        acc,
        16u32,
        cmma::MatrixLayout::RowMajor,
    );
    sync_plane();
}
