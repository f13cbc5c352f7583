//! The accelerated backward: tensor cores through register-level MMA (`m16n8k16`, f16 or
//! bf16 in, f32 accumulate), FlashAttention-2 style, in two kernels so that no float atomics
//! are needed. CUDA (sm80+) only.
//!
//! - [`attention_bwd_dkdv_mma`]: a cube owns 16 keys per plane (64 with 4 planes) of one
//!   (batch, kv head), keeps their K and V in shared memory and their dK and dV accumulators
//!   in registers, and walks every query head of the group and every visible query tile:
//!   `Sᵀ = K·Qᵀ`, `Pᵀ = exp(Sᵀ·scale − LSE)`, `dPᵀ = V·dOᵀ`, `dSᵀ = Pᵀ∘(dPᵀ − delta)`,
//!   `dV += Pᵀ·dO`, `dK += dSᵀ·Q`. Pᵀ and dSᵀ go from the accumulators straight into the A
//!   operand of the next products, as P does in the forward.
//! - [`attention_bwd_dq_mma`]: a cube owns 16 queries per plane, keeps Q and dO in shared
//!   memory and dQ in registers, and walks the visible key tiles: `S = Q·Kᵀ`, `dP = dO·Vᵀ`,
//!   `dS = P∘(dP − delta)`, `dQ += dS·K`.
//!
//! With `fused_dq` the dK/dV kernel also computes each tile's share of dQ (`dS·K` over its
//! keys) and adds it to an f32 accumulator through atomics, as FlashAttention-2 does: five
//! matmuls per tile pair instead of the two kernels' seven, at the price of atomic traffic
//! and a result that is not bitwise repeatable (the sum order varies).
//!
//! Fragment layouts are those of the forward (see `forward/mma.rs`): lane `l` holds rows
//! `l / 4` and `l / 4 + 8` of its plane's 16, and columns `2·(l % 4)` and the next one of each
//! 8-column tile.

use cubecl::cmma::MmaDefinition;
use cubecl::ir::{FastMath, MatrixIdent};
use cubecl::prelude::*;

use cubecl::prelude::barrier::{Barrier, copy_async_checked};

use crate::attention::dropout::uniform_cube;
use crate::attention::forward::mma::{
    PAD, Pair, block_and_head, exp2, stage, stage_rows, write_pair,
};
use crate::attention::forward::{LOG2_E, MASKED_BELOW, NO_MAX, PortableScalars};
use crate::attention::mma_tiles::{AccTiles, Frags, a_from_acc, acc_tiles, mma_blocks, zero_tiles};

/// Compile-time shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BwdMmaParams {
    /// Planes per cube (16 keys or queries each).
    pub planes: u32,
    /// The tile walked by the loop: queries (dK/dV) or keys (dQ), a multiple of 16.
    pub tile: u32,
    /// `D` (a multiple of 16).
    pub head_dim: u32,
    /// `Dv` (a multiple of 16).
    pub val_dim: u32,
    /// A window bound on the left.
    pub has_left: bool,
    /// A window bound on the right (causal).
    pub has_right: bool,
    /// Elements per q/k/v/dO read (the launch's `N`).
    pub vec: u32,
    /// Elements per gradient write (the launch's `NO`, 1 or 2).
    pub out_vec: u32,
    /// The grid is `(B·heads, blocks)` rather than `(blocks, B·heads)`, so that the heavy
    /// blocks of every head start before the light ones (see `block_and_head`).
    pub heads_major: bool,
    /// The dK/dV kernel adds dQ into an f32 accumulator (two-element atomics) and the dQ
    /// kernel does not run.
    pub fused_dq: bool,
    /// The dK/dV kernel's planes form a grid (see [`attention_bwd_dkdv_mma`]): an even
    /// number of planes, `tile / 2` a multiple of 16, D and Dv multiples of 32.
    pub grid: bool,
    /// An additive bias tensor is read.
    pub has_bias: bool,
    /// The score gradient is written out as the bias gradient (dK/dV kernel).
    pub has_dbias: bool,
    /// Softcap is applied (and differentiated through its `tanh`).
    pub has_softcap: bool,
    /// Dropout is applied, its mask regenerated from the seed.
    pub has_dropout: bool,
    /// The gradients the dK/dV kernel accumulates (the dQ kernel ignores it).
    pub grads: DkdvGrads,
}

/// The gradients one launch of the dK/dV kernel accumulates. Where dK's and dV's
/// accumulators together would spill (D and Dv of 256), the pass runs as two launches, dV
/// then dK, each recomputing the scores: ten products a tile pair instead of eight, against a
/// portable kernel without tensor cores otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DkdvGrads {
    /// dK and dV in one launch.
    #[default]
    Both,
    /// dV alone: no `dPᵀ` product, no dSᵀ.
    DvOnly,
    /// dK alone (and the bias gradient, and the fused dQ where asked for: both need dSᵀ).
    DkOnly,
}

impl DkdvGrads {
    /// Whether dK (and with it `dPᵀ` and `dSᵀ`) is computed.
    pub const fn dk(self) -> bool {
        !matches!(self, Self::DvOnly)
    }

    /// Whether dV is computed.
    pub const fn dv(self) -> bool {
        !matches!(self, Self::DkOnly)
    }
}

/// Strides (in elements) of the query-side tensors that the dK/dV kernel reads on every
/// query tile. As launch scalars they sit in the kernel's constant parameters, which the
/// tile loop reads as operands; CubeCL's tensor strides sit in global memory and, once
/// registers run out, are reloaded on every tile.
#[derive(CubeLaunch, CubeType)]
pub struct QueryStrides {
    /// Q over batch, heads and rows.
    pub q_batch: u32,
    /// Q over heads.
    pub q_head: u32,
    /// Q over rows.
    pub q_row: u32,
    /// dO over batch.
    pub do_batch: u32,
    /// dO over heads.
    pub do_head: u32,
    /// dO over rows.
    pub do_row: u32,
    /// The base-2 LSE and delta (one layout for both) over batch.
    pub stat_batch: u32,
    /// The LSE and delta over heads.
    pub stat_head: u32,
    /// The LSE and delta over rows.
    pub stat_row: u32,
    /// The dQ accumulator over batch (fused dQ only; within a head it is laid out in 8x8
    /// blocks, see [`dq_atomic`]).
    pub acc_batch: u32,
    /// The dQ accumulator over heads.
    pub acc_head: u32,
}

/// Whether key `key` is visible from query `row` (`offset = Sk − Sq`), both in range.
#[cube]
#[allow(clippy::too_many_arguments)]
fn visible_mma(
    row: i32,
    key: i32,
    row_end: i32,
    key_end: i32,
    offset: i32,
    s: &PortableScalars,
    #[comptime] has_left: bool,
    #[comptime] has_right: bool,
) -> bool {
    let mut ok = row < row_end && key < key_end;
    if has_left {
        ok = ok && key >= row + offset - s.left as i32;
    }
    if has_right {
        ok = ok && key <= row + offset + s.right as i32;
    }
    ok
}

