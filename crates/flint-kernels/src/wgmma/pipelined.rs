//! The warpgroup-MMA forward in FlashAttention-3's shape: a producer warp copies, consumer
//! warpgroups compute, and products are issued asynchronously.
//!
//! A cube holds `warpgroups` consumer warpgroups (64 query rows each) and one producer
//! warpgroup after them. With two or more consumers, `setmaxnreg` moves registers from the
//! producer (`WgmmaFwdParams::producer_registers`) to the consumers
//! (`WgmmaFwdParams::consumer_registers`): a launch's threads share 64K registers evenly, which
//! would cap every thread at 168 with two consumers. The producer copies Q, then K and V tile
//! by tile into `WgmmaFwdParams::stages` buffers each (as many as fit beside Q, 2 to 4), in
//! the core-matrix layout of `super::core_chunk`, by cp.async at a few instructions a copy;
//! each buffer has a `full` barrier (the producer's copies landed) and an `empty` one (every
//! consumer thread is past the products that read it). The consumers never wait for each
//! other.
//!
//! Per key tile `j` a consumer warpgroup: casts `P_j` to the A operand; issues
//! `S_{j+1} = Q·K_{j+1}ᵀ` (SS form: Q and K from shared memory), then `O += P_j·V_j` (P from
//! registers); waits for the older group only and releases K's buffer; runs the online
//! softmax of `S_{j+1}`; waits for `P·V`, releases V's buffer, and rescales O if a row's
//! maximum moved. Q in shared memory frees its registers and sidesteps ptxas giving P Q's
//! registers (`super::attention`).
//!
//! ptxas hoists the wait for `P·V` above the exponentials unless a store pins it
//! (`super::order_before_wait`, over the row sums). Where `D` and `Dv` are multiples of 64
//! the copies land in 128-byte swizzled rows (`WgmmaFwdParams::swizzle`), which halved the
//! L2 traffic that bound the kernel, and the warpgroups issue their products in turn
//! (named barriers), FlashAttention-3's ping-pong (`docs/PERF.md`), except where each stores
//! its own output (`WgmmaFwdParams::own_store`, D = 128), whose turns measured worth nothing.
//!
//! The layouts and the softmax are `super::attention`'s: scores in the `m16n8` accumulator
//! layout, base-2 exponents of raw scores, O rescaled only when a row's maximum moves by more
//! than the slack.
//!
//! The grid is persistent: one cube per SM walks pairs of query blocks (the `i`-th from the
//! end, then the `i`-th from the start, so that causal pairs weigh alike), and the producer
//! copies the next block's Q and first tiles ahead of the consumers: into a second Q buffer
//! where O leaves by TMA store (`WgmmaFwdParams::q_buffers`), else once the consumers are past
//! the previous block's scores (an `empty` barrier for Q), overlapping its last `P·V` and the
//! output's stores. Both sides count the tiles and Q copies they have walked, which gives
//! every barrier's phase.
//!
//! The output leaves through shared memory: `stmatrix` into the block's last V buffer, then
//! one TMA store per 64 columns (`store_rows_tma`), where the copies are swizzled and a
//! block's rows fit that buffer (`WgmmaFwdParams::tma_store`); with Q in registers each
//! warpgroup instead stages its 64 rows in its rows of the block's Q buffer and stores them
//! itself (`store_own_rows_tma`), so that the warpgroups never wait for each other; elsewhere
//! each thread stores its pairs (`write_rows`).
//!
//! It is the selector's `Variant::Wgmma`: any lengths (rows past `Sq` or `Sk` are zero-filled
//! by the copies, and keys past `Sk` masked), GQA, windows and causal masks, any strides that
//! are multiples of 8 elements with a contiguous last dim. A cube walks only the key tiles its
//! rows may see (`key_tiles`): first those a left window bound cuts, then the tiles every
//! row sees whole, then those the right bound or the sequence's end cuts, each run in its own
//! loop so that only the first and last pay for a mask. No bias, softcap or dropout (the op
//! offers the variant only without them).

use cubecl::cmma::MmaDefinition;
use cubecl::ir::{FastMath, MatrixIdent};
use cubecl::prelude::barrier::{Barrier, copy_async};
use cubecl::prelude::*;

use super::attention::{Ablation, LN_2, RESCALE_SLACK_LOG2, WgmmaFwdParams};
use super::{
    b_descriptor, descriptor, issue_rs_sw, issue_ss_sw, min_cubes_per_sm, mn_sw, named_barrier,
    order_before_wait, set_max_registers, smem_address, tma_descriptor, wgmma_issue,
    wgmma_ss_issue, wgmma_wait,
};
use crate::attention::forward::mma::copy_chunk;
use crate::attention::forward::mma::{Pair, exp2, write_pair};
use crate::attention::forward::{LOG2_E, PortableScalars};

/// The online softmax of one tile of raw scores `s` (pair `2j + r`: row `g + 8r`, keys
/// `8j + 2t`, `+1`), in place: `s` becomes the unnormalised probabilities, `m_run` and
/// `l_run` the running maximum and sum of rows `g` and `g + 8`. Returns whether any row of the
/// plane moved its maximum, and writes each row's factor for O to `alpha` (1 if not).
/// [`to_operand`] then casts the probabilities to `P·V`'s A operand. The pipelined kernel
/// casts only once its previous `P·V` is done: ptxas holds back every write into the
/// registers of an operand in flight, and with them the whole softmax.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn online_softmax(
    s: &mut Array<Vector<f32, Pair>>,
    m_run: &mut Array<f32>,
    l_run: &mut Array<f32>,
    alpha: &mut Array<f32>,
    scale_log2: f32,
    #[comptime] block_kv: u32,
) -> bool {
    let mut grow = false;
    let mut tile_max = Array::<f32>::new(2usize);
    #[unroll]
    for r in 0..2u32 {
        let mut mx = f32::new(-3.0e38);
        #[unroll]
        for j in 0..comptime!(block_kv / 8) {
            let pair = s[(2 * j + r) as usize];
            mx = max(mx, max(pair[0], pair[1]));
        }
        mx = max(mx, plane_shuffle_xor(mx, 1u32));
        mx = max(mx, plane_shuffle_xor(mx, 2u32));
        tile_max[r as usize] = mx;
        grow = grow || (mx - m_run[r as usize]) * scale_log2 > RESCALE_SLACK_LOG2;
    }
    let any = plane_any(grow);
    #[unroll]
    for r in 0..2u32 {
        alpha[r as usize] = 1.0f32;
    }
    if any {
        #[unroll]
        for r in 0..2u32 {
            let m_old = m_run[r as usize];
            let m_new = max(m_old, tile_max[r as usize]);
            m_run[r as usize] = m_new;
            let a = exp2((m_old - m_new) * scale_log2);
            alpha[r as usize] = a;
            l_run[r as usize] *= a;
        }
    }
    #[unroll]
    for r in 0..2u32 {
        let m_sub = m_run[r as usize] * scale_log2;
        let mut sum = 0.0f32;
        #[unroll]
        for j in 0..comptime!(block_kv / 8) {
            let mut pair = s[(2 * j + r) as usize];
            pair[0] = exp2(pair[0] * scale_log2 - m_sub);
            pair[1] = exp2(pair[1] * scale_log2 - m_sub);
            sum += pair[0] + pair[1];
            s[(2 * j + r) as usize] = pair;
        }
        l_run[r as usize] += sum;
    }
    any
}

/// Casts the probabilities `s` (from [`online_softmax`]) to `P·V`'s A operand `p`, pair for
/// pair.
#[cube]
pub(super) fn to_operand<E: Float>(
    s: &Array<Vector<f32, Pair>>,
    p: &mut Array<Vector<E, Pair>>,
    #[comptime] block_kv: u32,
) {
    #[unroll]
    for i in 0..comptime!(block_kv / 4) {
        p[i as usize] = Vector::cast_from(s[i as usize]);
    }
}

