//! The cooperative-matrix backward: tensor cores through CubeCL's `cmma` (16 x 16 x 16, f16
//! or bf16 in, f32 accumulate) for runtimes without the register-level MMA of
//! [`super::mma`]: Vulkan through SPIR-V, and CUDA's WMMA (where it is tested).
//!
//! Two kernels, as FlashAttention-2's backward without atomics (Vulkan has no two-element f32
//! atomic add). Each owns 16 rows per plane (per pair of planes with `split` 2) of one side,
//! staged once in shared memory, and walks tiles of the other side:
//! - [`attention_bwd_dkdv_cmma`]: a cube per block of keys (K and V resident) walks the
//!   query tiles of every query head in the key's group, so GQA needs no atomics.
//! - [`attention_bwd_dq_cmma`]: a cube per block of queries (Q and dO resident) walks the key
//!   tiles.
//!
//! Per tile and plane, the two products over `D` (`K·Qᵀ` and `V·dOᵀ` in dK/dV, `Q·Kᵀ` and
//! `dO·Vᵀ` in dQ) go through one f32 scratch in turn: the first product's results stay in the
//! lanes' registers (two lanes per row, half a row each) while the second is computed; in
//! dK/dV those are the probabilities P, so each score takes one exponential (the raw scores
//! under softcap, whose tanh the second pass needs). The elementwise gradient is the portable
//! backward's (`grads_of`, split as `prob_of` and `grads_from`), so masks, bias, softcap,
//! dropout and the bias gradient follow one definition. P, then dS, pass through one 16-bit
//! buffer per plane to the products over the tile (`Pᵀ·dO`, `dSᵀ·Q`, `dS·K`). The gradient
//! accumulators are matrix fragments for the whole walk.
//!
//! Rows past a sequence are staged as zeros and their pairs masked, so every fragment reads
//! initialised shared memory.

use cubecl::prelude::*;

use crate::attention::backward::portable::{
    BwdParams, grads_from, grads_of, prob_of, stage_row_stats, visible,
};
use crate::attention::forward::PortableScalars;
use crate::attention::forward::cmma::{LANES, PAD, PAD_S, PER_ROW, fragment, to_shared, zeros};
use crate::attention::forward::mma::stage;

/// Compile-time shape of one backward kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BwdCmmaParams {
    /// Planes per cube; each owns 16 rows of the resident side, and with `split` 2 half of
    /// each tile's rows (planes `2i` and `2i + 1` share rows `16i..16i + 16`).
    pub planes: u32,
    /// 1, or 2 where two planes share each 16 resident rows, each taking half of every
    /// tile and the pair adding their gradients at the end: twice the planes on the same
    /// shared memory.
    pub split: u32,
    /// Rows per tile of the walked side (a multiple of 16): queries in dK/dV, keys in dQ.
    pub tile: u32,
    /// `D` (a multiple of 16).
    pub head_dim: u32,
    /// `Dv` (a multiple of 16).
    pub val_dim: u32,
    /// Elements per vector of q, k, v, dO and the 16-bit tiles (`N`): 8, 4 or 1.
    pub vec: u32,
    /// Elements per vector of the f32 scratch (`NS`): 4 where `vec` is at least 4, else 1.
    pub svec: u32,
    /// A window bound on the left.
    pub has_left: bool,
    /// A window bound on the right (causal).
    pub has_right: bool,
    /// An additive bias tensor is read.
    pub has_bias: bool,
    /// The score gradient is written out as the bias gradient (dK/dV kernel).
    pub has_dbias: bool,
    /// Softcap is applied.
    pub has_softcap: bool,
    /// Dropout is applied.
    pub has_dropout: bool,
}

impl BwdCmmaParams {
    /// The features in the portable kernels' form, for the shared elementwise gradient.
    pub(crate) fn features(&self) -> BwdParams {
        BwdParams {
            block_q: self.tile,
            block_kv: self.tile,
            head_dim: self.head_dim,
            val_dim: self.val_dim,
            has_left: self.has_left,
            has_right: self.has_right,
            has_bias: self.has_bias,
            has_dbias: self.has_dbias,
            has_softcap: self.has_softcap,
            has_dropout: self.has_dropout,
            reg_acc: false,
            fused_dq: false,
            sliced: false,
        }
    }

