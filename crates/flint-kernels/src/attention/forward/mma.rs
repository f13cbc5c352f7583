//! The accelerated forward: tensor cores through register-level MMA (`m16n8k16`, f16 or
//! bf16 in, f32 accumulate), FlashAttention-2 style. CUDA (sm80+) only.
//!
//! A cube has `planes` planes of 32 lanes and each plane owns `16 · m_tiles` query rows. The
//! scores S and the output accumulator O stay in registers for the whole key loop, and so
//! does Q when a plane owns one 16-row tile; with two, every K and V fragment read from
//! shared memory feeds twice the MMAs, which halves the shared-memory traffic per FLOP. The accumulator
//! layout of two adjacent `n = 8` score tiles is exactly the A-operand layout of one `k = 16`
//! step of the next product, so P goes from the softmax into `P·V` without touching shared
//! memory. K and V tiles are staged in shared memory, rows padded by 8 elements so that the
//! `ldmatrix` reads are free of bank conflicts; V is read with the transposing `ldmatrix`.
//!
//! Each lane holds two rows of a plane's 16 (`g = lane / 4` and `g + 8`) and, per 8-column
//! tile, columns `2·(lane % 4)` and the next one. Row reductions therefore finish with two
//! shuffles inside each group of four lanes.

use cubecl::cmma::MmaDefinition;
use cubecl::ir::{FastMath, MatrixIdent};
use cubecl::prelude::barrier::{Barrier, copy_async_checked};
use cubecl::prelude::*;

use super::portable::PortableScalars;
use super::{LOG2_E, MASKED_BELOW, NO_MAX};
use crate::attention::dropout::uniform_cube;
use crate::attention::mma_tiles::{Frags, a_from_acc, acc_tiles, mma_blocks, zero_tiles};

/// Elements each shared-memory row is padded by (16 bytes: rows start 4 banks apart).
pub(crate) const PAD: u32 = 8;

/// How far (in exponent units, after the scale) a row's scores may rise above its reference
/// maximum before the maximum moves and O and l are rescaled: ln 256, so that probabilities
/// stay at most 256, well inside f32, bf16 and f16.
pub(crate) const RESCALE_SLACK: f32 = 5.545_177;

pub(crate) type Pair = Const<2>;

/// Compile-time shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmaParams {
    /// Planes per cube.
    pub planes: u32,
    /// 16-row tiles per plane; the cube owns `16 · m_tiles · planes` query rows.
    pub m_tiles: u32,
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
    /// Elements per q/k/v read (the launch's `N`).
    pub vec: u32,
    /// Elements per output write (the launch's `NO`, 1 or 2).
    pub out_vec: u32,
    /// The grid is `(B·H, blocks)` rather than `(blocks, B·H)` (see [`block_and_head`]).
    pub heads_major: bool,
    /// Scores stay unscaled until the exponent (`2^(x·scale·log2 e − m·scale·log2 e)`, one
    /// fused multiply-add per score): only without softcap and bias, and with a positive scale, so
    /// that the maximum of the raw scores is the maximum of the scaled ones.
    pub raw_max: bool,
    /// GQA packing (short queries): the cube serves one KV head and every query head of
    /// its group, cube row `r` being query `r % Sq` of the group's head `r / Sq`, so that
    /// each K and V tile is read once for the whole group. The grid's heads are `B·Hkv`
    /// and one block covers `group · Sq <= block_q` rows; needs 16-byte reads.
    pub packed: bool,
    /// Split-K: cube `z` sees keys `[z·split_keys, (z + 1)·split_keys)` only and writes its
    /// normalised output and LSE at batch `z·B + b` of `out` and `lse`, for
    /// `attention_fwd_combine` to merge.
    pub split: bool,
}

/// This cube's (block, batch·head) pair, blocks counted from the end when `reversed_blocks`.
/// With `heads_major` the grid is `(B·H, blocks)`: cubes are launched in x order first, so
/// the first block of every head is launched before the second of any. Under a causal mask
/// that puts every heavy cube ahead of every light one, where the default `(blocks, B·H)`
/// order alternates heavy and light once per head.
#[cube]
pub(crate) fn block_and_head(
    #[comptime] heads_major: bool,
    #[comptime] reversed_blocks: bool,
) -> Array<u32> {
    let mut out = Array::<u32>::new(2usize);
    let mut pos = CUBE_POS_X;
    let mut count = CUBE_COUNT_X;
    out[1] = CUBE_POS_Y;
    if comptime!(heads_major) {
        pos = CUBE_POS_Y;
        count = CUBE_COUNT_Y;
        out[1] = CUBE_POS_X;
    }
    out[0] = pos;
    if comptime!(reversed_blocks) {
        out[0] = reversed(pos, count);
    }
    out
}