/// `o *= alpha` row by row (pair `2i + r` holds row `g + 8r`).
#[cube]
pub(super) fn rescale(
    o: &mut Array<Vector<f32, Pair>>,
    alpha: &Array<f32>,
    #[comptime] val_dim: u32,
) {
    #[unroll]
    for r in 0..2u32 {
        let a = alpha[r as usize];
        #[unroll]
        for i in 0..comptime!(val_dim / 8) {
            let mut pair = o[(2 * i + r) as usize];
            pair[0] *= a;
            pair[1] *= a;
            o[(2 * i + r) as usize] = pair;
        }
    }
}

/// Writes the plane's rows `row0` and `row0 + 8` of one (batch, head): O divided by the row
/// sums ([`finish_rows`]) into `out`, `out_vec` elements at a time. A row that saw no key
/// (l = 0) gets output 0, as in the MMA kernel. Rows at or past `seq_q` are skipped.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn write_rows<E: Float, NO: Size>(
    out: &mut Tensor<Vector<E, NO>>,
    lse: &mut Tensor<f32>,
    o_acc: &Array<Vector<f32, Pair>>,
    l_run: &Array<f32>,
    m_run: &Array<f32>,
    row0: u32,
    seq_q: u32,
    b: u32,
    h: u32,
    scale_log2: f32,
    neg_inf: f32,
    #[comptime] val_dim: u32,
    #[comptime] out_vec: u32,
) {
    let t = UNIT_POS_X % 4;
    let inv = finish_rows(lse, l_run, m_run, row0, seq_q, b, h, scale_log2, neg_inf);
    #[unroll]
    for r in 0..2u32 {
        let row = row0 + r * 8;
        if row < seq_q {
            let o_base = b as usize * out.stride(0)
                + h as usize * out.stride(1)
                + row as usize * out.stride(2);
            #[unroll]
            for i in 0..comptime!(val_dim / 8) {
                let mut pair = o_acc[(2 * i + r) as usize];
                pair[0] *= inv[r as usize];
                pair[1] *= inv[r as usize];
                write_pair::<E, NO>(out, o_base + (i * 8 + t * 2) as usize, pair, out_vec);
            }
        }
    }
}

/// The row sums of the plane's rows `row0` and `row0 + 8` (each summed over its quad): writes
/// their log-sum-exp into `lse` (lane `4g` of each quad; `neg_inf` for a row that saw no key,
/// l = 0; rows at or past `seq_q` skipped) and returns the factors O's rows take, `1 / l` or
/// 0 where l = 0.
#[cube]
#[allow(clippy::too_many_arguments)]
fn finish_rows(
    lse: &mut Tensor<f32>,
    l_run: &Array<f32>,
    m_run: &Array<f32>,
    row0: u32,
    seq_q: u32,
    b: u32,
    h: u32,
    scale_log2: f32,
    neg_inf: f32,
) -> Array<f32> {
    let t = UNIT_POS_X % 4;
    let mut inv = Array::<f32>::new(2usize);
    #[unroll]
    for r in 0..2u32 {
        let row = row0 + r * 8;
        let mut l = l_run[r as usize];
        l += plane_shuffle_xor(l, 1u32);
        l += plane_shuffle_xor(l, 2u32);
        inv[r as usize] = select(l == 0.0f32, 0.0f32, 1.0f32 / l);
        if row < seq_q && t == 0 {
            let at = b as usize * lse.stride(0)
                + h as usize * lse.stride(1)
                + row as usize * lse.stride(2);
            lse[at] = select(
                l == 0.0f32,
                neg_inf,
                m_run[r as usize] * scale_log2 * LN_2 + l.ln(),
            );
        }
    }
    inv
}

/// The producer warpgroup's copy of rows `start..start + rows` of one (batch, head) of `src`
/// (`width` wide) into `buf` from chunk `to`, in the core-matrix layout of
/// `super::core_chunk`. Warp `w` takes the groups of eight rows `8i` with `i % 4 = w`; in a
/// group, lane `8c + r` copies row `8i + r`, chunk `4j + c`, which lands on chunk
/// `8 · (i · width / 8 + 4j) + lane`: unrolled, each copy is a few instructions from two
/// per-lane bases (the former all-threads form spent about 20 on its indices). Rows at or
/// past `seq` are zero-filled; only a block that reaches past `seq` pays for that test.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_rows<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    start: u32,
    seq: u32,
    buf: &mut SharedMemory<Vector<E, N>>,
    to: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    tid: u32,
) {
    if start + rows <= seq {
        stage_rows_in::<E, N>(src, base, start, seq, buf, to, rows, width, false, tid);
    } else {
        stage_rows_in::<E, N>(src, base, start, seq, buf, to, rows, width, true, tid);
    }
}

/// [`stage_rows`], with the test against `seq` where `checked`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_rows_in<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    start: u32,
    seq: u32,
    buf: &mut SharedMemory<Vector<E, N>>,
    to: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] checked: bool,
    tid: u32,
) {
    let per_row = comptime!(width / 8);
    let lane = tid % 32;
    let warp = tid / 32;
    let stride = src.stride(2) / 8;
    let row0 = start + warp * 8 + lane % 8;
    let src0 = base / 8 + row0 as usize * stride + (lane / 8) as usize;
    let dst0 = to + warp * comptime!(8 * per_row) + lane;
    #[unroll]
    for i in 0..comptime!(rows / 32) {
        let mut src_i = src0 + (i * 32) as usize * stride;
        let mut inside = true;
        if comptime!(checked) {
            // Rows past `seq` read (0 bytes from) the block's first row instead.
            inside = row0 + i * 32 < seq;
            src_i = select(inside, src_i, base / 8 + (lane / 8) as usize);
        }
        #[unroll]
        for j in 0..comptime!(per_row / 4) {
            let at = src_i + (4 * j) as usize;
            let dst = (dst0 + comptime!(8 * (4 * i * per_row + 4 * j))) as usize;
            if comptime!(checked) {
                copy_chunk::<E, N>(src, at, inside, buf, dst);
            } else {
                copy_async(
                    &src.slice(at, at + 1),
                    &mut buf.slice_mut(dst, dst + 1),
                    8u32,
                );
            }
        }
    }
}

/// Copies the key tile starting at row `start` of `src` (`width` wide, `seq` rows) into
/// buffer `i % stages` of `buf` (`i`: the tile's place in this cube's walk) once the
/// consumers have released the buffer's previous tile (`empty`), and arms the buffer's `full`
/// barrier: a producer thread's part. Without `copy` (an ablation) the buffer keeps its
/// contents and the barrier completes at once.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_tile<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    start: u32,
    seq: u32,
    i: u32,
    buf: &mut SharedMemory<Vector<E, N>>,
    full: &Sequence<Shared<Barrier>>,
    empty: &Sequence<Shared<Barrier>>,
    copy: bool,
    #[comptime] block_kv: u32,
    #[comptime] width: u32,
    #[comptime] stages: u32,
    tid: u32,
) {
    let stage = i % stages;
    if i >= stages {
        wait_stage(empty, stage, i / stages - 1, stages);
    }
    if copy {
        stage_rows::<E, N>(
            src,
            base,
            start,
            seq,
            buf,
            stage * comptime!(block_kv * width / 8),
            block_kv,
            width,
            tid,
        );
        #[unroll]
        for s in 0..stages {
            if stage == s {
                let barrier = full.index(s as usize);
                barrier.commit_copy_async();
                barrier.arrive();
            }
        }
    } else {
        release_stage(full, stage, stages);
    }
}

/// Waits for phase `use_count % 2` of buffer `stage`'s barrier: its `use_count`-th
/// completion, counted from 0.
#[cube]
pub(super) fn wait_stage(
    barriers: &Sequence<Shared<Barrier>>,
    stage: u32,
    use_count: u32,
    #[comptime] stages: u32,
) {
    let parity = use_count % 2;
    #[unroll]
    for s in 0..stages {
        if stage == s {
            barriers.index(s as usize).wait_parity(parity);
        }
    }
}

/// Marks buffer `stage` read by this thread (a consumer's arrival on its `empty` barrier).
#[cube]
pub(super) fn release_stage(
    barriers: &Sequence<Shared<Barrier>>,
    stage: u32,
    #[comptime] stages: u32,
) {
    #[unroll]
    for s in 0..stages {
        if stage == s {
            barriers.index(s as usize).arrive();
        }
    }
}