/// Sets the exponent arguments in `acc` (`m_blocks` blocks of 16 rows by `tiles` 8-column
/// tiles, in accumulator layout) to [`NO_MAX`] where the key is not visible from the query.
/// The rows are `first + 16·m + 8·r (+ g)` as passed in `first`, the columns
/// `start + 8·j + 2·t + c`; with `rows_are_keys` the rows are keys and the columns queries
/// (dK/dV), else the reverse (dQ).
#[cube]
#[allow(clippy::too_many_arguments)]
fn mask_pass(
    acc: &mut AccTiles,
    #[comptime] m_blocks: u32,
    #[comptime] tiles: u32,
    first: u32,
    start: i32,
    t: u32,
    row_end: i32,
    key_end: i32,
    offset: i32,
    s: &PortableScalars,
    #[comptime] rows_are_keys: bool,
    #[comptime] has_left: bool,
    #[comptime] has_right: bool,
) {
    #[unroll]
    for m in 0..m_blocks {
        #[unroll]
        for j in 0..tiles {
            #[unroll]
            for r in 0..2u32 {
                let fixed = (first + comptime!(m * 16 + r * 8)) as i32;
                let tile = comptime!((m * tiles + j) as usize);
                let mut v = acc[tile][r as usize];
                #[unroll]
                for c in 0..2u32 {
                    let moving = start + (j * 8 + t * 2 + c) as i32;
                    let mut row = fixed;
                    let mut key = moving;
                    if comptime!(rows_are_keys) {
                        row = moving;
                        key = fixed;
                    }
                    let ok =
                        visible_mma(row, key, row_end, key_end, offset, s, has_left, has_right);
                    v[c as usize] = select(ok, v[c as usize], f32::new(NO_MAX));
                }
                acc.index_mut(tile)[r as usize] = v;
            }
        }
    }
}

/// Turns the raw dots in `acc` (layout as in [`mask_pass`]) into the forward's scores:
/// scaled, capped (`cap_d` gets `1 − tanh²`, the cap's derivative) and biased (the bias read
/// at `bias_base` plus the row and key strides; 0 outside the sequences, which the mask pass
/// hides). The plain case stays with the callers as one multiply-add per score.
#[cube]
#[allow(clippy::too_many_arguments)]
fn capped_biased(
    acc: &mut AccTiles,
    cap_d: &mut AccTiles,
    #[comptime] m_blocks: u32,
    #[comptime] tiles: u32,
    first: u32,
    start: i32,
    t: u32,
    row_end: i32,
    key_end: i32,
    bias: &Tensor<f32>,
    bias_base: usize,
    s: &PortableScalars,
    #[comptime] rows_are_keys: bool,
    #[comptime] has_softcap: bool,
    #[comptime] has_bias: bool,
) {
    #[unroll]
    for m in 0..m_blocks {
        #[unroll]
        for j in 0..tiles {
            #[unroll]
            for r in 0..2u32 {
                let fixed = (first + comptime!(m * 16 + r * 8)) as i32;
                let tile = comptime!((m * tiles + j) as usize);
                let mut v = acc[tile][r as usize];
                let mut d = Vector::<f32, Pair>::new(1.0f32);
                #[unroll]
                for c in 0..2u32 {
                    let moving = start + (j * 8 + t * 2 + c) as i32;
                    let mut row = fixed;
                    let mut key = moving;
                    if comptime!(rows_are_keys) {
                        row = moving;
                        key = fixed;
                    }
                    let mut x = v[c as usize] * s.scale;
                    if comptime!(has_softcap) {
                        let th = (x / s.softcap).tanh();
                        x = s.softcap * th;
                        d[c as usize] = 1.0f32 - th * th;
                    }
                    if comptime!(has_bias) {
                        let mut bv = 0.0f32;
                        if row < row_end && key < key_end {
                            bv = bias[bias_base
                                + row as usize * bias.stride(2)
                                + key as usize * bias.stride(3)];
                        }
                        x += bv;
                    }
                    v[c as usize] = x;
                }
                acc.index_mut(tile)[r as usize] = v;
                if comptime!(has_softcap) {
                    cap_d.index_mut(tile)[r as usize] = d;
                }
            }
        }
    }
}

/// `acc = A · Bᵀ` over a contraction of `depth` (row-major tiles with row stride `ld`), from
/// zero: A is `m_blocks`·16 rows of `a_s` from `a_row0`, B `n_tiles`·8 rows of `b_s` from
/// `b_row0`; `acc` holds `[m_blocks][n_tiles]` tiles. Each B fragment serves every block
/// of A.
#[cube]
#[allow(clippy::too_many_arguments)]
fn product_nt<E: Float, N: Size>(
    a_s: &SharedMemory<Vector<E, N>>,
    a_row0: u32,
    b_s: &SharedMemory<Vector<E, N>>,
    b_row0: u32,
    acc: &mut AccTiles,
    #[comptime] m_blocks: u32,
    #[comptime] n_tiles: u32,
    #[comptime] depth: u32,
    #[comptime] ld: u32,
    #[comptime] vec: u32,
    lm_row: u32,
    lm_mat: u32,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    let frag = comptime!((8 / vec) as usize);
    // Each lane's part of the ldmatrix addresses, in vectors; the fragments add constants.
    // A: rows 0-7 | 8-15, columns 0-7 | 8-15. B: rows 0-7 | 8-15, columns 0-7 | 8-15.
    let lane_a = ((a_row0 + lm_row + 8 * (lm_mat % 2)) * ld + 8 * (lm_mat / 2)) / vec;
    let lane_b = ((b_row0 + lm_row + 8 * (lm_mat / 2)) * ld + 8 * (lm_mat % 2)) / vec;
    zero_tiles(acc, comptime!(m_blocks * n_tiles));
    #[unroll]
    for kk in 0..comptime!(depth / 16) {
        let mut a: Frags<E> = Sequence::new();
        #[unroll]
        for m in 0..m_blocks {
            let at_a = (lane_a + comptime!((m * 16 * ld + kk * 16) / vec)) as usize;
            a.push(def.load_matrix::<Vector<E, N>, Pair>(
                &a_s.slice(at_a, at_a + frag),
                MatrixIdent::A,
                4usize,
                false,
            ));
        }
        #[unroll]
        for jp in 0..comptime!(n_tiles / 2) {
            // Matrices: rows 16·jp + 0-7 | 8-15 of b_s, columns 16·kk + 0-7 | 8-15.
            let at = (lane_b + comptime!((jp * 16 * ld + kk * 16) / vec)) as usize;
            let b = def.load_matrix::<Vector<E, N>, Pair>(
                &b_s.slice(at, at + frag),
                MatrixIdent::B,
                4usize,
                false,
            );
            mma_blocks::<E>(&a, &b, acc, m_blocks, n_tiles, jp);
        }
    }
}