    /// Resident rows per cube.
    pub(crate) fn rows(&self) -> u32 {
        16 * self.planes / self.split
    }

    /// A plane's share of each tile's rows.
    pub(crate) fn part(&self) -> u32 {
        self.tile / self.split
    }

    /// Row stride of a plane's f32 scratch, in elements.
    pub(crate) fn ld_s(&self) -> u32 {
        self.part() + PAD_S
    }

    /// Row stride of a plane's 16-bit P/dS rows, in elements.
    pub(crate) fn ld_t(&self) -> u32 {
        self.part() + PAD
    }

    /// Vectors of the per-plane f32 scratch, all planes.
    pub(crate) fn scratch_len(&self) -> usize {
        (self.planes * 16 * self.ld_s() / self.svec) as usize
    }

    /// Vectors of the per-plane 16-bit P/dS rows, all planes.
    pub(crate) fn tile_len(&self) -> usize {
        (self.planes * 16 * self.ld_t() / self.vec) as usize
    }

    /// Shared memory of either kernel, in bytes: the resident rows and one tile, both in
    /// 16-bit rows padded by [`PAD`]; per plane, the f32 scratch (rows padded by [`PAD_S`])
    /// and the 16-bit P/dS rows; the tile's LSE and delta (dK/dV).
    pub(crate) fn shared_bytes(&self) -> u32 {
        let row = self.head_dim + self.val_dim + 2 * PAD;
        let staged = 2 * (self.rows() + self.tile) * row;
        let scratch = 16 * self.planes * (4 * self.ld_s() + 2 * self.ld_t());
        staged + scratch + 8 * self.tile
    }
}