/// One barrier per buffer, each completing when `count` threads have arrived.
#[cube]
pub(super) fn stage_barriers(
    count: u32,
    elected: bool,
    #[comptime] stages: u32,
) -> Sequence<Shared<Barrier>> {
    let mut barriers = Sequence::<Shared<Barrier>>::new();
    #[unroll]
    for _ in 0..stages {
        barriers.push(Barrier::shared(count, elected));
    }
    barriers
}

/// Arms `barrier` for the bytes of `rows` rows of `width` (16-bit elements) and copies them
/// by TMA ([`tma_boxes`]: in swizzled rows where `swizzle`, else 16-byte columns).
#[cube]
#[allow(clippy::too_many_arguments)]
fn tma_rows<E: Float, N: Size>(
    map: &TensorMap<E, Tiled>,
    barrier: &Shared<Barrier>,
    buf: &mut SharedMemory<Vector<E, N>>,
    to: u32,
    b: u32,
    h: u32,
    start: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] swizzle: bool,
) {
    let _ = barrier.arrive_and_expect_tx(1u32, comptime!(rows * width * 2));
    let box_cols = comptime!(if swizzle {
        crate::wgmma::sw_cols(width)
    } else {
        8u32
    });
    tma_boxes::<E, N>(map, barrier, buf, to, b, h, start, rows, width, box_cols);
}

/// Issues the TMA copies of `rows` rows from `start` of head `h` of batch `b` (`width` wide)
/// into `buf` from vector `to`, one per box of `box_cols` columns, counted on `barrier`, which
/// the caller arms for their bytes: 8 (16-byte columns, [`super::tma_descriptor`]'s layout)
/// or [`super::sw_cols`] (swizzled rows, [`super::sw_descriptor`]'s), box `c` landing after the
/// `c` before it. Rows past the tensor's end arrive as zeros.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn tma_boxes<E: Float, N: Size>(
    map: &TensorMap<E, Tiled>,
    barrier: &Shared<Barrier>,
    buf: &mut SharedMemory<Vector<E, N>>,
    to: u32,
    b: u32,
    h: u32,
    start: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] box_cols: u32,
) {
    #[unroll]
    for c in 0..comptime!(width / box_cols) {
        let at = (to + c * comptime!(rows * box_cols / 8)) as usize;
        barrier.tma_load_4d(
            map,
            &mut buf.slice_mut(at, at + comptime!(rows * box_cols / 8) as usize),
            b as i32,
            h as i32,
            start as i32,
            comptime!((c * box_cols) as i32),
        );
    }
}

/// Copies the key tile starting at row `start` (`width` wide) by TMA into buffer `stage` of
/// `buf`, armed on that buffer's `full` barrier.
#[cube]
#[allow(clippy::too_many_arguments)]
fn tma_tile<E: Float, N: Size>(
    map: &TensorMap<E, Tiled>,
    full: &Sequence<Shared<Barrier>>,
    buf: &mut SharedMemory<Vector<E, N>>,
    stage: u32,
    b: u32,
    kvh: u32,
    start: u32,
    #[comptime] width: u32,
    #[comptime] stages: u32,
    #[comptime] p: WgmmaFwdParams,
) {
    #[unroll]
    for st in 0..stages {
        if stage == st {
            tma_rows::<E, N>(
                map,
                full.index(st as usize),
                buf,
                comptime!(st * p.block_kv * width / 8),
                b,
                kvh,
                start,
                p.block_kv,
                width,
                comptime!(p.swizzle()),
            );
        }
    }
}

/// The producer's copies for one block of queries: Q into buffer `slot`, then K and V tile
/// by tile into buffers `n % k_stages` and `n % v_stages` (`n`: the tile's place among all
/// this cube's tiles, from `base`) once the consumers have released the buffer's previous
/// tile. By TMA (one thread, `producer_tid`
/// 0) or, without it, by cp.async (all 128 producer threads, each its share of a tile).
#[cube]
#[allow(clippy::too_many_arguments)]
fn produce<E: Float, N: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    q_map: &TensorMap<E, Tiled>,
    k_map: &TensorMap<E, Tiled>,
    v_map: &TensorMap<E, Tiled>,
    q_s: &mut SharedMemory<Vector<E, N>>,
    k_s: &mut SharedMemory<Vector<E, N>>,
    v_s: &mut SharedMemory<Vector<E, N>>,
    q_full: &Sequence<Shared<Barrier>>,
    k_full: &Sequence<Shared<Barrier>>,
    v_full: &Sequence<Shared<Barrier>>,
    k_empty: &Sequence<Shared<Barrier>>,
    v_empty: &Sequence<Shared<Barrier>>,
    slot: u32,
    b: u32,
    h: u32,
    kvh: u32,
    q_first: u32,
    t_begin: u32,
    tiles: u32,
    base: u32,
    producer_tid: u32,
    #[comptime] p: WgmmaFwdParams,
) {
    let k_stages = comptime!(p.k_stages());
    let v_stages = comptime!(p.v_stages());
    let block_q = comptime!(64 * p.warpgroups);
    let q_vectors = comptime!(block_q * p.head_dim / 8);
    #[unroll]
    for qb in 0..comptime!(p.q_buffers()) {
        if slot == qb {
            let full = q_full.index(qb as usize);
            if comptime!(p.tma) {
                tma_rows::<E, N>(
                    q_map,
                    full,
                    q_s,
                    comptime!(qb * q_vectors),
                    b,
                    h,
                    q_first,
                    block_q,
                    p.head_dim,
                    comptime!(p.swizzle()),
                );
            } else {
                let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
                stage_rows::<E, N>(
                    q,
                    q_base,
                    q_first,
                    q.shape(2) as u32,
                    q_s,
                    comptime!(qb * q_vectors),
                    block_q,
                    p.head_dim,
                    producer_tid,
                );
                full.commit_copy_async();
                full.arrive();
            }
        }
    }
    let mut i = 0u32;
    while i < tiles {
        // The tile's place among every tile this cube has copied (earlier blocks too).
        let n = base + i;
        let start = (t_begin + i) * p.block_kv;
        if comptime!(p.tma) {
            let stage = n % k_stages;
            if n >= k_stages {
                wait_stage(k_empty, stage, n / k_stages - 1, k_stages);
            }
            tma_tile::<E, N>(
                k_map, k_full, k_s, stage, b, kvh, start, p.head_dim, k_stages, p,
            );
            let stage = n % v_stages;
            if n >= v_stages {
                wait_stage(v_empty, stage, n / v_stages - 1, v_stages);
            }
            tma_tile::<E, N>(
                v_map, v_full, v_s, stage, b, kvh, start, p.val_dim, v_stages, p,
            );
        } else {
            let seq_kv = k.shape(2) as u32;
            let all = comptime!(p.ablation != Ablation::NoLoads);
            let k_base = b as usize * k.stride(0) + kvh as usize * k.stride(1);
            let v_base = b as usize * v.stride(0) + kvh as usize * v.stride(1);
            stage_tile::<E, N>(
                k,
                k_base,
                start,
                seq_kv,
                n,
                k_s,
                k_full,
                k_empty,
                all || n < k_stages,
                p.block_kv,
                p.head_dim,
                k_stages,
                producer_tid,
            );
            stage_tile::<E, N>(
                v,
                v_base,
                start,
                seq_kv,
                n,
                v_s,
                v_full,
                v_empty,
                all || n < v_stages,
                p.block_kv,
                p.val_dim,
                v_stages,
                producer_tid,
            );
        }
        i += 1;
    }
}

/// The `step`-th query block of this cube's walk (from 0) as `[block, batch·head, valid,
/// done]`. The walk takes pairs of blocks of one head, the `i`-th from the end and then the
/// `i`-th from the start, so that under a causal mask every pair holds about the same work
/// and a persistent grid's cubes, which take pairs `CUBE_POS_X + n·CUBE_COUNT_X` in turn, end
/// together. Pairs run group by group of `group` heads (which divides `B·H`; the launch's
/// `head_groups`), in a group `i` by `i`, head by head, so that the cubes at work at once
/// share a few heads' K and V in L2. `valid` is 0 for the second half of a pair whose two
/// blocks are one (the middle block of an odd count), `done` 1 once past the last pair.
#[cube]
pub(super) fn paired_block(step: u32, pairs: u32, blocks: u32, group: u32) -> Array<u32> {
    let pair = CUBE_POS_X + (step / 2) * CUBE_COUNT_X;
    let per_group = blocks.div_ceil(2) * group;
    let within = pair % per_group;
    let i = within / group;
    let first = (step & 1) == 0;
    let mut out = Array::<u32>::new(4usize);
    out[0] = select(first, blocks - 1 - i, i);
    out[1] = (pair / per_group) * group + within % group;
    out[2] = u32::cast_from(first || 2 * i + 1 != blocks);
    out[3] = u32::cast_from(pair >= pairs);
    out
}