/// `acc += A · B` where A is `m_blocks`·16 rows of `a_s` from `a_row0` (pairs of `E`, row
/// stride `ld_a` elements; contraction `k_steps`·16 along the row) and B the `k_steps`·16
/// rows of `b_s` from `b_row0`, `n_tiles`·8 columns from `b_col0` (row stride `ld`), read
/// with the transposing `ldmatrix`. `acc` holds `[m_blocks][n_tiles]` tiles.
#[cube]
#[allow(clippy::too_many_arguments)]
fn product_sa_b<E: Float, N: Size>(
    a_s: &SharedMemory<Vector<E, Pair>>,
    a_row0: u32,
    b_s: &SharedMemory<Vector<E, N>>,
    b_row0: u32,
    b_col0: u32,
    acc: &mut AccTiles,
    #[comptime] m_blocks: u32,
    #[comptime] k_steps: u32,
    #[comptime] n_tiles: u32,
    #[comptime] ld_a: u32,
    #[comptime] ld: u32,
    #[comptime] vec: u32,
    lm_row: u32,
    lm_mat: u32,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    let frag = comptime!((8 / vec) as usize);
    // A: rows 0-7 | 8-15, columns 0-7 | 8-15 (in pairs). B (transposed): rows 0-7 | 8-15,
    // columns 0-7 | 8-15. The fragments add constants.
    let lane_a = ((a_row0 + lm_row + 8 * (lm_mat % 2)) * ld_a + 8 * (lm_mat / 2)) / 2;
    let lane_b = ((b_row0 + lm_row + 8 * (lm_mat % 2)) * ld + b_col0 + 8 * (lm_mat / 2)) / vec;
    #[unroll]
    for kk in 0..k_steps {
        let mut a: Frags<E> = Sequence::new();
        #[unroll]
        for m in 0..m_blocks {
            let at = (lane_a + comptime!((m * 16 * ld_a + kk * 16) / 2)) as usize;
            a.push(def.load_matrix::<Vector<E, Pair>, Pair>(
                &a_s.slice(at, at + 4),
                MatrixIdent::A,
                4usize,
                false,
            ));
        }
        #[unroll]
        for np in 0..comptime!(n_tiles / 2) {
            let at = (lane_b + comptime!((kk * 16 * ld + np * 16) / vec)) as usize;
            let b = def.load_matrix::<Vector<E, N>, Pair>(
                &b_s.slice(at, at + frag),
                MatrixIdent::B,
                4usize,
                true,
            );
            mma_blocks::<E>(&a, &b, acc, m_blocks, n_tiles, np);
        }
    }
}

/// `acc += X · B` where X is the plane's 16 rows held in accumulator layout (`x`, `k_tiles`
/// 8-column tiles, cast to `E`) and B the rows of `b_s` from `b_row0` (`k_tiles`·8 rows, `n_tiles`·8
/// columns, row stride `ld`), read with the transposing `ldmatrix`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn product_acc_b<E: Float, N: Size>(
    x: &AccTiles,
    b_s: &SharedMemory<Vector<E, N>>,
    b_row0: u32,
    acc: &mut AccTiles,
    #[comptime] k_tiles: u32,
    #[comptime] n_tiles: u32,
    #[comptime] ld: u32,
    #[comptime] vec: u32,
    lm_row: u32,
    lm_mat: u32,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    let frag = comptime!((8 / vec) as usize);
    // Each lane's part of the (transposing) ldmatrix addresses, in vectors: rows 0-7 | 8-15,
    // columns 0-7 | 8-15; the fragments add constants.
    let lane_b = ((b_row0 + lm_row + 8 * (lm_mat % 2)) * ld + 8 * (lm_mat / 2)) / vec;
    #[unroll]
    for kk in 0..comptime!(k_tiles / 2) {
        let mut a: Frags<E> = Sequence::new();
        a.push(a_from_acc::<E>(x, comptime!(kk * 2)));
        #[unroll]
        for np in 0..comptime!(n_tiles / 2) {
            // Matrices (transposed): rows 16·kk + 0-7 | 8-15, columns 16·np + 0-7 | 8-15.
            let at = (lane_b + comptime!((kk * 16 * ld + np * 16) / vec)) as usize;
            let b = def.load_matrix::<Vector<E, N>, Pair>(
                &b_s.slice(at, at + frag),
                MatrixIdent::B,
                4usize,
                true,
            );
            mma_blocks::<E>(&a, &b, acc, 1u32, n_tiles, np);
        }
    }
}