/// dK and dV. Grid: `(ceil(Sk / rows), B·Hkv)`, `rows` being `BwdCmmaParams::rows`; cubes
/// of `32 x planes` units. q, k, v and dO are read `N` elements at a time (their last dim
/// contiguous and every other stride a multiple of `N`); `lse` is the forward's (natural log).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dkdv_cmma<E: Float, N: Size, NS: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    dout: &Tensor<Vector<E, N>>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dk: &mut Tensor<E>,
    dv: &mut Tensor<E>,
    dbias: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: BwdCmmaParams,
    #[define(E)] _dtype: StorageType,
) {
    let fp = comptime!(p.features());
    let rows = comptime!(p.rows());
    let units = comptime!(p.planes * LANES);
    let bq = p.tile;
    let cols = comptime!(p.part() / PER_ROW);
    let ld_d = comptime!(p.head_dim + PAD);
    let ld_v = comptime!(p.val_dim + PAD);

    let kv_heads = k.shape(1) as u32;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let b = CUBE_POS_Y / kv_heads;
    let kvh = CUBE_POS_Y % kv_heads;
    let k_first = CUBE_POS_X * rows;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * LANES + lane;
    let my_row = lane / PER_ROW;
    // The plane's 16 resident rows and share of each tile; the lane's columns of the
    // plane's scratch (`lc0..`) and of the tile (`c0..`).
    let group = plane / p.split;
    let part_t = plane % p.split;
    let t_row0 = part_t * comptime!(p.part());
    let lc0 = (lane % PER_ROW) * cols;
    let c0 = t_row0 + lc0;
    // The key of this lane's row of the plane's scratch.
    let key = (k_first + group * 16 + my_row) as i32;
    let offset = seq_kv as i32 - seq_q as i32;

    // Queries that can see any key of this block: i >= j - offset - right and
    // i <= j - offset + left.
    let k_last = min(k_first + rows, seq_kv) as i32 - 1;
    let mut q_lo = 0i32;
    let mut q_hi = seq_q as i32;
    if p.has_right {
        q_lo = max(0i32, k_first as i32 - offset - s.right as i32);
    }
    if p.has_left {
        q_hi = min(q_hi, k_last - offset + s.left as i32 + 1);
    }

    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((rows * ld_d / p.vec) as usize),
        16usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((rows * ld_v / p.vec) as usize),
        16usize,
    );
    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.tile * ld_d / p.vec) as usize),
        16usize,
    );
    let mut do_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.tile * ld_v / p.vec) as usize),
        16usize,
    );
    let mut s_s = SharedMemory::<Vector<f32, NS>>::new_aligned(comptime!(p.scratch_len()), 16usize);
    let mut t_s = SharedMemory::<Vector<E, N>>::new_aligned(comptime!(p.tile_len()), 16usize);
    let s_at = (plane * comptime!(16 * p.ld_s() / p.svec)) as usize;
    let t_at = (plane * comptime!(16 * p.ld_t() / p.vec)) as usize;
    let mut lse_s = SharedMemory::<f32>::new(p.tile as usize);
    let mut delta_s = SharedMemory::<f32>::new(p.tile as usize);

    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
    stage::<E, N>(
        k,
        k_base,
        k_first as i32,
        seq_kv,
        &mut k_s,
        rows,
        p.head_dim,
        ld_d,
        p.vec,
        units,
        tid,
    );
    stage::<E, N>(
        v,
        v_base,
        k_first as i32,
        seq_kv,
        &mut v_s,
        rows,
        p.val_dim,
        ld_v,
        p.vec,
        units,
        tid,
    );
    let row_at = (group * 16) as usize;

    let mut dk_acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..comptime!(p.head_dim / 16) {
        dk_acc.push(zeros());
    }
    let mut dv_acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..comptime!(p.val_dim / 16) {
        dv_acc.push(zeros());
    }
    // The lane's P of the tile (its raw scores `K·Qᵀ` under softcap), kept while `V·dOᵀ`
    // takes the scratch.
    let mut dots = Array::<f32>::new(cols as usize);

    for g in 0..s.group {
        let h = kvh * s.group + g;
        let bh = b * heads + h;
        let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
        let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
        let bias_bh = b as usize * s.bias_stride_b as usize + h as usize * s.bias_stride_h as usize;
        let mut start = q_lo;
        while start < q_hi {
            // The previous tile's fragments are read.
            sync_cube();
            stage::<E, N>(
                q, q_base, start, seq_q, &mut q_s, bq, p.head_dim, ld_d, p.vec, units, tid,
            );
            stage::<E, N>(
                dout, do_base, start, seq_q, &mut do_s, bq, p.val_dim, ld_v, p.vec, units, tid,
            );
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
            sync_cube();

            // Sᵀ = K·Qᵀ for the plane's 16 keys; the lane keeps its half row, writes P.
            row_products::<E, N, NS>(
                &k_s, row_at, &q_s, t_row0, ld_d, &mut s_s, s_at, p.head_dim, p,
            );
            #[unroll]
            for jv in 0..comptime!(cols / p.vec) {
                let mut pv = Vector::<E, N>::new(E::from_int(0));
                #[unroll]
                for js in 0..comptime!(p.vec / p.svec) {
                    let c4 = comptime!(jv * p.vec + js * p.svec);
                    let x =
                        s_s[s_at + ((my_row * comptime!(p.ld_s()) + lc0 + c4) / p.svec) as usize];
                    #[unroll]
                    for e in 0..p.svec {
                        let c = c4 + e;
                        let row = start + (c0 + c) as i32;
                        let shown =
                            row < q_hi && key < seq_kv as i32 && visible(row, key, offset, s, fp);
                        let bias_at =
                            bias_bh + row as usize * bias.stride(2) + key as usize * bias.stride(3);
                        let (prob, t) = prob_of(
                            x[e as usize],
                            lse_s[(c0 + c) as usize],
                            bias,
                            bias_at,
                            shown,
                            s,
                            fp,
                        );
                        // Without softcap P alone carries the score to the second pass; with
                        // it, the raw score does (the tanh is needed again).
                        if p.has_softcap {
                            dots[c as usize] = x[e as usize];
                        } else {
                            dots[c as usize] = prob;
                        }
                        let (weight, _, _) = grads_from(
                            prob,
                            t,
                            0.0f32,
                            delta_s[(c0 + c) as usize],
                            row,
                            key,
                            bh,
                            s,
                            fp,
                        );
                        pv[comptime!((js * p.svec) as usize) + e as usize] = E::cast_from(weight);
                    }
                }
                t_s[t_at + ((my_row * comptime!(p.ld_t()) + lc0) / p.vec + jv) as usize] = pv;
            }
            sync_plane();
            // dV += Pᵀ·dO.
            tile_products::<E, N>(&t_s, t_at, &do_s, t_row0, ld_v, &mut dv_acc, p.val_dim, p);

            // dPᵀ = V·dOᵀ; with the kept P, dSᵀ (scaled) replaces P.
            row_products::<E, N, NS>(
                &v_s, row_at, &do_s, t_row0, ld_v, &mut s_s, s_at, p.val_dim, p,
            );
            #[unroll]
            for jv in 0..comptime!(cols / p.vec) {
                let mut dsv = Vector::<E, N>::new(E::from_int(0));
                #[unroll]
                for js in 0..comptime!(p.vec / p.svec) {
                    let c4 = comptime!(jv * p.vec + js * p.svec);
                    let x =
                        s_s[s_at + ((my_row * comptime!(p.ld_s()) + lc0 + c4) / p.svec) as usize];
                    #[unroll]
                    for e in 0..p.svec {
                        let c = c4 + e;
                        let row = start + (c0 + c) as i32;
                        let (ds, grad) = if p.has_softcap {
                            let shown = row < q_hi
                                && key < seq_kv as i32
                                && visible(row, key, offset, s, fp);
                            let bias_at = bias_bh
                                + row as usize * bias.stride(2)
                                + key as usize * bias.stride(3);
                            let (_, d, g) = grads_of(
                                dots[c as usize],
                                x[e as usize],
                                row,
                                key,
                                lse_s[(c0 + c) as usize],
                                delta_s[(c0 + c) as usize],
                                bh,
                                bias,
                                bias_at,
                                shown,
                                s,
                                fp,
                            );
                            (d, g)
                        } else {
                            // P from the first pass: no second exponential.
                            let (_, d, g) = grads_from(
                                dots[c as usize],
                                0.0f32,
                                x[e as usize],
                                delta_s[(c0 + c) as usize],
                                row,
                                key,
                                bh,
                                s,
                                fp,
                            );
                            (d, g)
                        };
                        if p.has_dbias
                            && row < q_hi
                            && key < seq_kv as i32
                            && visible(row, key, offset, s, fp)
                        {
                            // By strides: a fresh device buffer may have padded rows.
                            dbias[b as usize * dbias.stride(0)
                                + h as usize * dbias.stride(1)
                                + row as usize * dbias.stride(2)
                                + key as usize * dbias.stride(3)] = ds;
                        }
                        dsv[comptime!((js * p.svec) as usize) + e as usize] = E::cast_from(grad);
                    }
                }
                t_s[t_at + ((my_row * comptime!(p.ld_t()) + lc0) / p.vec + jv) as usize] = dsv;
            }
            sync_plane();
            // dK += dSᵀ·Q.
            tile_products::<E, N>(&t_s, t_at, &q_s, t_row0, ld_d, &mut dk_acc, p.head_dim, p);
            start += bq as i32;
        }
    }

    let dk_base = b as usize * dk.stride(0) + kvh as usize * dk.stride(1);
    let dv_base = b as usize * dv.stride(0) + kvh as usize * dv.stride(1);
    let first = k_first + group * 16;
    write_rows::<E, NS>(
        &dk_acc,
        &mut s_s,
        s_at,
        dk,
        dk_base,
        first,
        seq_kv,
        part_t == 0,
        p.head_dim,
        p,
    );
    write_rows::<E, NS>(
        &dv_acc,
        &mut s_s,
        s_at,
        dv,
        dv_base,
        first,
        seq_kv,
        part_t == 0,
        p.val_dim,
        p,
    );
}