/// The query row and head of a lane's row in tile `mi`, half `r`: `plane_first + 16·mi +
/// 8·r` and the cube's head `h`, or with `packed` the row's own (`row_s`, `row_h`).
#[cube]
#[allow(clippy::too_many_arguments)]
fn row_head(
    plane_first: u32,
    h: u32,
    row_s: &Array<u32>,
    row_h: &Array<u32>,
    #[comptime] mi: u32,
    #[comptime] r: u32,
    #[comptime] packed: bool,
) -> Array<u32> {
    let mut out = Array::<u32>::new(2usize);
    if comptime!(packed) {
        out[0] = row_s[(mi * 2 + r) as usize];
        out[1] = row_h[(mi * 2 + r) as usize];
    } else {
        out[0] = plane_first + mi * 16 + r * 8;
        out[1] = h;
    }
    out
}

/// Cube `pos` of `count` counted from the end (a function, so that the host-side copy of
/// the kernel does not constant-fold the built-ins' placeholder values into an overflow).
#[cube]
pub(crate) fn reversed(pos: u32, count: u32) -> u32 {
    count - 1 - pos
}

/// The accelerated forward. Grid: `(ceil(Sq / (16·m_tiles·planes)), B·H)`, or the
/// transpose with `heads_major`; cube `(32, planes)`.
/// q, k and v are read `N` elements at a time (their last dim contiguous and every other
/// stride a multiple of `N`); out is written in pairs. Exponents are base 2 through a fast
/// intrinsic ([`exp2`]).
#[cube(launch_unchecked, fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf)]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd_mma<E: Float, O: Float, N: Size, NO: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    bias: &Tensor<f32>,
    out: &mut Tensor<Vector<O, NO>>,
    lse: &mut Tensor<f32>,
    s: &PortableScalars,
    #[comptime] p: MmaParams,
    #[define(E)] _dtype: StorageType,
    #[define(O)] _out_dtype: StorageType,
) {
    let vec = p.vec;
    let mt = p.m_tiles;
    let units = comptime!(p.planes * 32);
    let plane_rows = comptime!(16 * p.m_tiles);
    let block_q = comptime!(p.planes * 16 * p.m_tiles);
    let ld_k = comptime!(p.head_dim + PAD);
    let ld_v = comptime!(p.val_dim + PAD);
    // With one 16-row tile per plane Q lives in registers; with more it is re-read from
    // shared memory at each key tile, which keeps the accumulators within the register file.
    let q_regs = comptime!(p.m_tiles == 1);

    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    // Last query blocks first: under a causal mask they see the most keys, and starting
    // the heaviest cubes first leaves light ones for the tail of the grid.
    let order = block_and_head(p.heads_major, true);
    let grid_bh = order[1];
    let kv_heads = heads / s.group;
    let mut b = grid_bh / heads;
    // With GQA the grid walks KV heads fastest (grid head i is query head
    // (i % Hkv)·group + i / Hkv), so that the cubes running at once read different K and V, as
    // with MHA, rather than a whole group's cubes contending for the same lines; the
    // group's other heads follow while its K and V are still in L2. The identity without GQA.
    let hi = grid_bh % heads;
    let mut h = (hi % kv_heads) * s.group + hi / kv_heads;
    let mut kvh = h / s.group;
    if comptime!(p.packed) {
        // The grid counts (batch, KV head); `h` is the group's first query head.
        b = grid_bh / kv_heads;
        kvh = grid_bh % kv_heads;
        h = kvh * s.group;
    }
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let q_first = order[0] * block_q;
    let g = lane / 4;
    let t = lane % 4;
    // Row of tile mi, half r (0: row g, 1: row g + 8): plane_first + 16·mi + 8·r.
    let plane_first = q_first + plane * plane_rows + g;

    // Packed rows: each lane's query position and head per row (2·mi + r); rows past the
    // group get position Sq, which every `row < seq_q` test then rejects.
    let mut row_s = Array::<u32>::new(comptime!((mt * 2) as usize));
    let mut row_h = Array::<u32>::new(comptime!((mt * 2) as usize));
    if comptime!(p.packed) {
        #[unroll]
        for i in 0..comptime!(mt * 2) {
            let rr = plane * plane_rows + comptime!((i / 2) * 16 + (i % 2) * 8) + g;
            let gq = rr / seq_q;
            row_s[i as usize] = select(gq < s.group, rr % seq_q, seq_q);
            row_h[i as usize] = h + min(gq, s.group - 1);
        }
    }

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
    // Keys at or past key_end are masked: the end of the sequence, or of this split.
    let mut key_end = seq_kv as i32;
    let mut out_b = b;
    if p.split {
        let split_lo = (CUBE_POS_Z * s.split_keys) as i32;
        key_end = min(key_end, split_lo + s.split_keys as i32);
        kv_lo = max(kv_lo, split_lo);
        kv_hi = min(kv_hi, key_end);
        out_b = CUBE_POS_Z * q.shape(0) as u32 + b;
    }

    // Shared memory, 16-byte aligned (ldmatrix reads 16-byte rows): Q, K and V tiles.
    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((block_q * ld_k / vec) as usize),
        16usize,
    );
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.block_kv * ld_k / vec) as usize),
        16usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.block_kv * ld_v / vec) as usize),
        16usize,
    );

    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);

    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    // ldmatrix addressing: lane l supplies row l % 8 of matrix l / 8.
    let lm_row = lane % 8;
    let lm_mat = lane / 8;
    // Each lane's part of every ldmatrix address, in vectors; the fragments' own offsets are
    // compile-time constants added to it, which the compiler folds into the instructions.
    // Q (A operand): rows 0-7 | 8-15, columns 0-7 | 8-15 of the 16x16 block.
    let lane_q = ((plane * plane_rows + lm_row + 8 * (lm_mat % 2)) * ld_k + 8 * (lm_mat / 2)) / vec;
    // K (B operand): keys 0-7 | 8-15, dims 0-7 | 8-15.
    let lane_k = ((lm_row + 8 * (lm_mat / 2)) * ld_k + 8 * (lm_mat % 2)) / vec;
    // V (B operand, transposed): keys 0-7 | 8-15, dims 0-7 | 8-15.
    let lane_v = ((lm_row + 8 * (lm_mat % 2)) * ld_v + 8 * (lm_mat / 2)) / vec;
    let frag = comptime!((8 / p.vec) as usize);

    // With 16-byte reads, K and V arrive through asynchronous copies that need no
    // registers: V of a tile lands while S = Q·Kᵀ runs, the next K while the softmax and
    // O += P·V run, each signalled by its own barrier (phase `parity`). Otherwise both are
    // staged through registers at the top of each tile; issuing those loads earlier measured
    // 40% slower (see docs/PERF.md): the extra live registers cost more than the latency
    // they hid.
    // Q travels with the first K tile, so that the cube waits for memory once, not twice.
    let pipelined = comptime!(p.vec == 8);
    let k_ready = Barrier::shared(units, tid == 0);
    let v_ready = Barrier::shared(units, tid == 0);
    let mut parity = 0u32;
    if pipelined {
        if kv_lo < kv_hi {
            if comptime!(p.packed) {
                stage_packed_async::<E, N>(
                    q,
                    b as usize * q.stride(0),
                    h,
                    seq_q,
                    seq_q * s.group,
                    &mut q_s,
                    block_q,
                    p.head_dim,
                    ld_k,
                    units,
                    tid,
                );
            } else {
                stage_async::<E, N>(
                    q,
                    q_base,
                    q_first as i32,
                    seq_q,
                    &mut q_s,
                    0u32,
                    block_q,
                    p.head_dim,
                    ld_k,
                    units,
                    tid,
                );
            }
            stage_async::<E, N>(
                k, k_base, kv_lo, seq_kv, &mut k_s, 0u32, p.block_kv, p.head_dim, ld_k, units, tid,
            );
            k_ready.commit_copy_async();
            k_ready.arrive();
            if comptime!(q_regs) {
                k_ready.wait_parity(0u32);
            }
        }
    } else {
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
        sync_cube();
    }
    let q_steps = comptime!(p.head_dim / 16);
    // Q fragments kept in registers (one tile per plane): k-step kk's one fragment.
    let mut q_frag: Sequence<Frags<E>> = Sequence::new();
    if comptime!(q_regs) {
        #[unroll]
        for kk in 0..q_steps {
            let at = (lane_q + comptime!(kk * 16 / p.vec)) as usize;
            let mut step: Frags<E> = Sequence::new();
            step.push(def.load_matrix::<Vector<E, N>, Pair>(
                &q_s.slice(at, at + frag),
                MatrixIdent::A,
                4usize,
                false,
            ));
            q_frag.push(step);
        }
    }

    let s_tiles = comptime!(p.block_kv / 8);
    let o_tiles = comptime!(p.val_dim / 8);
    // Accumulators: tile j of row tile mi is tile mi·tiles + j.
    let mut o_acc = acc_tiles(comptime!(mt * o_tiles));
    let mut s_acc = acc_tiles(comptime!(mt * s_tiles));
    // Running max and sum per row, indexed 2·mi + r.
    let mut m_run = Array::<f32>::new(comptime!((mt * 2) as usize));
    let mut l_run = Array::<f32>::new(comptime!((mt * 2) as usize));
    #[unroll]
    for i in 0..comptime!(mt * 2) {
        m_run[i as usize] = s.neg_inf;
        l_run[i as usize] = 0.0f32;
    }
    let keep_scale = 1.0f32 / (1.0f32 - s.dropout_p);
    // Scores and maxima to base-2 exponent units: P = 2^(x·to2 − m·to2) = exp(x − m) for
    // scaled scores, exp(x·scale − m·scale) for raw ones.
    let mut to2 = f32::new(LOG2_E);
    if comptime!(p.raw_max) {
        to2 = s.scale * LOG2_E;
    }
    let cube_row_lo = q_first as i32 + offset;
    let cube_row_hi = q_last + offset;

    let mut start = kv_lo;
    while start < kv_hi {
        if pipelined {
            k_ready.wait_parity(parity);
            // Every plane is past the previous tile's P·V before V is overwritten.
            sync_cube();
            stage_async::<E, N>(
                v, v_base, start, seq_kv, &mut v_s, 0u32, p.block_kv, p.val_dim, ld_v, units, tid,
            );
            v_ready.commit_copy_async();
            v_ready.arrive();
        } else {
            stage::<E, N>(
                k, k_base, start, seq_kv, &mut k_s, p.block_kv, p.head_dim, ld_k, vec, units, tid,
            );
            stage::<E, N>(
                v, v_base, start, seq_kv, &mut v_s, p.block_kv, p.val_dim, ld_v, vec, units, tid,
            );
            sync_cube();
        }

        // S = Q·Kᵀ: each K fragment pair feeds every row tile of the plane.
        zero_tiles(&mut s_acc, comptime!(mt * s_tiles));
        #[unroll]
        for kk in 0..q_steps {
            let mut qa: Frags<E> = Sequence::new();
            #[unroll]
            for mi in 0..mt {
                if comptime!(!q_regs) {
                    let at = (lane_q + comptime!((mi * 16 * ld_k + kk * 16) / p.vec)) as usize;
                    qa.push(def.load_matrix::<Vector<E, N>, Pair>(
                        &q_s.slice(at, at + frag),
                        MatrixIdent::A,
                        4usize,
                        false,
                    ));
                }
            }
            #[unroll]
            for jp in 0..comptime!(s_tiles / 2) {
                // Matrices: keys 16·jp + 0-7 | 8-15, dims 16·kk + 0-7 | 8-15.
                let at = (lane_k + comptime!((jp * 16 * ld_k + kk * 16) / p.vec)) as usize;
                let b = def.load_matrix::<Vector<E, N>, Pair>(
                    &k_s.slice(at, at + frag),
                    MatrixIdent::B,
                    4usize,
                    false,
                );
                let a = if comptime!(q_regs) {
                    &q_frag[kk as usize]
                } else {
                    &qa
                };
                mma_blocks::<E>(a, &b, &mut s_acc, mt, s_tiles, jp);
            }
        }

        if pipelined {
            // FlashAttention-2's order: V is waited for and the next K issued before the
            // softmax, not after it, so that the next K has the softmax and P·V to land in
            // (+11-35% for 64x64 tiles, whose P·V is short; docs/PERF.md). Every plane is
            // past S = Q·Kᵀ before K is overwritten.
            v_ready.wait_parity(parity);
            sync_cube();
            let next = start + p.block_kv as i32;
            if next < kv_hi {
                stage_async::<E, N>(
                    k, k_base, next, seq_kv, &mut k_s, 0u32, p.block_kv, p.head_dim, ld_k, units,
                    tid,
                );
                k_ready.commit_copy_async();
                k_ready.arrive();
            }
        }

        // Scale, cap and bias the scores in place (unless they stay raw), then mask: masked
        // scores become -inf, which the exponent turns into 0 with no test of its own.
        if comptime!(!p.raw_max) {
            #[unroll]
            for mi in 0..mt {
                #[unroll]
                for j in 0..s_tiles {
                    #[unroll]
                    for r in 0..2u32 {
                        let rh = row_head(plane_first, h, &row_s, &row_h, mi, r, p.packed);
                        let (row, hh) = (rh[0], rh[1]);
                        let tile = (mi * s_tiles + j) as usize;
                        let mut pair = s_acc[tile][r as usize];
                        #[unroll]
                        for c in 0..2u32 {
                            let key = start + (j * 8 + t * 2 + c) as i32;
                            let mut x = pair[c as usize] * s.scale;
                            if p.has_softcap {
                                x = s.softcap * (x / s.softcap).tanh();
                            }
                            if p.has_bias {
                                let inside = row < seq_q && key < seq_kv as i32;
                                let mut bv = f32::new(NO_MAX);
                                if inside {
                                    bv = bias[b as usize * s.bias_stride_b as usize
                                        + hh as usize * s.bias_stride_h as usize
                                        + row as usize * bias.stride(2)
                                        + key as usize * bias.stride(3)];
                                }
                                x += bv;
                                x = select(x <= MASKED_BELOW, s.neg_inf, x);
                            }
                            pair[c as usize] = x;
                        }
                        s_acc.index_mut(tile)[r as usize] = pair;
                    }
                }
            }
        }
        let needs_mask = start + p.block_kv as i32 > key_end
            || (p.has_right && start + p.block_kv as i32 - 1 > cube_row_lo + s.right as i32)
            || (p.has_left && start < cube_row_hi - s.left as i32);
        if needs_mask {
            #[unroll]
            for mi in 0..mt {
                #[unroll]
                for j in 0..s_tiles {
                    #[unroll]
                    for r in 0..2u32 {
                        let row = row_head(plane_first, h, &row_s, &row_h, mi, r, p.packed)[0];
                        let tile = (mi * s_tiles + j) as usize;
                        let mut pair = s_acc[tile][r as usize];
                        #[unroll]
                        for c in 0..2u32 {
                            let key = start + (j * 8 + t * 2 + c) as i32;
                            let mut visible = key < key_end;
                            if p.has_left {
                                visible = visible && key >= row as i32 + offset - s.left as i32;
                            }
                            if p.has_right {
                                visible = visible && key <= row as i32 + offset + s.right as i32;
                            }
                            pair[c as usize] = select(visible, pair[c as usize], s.neg_inf);
                        }
                        s_acc.index_mut(tile)[r as usize] = pair;
                    }
                }
            }
        }

        // Online softmax, per row: the tile's maximum over the group of four lanes, then
        // P = exp(S - m) in place (l sums P before dropout). With raw scores the maxima are
        // raw too and the scale joins the exponent's subtraction in one multiply-add. A row
        // with no visible score yet (maximum -inf) subtracts 0, so that its masked scores
        // give exp(-inf) = 0 rather than NaN.
        //
        // The reference maximum m moves (and O and l are rescaled) only when some row of the
        // plane sees a score above its m by more than RESCALE_SLACK in the exponent, so that
        // after the first tiles most tiles skip the rescale of O altogether; P stays below
        // e^RESCALE_SLACK, and O / l does not depend on which m was used.
        let mut tile_max = Array::<f32>::new(comptime!((mt * 2) as usize));
        let mut grow = false;
        #[unroll]
        for mi in 0..mt {
            #[unroll]
            for r in 0..2u32 {
                let mut mx = s.neg_inf;
                #[unroll]
                for j in 0..s_tiles {
                    let pair = s_acc[(mi * s_tiles + j) as usize][r as usize];
                    mx = max(mx, max(pair[0], pair[1]));
                }
                mx = max(mx, plane_shuffle_xor(mx, 1u32));
                mx = max(mx, plane_shuffle_xor(mx, 2u32));
                tile_max[(mi * 2 + r) as usize] = mx;
                // -inf - -inf is NaN: a row with nothing visible yet does not ask to grow.
                let mut excess = mx - m_run[(mi * 2 + r) as usize];
                if comptime!(p.raw_max) {
                    excess *= s.scale;
                }
                grow = grow || excess > RESCALE_SLACK;
            }
        }
        if plane_any(grow) {
            #[unroll]
            for mi in 0..mt {
                #[unroll]
                for r in 0..2u32 {
                    let m_old = m_run[(mi * 2 + r) as usize];
                    let m_new = max(m_old, tile_max[(mi * 2 + r) as usize]);
                    m_run[(mi * 2 + r) as usize] = m_new;
                    let m_sub = select(m_new == s.neg_inf, 0.0f32, m_new);
                    let alpha = exp2(m_old * to2 - m_sub * to2);
                    #[unroll]
                    for i in 0..o_tiles {
                        let tile = (mi * o_tiles + i) as usize;
                        let mut o = o_acc[tile][r as usize];
                        o[0] *= alpha;
                        o[1] *= alpha;
                        o_acc.index_mut(tile)[r as usize] = o;
                    }
                    l_run[(mi * 2 + r) as usize] *= alpha;
                }
            }
        }
        #[unroll]
        for mi in 0..mt {
            #[unroll]
            for r in 0..2u32 {
                let rh = row_head(plane_first, h, &row_s, &row_h, mi, r, p.packed);
                let row = rh[0];
                // The logical (batch, head) of the row, which dropout's stream is keyed on.
                let bh_row = b * heads + rh[1];
                let m_ref = m_run[(mi * 2 + r) as usize];
                let m_sub = select(m_ref == s.neg_inf, 0.0f32, m_ref) * to2;
                let mut sum = 0.0f32;
                #[unroll]
                for j in 0..s_tiles {
                    let tile = (mi * s_tiles + j) as usize;
                    let mut pair = s_acc[tile][r as usize];
                    #[unroll]
                    for c in 0..2u32 {
                        // A NaN score (NaN in q, k or bias) gives a NaN probability, which
                        // then reaches l, O and the LSE as in an unfused attention.
                        let mut prob = exp2(pair[c as usize] * to2 - m_sub);
                        sum += prob;
                        if p.has_dropout {
                            let key = (start + (j * 8 + t * 2 + c) as i32) as u32;
                            let u = uniform_cube(s.seed, bh_row, row, key);
                            prob = select(u >= s.dropout_p, prob * keep_scale, 0.0f32);
                        }
                        pair[c as usize] = prob;
                    }
                    s_acc.index_mut(tile)[r as usize] = pair;
                }
                l_run[(mi * 2 + r) as usize] += sum;
            }
        }

        // O += P·V: score tiles 2·kk and 2·kk + 1 of a row tile form the A operand of
        // k-step kk; each V fragment pair feeds every row tile.
        #[unroll]
        for kk in 0..comptime!(p.block_kv / 16) {
            let mut p_frag: Frags<E> = Sequence::new();
            #[unroll]
            for mi in 0..mt {
                p_frag.push(a_from_acc::<E>(&s_acc, comptime!(mi * s_tiles + kk * 2)));
            }
            #[unroll]
            for np in 0..comptime!(o_tiles / 2) {
                // Matrices (transposed): keys 16·kk + 0-7 | 8-15, dims 16·np + 0-7 | 8-15.
                let at = (lane_v + comptime!((kk * 16 * ld_v + np * 16) / p.vec)) as usize;
                let b = def.load_matrix::<Vector<E, N>, Pair>(
                    &v_s.slice(at, at + frag),
                    MatrixIdent::B,
                    4usize,
                    true,
                );
                mma_blocks::<E>(&p_frag, &b, &mut o_acc, mt, o_tiles, np);
            }
        }
        if !pipelined {
            sync_cube();
        }
        parity ^= 1;
        start += p.block_kv as i32;
    }

    // Row sums over the group of four lanes, then O / l and the log-sum-exp.
    #[unroll]
    for mi in 0..mt {
        #[unroll]
        for r in 0..2u32 {
            let rh = row_head(plane_first, h, &row_s, &row_h, mi, r, p.packed);
            let (row, hh) = (rh[0], rh[1]);
            let mut l = l_run[(mi * 2 + r) as usize];
            l += plane_shuffle_xor(l, 1u32);
            l += plane_shuffle_xor(l, 2u32);
            let mut m = m_run[(mi * 2 + r) as usize];
            if comptime!(p.raw_max) {
                m *= s.scale;
            }
            if row < seq_q {
                // A row with every key masked has l = 0: output 0 and LSE -inf. A NaN l
                // (a NaN score) fails the test and stays NaN through both.
                let inv = select(l == 0.0f32, 0.0f32, 1.0f32 / l);
                let o_base = out_b as usize * out.stride(0)
                    + hh as usize * out.stride(1)
                    + row as usize * out.stride(2);
                #[unroll]
                for i in 0..o_tiles {
                    let mut pair = o_acc[(mi * o_tiles + i) as usize][r as usize];
                    pair[0] *= inv;
                    pair[1] *= inv;
                    let col = (i * 8 + t * 2) as usize;
                    write_pair::<O, NO>(out, o_base + col, pair, p.out_vec);
                }
                if t == 0 {
                    let at = out_b as usize * lse.stride(0)
                        + hh as usize * lse.stride(1)
                        + row as usize * lse.stride(2);
                    lse[at] = select(l == 0.0f32, s.neg_inf, m + l.ln());
                }
            }
        }
    }
}