/// dK and dV, and with `fused_dq` the unscaled dQ added into `dq_acc` (`[B, H, Sq, D]` f32,
/// zeroed, read two elements at a time; any small tensor otherwise). `lse2` is the forward's
/// log-sum-exp in base 2 (`lse · log2 e`, as the delta kernel writes it): every exponent is
/// a power of two ([`exp2`]) with log2(e) folded into the scale. Grid
/// `(ceil(Sk / (16·planes)), B·Hkv)` or its transpose with `heads_major`, cube `(32, planes)`.
///
/// Each plane owns 16 keys: it computes `Sᵀ` and `dPᵀ` for them against the whole query
/// tile and keeps `Pᵀ` and `dSᵀ` in registers as the A operand of dV and dK, over all of D
/// and Dv. With `grid` the planes pair up as FlashAttention-2's warps do: plane `i` computes
/// `Sᵀ` and `dPᵀ` for keys `32·(i / 2)..+32` against half `i % 2` of the tile, stores `Pᵀ`
/// and `dSᵀ` in shared memory, and after a cube barrier accumulates dK and dV for the same
/// 32 keys over half `i % 2` of D and Dv. Per plane and tile that reads 56 KB of operands
/// through `ldmatrix` at D = 128 (and writes 4 KB) instead of 72 KB.
///
/// `p.grads` other than [`DkdvGrads::Both`] leaves one gradient out (and, for dV alone, V
/// and `dPᵀ`): the launch runs the kernel twice where both accumulators would not fit.
// CubeCL emits the fast `__powf` (see `exp2`) only with all three flags; NaN still propagates
// through it.
#[cube(
    launch_unchecked,
    fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf
)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dkdv_mma<E: Float, N: Size, NO: Size, NA: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    dout: &Tensor<Vector<E, N>>,
    lse2: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dk: &mut Tensor<Vector<E, NO>>,
    dv: &mut Tensor<Vector<E, NO>>,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    dbias: &mut Tensor<f32>,
    s: &PortableScalars,
    strides: &QueryStrides,
    #[comptime] p: BwdMmaParams,
    #[define(E)] _dtype: StorageType,
) {
    let vec = p.vec;
    let units = comptime!(p.planes * 32);
    let block_kv = comptime!(p.planes * 16);
    let ld_k = comptime!(p.head_dim + PAD);
    let ld_v = comptime!(p.val_dim + PAD);
    let q_tiles = comptime!(p.tile / 8);
    // The plane's share: `m_blocks` blocks of 16 keys by `pq_tiles` 8-query tiles (scores),
    // by `pd_tiles` and `pdv_tiles` 8-column tiles (dK and dV).
    let m_blocks = comptime!(if p.grid { 2u32 } else { 1u32 });
    let with_dk = comptime!(p.grads.dk());
    let with_dv = comptime!(p.grads.dv());
    let pq_tiles = comptime!(q_tiles / m_blocks);
    let pd_tiles = comptime!(p.head_dim / 8 / m_blocks);
    let pdv_tiles = comptime!(p.val_dim / 8 / m_blocks);

    let kv_heads = k.shape(1) as u32;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    // First key blocks first: under a causal mask they see the most queries.
    let order = block_and_head(p.heads_major, false);
    let b = order[1] / kv_heads;
    let kvh = order[1] % kv_heads;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let g = lane / 4;
    let t = lane % 4;
    let lm_row = lane % 8;
    let lm_mat = lane / 8;
    let k_first = order[0] * block_kv;
    // The plane's first key row in the cube, and its first query column of the tile and
    // of dK/dV (grid; 0 otherwise).
    let mut key_row0 = plane * 16;
    let mut half = 0u32;
    if comptime!(p.grid) {
        key_row0 = (plane / 2) * 32;
        half = plane % 2;
    }
    let q_col0 = half * comptime!(p.tile / 2);
    let d_col0 = half * comptime!(p.head_dim / 2);
    let dv_col0 = half * comptime!(p.val_dim / 2);
    let plane_key = k_first + key_row0 + g;
    let offset = seq_kv as i32 - seq_q as i32;

    let k_last = min(k_first + block_kv, seq_kv) as i32 - 1;
    let mut q_lo = 0i32;
    let mut q_hi = seq_q as i32;
    if p.has_right {
        q_lo = max(0i32, k_first as i32 - offset - s.right as i32);
    }
    if p.has_left {
        q_hi = min(q_hi, k_last - offset + s.left as i32 + 1);
    }

    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((block_kv * ld_k / vec) as usize),
        16usize,
    );
    // V serves only `dPᵀ`, which dV alone does not need.
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!(if with_dk { block_kv * ld_v / vec } else { 1 }) as usize,
        16usize,
    );
    // Two buffers of Q, dO, LSE and delta: the next query tile lands while this one is
    // used, through asynchronous copies when the reads are 16 bytes wide.
    let pipelined = comptime!(p.vec == 8);
    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((2 * p.tile * ld_k / vec) as usize),
        16usize,
    );
    let mut do_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((2 * p.tile * ld_v / vec) as usize),
        16usize,
    );
    let mut lse_s = SharedMemory::<f32>::new(comptime!(2 * p.tile) as usize);
    let mut delta_s = SharedMemory::<f32>::new(comptime!(2 * p.tile) as usize);
    // The tile's dSᵀ in `E` (rows keys, columns queries) for the fused dQ product and, as
    // a grid, dK; the tile's Pᵀ for dV as a grid.
    let ld_ds = comptime!(p.tile + PAD);
    let mut ds_s = SharedMemory::<Vector<E, Pair>>::new_aligned(
        comptime!(if p.fused_dq || p.grid {
            block_kv * ld_ds / 2
        } else {
            1
        }) as usize,
        16usize,
    );
    let mut p_s = SharedMemory::<Vector<E, Pair>>::new_aligned(
        comptime!(if p.grid { block_kv * ld_ds / 2 } else { 1 }) as usize,
        16usize,
    );
    let ready = Barrier::shared(units, tid == 0);
    // The lane's first pair of dSᵀ and Pᵀ (key row key_row0 + g, query column q_col0 + 2t),
    // bounded as `stat_at` below so that the tiles' constants fold into the stores.
    let ds_lane = min(
        (key_row0 + g) * comptime!(ld_ds / 2) + q_col0 / 2 + t,
        comptime!(block_kv * ld_ds / 2 - 1),
    );

    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
    stage::<E, N>(
        k,
        k_base,
        k_first as i32,
        seq_kv,
        &mut k_s,
        block_kv,
        p.head_dim,
        ld_k,
        vec,
        units,
        tid,
    );
    if comptime!(with_dk) {
        stage::<E, N>(
            v,
            v_base,
            k_first as i32,
            seq_kv,
            &mut v_s,
            block_kv,
            p.val_dim,
            ld_v,
            vec,
            units,
            tid,
        );
    }

    // `[m_blocks][pd_tiles]` and `[m_blocks][pdv_tiles]` tiles.
    let mut dk_acc = acc_tiles(comptime!(if with_dk { m_blocks * pd_tiles } else { 0 }));
    let mut dv_acc = acc_tiles(comptime!(if with_dv { m_blocks * pdv_tiles } else { 0 }));
    let mut st = acc_tiles(q_tiles);
    let mut dpt = acc_tiles(comptime!(if with_dk { q_tiles } else { 0 }));
    // The softcap's derivative per score (no tiles without softcap).
    let mut cap_d = acc_tiles(comptime!(if p.has_softcap { q_tiles } else { 0 }));
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);
    let scale2 = s.scale * LOG2_E;

    // Tile n is query tile n % per_head of query head n / per_head of the group.
    let span = q_hi - q_lo;
    let per_head = select(span > 0, (span as u32).div_ceil(p.tile), 0u32);
    let count = per_head * s.group;
    if count > 0 {
        load_query_tile::<E, N>(
            q,
            dout,
            lse2,
            delta,
            strides,
            &mut q_s,
            &mut do_s,
            &mut lse_s,
            &mut delta_s,
            b,
            kvh * s.group,
            q_lo,
            seq_q,
            0u32,
            p,
            units,
            tid,
        );
        if pipelined {
            ready.commit_copy_async();
            ready.arrive();
        }
    }
    // The tile's query head and its index within the head, stepped without divisions.
    let mut h = kvh * s.group;
    let mut tile_at = 0u32;
    let mut n = 0u32;
    while n < count {
        let buf = n % 2;
        if pipelined {
            ready.wait_parity(buf);
        }
        // Tile n is visible, and every plane is past tile n - 1, whose buffer is refilled.
        sync_cube();
        let wraps = tile_at + 1 == per_head;
        let next_at = select(wraps, 0u32, tile_at + 1);
        let next_h = h + select(wraps, 1u32, 0u32);
        // As a grid the next tile's copies go out later (below).
        if comptime!(!p.grid) && n + 1 < count {
            load_query_tile::<E, N>(
                q,
                dout,
                lse2,
                delta,
                strides,
                &mut q_s,
                &mut do_s,
                &mut lse_s,
                &mut delta_s,
                b,
                next_h,
                q_lo + (next_at * p.tile) as i32,
                seq_q,
                1u32 - buf,
                p,
                units,
                tid,
            );
            if pipelined {
                ready.commit_copy_async();
                ready.arrive();
            }
        }
        let start = q_lo + (tile_at * p.tile) as i32;
        let row0 = buf * p.tile;
        // The lane's first LSE and delta entry. `min` never binds; it tells NVVM the base is
        // small, so `base + constant` stays a non-wrapping add that folds into the loads'
        // offsets (a base with known-zero bits under the constant becomes an `or`, which does
        // not fold).
        let stat_at = min(row0 + q_col0 + t * 2, comptime!(2 * p.tile - 2));

        // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ for the plane's keys against its queries of the tile.
        product_nt::<E, N>(
            &k_s,
            key_row0,
            &q_s,
            row0 + q_col0,
            &mut st,
            m_blocks,
            pq_tiles,
            p.head_dim,
            ld_k,
            vec,
            lm_row,
            lm_mat,
        );
        if comptime!(with_dk) {
            product_nt::<E, N>(
                &v_s,
                key_row0,
                &do_s,
                row0 + q_col0,
                &mut dpt,
                m_blocks,
                pq_tiles,
                p.val_dim,
                ld_v,
                vec,
                lm_row,
                lm_mat,
            );
        }

        // Pᵀ into st, dSᵀ into dpt. Per-element masking only where the tile crosses a
        // boundary: the sequence ends or the causal/window band.
        let row_lo = start;
        let row_hi = start + p.tile as i32 - 1;
        let key_hi = k_first as i32 + block_kv as i32 - 1;
        let needs_mask = row_hi >= q_hi
            || key_hi >= seq_kv as i32
            || (p.has_right && key_hi > row_lo + offset + s.right as i32)
            || (p.has_left && (k_first as i32) < row_hi + offset - s.left as i32);
        // The exponents first (one multiply-add each without softcap or bias), masked in a
        // pass of their own only on boundary tiles, so that interior tiles test nothing per
        // element.
        if comptime!(p.has_softcap || p.has_bias) {
            let bias_base =
                b as usize * s.bias_stride_b as usize + h as usize * s.bias_stride_h as usize;
            capped_biased(
                &mut st,
                &mut cap_d,
                m_blocks,
                pq_tiles,
                plane_key,
                start + q_col0 as i32,
                t,
                seq_q as i32,
                seq_kv as i32,
                bias,
                bias_base,
                s,
                true,
                p.has_softcap,
                p.has_bias,
            );
        }
        #[unroll]
        for m in 0..m_blocks {
            #[unroll]
            for j in 0..pq_tiles {
                #[unroll]
                for r in 0..2u32 {
                    let tile = comptime!((m * pq_tiles + j) as usize);
                    let mut pv = st[tile][r as usize];
                    #[unroll]
                    for c in 0..2u32 {
                        let l = lse_s[(stat_at + comptime!(j * 8 + c)) as usize];
                        let mut e = pv[c as usize] * scale2 - l;
                        if comptime!(p.has_softcap || p.has_bias) {
                            // Scores the bias masks count as masked, as in the forward.
                            let x = pv[c as usize];
                            e = select(x <= MASKED_BELOW, f32::new(NO_MAX), x * LOG2_E - l);
                        }
                        pv[c as usize] = e;
                    }
                    st.index_mut(tile)[r as usize] = pv;
                }
            }
        }
        if needs_mask {
            // Accumulator rows are keys, columns queries.
            mask_pass(
                &mut st,
                m_blocks,
                pq_tiles,
                plane_key,
                start + q_col0 as i32,
                t,
                q_hi,
                seq_kv as i32,
                offset,
                s,
                true,
                p.has_left,
                p.has_right,
            );
        }
        #[unroll]
        for m in 0..m_blocks {
            #[unroll]
            for j in 0..pq_tiles {
                #[unroll]
                for r in 0..2u32 {
                    let tile = comptime!((m * pq_tiles + j) as usize);
                    let key = plane_key + comptime!(m * 16 + r * 8);
                    let mut pv = st[tile][r as usize];
                    // Without dK there is no `dPᵀ`: `dsv` only stands in, and nothing reads it.
                    let mut dsv = pv;
                    if comptime!(with_dk) {
                        dsv = dpt[tile][r as usize];
                    }
                    #[unroll]
                    for c in 0..2u32 {
                        let qi = q_col0 + comptime!(j * 8 + c) + t * 2;
                        let prob = exp2(pv[c as usize]);
                        let mut weight = prob;
                        let mut dp = dsv[c as usize];
                        if comptime!(p.has_dropout) {
                            let u = uniform_cube(s.seed, b * heads + h, start as u32 + qi, key);
                            let kept = u >= s.dropout_p;
                            weight = select(kept, prob * keep_scale, 0.0f32);
                            dp = select(kept, dp * keep_scale, 0.0f32);
                        }
                        if comptime!(with_dk) {
                            let mut ds =
                                prob * (dp - delta_s[(stat_at + comptime!(j * 8 + c)) as usize]);
                            if comptime!(p.has_dbias) {
                                let query = start as u32 + qi;
                                if query < seq_q && key < seq_kv {
                                    // By strides: a fresh device buffer may have padded rows.
                                    dbias[b as usize * dbias.stride(0)
                                        + h as usize * dbias.stride(1)
                                        + query as usize * dbias.stride(2)
                                        + key as usize * dbias.stride(3)] = ds;
                                }
                            }
                            if comptime!(p.has_softcap) {
                                let cd = cap_d[tile][r as usize];
                                ds *= cd[c as usize];
                            }
                            dsv[c as usize] = ds;
                        }
                        pv[c as usize] = weight;
                    }
                    st.index_mut(tile)[r as usize] = pv;
                    // Conflict-free: the 8 rows of a store are 4 banks apart, t picks within.
                    let at_s = ds_lane + comptime!(((m * 16 + r * 8) * ld_ds + j * 8) / 2);
                    if comptime!(with_dk) {
                        dpt.index_mut(tile)[r as usize] = dsv;
                        if comptime!(p.fused_dq || p.grid) {
                            ds_s[at_s as usize] = Vector::cast_from(dsv);
                        }
                    }
                    if comptime!(p.grid && with_dv) {
                        p_s[at_s as usize] = Vector::cast_from(pv);
                    }
                }
            }
        }

        if comptime!(p.grid) {
            // The next tile's copies, issued here rather than at the top of the tile: there
            // they queued behind the scores' `ldmatrix` burst and held their address
            // registers, which the next instructions then waited to overwrite. Here the
            // scores are dead, and the copies drain while the planes meet at the barrier.
            if n + 1 < count {
                load_query_tile::<E, N>(
                    q,
                    dout,
                    lse2,
                    delta,
                    strides,
                    &mut q_s,
                    &mut do_s,
                    &mut lse_s,
                    &mut delta_s,
                    b,
                    next_h,
                    q_lo + (next_at * p.tile) as i32,
                    seq_q,
                    1u32 - buf,
                    p,
                    units,
                    tid,
                );
                if pipelined {
                    ready.commit_copy_async();
                    ready.arrive();
                }
            }
            // Every plane's Pᵀ and dSᵀ are stored; the next pass's first barrier guards
            // their reuse. dV += Pᵀ·dO and dK += dSᵀ·Q for the plane's keys and columns.
            sync_cube();
            if comptime!(with_dv) {
                product_sa_b::<E, N>(
                    &p_s,
                    key_row0,
                    &do_s,
                    row0,
                    dv_col0,
                    &mut dv_acc,
                    m_blocks,
                    comptime!(p.tile / 16),
                    pdv_tiles,
                    ld_ds,
                    ld_v,
                    vec,
                    lm_row,
                    lm_mat,
                );
            }
            if comptime!(with_dk) {
                product_sa_b::<E, N>(
                    &ds_s,
                    key_row0,
                    &q_s,
                    row0,
                    d_col0,
                    &mut dk_acc,
                    m_blocks,
                    comptime!(p.tile / 16),
                    pd_tiles,
                    ld_ds,
                    ld_k,
                    vec,
                    lm_row,
                    lm_mat,
                );
            }
        } else {
            // dV += Pᵀ·dO and dK += dSᵀ·Q.
            if comptime!(with_dv) {
                product_acc_b::<E, N>(
                    &st,
                    &do_s,
                    row0,
                    &mut dv_acc,
                    q_tiles,
                    pdv_tiles,
                    ld_v,
                    vec,
                    lm_row,
                    lm_mat,
                );
            }
            if comptime!(with_dk) {
                product_acc_b::<E, N>(
                    &dpt,
                    &q_s,
                    row0,
                    &mut dk_acc,
                    q_tiles,
                    pd_tiles,
                    ld_k,
                    vec,
                    lm_row,
                    lm_mat,
                );
            }
        }
        if comptime!(p.fused_dq && with_dk) {
            // Every plane's dSᵀ is stored (as a grid, since the barrier above); the next
            // pass's first barrier guards its reuse.
            if comptime!(!p.grid) {
                sync_cube();
            }
            let head_base =
                b as usize * strides.acc_batch as usize + h as usize * strides.acc_head as usize;
            dq_atomic::<E, N, NA>(&ds_s, &k_s, dq_acc, head_base, start, seq_q, plane, lane, p);
        }
        h = next_h;
        tile_at = next_at;
        n += 1;
    }

    #[unroll]
    for m in 0..m_blocks {
        #[unroll]
        for r in 0..2u32 {
            let key = plane_key + comptime!(m * 16 + r * 8);
            if key < seq_kv {
                if comptime!(with_dk) {
                    let dk_base = b as usize * dk.stride(0)
                        + kvh as usize * dk.stride(1)
                        + key as usize * dk.stride(2)
                        + (d_col0 + t * 2) as usize;
                    #[unroll]
                    for i in 0..pd_tiles {
                        let mut pair = dk_acc[comptime!((m * pd_tiles + i) as usize)][r as usize];
                        pair[0] *= s.scale;
                        pair[1] *= s.scale;
                        write_pair::<E, NO>(
                            dk,
                            dk_base + comptime!(i * 8) as usize,
                            pair,
                            p.out_vec,
                        );
                    }
                }
                if comptime!(with_dv) {
                    let dv_base = b as usize * dv.stride(0)
                        + kvh as usize * dv.stride(1)
                        + key as usize * dv.stride(2)
                        + (dv_col0 + t * 2) as usize;
                    #[unroll]
                    for i in 0..pdv_tiles {
                        let pair = dv_acc[comptime!((m * pdv_tiles + i) as usize)][r as usize];
                        write_pair::<E, NO>(
                            dv,
                            dv_base + comptime!(i * 8) as usize,
                            pair,
                            p.out_vec,
                        );
                    }
                }
            }
        }
    }
}