/// dQ. Grid: `(ceil(Sq / rows), B·H)`, `rows` being `BwdCmmaParams::rows`; cubes of
/// `32 x planes` units; inputs as in [`attention_bwd_dkdv_cmma`].
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dq_cmma<E: Float, N: Size, NS: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    dout: &Tensor<Vector<E, N>>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dq: &mut Tensor<E>,
    s: &PortableScalars,
    #[comptime] p: BwdCmmaParams,
    #[define(E)] _dtype: StorageType,
) {
    let fp = comptime!(p.features());
    let rows = comptime!(p.rows());
    let units = comptime!(p.planes * LANES);
    let bkv = p.tile;
    let cols = comptime!(p.part() / PER_ROW);
    let ld_d = comptime!(p.head_dim + PAD);
    let ld_v = comptime!(p.val_dim + PAD);

    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let bh = CUBE_POS_Y;
    let b = bh / heads;
    let h = bh % heads;
    let kvh = h / s.group;
    let q_first = CUBE_POS_X * rows;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * LANES + lane;
    let my_row = lane / PER_ROW;
    // As in the dK/dV kernel.
    let group = plane / p.split;
    let part_t = plane % p.split;
    let t_row0 = part_t * comptime!(p.part());
    let lc0 = (lane % PER_ROW) * cols;
    let c0 = t_row0 + lc0;
    let row = (q_first + group * 16 + my_row) as i32;
    let offset = seq_kv as i32 - seq_q as i32;

    let q_last = min(q_first + rows, seq_q) as i32 - 1;
    let mut kv_lo = 0i32;
    let mut kv_hi = seq_kv as i32;
    if p.has_left {
        kv_lo = max(0i32, q_first as i32 + offset - s.left as i32);
    }
    if p.has_right {
        kv_hi = min(kv_hi, q_last + offset + s.right as i32 + 1);
    }

    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((rows * ld_d / p.vec) as usize),
        16usize,
    );
    let mut do_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((rows * ld_v / p.vec) as usize),
        16usize,
    );
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.tile * ld_d / p.vec) as usize),
        16usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.tile * ld_v / p.vec) as usize),
        16usize,
    );
    let mut s_s = SharedMemory::<Vector<f32, NS>>::new_aligned(comptime!(p.scratch_len()), 16usize);
    let mut t_s = SharedMemory::<Vector<E, N>>::new_aligned(comptime!(p.tile_len()), 16usize);
    let s_at = (plane * comptime!(16 * p.ld_s() / p.svec)) as usize;
    let t_at = (plane * comptime!(16 * p.ld_t() / p.vec)) as usize;

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
    stage::<E, N>(
        q,
        q_base,
        q_first as i32,
        seq_q,
        &mut q_s,
        rows,
        p.head_dim,
        ld_d,
        p.vec,
        units,
        tid,
    );
    stage::<E, N>(
        dout,
        do_base,
        q_first as i32,
        seq_q,
        &mut do_s,
        rows,
        p.val_dim,
        ld_v,
        p.vec,
        units,
        tid,
    );
    let row_at = (group * 16) as usize;
    let bias_bh = b as usize * s.bias_stride_b as usize + h as usize * s.bias_stride_h as usize;
    // The row's statistics (rows past Sq are masked; their values are never used).
    let mut row_lse = 0.0f32;
    let mut row_delta = 0.0f32;
    if row < seq_q as i32 {
        row_lse = lse[b as usize * lse.stride(0)
            + h as usize * lse.stride(1)
            + row as usize * lse.stride(2)];
        row_delta = delta[b as usize * delta.stride(0)
            + h as usize * delta.stride(1)
            + row as usize * delta.stride(2)];
    }

    let mut dq_acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..comptime!(p.head_dim / 16) {
        dq_acc.push(zeros());
    }
    let mut dots = Array::<f32>::new(cols as usize);

    let mut start = kv_lo;
    while start < kv_hi {
        sync_cube();
        stage::<E, N>(
            k, k_base, start, seq_kv, &mut k_s, bkv, p.head_dim, ld_d, p.vec, units, tid,
        );
        stage::<E, N>(
            v, v_base, start, seq_kv, &mut v_s, bkv, p.val_dim, ld_v, p.vec, units, tid,
        );
        sync_cube();

        // S = Q·Kᵀ, kept by the lanes while dP = dO·Vᵀ takes the scratch.
        row_products::<E, N, NS>(
            &q_s, row_at, &k_s, t_row0, ld_d, &mut s_s, s_at, p.head_dim, p,
        );
        #[unroll]
        for j in 0..comptime!(cols / p.svec) {
            let x = s_s[s_at + ((my_row * comptime!(p.ld_s()) + lc0) / p.svec + j) as usize];
            #[unroll]
            for e in 0..p.svec {
                dots[comptime!((j * p.svec) as usize) + e as usize] = x[e as usize];
            }
        }
        row_products::<E, N, NS>(
            &do_s, row_at, &v_s, t_row0, ld_v, &mut s_s, s_at, p.val_dim, p,
        );
        #[unroll]
        for jv in 0..comptime!(cols / p.vec) {
            let mut dsv = Vector::<E, N>::new(E::from_int(0));
            #[unroll]
            for js in 0..comptime!(p.vec / p.svec) {
                let c4 = comptime!(jv * p.vec + js * p.svec);
                let x = s_s[s_at + ((my_row * comptime!(p.ld_s()) + lc0 + c4) / p.svec) as usize];
                #[unroll]
                for e in 0..p.svec {
                    let c = c4 + e;
                    let key = start + (c0 + c) as i32;
                    let shown =
                        row < seq_q as i32 && key < kv_hi && visible(row, key, offset, s, fp);
                    let bias_at =
                        bias_bh + row as usize * bias.stride(2) + key as usize * bias.stride(3);
                    let (_, _, grad) = grads_of(
                        dots[c as usize],
                        x[e as usize],
                        row,
                        key,
                        row_lse,
                        row_delta,
                        bh,
                        bias,
                        bias_at,
                        shown,
                        s,
                        fp,
                    );
                    dsv[comptime!((js * p.svec) as usize) + e as usize] = E::cast_from(grad);
                }
            }
            t_s[t_at + ((my_row * comptime!(p.ld_t()) + lc0) / p.vec + jv) as usize] = dsv;
        }
        sync_plane();
        // dQ += dS·K.
        tile_products::<E, N>(&t_s, t_at, &k_s, t_row0, ld_d, &mut dq_acc, p.head_dim, p);
        start += bkv as i32;
    }

    let dq_base = b as usize * dq.stride(0) + h as usize * dq.stride(1);
    let first = q_first + group * 16;
    write_rows::<E, NS>(
        &dq_acc,
        &mut s_s,
        s_at,
        dq,
        dq_base,
        first,
        seq_q,
        part_t == 0,
        p.head_dim,
        p,
    );
}