/// `2^x`. CubeCL 0.10 has no exp2, but under the kernels' fast-math flags `powf` becomes a
/// fast power, which the workspace's patched `cubecl-cpp` emits for the constant base 2 as
/// PTX's flush-to-zero `ex2` (one `MUFU.EX2`; `vendor/README.md`). Unpatched, it is CUDA's
/// `__powf`, which NVRTC folds into a non-ftz `ex2.approx` with a denormal fix-up: still a
/// multiply fewer per score than `__expf`. -inf gives 0 and NaN stays NaN.
#[cube]
pub(crate) fn exp2(x: f32) -> f32 {
    f32::powf(2.0f32, x)
}

/// Writes two adjacent output elements starting at element `at`.
#[cube]
pub(crate) fn write_pair<E: Float, NO: Size>(
    out: &mut Tensor<Vector<E, NO>>,
    at: usize,
    pair: Vector<f32, Pair>,
    #[comptime] width: u32,
) {
    if comptime!(width == 2) {
        out[at / 2] = Vector::cast_from(pair);
    } else {
        out[at] = Vector::cast_from(pair[0]);
        out[at + 1] = Vector::cast_from(pair[1]);
    }
}

/// Copies rows `start..start + rows` of one (batch, head) of `src` (from element `base`, rows
/// `width` wide) into `tile` with row stride `ld`, `N` elements at a time; rows at or past
/// `seq` are zero. `vec` is `N`.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    start: i32,
    seq: u32,
    tile: &mut SharedMemory<Vector<E, N>>,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] ld: u32,
    #[comptime] vec: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let per_row = comptime!(width / vec);
    let total = comptime!(rows * width / vec);
    let mut idx = tid;
    while idx < total {
        let r = idx / per_row;
        let c = idx % per_row;
        let row = start + r as i32;
        let mut x = Vector::<E, N>::new(E::from_int(0));
        if row < seq as i32 {
            x = src[(base + row as usize * src.stride(2)) / vec as usize + c as usize];
        }
        tile[(r * (ld / vec) + c) as usize] = x;
        idx += units;
    }
}