/// dQ. Grid `(ceil(Sq / (16·planes)), B·H)` or its transpose with `heads_major`, cube
/// `(32, planes)`. `lse2` is the log-sum-exp in base 2, as for [`attention_bwd_dkdv_mma`].
#[cube(
    launch_unchecked,
    fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf
)]
#[allow(clippy::too_many_arguments)]
pub fn attention_bwd_dq_mma<E: Float, N: Size, NO: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    dout: &Tensor<Vector<E, N>>,
    lse2: &Tensor<f32>,
    delta: &Tensor<f32>,
    bias: &Tensor<f32>,
    dq: &mut Tensor<Vector<E, NO>>,
    s: &PortableScalars,
    #[comptime] p: BwdMmaParams,
    #[define(E)] _dtype: StorageType,
) {
    let vec = p.vec;
    let units = comptime!(p.planes * 32);
    let block_q = comptime!(p.planes * 16);
    let ld_k = comptime!(p.head_dim + PAD);
    let ld_v = comptime!(p.val_dim + PAD);
    let k_tiles = comptime!(p.tile / 8);
    let d_tiles = comptime!(p.head_dim / 8);

    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    // Last query blocks first: under a causal mask they see the most keys, and starting
    // the heaviest cubes first leaves light ones for the tail of the grid.
    let order = block_and_head(p.heads_major, true);
    let bh = order[1];
    let b = bh / heads;
    let h = bh % heads;
    let kvh = h / s.group;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let g = lane / 4;
    let t = lane % 4;
    let lm_row = lane % 8;
    let lm_mat = lane / 8;
    let q_first = order[0] * block_q;
    let plane_row = q_first + plane * 16 + g;
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

    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((block_q * ld_k / vec) as usize),
        16usize,
    );
    let mut do_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((block_q * ld_v / vec) as usize),
        16usize,
    );
    // Two buffers of K and V: the next key tile lands while this one is used, through
    // asynchronous copies when the reads are 16 bytes wide.
    let pipelined = comptime!(p.vec == 8);
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((2 * p.tile * ld_k / vec) as usize),
        16usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((2 * p.tile * ld_v / vec) as usize),
        16usize,
    );
    let ready = Barrier::shared(units, tid == 0);
    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let do_base = b as usize * dout.stride(0) + h as usize * dout.stride(1);
    stage::<E, N>(
        q,
        q_base,
        q_first as i32,
        seq_q,
        &mut q_s,
        block_q,
        p.head_dim,
        ld_k,
        vec,
        units,
        tid,
    );
    stage::<E, N>(
        dout,
        do_base,
        q_first as i32,
        seq_q,
        &mut do_s,
        block_q,
        p.val_dim,
        ld_v,
        vec,
        units,
        tid,
    );
    // Each lane's two rows: their LSE and delta.
    let mut l_row = Array::<f32>::new(2usize);
    let mut d_row = Array::<f32>::new(2usize);
    #[unroll]
    for r in 0..2u32 {
        let row = plane_row + r * 8;
        let mut l = 0.0f32;
        let mut dl = 0.0f32;
        if row < seq_q {
            l = lse2[b as usize * lse2.stride(0)
                + h as usize * lse2.stride(1)
                + row as usize * lse2.stride(2)];
            dl = delta[b as usize * delta.stride(0)
                + h as usize * delta.stride(1)
                + row as usize * delta.stride(2)];
        }
        l_row[r as usize] = l;
        d_row[r as usize] = dl;
    }

    let mut dq_acc = acc_tiles(d_tiles);
    let mut sc = acc_tiles(k_tiles);
    let mut dp = acc_tiles(k_tiles);
    let mut cap_d = acc_tiles(comptime!(if p.has_softcap { k_tiles } else { 0 }));
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);
    let scale2 = s.scale * LOG2_E;
    let bias_base = b as usize * s.bias_stride_b as usize + h as usize * s.bias_stride_h as usize;
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);

    let span = kv_hi - kv_lo;
    let count = select(span > 0, (span as u32).div_ceil(p.tile), 0u32);
    if count > 0 {
        stage_rows::<E, N>(
            k,
            k_base,
            k.stride(2),
            kv_lo,
            seq_kv,
            &mut k_s,
            0u32,
            p.tile,
            p.head_dim,
            ld_k,
            vec,
            units,
            tid,
            pipelined,
        );
        stage_rows::<E, N>(
            v,
            v_base,
            v.stride(2),
            kv_lo,
            seq_kv,
            &mut v_s,
            0u32,
            p.tile,
            p.val_dim,
            ld_v,
            vec,
            units,
            tid,
            pipelined,
        );
        if pipelined {
            ready.commit_copy_async();
            ready.arrive();
        }
    }
    let mut n = 0u32;
    while n < count {
        let buf = n % 2;
        if pipelined {
            ready.wait_parity(buf);
        }
        // Tile n is visible, and every plane is past tile n - 1, whose buffer is refilled.
        sync_cube();
        let next = n + 1;
        if next < count {
            let at = kv_lo + (next * p.tile) as i32;
            let row0 = (1u32 - buf) * p.tile;
            stage_rows::<E, N>(
                k,
                k_base,
                k.stride(2),
                at,
                seq_kv,
                &mut k_s,
                row0,
                p.tile,
                p.head_dim,
                ld_k,
                vec,
                units,
                tid,
                pipelined,
            );
            stage_rows::<E, N>(
                v,
                v_base,
                v.stride(2),
                at,
                seq_kv,
                &mut v_s,
                row0,
                p.tile,
                p.val_dim,
                ld_v,
                vec,
                units,
                tid,
                pipelined,
            );
            if pipelined {
                ready.commit_copy_async();
                ready.arrive();
            }
        }
        let start = kv_lo + (n * p.tile) as i32;
        let row0 = buf * p.tile;

        product_nt::<E, N>(
            &q_s,
            plane * 16,
            &k_s,
            row0,
            &mut sc,
            1u32,
            k_tiles,
            p.head_dim,
            ld_k,
            vec,
            lm_row,
            lm_mat,
        );
        product_nt::<E, N>(
            &do_s,
            plane * 16,
            &v_s,
            row0,
            &mut dp,
            1u32,
            k_tiles,
            p.val_dim,
            ld_v,
            vec,
            lm_row,
            lm_mat,
        );
        // dS into dp, masking per element only on boundary tiles.
        let key_hi = start + p.tile as i32 - 1;
        let needs_mask = key_hi >= kv_hi
            || q_last < (q_first + block_q) as i32 - 1
            || (p.has_right && key_hi > q_first as i32 + offset + s.right as i32)
            || (p.has_left && start < q_last + offset - s.left as i32);
        // As in the dK/dV kernel: exponents, a mask pass on boundary tiles only, then dS.
        if comptime!(p.has_softcap || p.has_bias) {
            capped_biased(
                &mut sc,
                &mut cap_d,
                1u32,
                k_tiles,
                plane_row,
                start,
                t,
                seq_q as i32,
                seq_kv as i32,
                bias,
                bias_base,
                s,
                false,
                p.has_softcap,
                p.has_bias,
            );
        }
        #[unroll]
        for j in 0..k_tiles {
            #[unroll]
            for r in 0..2u32 {
                let tile = j as usize;
                let mut sv = sc[tile][r as usize];
                #[unroll]
                for c in 0..2u32 {
                    let l = l_row[r as usize];
                    let mut e = sv[c as usize] * scale2 - l;
                    if comptime!(p.has_softcap || p.has_bias) {
                        let x = sv[c as usize];
                        e = select(x <= MASKED_BELOW, f32::new(NO_MAX), x * LOG2_E - l);
                    }
                    sv[c as usize] = e;
                }
                sc.index_mut(tile)[r as usize] = sv;
            }
        }
        if needs_mask {
            // Accumulator rows are queries, columns keys.
            mask_pass(
                &mut sc,
                1u32,
                k_tiles,
                plane_row,
                start,
                t,
                seq_q as i32,
                kv_hi,
                offset,
                s,
                false,
                p.has_left,
                p.has_right,
            );
        }
        #[unroll]
        for j in 0..k_tiles {
            #[unroll]
            for r in 0..2u32 {
                let tile = j as usize;
                let sv = sc[tile][r as usize];
                let mut dsv = dp[tile][r as usize];
                #[unroll]
                for c in 0..2u32 {
                    let prob = exp2(sv[c as usize]);
                    let mut dpv = dsv[c as usize];
                    if comptime!(p.has_dropout) {
                        let key = start as u32 + j * 8 + t * 2 + c;
                        let u = uniform_cube(s.seed, b * heads + h, plane_row + r * 8, key);
                        dpv = select(u >= s.dropout_p, dpv * keep_scale, 0.0f32);
                    }
                    let mut ds = prob * (dpv - d_row[r as usize]);
                    if comptime!(p.has_softcap) {
                        let cd = cap_d[tile][r as usize];
                        ds *= cd[c as usize];
                    }
                    dsv[c as usize] = ds;
                }
                dp.index_mut(tile)[r as usize] = dsv;
            }
        }
        // dQ += dS·K.
        product_acc_b::<E, N>(
            &dp,
            &k_s,
            row0,
            &mut dq_acc,
            k_tiles,
            d_tiles,
            ld_k,
            vec,
            lm_row,
            lm_mat,
        );
        n += 1;
    }

    #[unroll]
    for r in 0..2u32 {
        let row = plane_row + r * 8;
        if row < seq_q {
            let base =
                b as usize * dq.stride(0) + h as usize * dq.stride(1) + row as usize * dq.stride(2);
            #[unroll]
            for i in 0..d_tiles {
                let mut pair = dq_acc[i as usize][r as usize];
                pair[0] *= s.scale;
                pair[1] *= s.scale;
                write_pair::<E, NO>(dq, base + (i * 8 + t * 2) as usize, pair, p.out_vec);
            }
        }
    }
}