/// This cube's walk over the keys: `[t_begin, t1, t2, t_end]`, in key tiles. It reads the
/// tiles `t_begin..t_end` that hold a key some row of the cube may see; those in `t1..t2` are
/// visible to every row (no mask), the others need one (a window bound inside them, or the
/// end of the sequence). Query `i` sees key `j` where `j ≥ i + Sk − Sq − left` and
/// `j ≤ i + Sk − Sq + right` (bottom-right alignment, as the other kernels).
#[cube]
pub(super) fn key_tiles(
    q_first: u32,
    seq_q: u32,
    seq_kv: u32,
    s: &PortableScalars,
    #[comptime] p: WgmmaFwdParams,
) -> Array<u32> {
    let bkv = comptime!(p.block_kv as i32);
    let offset = seq_kv as i32 - seq_q as i32;
    let q_last = min(q_first + comptime!(64 * p.warpgroups), seq_q) as i32 - 1;
    // Keys some row sees: kv_lo..kv_hi; keys every row sees: full_lo..full_hi.
    let mut kv_lo = 0i32;
    let mut full_lo = 0i32;
    let mut kv_hi = seq_kv as i32;
    let mut full_hi = seq_kv as i32;
    if comptime!(p.has_left) {
        kv_lo = max(0i32, q_first as i32 + offset - s.left as i32);
        full_lo = max(0i32, q_last + offset - s.left as i32);
    }
    if comptime!(p.has_right) {
        kv_hi = min(kv_hi, q_last + offset + s.right as i32 + 1);
        full_hi = min(full_hi, q_first as i32 + offset + s.right as i32 + 1);
    }
    let t_begin = kv_lo / bkv;
    let t_end = select(kv_hi > kv_lo, (kv_hi + bkv - 1) / bkv, t_begin);
    let t1 = clamp((full_lo + bkv - 1) / bkv, t_begin, t_end);
    let t2 = clamp(max(full_hi, 0i32) / bkv, t1, t_end);
    let mut out = Array::<u32>::new(4usize);
    out[0] = t_begin as u32;
    out[1] = t1 as u32;
    out[2] = t2 as u32;
    out[3] = t_end as u32;
    out
}

/// Sets the scores of keys this lane's rows may not see to `-inf`: keys at or past `seq_kv`,
/// and those outside the window. `start` is the tile's first key, `diag` this lane's first
/// row plus `Sk − Sq` (its second row is 8 further).
#[cube]
pub(super) fn mask_scores(
    s_acc: &mut Array<Vector<f32, Pair>>,
    start: i32,
    diag: i32,
    seq_kv: i32,
    s: &PortableScalars,
    #[comptime] p: WgmmaFwdParams,
) {
    // The bounds move to the key's offset in the tile from this lane's first key, a constant
    // per score: one compare against an immediate each, not an add and two compares.
    let first = start + 2 * (UNIT_POS_X % 4) as i32;
    #[unroll]
    for r in 0..2u32 {
        let row_diag = diag + comptime!(8 * r as i32);
        // Offsets `u` with `lo <= u < hi` are visible.
        let mut hi = seq_kv - first;
        if comptime!(p.has_right) {
            hi = min(hi, row_diag + s.right as i32 + 1 - first);
        }
        let mut lo = 0i32;
        if comptime!(p.has_left) {
            lo = row_diag - s.left as i32 - first;
        }
        #[unroll]
        for j in 0..comptime!(p.block_kv / 8) {
            let mut pair = s_acc[(2 * j + r) as usize];
            #[unroll]
            for c in 0..2u32 {
                let u = comptime!((8 * j + c) as i32);
                let mut visible = hi > u;
                if comptime!(p.has_left) {
                    visible = visible && lo <= u;
                }
                pair[c as usize] = select(visible, pair[c as usize], s.neg_inf);
            }
            s_acc[(2 * j + r) as usize] = pair;
        }
    }
}