/// [`stage`] through asynchronous 16-byte copies (`N` = 8 elements of 2 bytes) into tile
/// rows from `row0`: nothing passes through registers and nothing has landed on return; the
/// caller commits the copies to a barrier and waits on it. Rows at or past `seq` are
/// zero-filled by the copy.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_async<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    start: i32,
    seq: u32,
    tile: &mut SharedMemory<Vector<E, N>>,
    row0: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] ld: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    stage_async_by::<E, N>(
        src,
        base,
        src.stride(2),
        start,
        seq,
        tile,
        row0,
        rows,
        width,
        ld,
        units,
        tid,
    );
}

/// [`stage_async`] with the source's row stride (in elements) given by the caller.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_async_by<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    row_stride: usize,
    start: i32,
    seq: u32,
    tile: &mut SharedMemory<Vector<E, N>>,
    row0: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] ld: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let per_row = comptime!(width / 8);
    let total = comptime!(rows * width / 8);
    if comptime!(total.is_multiple_of(units) && units.is_multiple_of(per_row)) {
        // Each lane copies one column of rows r0, r0 + step, ...: unrolled, with the row
        // strides as constants and the tensor's row stride read once.
        let step = comptime!(units / per_row);
        let r0 = tid / per_row;
        let c = tid % per_row;
        let stride = row_stride / 8;
        let from = base / 8 + c as usize;
        let to0 = (row0 + r0) * comptime!(ld / 8) + c;
        #[unroll]
        for i in 0..comptime!(total / units) {
            let row = start + (r0 + i * step) as i32;
            let inside = row < seq as i32;
            // A row past the end reads nothing (length 0) from a valid address: row 0.
            let at = from + select(inside, row, 0i32) as usize * stride;
            let to = (to0 + comptime!(i * step * (ld / 8))) as usize;
            copy_chunk::<E, N>(src, at, inside, tile, to);
        }
    } else {
        let mut idx = tid;
        while idx < total {
            let r = idx / per_row;
            let c = idx % per_row;
            let row = start + r as i32;
            let inside = row < seq as i32;
            // A row past the end reads nothing (length 0) from a valid address: row 0.
            let at = (base + select(inside, row, 0i32) as usize * row_stride) / 8 + c as usize;
            let to = ((row0 + r) * (ld / 8) + c) as usize;
            copy_chunk::<E, N>(src, at, inside, tile, to);
            idx += units;
        }
    }
}