/// How many equal chunks of whole 16-column steps, at most 64 columns each, a plane's `cols`
/// (a multiple of 16) of dQ take: 96 columns are two chunks of 48, not 64 and a lost 32.
pub(crate) fn dq_chunks(cols: u32) -> u32 {
    let mut n = cols.div_ceil(64).max(1);
    while n < cols && !(cols.is_multiple_of(n) && (cols / n).is_multiple_of(16)) {
        n += 1;
    }
    n
}

/// Adds the tile's `dS·K` over the cube's keys into `dq_acc` (element offset `head_base` of
/// the tile's head, rows `start..start + tile`), from `dSᵀ` in `ds_s` (rows keys, columns
/// queries, row stride `tile + PAD`) and the cube's K in `k_s`. Plane `i` takes query band
/// `i / per_m` (16 or 32 rows, [`dq_plane_rows`]) and the `(i % per_m)`-th of `per_m` column
/// ranges, in chunks of at most 64 columns to bound its registers; A comes through the
/// transposing `ldmatrix`, one 16-key step at a time.
///
/// Within a head the accumulator is stored in 8x8 blocks, `[ceil(Sq / 8), D / 8, 8, 8]`
/// (see [`dq_block_offset`]): the 32 lanes of one atomic hold 8 consecutive rows of one
/// 8-column tile, which are then 256 consecutive bytes, two cache lines, where row-major
/// rows would be eight. The load/store unit takes a global instruction one line at a time.
#[cube]
#[allow(clippy::too_many_arguments)]
fn dq_atomic<E: Float, N: Size, NA: Size>(
    ds_s: &SharedMemory<Vector<E, Pair>>,
    k_s: &SharedMemory<Vector<E, N>>,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    head_base: usize,
    start: i32,
    seq_q: u32,
    plane: u32,
    lane: u32,
    #[comptime] p: BwdMmaParams,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    let vec = p.vec;
    let frag = comptime!((8 / vec) as usize);
    let rows = comptime!(dq_plane_rows(p.tile, p.planes, p.head_dim));
    let m_sub = comptime!(rows / 16);
    let per_m = comptime!(p.planes / (p.tile / rows));
    let cols = comptime!(p.head_dim / per_m);
    let chunks = comptime!(dq_chunks(cols));
    let chunk = comptime!(cols / chunks);
    let n_tiles = comptime!(chunk / 8);
    let ld_ds = comptime!(p.tile + PAD);
    let ld_k = comptime!(p.head_dim + PAD);
    let g = lane / 4;
    let t = lane % 4;
    let lm_row = lane % 8;
    let lm_mat = lane / 8;
    let mt = plane / per_m;
    let col0 = (plane % per_m) * cols;
    // A = dS (queries × keys), one 16-key step at a time: matrices (transposed) key rows
    // 0-7 | 8-15 by query columns 0-7 | 8-15 of each 16-query sub-tile.
    let lane_a = ((lm_row + 8 * (lm_mat / 2)) * ld_ds + mt * rows + 8 * (lm_mat % 2)) / 2;
    let lane_b = ((lm_row + 8 * (lm_mat % 2)) * ld_k + col0 + 8 * (lm_mat / 2)) / vec;
    let mut acc = acc_tiles(comptime!(m_sub * n_tiles));
    #[unroll]
    for ch in 0..chunks {
        zero_tiles(&mut acc, comptime!(m_sub * n_tiles));
        #[unroll]
        for kk in 0..p.planes {
            let mut a: Frags<E> = Sequence::new();
            #[unroll]
            for ms in 0..m_sub {
                let at = (lane_a + comptime!((kk * 16 * ld_ds + ms * 16) / 2)) as usize;
                a.push(def.load_matrix::<Vector<E, Pair>, Pair>(
                    &ds_s.slice(at, at + 4),
                    MatrixIdent::A,
                    4usize,
                    true,
                ));
            }
            #[unroll]
            for np in 0..comptime!(n_tiles / 2) {
                // Matrices (transposed): key rows 16·kk + 0-7 | 8-15, columns + 0-7 | 8-15.
                let at =
                    (lane_b + comptime!((kk * 16 * ld_k + ch * chunk + np * 16) / vec)) as usize;
                let bm = def.load_matrix::<Vector<E, N>, Pair>(
                    &k_s.slice(at, at + frag),
                    MatrixIdent::B,
                    4usize,
                    true,
                );
                mma_blocks::<E>(&a, &bm, &mut acc, m_sub, n_tiles, np);
            }
        }
        // The lane's first pair of each row, in pairs; the 8-column tiles add constants
        // (one 8x8 block, 64 floats, each).
        #[unroll]
        for ms in 0..m_sub {
            #[unroll]
            for r in 0..2u32 {
                let row = start + (mt * rows + g + comptime!(ms * 16 + r * 8)) as i32;
                if row < seq_q as i32 {
                    let lane_at = (head_base
                        + dq_block_offset(
                            row as u32,
                            col0 + t * 2 + comptime!(ch * chunk),
                            comptime!(p.head_dim),
                        ) as usize)
                        / 2;
                    #[unroll]
                    for j in 0..n_tiles {
                        dq_acc[lane_at + comptime!(j * 32) as usize].fetch_add(Vector::cast_from(
                            acc[(ms * n_tiles + j) as usize][r as usize],
                        ));
                    }
                }
            }
        }
    }
}