/// The plane's 16 resident rows (from row `row_at` of `res`) times the tile's rows
/// transposed (`tile_s`), summed over `width` columns (both with rows `ld` elements apart),
/// stored row-major in the plane's f32 scratch and visible to the whole plane on return.
#[cube]
#[allow(clippy::too_many_arguments)]
fn row_products<E: Float, N: Size, NS: Size>(
    res: &SharedMemory<Vector<E, N>>,
    row_at: usize,
    tile_s: &SharedMemory<Vector<E, N>>,
    t_row0: u32,
    #[comptime] ld: u32,
    s_s: &mut SharedMemory<Vector<f32, NS>>,
    s_at: usize,
    #[comptime] width: u32,
    #[comptime] p: BwdCmmaParams,
) {
    let ld_s = comptime!(p.ld_s());
    let n_frags = comptime!(p.part() / 16);
    let mut acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..n_frags {
        acc.push(zeros());
    }
    #[unroll]
    for c in 0..comptime!(width / 16) {
        let a = fragment::<E>(cmma::MatrixIdent::A, cmma::MatrixLayout::RowMajor);
        let at = row_at * comptime!((ld / p.vec) as usize) + comptime!((c * 16 / p.vec) as usize);
        cmma::load(&a, &res.slice(at, res.len()), ld);
        #[unroll]
        for n in 0..n_frags {
            // The tile's rows as B (columns x rows): column-major with stride ld.
            let bt = fragment::<E>(cmma::MatrixIdent::B, cmma::MatrixLayout::ColMajor);
            let at = ((t_row0 + comptime!(n * 16)) * comptime!(ld / p.vec)) as usize
                + comptime!((c * 16 / p.vec) as usize);
            cmma::load(&bt, &tile_s.slice(at, tile_s.len()), ld);
            let m = acc.index(n as usize);
            cmma::execute::<E, E, f32, f32>(&a, &bt, m, m);
        }
    }
    // The scratch's previous readers (the kept scores) are done before it is overwritten.
    sync_plane();
    #[unroll]
    for n in 0..n_frags {
        cmma::store(
            &mut s_s.slice_mut(
                s_at + comptime!((n * 16 / p.svec) as usize),
                comptime!(p.scratch_len()),
            ),
            acc.index(n as usize),
            ld_s,
            cmma::MatrixLayout::RowMajor,
        );
    }
    sync_plane();
}