/// The pipelined forward: `Variant::Wgmma` of the selector. Grid `(cubes, 1, 1)`, cube
/// `(32, 4·warpgroups + 4)`: the consumer warpgroups, then the producer warpgroup. The work,
/// blocks of `64·warpgroups` query rows of one (batch, head), is walked in pairs of blocks
/// ([`paired_block`], `launch_group` heads at a time), cube `c` taking pairs `c`,
/// `c + cubes`, ...: with one cube per SM the grid is persistent, and the producer copies a
/// block's Q and first tiles while the consumers finish the previous block. Windows (causal
/// included), GQA, any lengths and strides that are multiples of 8 elements with a
/// contiguous last dim; no bias, softcap or dropout. `s.scale` must be positive (the softmax
/// works on raw scores).
#[cube(launch_unchecked, fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_fwd_wgmma_pipelined<E: Float, N: Size, NO: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    q_map: &TensorMap<E, Tiled>,
    k_map: &TensorMap<E, Tiled>,
    v_map: &TensorMap<E, Tiled>,
    out: &mut Tensor<Vector<E, NO>>,
    out_map: &mut TensorMap<E, Tiled>,
    lse: &mut Tensor<f32>,
    s: &PortableScalars,
    launch_group: u32,
    #[comptime] p: WgmmaFwdParams,
    #[define(E)] _dtype: StorageType,
) {
    let consumers = comptime!(p.warpgroups * 128);
    let block_q = comptime!(64 * p.warpgroups);
    if comptime!(p.cubes_per_sm() > 1) {
        min_cubes_per_sm(comptime!(p.cubes_per_sm()));
    }
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let blocks = seq_q.div_ceil(block_q);
    let pairs = q.shape(0) as u32 * heads * blocks.div_ceil(2);

    // TMA writes whole 128-byte lines; swizzled tiles start on 1024-byte atoms.
    let align = comptime!(if p.swizzle() { 1024usize } else { 128usize });
    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.q_buffers() * block_q * p.head_dim / 8) as usize),
        align,
    );
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.k_stages() * p.block_kv * p.head_dim / 8) as usize),
        align,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.v_stages() * p.block_kv * p.val_dim / 8) as usize),
        align,
    );
    // `full`: the producer's 128 threads have copied a buffer (with TMA: its one thread has
    // armed the barrier and the bytes have landed); `empty`: every consumer thread is past the
    // products that read it (Q's: past an item's last scores).
    let fillers = comptime!(if p.tma { 1u32 } else { 128u32 });
    let q_buffers = comptime!(p.q_buffers());
    let q_full = stage_barriers(fillers, tid == 0, q_buffers);
    // With `own_store` one thread a warpgroup releases Q, once its output has left.
    let q_releases = comptime!(if p.own_store() {
        p.warpgroups
    } else {
        consumers
    });
    let q_empty = stage_barriers(q_releases, tid == 0, q_buffers);
    let k_full = stage_barriers(fillers, tid == 0, comptime!(p.k_stages()));
    let v_full = stage_barriers(fillers, tid == 0, comptime!(p.v_stages()));
    let k_empty = stage_barriers(consumers, tid == 0, comptime!(p.k_stages()));
    let v_empty = stage_barriers(consumers, tid == 0, comptime!(p.v_stages()));

    // Both sides walk the same blocks (`paired_block`) and count the same tiles (`base`) and Q
    // copies (`loads`), which give every barrier's phase.
    let mut step = 0u32;
    let mut base = 0u32;
    let mut loads = 0u32;
    if plane >= comptime!(4 * p.warpgroups) {
        // The producer warpgroup: Q, then K and V tile by tile, each into a buffer once the
        // consumers have released its previous contents (Q's after an item's last scores,
        // K's after S, V's after P·V). It needs few registers and gives the rest to the
        // consumers.
        if comptime!(p.moves_registers()) {
            set_max_registers(comptime!(p.producer_registers()));
        }
        if comptime!(p.tma) {
            // The barriers' initialisation is visible to the async proxy before any copy.
            sync_async_proxy_shared();
        }
        let copier = comptime!(!p.tma) || tid == consumers;
        if copier {
            loop {
                let at = paired_block(step, pairs, blocks, launch_group);
                if at[3] == 1 {
                    break;
                }
                if at[2] == 1 {
                    let b = at[1] / heads;
                    let h = at[1] % heads;
                    let kvh = h / s.group;
                    let q_first = at[0] * block_q;
                    let walk = key_tiles(q_first, seq_q, seq_kv, s, p);
                    let tiles = walk[3] - walk[0];
                    if tiles > 0 {
                        // Q's buffer `loads % q_buffers` held the Q of `q_buffers` loads ago.
                        if loads >= q_buffers {
                            wait_stage(
                                &q_empty,
                                loads % q_buffers,
                                loads / q_buffers - 1,
                                q_buffers,
                            );
                        }
                        produce::<E, N>(
                            q,
                            k,
                            v,
                            q_map,
                            k_map,
                            v_map,
                            &mut q_s,
                            &mut k_s,
                            &mut v_s,
                            &q_full,
                            &k_full,
                            &v_full,
                            &k_empty,
                            &v_empty,
                            loads % q_buffers,
                            b,
                            h,
                            kvh,
                            q_first,
                            walk[0],
                            tiles,
                            base,
                            tid - consumers,
                            p,
                        );
                        base += tiles;
                        loads += 1;
                    }
                }
                step += 1;
            }
        }
    } else {
        if comptime!(p.moves_registers()) {
            set_max_registers(comptime!(p.consumer_registers()));
        }
        let mut o_acc = Array::<Vector<f32, Pair>>::new(comptime!((p.val_dim / 4) as usize));
        let mut m_run = Array::<f32>::new(2usize);
        let mut l_run = Array::<f32>::new(2usize);
        loop {
            let at = paired_block(step, pairs, blocks, launch_group);
            if at[3] == 1 {
                break;
            }
            if at[2] == 1 {
                let b = at[1] / heads;
                let h = at[1] % heads;
                let q_first = at[0] * block_q;
                let walk = key_tiles(q_first, seq_q, seq_kv, s, p);
                let tiles = walk[3] - walk[0];
                let row0 = q_first + plane * 16 + lane / 4;
                #[unroll]
                for i in 0..comptime!(p.val_dim / 4) {
                    o_acc[i as usize] = Vector::new(0.0f32);
                }
                #[unroll]
                for r in 0..2u32 {
                    m_run[r as usize] = f32::new(-3.0e38);
                    l_run[r as usize] = 0.0f32;
                }
                let mut staged = false;
                if tiles > 0 {
                    consume::<E, N>(
                        &mut o_acc, &mut m_run, &mut l_run, row0, seq_q, seq_kv, &walk, base,
                        loads, s, &q_s, &k_s, &v_s, &q_full, &q_empty, &k_full, &v_full, &k_empty,
                        &v_empty, p,
                    );
                    if comptime!(p.own_store()) {
                        store_own_rows_tma::<E, N>(
                            out_map,
                            lse,
                            &mut q_s,
                            &o_acc,
                            &l_run,
                            &m_run,
                            q_first,
                            row0,
                            seq_q,
                            b,
                            h,
                            loads,
                            s.scale * LOG2_E,
                            s.neg_inf,
                            p,
                        );
                        staged = true;
                    } else if comptime!(p.tma_store) {
                        store_rows_tma::<E, N>(
                            out_map,
                            lse,
                            &mut v_s,
                            &v_empty,
                            &o_acc,
                            &l_run,
                            &m_run,
                            q_first,
                            row0,
                            seq_q,
                            b,
                            h,
                            base + tiles - 1,
                            s.scale * LOG2_E,
                            s.neg_inf,
                            p,
                        );
                        staged = true;
                    }
                    base += tiles;
                    loads += 1;
                }
                if !staged {
                    write_rows::<E, NO>(
                        out,
                        lse,
                        &o_acc,
                        &l_run,
                        &m_run,
                        row0,
                        seq_q,
                        b,
                        h,
                        s.scale * LOG2_E,
                        s.neg_inf,
                        comptime!(p.val_dim - p.val_pad),
                        p.out_vec,
                    );
                }
            }
            step += 1;
        }
        if comptime!(p.own_store()) {
            // The walk's last store reads shared memory, which must outlive it.
            if loads > 0 && UNIT_POS_Y == 4 * (UNIT_POS_Y / 4) && UNIT_POS_X == 0 {
                tma_group_wait_read(0u32);
            }
        }
    }
}