/// Query rows per plane in [`dq_atomic`]'s product: 32 where the cube's planes split the tile
/// into 32-row bands of at most 32 columns each in whole 16-column steps (8 planes, 64-query
/// tiles), as FlashAttention-2's warps do: each `ldmatrix` of K then serves 32 rows, and a
/// plane reads 16 KB of shared memory per tile instead of 20. 16 otherwise.
pub(crate) fn dq_plane_rows(tile: u32, planes: u32, head_dim: u32) -> u32 {
    let bands = tile / 32;
    if tile.is_multiple_of(32) && bands > 0 && planes.is_multiple_of(bands) {
        let cols = head_dim / (planes / bands);
        if cols <= 32 && cols.is_multiple_of(16) && head_dim.is_multiple_of(planes / bands) {
            return 32;
        }
    }
    16
}

/// The offset of dQ element (`row`, `col`) of one head in the fused backward's accumulator,
/// stored in 8x8 blocks: `[ceil(Sq / 8), head_dim / 8, 8, 8]` (see [`dq_atomic`]).
#[cube]
pub(crate) fn dq_block_offset(row: u32, col: u32, #[comptime] head_dim: u32) -> u32 {
    (row / 8) * comptime!(head_dim * 8) + (col / 8) * 64 + (row % 8) * 8 + col % 8
}