/// `accs[c] += T·X[:, 16c..16c + 16]`: the plane's 16 rows of P or dS (`t_s` from vector
/// `t_at`) times the tile's rows of X (`x_s`, rows `ld` elements apart), over `width` columns.
#[cube]
fn tile_products<E: Float, N: Size>(
    t_s: &SharedMemory<Vector<E, N>>,
    t_at: usize,
    x_s: &SharedMemory<Vector<E, N>>,
    t_row0: u32,
    #[comptime] ld: u32,
    accs: &mut Sequence<cmma::Matrix<f32>>,
    #[comptime] width: u32,
    #[comptime] p: BwdCmmaParams,
) {
    let ld_t = comptime!(p.ld_t());
    #[unroll]
    for kk in 0..comptime!(p.part() / 16) {
        let a = fragment::<E>(cmma::MatrixIdent::A, cmma::MatrixLayout::RowMajor);
        cmma::load(
            &a,
            &t_s.slice(
                t_at + comptime!((kk * 16 / p.vec) as usize),
                comptime!(p.tile_len()),
            ),
            ld_t,
        );
        #[unroll]
        for c in 0..comptime!(width / 16) {
            let x = fragment::<E>(cmma::MatrixIdent::B, cmma::MatrixLayout::RowMajor);
            let at = ((t_row0 + comptime!(kk * 16)) * comptime!(ld / p.vec)) as usize
                + comptime!((c * 16 / p.vec) as usize);
            cmma::load(&x, &x_s.slice(at, x_s.len()), ld);
            let m = accs.index(c as usize);
            cmma::execute::<E, E, f32, f32>(&a, &x, m, m);
        }
    }
}