/// The consumer warpgroups' walk over this cube's key tiles (`walk`, from [`key_tiles`]; at
/// least one) in [`attention_fwd_wgmma_pipelined`]: O, the row maxima and the row sums.
#[cube]
#[allow(clippy::too_many_arguments)]
fn consume<E: Float, N: Size>(
    o_acc: &mut Array<Vector<f32, Pair>>,
    m_run: &mut Array<f32>,
    l_run: &mut Array<f32>,
    row0: u32,
    seq_q: u32,
    seq_kv: u32,
    walk: &Array<u32>,
    base: u32,
    loads: u32,
    s: &PortableScalars,
    q_s: &SharedMemory<Vector<E, N>>,
    k_s: &SharedMemory<Vector<E, N>>,
    v_s: &SharedMemory<Vector<E, N>>,
    q_full: &Sequence<Shared<Barrier>>,
    q_empty: &Sequence<Shared<Barrier>>,
    k_full: &Sequence<Shared<Barrier>>,
    v_full: &Sequence<Shared<Barrier>>,
    k_empty: &Sequence<Shared<Barrier>>,
    v_empty: &Sequence<Shared<Barrier>>,
    #[comptime] p: WgmmaFwdParams,
) {
    let plane = UNIT_POS_Y;
    let scale_log2 = s.scale * LOG2_E;
    let mut token = SharedMemory::<f32>::new(1usize);
    let (t_begin, t1, t2, t_end) = (walk[0], walk[1], walk[2], walk[3]);
    let tiles = t_end - t_begin;
    let diag = row0 as i32 + seq_kv as i32 - seq_q as i32;

    // Operands: this warpgroup's 64 rows of Q (K-major A, laid out as a K-major B of
    // n = 64), buffer 0 of K and of V; buffer 1 is a tile's bytes further.
    let warpgroup = plane / 4;
    // This warpgroup's first row: 64 rows further per warpgroup (eight vectors a row in
    // swizzled rows, one vector a row with TMA's columns, eight core matrices of D / 8
    // vectors without).
    let q_row0 = comptime!(if p.swizzle() {
        64 * crate::wgmma::sw_row_bytes(p.head_dim) / 16
    } else if p.tma {
        64
    } else {
        8 * p.head_dim
    });
    let q_buffers = comptime!(p.q_buffers());
    let q_slot = loads % q_buffers;
    let q_addr = smem_address::<E, N>(&q_s.slice((warpgroup * q_row0) as usize, 1usize))
        + q_slot * comptime!(p.q_bytes());
    let k_addr = smem_address::<E, N>(&k_s.slice(0usize, 1usize));
    let v_addr = smem_address::<E, N>(&v_s.slice(0usize, 1usize));

    let s_pairs = comptime!(p.block_kv / 4);
    let mut s_acc = Array::<Vector<f32, Pair>>::new(s_pairs as usize);
    // P_j, the A operand of the `P·V` in flight: written only once that product is done.
    let mut p_frag = Array::<Vector<E, Pair>>::new(s_pairs as usize);
    let mut alpha = Array::<f32>::new(2usize);
    #[unroll]
    for i in 0..s_pairs {
        s_acc[i as usize] = Vector::new(0.0f32);
    }

    wait_stage(q_full, q_slot, loads / q_buffers, q_buffers);
    // Q as the scores' A operand in registers (`WgmmaFwdParams::q_in_registers`); a
    // placeholder otherwise.
    let mut q_frag = Array::<Vector<E, Pair>>::new(comptime!(if p.q_in_registers() {
        (p.head_dim / 4) as usize
    } else {
        1usize
    }));
    if comptime!(p.q_in_registers()) {
        load_a_sw::<E, N>(
            q_s,
            &mut q_frag,
            q_slot * comptime!(p.q_bytes() / 16),
            comptime!(64 * p.warpgroups),
            p.head_dim,
        );
    }
    // The turns of `key_step` start with the first warpgroup: the last one's arrival opens
    // them, and the first one's wait after the loops takes the last turn's arrival. The next
    // opening must come after that wait, so that a barrier never holds two arrivals of the
    // last warpgroup at once: with one Q buffer, Q is copied only once every warpgroup is past
    // the previous item's loops (`q_empty`); with two, the TMA store's barrier among all
    // consumers (`store_rows_tma`) comes after the first warpgroup's wait.
    if comptime!(p.turns()) && warpgroup == comptime!(p.warpgroups - 1) {
        named_barrier(1u32, 256u32, true);
    }
    // The first tile's scores and probabilities, before the loops.
    let k_stages = comptime!(p.k_stages());
    let v_stages = comptime!(p.v_stages());
    let k_tile_bytes = comptime!(p.k_tile_bytes());
    wait_stage(k_full, base % k_stages, base / k_stages, k_stages);
    issue_scores::<E>(
        q_addr,
        &q_frag,
        k_addr + (base % k_stages) * k_tile_bytes,
        &mut s_acc,
        p,
    );
    if comptime!(p.own_store()) {
        // With the later V wait of `key_step`, 2-3.6% faster than waiting for the store's
        // reads at the block's end (docs/PERF.md).
        release_stored_q(q_empty, loads, p);
    }
    wgmma_wait(&mut s_acc, &mut token, false);
    release_stage(k_empty, base % k_stages, k_stages);
    if t_begin < t1 || t_begin >= t2 {
        let start = (t_begin * p.block_kv) as i32;
        mask_scores(&mut s_acc, start, diag, seq_kv as i32, s, p);
    }
    online_softmax(&mut s_acc, m_run, l_run, &mut alpha, scale_log2, p.block_kv);
    to_operand::<E>(&s_acc, &mut p_frag, p.block_kv);

    // Three loops over the remaining tiles, each body specialised: masked up to `t1`, plain
    // up to `t2`, masked after. A branch between an issue and its wait would make a merge
    // copy the accumulators in flight, and ptxas then serializes every `wgmma` (C7514); so
    // the mask is chosen per loop, and the last tile, which has no next S, leaves the loops.
    let mut j = 0u32;
    if comptime!(p.has_left) {
        while j + 1 < tiles && t_begin + j + 1 < t1 {
            key_step::<E>(
                j,
                o_acc,
                m_run,
                l_run,
                &mut s_acc,
                &mut p_frag,
                &mut alpha,
                &mut token,
                q_addr,
                &q_frag,
                k_addr,
                v_addr,
                base,
                t_begin,
                diag,
                seq_kv,
                scale_log2,
                s,
                k_full,
                v_full,
                k_empty,
                v_empty,
                p,
                true,
            );
            j += 1;
        }
    }
    while j + 1 < tiles && t_begin + j + 1 < t2 {
        key_step::<E>(
            j,
            o_acc,
            m_run,
            l_run,
            &mut s_acc,
            &mut p_frag,
            &mut alpha,
            &mut token,
            q_addr,
            &q_frag,
            k_addr,
            v_addr,
            base,
            t_begin,
            diag,
            seq_kv,
            scale_log2,
            s,
            k_full,
            v_full,
            k_empty,
            v_empty,
            p,
            false,
        );
        j += 1;
    }
    while j + 1 < tiles {
        key_step::<E>(
            j,
            o_acc,
            m_run,
            l_run,
            &mut s_acc,
            &mut p_frag,
            &mut alpha,
            &mut token,
            q_addr,
            &q_frag,
            k_addr,
            v_addr,
            base,
            t_begin,
            diag,
            seq_kv,
            scale_log2,
            s,
            k_full,
            v_full,
            k_empty,
            v_empty,
            p,
            true,
        );
        j += 1;
    }
    if comptime!(p.turns()) && warpgroup == 0 {
        named_barrier(1u32, 256u32, false);
    }
    // Every score of the item is done: the producer may copy another item's Q here (with
    // `own_store`, once the output staged there has left).
    if comptime!(!p.own_store()) {
        release_stage(q_empty, q_slot, q_buffers);
    }
    let last = base + j;
    wait_stage(v_full, last % v_stages, last / v_stages, v_stages);
    let v_tile_bytes = comptime!(p.v_tile_bytes());
    let v_last = v_operand(v_addr + (last % v_stages) * v_tile_bytes, p);
    wgmma_issue::<E, u16>(
        &p_frag,
        &v_last,
        o_acc,
        p.val_dim,
        p.block_kv,
        comptime!(p.proxy_fence()),
    );
    wgmma_wait(o_acc, &mut token, false);
    // With `tma_store` (not `own_store`) the output is staged in this buffer, which its
    // store releases.
    if comptime!(!p.tma_store || p.own_store()) {
        release_stage(v_empty, last % v_stages, v_stages);
    }
}

/// [`write_rows`] through shared memory and TMA (`WgmmaFwdParams::tma_store`): once every
/// consumer is past its last `P·V`, each warp stages its normalised rows of O in the block's
/// last V buffer (`last % v_stages`, not yet released) by [`stage_sw`], and one thread
/// stores them by [`store_sw`], then arrives on the buffer's `empty` barrier once the
/// copies have read it, so that the producer gets it back only then. 4-byte stores to global
/// memory left the warps waiting on the load/store unit for about a sixth of the causal
/// forward's time at 2k (`docs/PERF.md`). The LSE rows go out by [`finish_rows`].
#[cube]
#[allow(clippy::too_many_arguments)]
fn store_rows_tma<E: Float, N: Size>(
    out_map: &mut TensorMap<E, Tiled>,
    lse: &mut Tensor<f32>,
    v_s: &mut SharedMemory<Vector<E, N>>,
    v_empty: &Sequence<Shared<Barrier>>,
    o_acc: &Array<Vector<f32, Pair>>,
    l_run: &Array<f32>,
    m_run: &Array<f32>,
    q_first: u32,
    row0: u32,
    seq_q: u32,
    b: u32,
    h: u32,
    last: u32,
    scale_log2: f32,
    neg_inf: f32,
    #[comptime] p: WgmmaFwdParams,
) {
    let consumers = comptime!(p.warpgroups * 128);
    let all = comptime!(p.warpgroups + 1);
    let block_q = comptime!(64 * p.warpgroups);
    let stages = comptime!(p.v_stages());
    // Every consumer's last `P·V` has read the buffer.
    named_barrier(all, consumers, false);
    let inv = finish_rows(lse, l_run, m_run, row0, seq_q, b, h, scale_log2, neg_inf);
    let buf = (last % stages) * comptime!(p.block_kv * p.val_dim / 8);
    stage_sw::<E, N>(o_acc, &inv, v_s, buf, block_q, p.val_dim);
    named_barrier(all, consumers, false);
    if UNIT_POS_Y == 0 && UNIT_POS_X == 0 {
        store_sw::<E, N>(
            v_s, buf, out_map, b, h, q_first, block_q, block_q, p.val_dim,
        );
        tma_group_commit();
        // The storing thread arrives last; the others go on to the next block (whose Q they
        // wait for anyway) instead of waiting for the copies at a barrier (4.7% of the
        // causal 2k launch's samples, run155).
        tma_group_wait_read(0u32);
    }
    release_stage(v_empty, last % stages, stages);
}