/// Stages query tile `start..start + tile` of query head `h` into buffer `buf`: Q, dO (through
/// [`stage_rows`]) and the rows' LSE and delta (plain loads; zero past the end).
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_query_tile<E: Float, N: Size>(
    q: &Tensor<Vector<E, N>>,
    dout: &Tensor<Vector<E, N>>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    strides: &QueryStrides,
    q_s: &mut SharedMemory<Vector<E, N>>,
    do_s: &mut SharedMemory<Vector<E, N>>,
    lse_s: &mut SharedMemory<f32>,
    delta_s: &mut SharedMemory<f32>,
    b: u32,
    h: u32,
    start: i32,
    seq_q: u32,
    buf: u32,
    #[comptime] p: BwdMmaParams,
    #[comptime] units: u32,
    tid: u32,
) {
    let pipelined = comptime!(p.vec == 8);
    let row0 = buf * p.tile;
    let q_base = b as usize * strides.q_batch as usize + h as usize * strides.q_head as usize;
    let do_base = b as usize * strides.do_batch as usize + h as usize * strides.do_head as usize;
    stage_rows::<E, N>(
        q,
        q_base,
        strides.q_row as usize,
        start,
        seq_q,
        q_s,
        row0,
        p.tile,
        p.head_dim,
        comptime!(p.head_dim + PAD),
        p.vec,
        units,
        tid,
        pipelined,
    );
    stage_rows::<E, N>(
        dout,
        do_base,
        strides.do_row as usize,
        start,
        seq_q,
        do_s,
        row0,
        p.tile,
        p.val_dim,
        comptime!(p.val_dim + PAD),
        p.vec,
        units,
        tid,
        pipelined,
    );
    if tid < p.tile {
        let row = start + tid as i32;
        let inside = row < seq_q as i32;
        // A row past the end reads row 0's address; it is zeroed (length 0) or not read.
        let at_row = select(inside, row, 0i32) as usize;
        let l_at = b as usize * strides.stat_batch as usize
            + h as usize * strides.stat_head as usize
            + at_row * strides.stat_row as usize;
        let d_at = l_at;
        let to = (row0 + tid) as usize;
        if comptime!(pipelined) {
            // Four-byte asynchronous copies: no warp waits on these loads before the next
            // tile's work, as a load-then-store would.
            let len = select(inside, 1usize, 0usize);
            copy_async_checked(
                &lse.slice(l_at, l_at + len),
                &mut lse_s.slice_mut(to, to + 1),
                1u32,
            );
            copy_async_checked(
                &delta.slice(d_at, d_at + len),
                &mut delta_s.slice_mut(to, to + 1),
                1u32,
            );
        } else {
            let mut l = 0.0f32;
            let mut dl = 0.0f32;
            if inside {
                l = lse[l_at];
                dl = delta[d_at];
            }
            lse_s[to] = l;
            delta_s[to] = dl;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{dq_chunks, dq_plane_rows};

    #[test]
    fn dq_planes_take_32_rows_where_the_columns_split_evenly() {
        // 64-query tiles on 8 planes: two 32-row bands, 4 planes of 32 (D 128) or 16 (D 64)
        // columns each.
        assert_eq!(dq_plane_rows(64, 8, 128), 32);
        assert_eq!(dq_plane_rows(64, 8, 64), 32);
        assert_eq!(dq_plane_rows(32, 4, 128), 32);
        // 64 columns per plane, or 24: 16-row tiles.
        assert_eq!(dq_plane_rows(64, 4, 128), 16);
        assert_eq!(dq_plane_rows(64, 8, 96), 16);
        assert_eq!(dq_plane_rows(16, 4, 128), 16);
    }

    #[test]
    fn dq_chunks_cover_every_column_in_16_column_steps() {
        for (cols, want) in [
            (16, 1),
            (48, 1),
            (64, 1),
            (96, 2),
            (128, 2),
            (80, 5),
            (256, 4),
        ] {
            let n = dq_chunks(cols);
            assert_eq!(n, want, "{cols} columns");
            assert_eq!(cols % n, 0);
            assert!((cols / n).is_multiple_of(16) && cols / n <= 64);
        }
    }
}