/// Writes the plane's 16 accumulated rows (`accs`, `width` columns) to rows `first..` of
/// `t` (a `[B, H, S, width]` tensor at `base`), rows at or past `seq` left out, through the
/// plane's f32 scratch. With `split` 2, the pair of planes sharing the rows adds its
/// accumulators there and the first of the two (`lead`) writes the sum; every plane must
/// call this.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_rows<E: Float, NS: Size>(
    accs: &Sequence<cmma::Matrix<f32>>,
    s_s: &mut SharedMemory<Vector<f32, NS>>,
    s_at: usize,
    t: &mut Tensor<E>,
    base: usize,
    first: u32,
    seq: u32,
    lead: bool,
    #[comptime] width: u32,
    #[comptime] p: BwdCmmaParams,
) {
    let lane = UNIT_POS_X;
    let my_row = lane / PER_ROW;
    let part = lane % PER_ROW;
    let row = first + my_row;
    let split = p.split;
    // The partner's scratch follows this plane's.
    let partner = s_at + comptime!((16 * p.ld_s() / p.svec) as usize);
    let writes = row < seq && lead;
    #[unroll]
    for c in 0..comptime!(width / 16) {
        // The scratch's last readers are done (the caller's products, or the previous chunk).
        if comptime!(split > 1) {
            sync_cube();
        } else {
            sync_plane();
        }
        to_shared(
            accs.index(c as usize),
            s_s,
            s_at,
            comptime!(p.scratch_len()),
        );
        if comptime!(split > 1) {
            sync_cube();
        }
        if writes {
            #[unroll]
            for j in 0..comptime!(8 / p.svec) {
                let at = ((my_row * 16 + part * 8) / p.svec + j) as usize;
                let mut x = s_s[s_at + at];
                if comptime!(split > 1) {
                    x += s_s[partner + at];
                }
                #[unroll]
                for e in 0..p.svec {
                    let col = comptime!(c * 16) + part * 8 + comptime!(j * p.svec) + e;
                    t[base + row as usize * t.stride(2) + col as usize * t.stride(3)] =
                        E::cast_from(x[e as usize]);
                }
            }
        }
    }
}