/// One 16-byte asynchronous copy of vector `at` of `src` into vector `to` of `tile`, or,
/// where `inside` is false, a zero fill (a length-0 read from the valid address `at`).
#[cube]
pub(crate) fn copy_chunk<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    at: usize,
    inside: bool,
    tile: &mut SharedMemory<Vector<E, N>>,
    to: usize,
) {
    let len = select(inside, 1usize, 0usize);
    copy_async_checked(
        &src.slice(at, at + len),
        &mut tile.slice_mut(to, to + 1),
        comptime!(8u32),
    );
}

/// [`stage_async`] for packed GQA rows: tile row `r` is query `r % seq` of head
/// `h0 + r / seq` (of the batch at element `batch_base`); rows at or past `group_rows` are
/// zero-filled. Runs once per cube, so plain division is fine.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_packed_async<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    batch_base: usize,
    h0: u32,
    seq: u32,
    group_rows: u32,
    tile: &mut SharedMemory<Vector<E, N>>,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] ld: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let per_row = comptime!(width / 8);
    let total = comptime!(rows * width / 8);
    let mut idx = tid;
    while idx < total {
        let r = idx / per_row;
        let c = idx % per_row;
        let inside = r < group_rows;
        let rr = select(inside, r, 0u32);
        let at = (batch_base
            + (h0 + rr / seq) as usize * src.stride(1)
            + (rr % seq) as usize * src.stride(2))
            / 8
            + c as usize;
        let to = (r * (ld / 8) + c) as usize;
        copy_chunk::<E, N>(src, at, inside, tile, to);
        idx += units;
    }
}

/// Stages rows `start..start + rows` (`row_stride` elements apart) into tile rows from
/// `row0`: asynchronously when `pipelined` (the caller then commits to a barrier), else
/// through registers.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_rows<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    row_stride: usize,
    start: i32,
    seq: u32,
    tile: &mut SharedMemory<Vector<E, N>>,
    row0: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] ld: u32,
    #[comptime] vec: u32,
    #[comptime] units: u32,
    tid: u32,
    #[comptime] pipelined: bool,
) {
    if comptime!(pipelined) {
        stage_async_by::<E, N>(
            src, base, row_stride, start, seq, tile, row0, rows, width, ld, units, tid,
        );
    } else {
        let per_row = comptime!(width / vec);
        let total = comptime!(rows * width / vec);
        let mut idx = tid;
        while idx < total {
            let r = idx / per_row;
            let c = idx % per_row;
            let row = start + r as i32;
            let mut x = Vector::<E, N>::new(E::from_int(0));
            if row < seq as i32 {
                x = src[(base + row as usize * row_stride) / vec as usize + c as usize];
            }
            tile[((row0 + r) * (ld / vec) + c) as usize] = x;
            idx += units;
        }
    }
}