/// [`write_rows`] through shared memory and TMA, each consumer warpgroup on its own
/// (`WgmmaFwdParams::own_store`): its warps stage their normalised rows of O in the
/// warpgroup's rows of the block's Q buffer (read only once, into Q's registers, at the
/// block's start), meet at a barrier of the warpgroup's 128 threads, and one thread stores
/// the 64 rows; it releases the Q buffer (one of the `q_empty` barrier's `warpgroups`
/// arrivals) once the copies have read them, under the next block's first scores
/// ([`release_stored_q`]). No barrier among all consumers is left at a block's end.
#[cube]
#[allow(clippy::too_many_arguments)]
fn store_own_rows_tma<E: Float, N: Size>(
    out_map: &mut TensorMap<E, Tiled>,
    lse: &mut Tensor<f32>,
    q_s: &mut SharedMemory<Vector<E, N>>,
    o_acc: &Array<Vector<f32, Pair>>,
    l_run: &Array<f32>,
    m_run: &Array<f32>,
    q_first: u32,
    row0: u32,
    seq_q: u32,
    b: u32,
    h: u32,
    loads: u32,
    scale_log2: f32,
    neg_inf: f32,
    #[comptime] p: WgmmaFwdParams,
) {
    let block_q = comptime!(64 * p.warpgroups);
    let q_buffers = comptime!(p.q_buffers());
    let warpgroup = UNIT_POS_Y / 4;
    let slot = loads % q_buffers;
    let inv = finish_rows(lse, l_run, m_run, row0, seq_q, b, h, scale_log2, neg_inf);
    let buf = slot * comptime!(p.q_bytes() / 16);
    stage_sw::<E, N>(o_acc, &inv, q_s, buf, block_q, p.val_dim);
    // Barriers 1 to `warpgroups + 1` are the turns' and the whole-block store's.
    named_barrier(comptime!(p.warpgroups + 2) + warpgroup, 128u32, false);
    if UNIT_POS_Y == 4 * warpgroup && UNIT_POS_X == 0 {
        // Row 64 · warpgroup of each 64-column box of the block's rows.
        let rows_at = buf + warpgroup * comptime!(64 * crate::wgmma::sw_row_bytes(p.val_dim) / 16);
        store_sw::<E, N>(
            q_s,
            rows_at,
            out_map,
            b,
            h,
            q_first + 64 * warpgroup,
            64u32,
            block_q,
            p.val_dim,
        );
        tma_group_commit();
    }
}

/// The storing thread of each warpgroup (`WgmmaFwdParams::own_store`): waits until the
/// previous block's output store ([`store_own_rows_tma`], block `loads - 1` of this cube's
/// walk) has read its rows of that block's Q buffer, then releases the buffer. [`consume`]
/// calls it under the next block's first scores, so that the warpgroup does not stall on
/// the store's reads at a block's end; the walk's last store waits at the kernel's end.
#[cube]
fn release_stored_q(
    q_empty: &Sequence<Shared<Barrier>>,
    loads: u32,
    #[comptime] p: WgmmaFwdParams,
) {
    let q_buffers = comptime!(p.q_buffers());
    let warpgroup = UNIT_POS_Y / 4;
    if loads > 0 && UNIT_POS_Y == 4 * warpgroup && UNIT_POS_X == 0 {
        tma_group_wait_read(0u32);
        release_stage(q_empty, (loads - 1) % q_buffers, q_buffers);
    }
}

/// Stages this warp's sixteen rows of an accumulator (`width` columns, pairs in the `m16n8`
/// layout; rows `16 · UNIT_POS_Y` onward of a tile of `rows` rows), row half `r` times
/// `scale[r]`, cast to `E`, by `stmatrix` x4 into `buf` from vector `base`: in TMA's swizzled
/// layout, boxes of `rows` rows by [`super::sw_cols`] columns one after another
/// ([`store_sw`]'s).
/// Lane `l` gives the row of block `l / 8` of each store: rows `l % 8` (+ 8 for odd blocks),
/// columns of group `2j + l / 16` (eight columns each); the eight row addresses of a block
/// land in eight different 16-byte chunks, so no bank conflicts. The caller makes the writes
/// visible to TMA (`sync_async_proxy_shared`, then a barrier) before storing.
#[cube]
pub(super) fn stage_sw<E: Float, N: Size>(
    acc: &Array<Vector<f32, Pair>>,
    scale: &Array<f32>,
    buf: &mut SharedMemory<Vector<E, N>>,
    base: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    #[unroll]
    for j in 0..comptime!(width / 16) {
        let mut regs = Array::<Vector<E, Pair>>::new(4usize);
        #[unroll]
        for m in 0..4u32 {
            let pair = acc[(4 * j + m) as usize];
            let factor = scale[(m % 2) as usize];
            let mut cast = Vector::<E, Pair>::new(E::from_int(0));
            cast[0] = E::cast_from(pair[0] * factor);
            cast[1] = E::cast_from(pair[1] * factor);
            regs[m as usize] = cast;
        }
        let chunk = sw_lane_chunk(base, j, rows, width);
        def.store_matrix::<Vector<E, N>, Pair>(
            &mut buf.slice_mut(chunk as usize, chunk as usize + 1),
            &regs,
            MatrixIdent::Accumulator,
            4usize,
            false,
        );
    }
    sync_async_proxy_shared();
}

/// The 16-byte chunk (a vector index from `base`) whose address this lane gives a
/// four-matrix `stmatrix` or `ldmatrix` at columns `16j..16j + 16` of its warp's 16 rows, in a
/// tile of `rows` rows of `width` columns in swizzled rows (boxes of
/// [`super::sw_cols`]`(width)` columns): lanes `8m..8m + 8` address matrix `m`, rows
/// `8 (m % 2)` on and columns `8 (m / 2)` on, so that register `m` holds the pairs of an
/// accumulator's (or A operand's) pair `4j + m`. TMA's swizzle XORs a row's 16-byte chunk
/// with bits 7 on of the row's byte offset within its eight-row atom: the row itself in
/// 128-byte rows, half of it in 64-byte ones. Either way the eight rows of a matrix land in
/// eight different 16-byte bank groups.
#[cube]
fn sw_lane_chunk(base: u32, j: u32, #[comptime] rows: u32, #[comptime] width: u32) -> u32 {
    let lane = UNIT_POS_X;
    let quad = lane / 8;
    let tile_row = UNIT_POS_Y * 16 + lane % 8 + (quad % 2) * 8;
    let group = 2 * j + quad / 2;
    if comptime!(crate::wgmma::sw_row_bytes(width) == 128) {
        base + (group / 8) * comptime!(rows * 8) + tile_row * 8 + ((group % 8) ^ (tile_row % 8))
    } else {
        base + (group / 4) * comptime!(rows * 4)
            + tile_row * 4
            + ((group % 4) ^ ((tile_row / 2) % 4))
    }
}

/// The inverse of [`stage_sw`] for an A operand: each consumer warp's 16 rows of a tile
/// that TMA put in swizzled rows (`rows` rows of `width` columns from vector
/// `base`), as `wgmma`'s A fragments (`width / 16` k-steps of four pairs), by `ldmatrix`.
#[cube]
pub(super) fn load_a_sw<E: Float, N: Size>(
    buf: &SharedMemory<Vector<E, N>>,
    frag: &mut Array<Vector<E, Pair>>,
    base: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    #[unroll]
    for j in 0..comptime!(width / 16) {
        let chunk = sw_lane_chunk(base, j, rows, width);
        let m = def.load_matrix::<Vector<E, N>, Pair>(
            &buf.slice(chunk as usize, chunk as usize + 1),
            MatrixIdent::A,
            4usize,
            false,
        );
        #[unroll]
        for x in 0..4u32 {
            frag[(4 * j + x) as usize] = m[x as usize];
        }
    }
}

/// Stores `rows` rows of a tile staged by [`stage_sw`] (boxes of `tile_rows` rows by
/// [`super::sw_cols`] columns from vector `base` of `buf`, `width` columns in all) into rows
/// `row..row + rows` of head `h` of batch `b` through `map` (boxes of `rows` x
/// [`super::sw_cols`], swizzled), one TMA store per box; rows past the tensor's end are
/// clipped. One thread calls it; it then commits the group and waits for its reads before
/// the buffer is reused.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn store_sw<E: Float, N: Size>(
    buf: &SharedMemory<Vector<E, N>>,
    base: u32,
    map: &mut TensorMap<E, Tiled>,
    b: u32,
    h: u32,
    row: u32,
    #[comptime] rows: u32,
    #[comptime] tile_rows: u32,
    #[comptime] width: u32,
) {
    let cols = comptime!(crate::wgmma::sw_cols(width));
    #[unroll]
    for c in 0..comptime!(width / cols) {
        let at = (base + c * comptime!(tile_rows * cols / 8)) as usize;
        tma_store_4d(
            &buf.slice(at, at + comptime!((rows * cols / 8) as usize)),
            map,
            b as i32,
            h as i32,
            row as i32,
            comptime!((c * cols) as i32),
        );
    }
}

/// One step of [`consume`]'s walk at tile `j` (counted from the cube's first): issues
/// `S_{j+1} = Q·K_{j+1}ᵀ` and `O += P_j·V_j`, waits for the scores (masked where `masked`)
/// and runs their online softmax, then waits for O and rescales it.
#[cube]
#[allow(clippy::too_many_arguments)]
fn key_step<E: Float>(
    j: u32,
    o_acc: &mut Array<Vector<f32, Pair>>,
    m_run: &mut Array<f32>,
    l_run: &mut Array<f32>,
    s_acc: &mut Array<Vector<f32, Pair>>,
    p_frag: &mut Array<Vector<E, Pair>>,
    alpha: &mut Array<f32>,
    token: &mut SharedMemory<f32>,
    q_addr: u32,
    q_frag: &Array<Vector<E, Pair>>,
    k_addr: u32,
    v_addr: u32,
    base: u32,
    t_begin: u32,
    diag: i32,
    seq_kv: u32,
    scale_log2: f32,
    s: &PortableScalars,
    k_full: &Sequence<Shared<Barrier>>,
    v_full: &Sequence<Shared<Barrier>>,
    k_empty: &Sequence<Shared<Barrier>>,
    v_empty: &Sequence<Shared<Barrier>>,
    #[comptime] p: WgmmaFwdParams,
    #[comptime] masked: bool,
) {
    let (ks, vs) = comptime!((p.k_stages(), p.v_stages()));
    let s_pairs = comptime!(p.block_kv / 4);
    let k_tile_bytes = comptime!(p.k_tile_bytes());
    let v_tile_bytes = comptime!(p.v_tile_bytes());
    let next = j + 1;
    // Tiles `j` and `j + 1` among all this cube's tiles (earlier work items too).
    let (now_n, next_n) = (base + j, base + next);
    #[unroll]
    for i in 0..s_pairs {
        s_acc[i as usize] = Vector::new(0.0f32);
    }
    wait_stage(k_full, next_n % ks, next_n / ks, ks);
    // Where the warpgroups run free (`own_store`), V is awaited only once the scores are
    // issued, so that they run while V lands; the turns keep both waits ahead of a
    // warpgroup's turn.
    if comptime!(!p.own_store()) {
        wait_stage(v_full, now_n % vs, now_n / vs, vs);
    }
    let v_now = v_operand(v_addr + (now_n % vs) * v_tile_bytes, p);
    // The warpgroups issue their products in turn (FlashAttention-3's ping-pong), so that one
    // warpgroup's softmax runs while the others' products keep the tensor cores busy.
    let warpgroup = UNIT_POS_Y / 4;
    if comptime!(p.turns()) {
        named_barrier(1 + warpgroup, 256u32, false);
    }
    issue_scores::<E>(
        q_addr,
        q_frag,
        k_addr + (next_n % ks) * k_tile_bytes,
        s_acc,
        p,
    );
    if comptime!(p.own_store()) {
        wait_stage(v_full, now_n % vs, now_n / vs, vs);
    }
    wgmma_issue::<E, u16>(
        p_frag,
        &v_now,
        o_acc,
        p.val_dim,
        p.block_kv,
        comptime!(p.proxy_fence()),
    );
    if comptime!(p.turns()) {
        named_barrier(1 + (warpgroup + 1) % p.warpgroups, 256u32, true);
    }
    // S_{j+1} is the older group: done once at most one (P·V) is left.
    wgmma_wait(s_acc, token, true);
    release_stage(k_empty, next_n % ks, ks);
    if comptime!(masked) {
        let start = ((t_begin + next) * p.block_kv) as i32;
        mask_scores(s_acc, start, diag, seq_kv as i32, s, p);
    }
    let any = online_softmax(s_acc, m_run, l_run, alpha, scale_log2, p.block_kv);
    // The row sums depend on every exponential: fencing them keeps the softmax ahead of the
    // wait, overlapping `P·V`.
    let mut sums = Array::<Vector<f32, Pair>>::new(1usize);
    let mut pair = Vector::<f32, Pair>::new(0.0f32);
    pair[0] = l_run[0];
    pair[1] = l_run[1];
    sums[0] = pair;
    order_before_wait(&sums, token);
    wgmma_wait(o_acc, token, false);
    release_stage(v_empty, now_n % vs, vs);
    to_operand::<E>(s_acc, p_frag, p.block_kv);
    if any {
        rescale(o_acc, alpha, p.val_dim);
    }
}

/// Issues `S = Q·Kᵀ` for this warpgroup, the K tile at `k_addr`: with Q's fragments `q_frag`
/// as A where `WgmmaFwdParams::q_in_registers`, otherwise in the SS form with Q's rows from
/// `q_addr`. In swizzled rows, one commit group per 64 columns of `D` (a descriptor's k-steps
/// advance within a 128-byte row only), otherwise one.
#[cube]
fn issue_scores<E: Float>(
    q_addr: u32,
    q_frag: &Array<Vector<E, Pair>>,
    k_addr: u32,
    s_acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] p: WgmmaFwdParams,
) {
    if comptime!(p.q_in_registers()) {
        issue_rs_sw::<E>(
            q_frag,
            k_addr,
            s_acc,
            p.block_kv,
            p.block_kv,
            p.head_dim,
            comptime!(p.proxy_fence()),
        );
    } else if comptime!(p.swizzle()) {
        issue_ss_sw::<E>(
            q_addr,
            k_addr,
            s_acc,
            comptime!(64 * p.warpgroups),
            p.block_kv,
            p.block_kv,
            p.head_dim,
            comptime!(p.proxy_fence()),
        );
    } else {
        let (q_lbo, q_sbo, q_step) = comptime!(if p.tma {
            tma_descriptor(64 * p.warpgroups, false)
        } else {
            b_descriptor(64, p.head_dim, false)
        });
        let a = descriptor::<u16>(q_addr, q_lbo, q_sbo, q_step);
        let (k_lbo, k_sbo, k_step) = comptime!(k_layout(p));
        let b = descriptor::<E>(k_addr, k_lbo, k_sbo, k_step);
        wgmma_ss_issue::<E>(
            &a,
            &b,
            s_acc,
            p.block_kv,
            p.head_dim,
            comptime!(p.proxy_fence()),
        );
    }
}

/// The V tile at `v_addr` as `P·V`'s B operand (MN-major): in swizzled rows, 64-element
/// blocks of `Dv` a tile's 128-byte rows apart and k-steps of sixteen rows.
#[cube]
fn v_operand(v_addr: u32, #[comptime] p: WgmmaFwdParams) -> Array<Vector<u16, Pair>> {
    let mut words = Array::<Vector<u16, Pair>>::new(3usize);
    if comptime!(p.swizzle()) {
        let d = mn_sw(v_addr, p.block_kv, p.val_dim);
        #[unroll]
        for i in 0..3u32 {
            words[i as usize] = d[i as usize];
        }
    } else {
        let (v_lbo, v_sbo, v_step) = comptime!(v_layout(p));
        let d = descriptor::<u16>(v_addr, v_lbo, v_sbo, v_step);
        #[unroll]
        for i in 0..3u32 {
            words[i as usize] = d[i as usize];
        }
    }
    words
}

/// The K tiles' descriptor distances: TMA's columns or the core-matrix layout.
const fn k_layout(p: WgmmaFwdParams) -> (u32, u32, u32) {
    if p.tma {
        tma_descriptor(p.block_kv, false)
    } else {
        b_descriptor(p.block_kv, p.head_dim, false)
    }
}

/// The V tiles' descriptor distances (MN-major B): TMA's columns or the core-matrix layout.
const fn v_layout(p: WgmmaFwdParams) -> (u32, u32, u32) {
    if p.tma {
        tma_descriptor(p.block_kv, true)
    } else {
        b_descriptor(p.val_dim, p.block_kv, true)
    }
}
