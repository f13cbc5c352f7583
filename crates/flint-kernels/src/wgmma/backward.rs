//! The warpgroup-MMA backward (sm_90a): two kernels, each with a producer warpgroup that
//! copies by TMA and consumer warpgroups of 64 rows, as the pipelined forward
//! (`super::pipelined`).
//!
//! - `attention_bwd_dkdv_wgmma` (a persistent grid at D = 128 without a causal mask, else a
//!   cube per block) walks blocks of `64 · warpgroups` keys of one KV head (K and V stay in
//!   shared memory) and, for each, the query tiles of every head of its group: `Sᵀ = K·Qᵀ` and
//!   `dPᵀ = V·dOᵀ` (both operands in shared memory), `Pᵀ = exp2(Sᵀ · scale · log2 e − lse2)`,
//!   `dSᵀ = Pᵀ ∘ (dPᵀ − delta)`, `dV += Pᵀ·dO` and `dK += dSᵀ·Q` (A from registers, B the
//!   tile read MN-major). The producer's other threads copy each tile's `lse2` and `delta`.
//! - `attention_bwd_dq_wgmma`, a persistent grid, walks blocks of `64 · warpgroups` queries
//!   and, for each, the key tiles:
//!   `S = Q·Kᵀ` and `dP = dO·Vᵀ` (A, the resident Q and dO, loaded once into registers),
//!   `dS = P ∘ (dP − delta)`, `dQ += dS·K`.
//!
//! Seven products per pair of tiles against the fused MMA kernel's five, but no atomics.
//! With [`WgmmaBwdParams::fused_dq`] the dK/dV kernel also adds each tile's `dS·K` into an
//! f32 accumulator by atomics (over each warpgroup's keys, or at D ≥ 128 over the cube's,
//! [`WgmmaBwdParams::dq_by_cube`]), and the dQ kernel does not run: five products, at the
//! price of dQ's f32 size in L2 reductions per block or two. At D = 256 the dK/dV pass runs
//! as two launches, dV then dK with dQ fused ([`WgmmaBwdParams::splits`]).
//! Every tile arrives by TMA in swizzled rows (`D` and `Dv` are 32, 64, 128 or 256; 96
//! runs as 128, TMA filling the extra columns with zeros and clipping them from its stores:
//! see [`WgmmaBwdParams::head_pad`]), the layout `super::sw_descriptor` reads K-major or
//! MN-major: rows of 128 bytes, or of 64 where a tile is 32 columns wide
//! (`super::sw_row_bytes`). In dK/dV each consumer waits
//! for its products before the elementwise work (the other warpgroup keeps the tensor cores
//! busy meanwhile), so masks are plain branches; dQ issues the next tile's scores before
//! its `dQ` product, as the forward does. Windows (causal included)
//! and GQA; no bias, softcap, dropout or bias gradient (the op offers the variant only
//! without them). `Sq`, `Sk` any; rows past them arrive as zeros from TMA and are masked.

use cubecl::cmma::MmaDefinition;
use cubecl::ir::{FastMath, MatrixIdent};
use cubecl::prelude::barrier::Barrier;
use cubecl::prelude::*;

use super::attention::WgmmaFwdParams;
use super::pipelined::{
    key_tiles, load_a_sw, mask_scores, paired_block, release_stage, stage_barriers, stage_sw,
    store_sw, tma_boxes, to_operand, wait_stage,
};
use super::{
    issue_rs_sw, issue_ss_sw, mn_sw, named_barrier, order_before_wait, set_max_registers,
    smem_address, sw_cols, sw_row_bytes, wgmma_issue, wgmma_start, wgmma_wait,
};
use crate::attention::backward::mma::{DkdvGrads, dq_block_offset};
use crate::attention::forward::mma::{Pair, exp2, write_pair};
use crate::attention::forward::{LOG2_E, PortableScalars};

/// Compile-time shape of the two backward kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct WgmmaBwdParams {
    /// Consumer warpgroups per cube (64 rows each: keys in dK/dV, queries in dQ).
    pub warpgroups: u32,
    /// `D`.
    pub head_dim: u32,
    /// `Dv`.
    pub val_dim: u32,
    /// A window bound on the left.
    pub has_left: bool,
    /// A window bound on the right (causal).
    pub has_right: bool,
    /// Gradient elements written at once: 2, or 1 where a gradient's strides are odd.
    pub out_vec: u32,
    /// The gradients leave by TMA, staged by `stmatrix` in the cube's resident tiles (K and
    /// V in dK/dV, Q in dQ) once every consumer is done with them, instead of each thread's
    /// 4-byte stores; needs gradient strides that allow a tensor map.
    pub tma_store: bool,
    /// dQ fused into the dK/dV kernel (FlashAttention-2's five products a tile pair instead
    /// of seven): each consumer warpgroup puts its tile of `dSᵀ` through shared memory,
    /// computes `dS·K` over its own 64 keys and adds it to an f32 accumulator with
    /// two-element atomics; the dQ kernel does not run.
    pub fused_dq: bool,
    /// Columns of `head_dim` past the tensors' own D: 0, or 32 where D = 96 runs as 128.
    /// TMA fills them with zeros in every copy (they add nothing to a product) and clips
    /// them from every store; the plain stores leave them out.
    pub head_pad: u32,
    /// Columns of `val_dim` past the tensors' own Dv, as [`Self::head_pad`].
    pub val_pad: u32,
    /// The gradients one launch of the dK/dV kernel accumulates: both, or (where D or Dv is
    /// 256, [`Self::splits`]) dV alone (K resident without V, no `dPᵀ`) or dK alone (with
    /// the fused dQ); the dQ kernel ignores it.
    pub grads: DkdvGrads,
}

/// Stages of `stage` bytes that fit beside `own` bytes (and 1 KiB of barriers), 1 to 4 (one
/// only in the split pass's dK launch, whose resident K and V take 128 KiB at D = 256).
const fn stages_beside(own: u32, stage: u32) -> u32 {
    let fit = WgmmaFwdParams::SHARED_LIMIT.saturating_sub(own + 1024) / stage;
    if fit < 1 {
        1
    } else if fit > 4 {
        4
    } else {
        fit
    }
}

/// Rows of every streamed tile (query tiles in dK/dV, key tiles in dQ).
pub const TILE: u32 = 64;

/// Whether the products need a proxy fence first (`super::wgmma_issue`): no, every operand
/// in shared memory is a TMA copy. The gradients staged by `stmatrix` in K's and V's (or
/// Q's) tiles are fenced before their TMA store, and no product reads those tiles after.
const PROXY_FENCE: bool = false;

impl WgmmaBwdParams {
    /// Registers per thread of the producer warpgroup after `setmaxnreg`: 24, the least
    /// `setmaxnreg` allows, which its copies and the LSE and delta loads fit without spills
    /// (ptxas 12.8). With 40, the consumers' 232 made the dK/dV loop spill one or two
    /// registers at D = 128; with 240 it spills none (`docs/PERF.md`).
    pub const PRODUCER_REGISTERS: u32 = 24;

    /// Rows a cube owns.
    pub const fn rows(&self) -> u32 {
        64 * self.warpgroups
    }

    /// Bytes of one streamed stage: two 16-bit tiles of [`TILE`] rows (Q and dO, or K and V)
    /// plus, in dK/dV, the tile's f32 `lse2` and `delta`.
    pub const fn stage_bytes(&self) -> u32 {
        TILE * (self.head_dim + self.val_dim) * 2 + 2 * TILE * 4
    }

    /// Bytes of the fused dQ's two `dSᵀ` buffers (the cube's keys by [`TILE`] queries, rows
    /// padded by 8 elements so that the transposing `ldmatrix` meets no bank conflict); 0
    /// without it.
    pub const fn ds_bytes(&self) -> u32 {
        if self.fused_dq {
            self.ds_buffers() * self.rows() * (TILE + 8) * 2
        } else {
            0
        }
    }

    /// `dSᵀ` buffers of the fused dQ: two, so that a warp a tile ahead writes the other; one
    /// in the split pass's dK launch, where a second does not fit beside K, V and a stage
    /// (the warps that read it then meet before the next tile's stores).
    pub const fn ds_buffers(&self) -> u32 {
        if matches!(self.grads, DkdvGrads::DkOnly) {
            1
        } else {
            2
        }
    }

    /// Stages of the dK/dV kernel that fit beside its K and V buffers, the fused dQ's `dSᵀ`
    /// buffers (and 1 KiB of barriers), 2 to 4, or 1 in the split pass's dK launch.
    pub const fn stages(&self) -> u32 {
        stages_beside(
            self.kv_buffers() * self.kv_bytes() + self.ds_bytes(),
            self.stage_bytes(),
        )
    }

    /// Whether the dK/dV kernel is a persistent grid whose cubes walk several key blocks (see
    /// `dkdv_block`): at D = 128 without a causal mask or the fused dQ, where it was 1-7%
    /// faster than a cube per block. Under a causal mask the static walk's last round left
    /// cubes idle; at D = 64 it was 15-25% slower, growing with the sequence, which a block's
    /// start does not explain (not traced); the fused dQ at D = 128 has no room for a second
    /// K/V buffer (`docs/PERF.md`). A split pass's launches run a cube per block.
    pub const fn dkdv_walks(&self) -> bool {
        let two = 2 * self.kv_bytes() + self.ds_bytes() + 2 * self.stage_bytes() + 1024;
        !self.paired()
            && !self.fused_dq
            && matches!(self.grads, DkdvGrads::Both)
            && self.head_dim == 128
            && two <= WgmmaFwdParams::SHARED_LIMIT
    }

    /// K and V buffers of the dK/dV kernel: two where its cubes walk several blocks
    /// ([`Self::dkdv_walks`]), so that the producer copies the next block's K and V while the
    /// consumers walk this one's queries; else one.
    pub const fn kv_buffers(&self) -> u32 {
        if self.dkdv_walks() { 2 } else { 1 }
    }

    /// Whether the dQ kernel's persistent cubes walk pairs of query blocks (see `walk_block`):
    /// under a causal mask (a right window bound without a left one), whose blocks' work grows
    /// with their place. The dK/dV kernel runs a cube per key block there.
    pub const fn paired(&self) -> bool {
        self.has_right && !self.has_left
    }

    /// Bytes of one cube's resident tiles: K and V in dK/dV, Q and dO in dQ.
    const fn own_bytes(&self) -> u32 {
        self.rows() * (self.head_dim + self.val_dim) * 2
    }

    /// Bytes of one dK/dV block's resident tiles: K, and V unless the launch computes dV
    /// alone.
    const fn kv_bytes(&self) -> u32 {
        let v = if self.grads.dk() { self.val_dim } else { 0 };
        self.rows() * (self.head_dim + v) * 2
    }

    /// Whether the dK/dV pass runs as two launches ([`Self::dv_pass`], then [`Self::dk_pass`])
    /// with dQ fused into the second, and no dQ kernel: at a run width of 256, where dK's and
    /// dV's accumulators (or dQ's and the resident Q and dO) would not fit one thread's
    /// registers together.
    pub const fn splits(&self) -> bool {
        self.head_dim > 128 || self.val_dim > 128
    }

    /// The split pass's dV launch: two warpgroups of 64 keys with K resident (64 KiB at D =
    /// 256, beside two stages of Q and dO), the products `Sᵀ` and `dV += Pᵀ·dO`.
    pub const fn dv_pass(&self) -> WgmmaBwdParams {
        WgmmaBwdParams {
            warpgroups: 2,
            grads: DkdvGrads::DvOnly,
            fused_dq: false,
            tma_store: false,
            ..*self
        }
    }

    /// The split pass's dK launch: two warpgroups of 64 keys (K and V resident, 128 KiB at
    /// D = 256, beside one stage and one `dSᵀ` buffer: with one warpgroup of 64 keys the
    /// launch re-read every Q and dO tile and added every dQ tile twice as often, and waited
    /// on L2; see `docs/PERF.md`), the products `Sᵀ`, `dPᵀ`, `dK += dSᵀ·Q` and the fused
    /// `dS·K`, in column chunks of [`Self::dq_chunk`].
    pub const fn dk_pass(&self) -> WgmmaBwdParams {
        WgmmaBwdParams {
            warpgroups: 2,
            grads: DkdvGrads::DkOnly,
            fused_dq: true,
            tma_store: false,
            ..*self
        }
    }

    /// Columns of dQ the fused dQ computes per product: all of a warpgroup's columns
    /// ([`Self::dq_columns`]) up to D = 128, else 64 (its accumulator beside dK's, within a
    /// consumer's 240 registers).
    pub const fn dq_chunk(&self) -> u32 {
        if self.head_dim > 128 {
            64
        } else {
            self.dq_columns()
        }
    }

    /// Whether the fused dQ sums each query tile over the cube's keys, each warpgroup taking
    /// half of dQ's columns, rather than over each warpgroup's own 64 keys: one reduction
    /// of each dQ element a tile per cube instead of one per warpgroup. With dQ fused in two
    /// warpgroups at D of 128 or more (halves of whole 64-column blocks), where the
    /// reductions set the pace (`docs/PERF.md`); its warpgroups then meet at each tile's dQ.
    pub const fn dq_by_cube(&self) -> bool {
        self.fused_dq && self.warpgroups == 2 && self.head_dim >= 128
    }

    /// Columns of dQ each warpgroup's fused dQ computes: half of D where
    /// [`Self::dq_by_cube`], else all.
    pub const fn dq_columns(&self) -> u32 {
        if self.dq_by_cube() {
            self.head_dim / 2
        } else {
            self.head_dim
        }
    }

    /// Shared memory of one cube of the dK/dV kernel, in bytes.
    const fn dkdv_shared_bytes(&self) -> u32 {
        self.kv_buffers() * self.kv_bytes() + self.ds_bytes() + self.stages() * self.stage_bytes()
    }

    /// Q and dO buffers of the persistent dQ kernel: two where they fit beside two K/V
    /// stages, so that the producer copies the next block's Q and dO while the consumers walk
    /// this one's keys; else one.
    pub const fn dq_buffers(&self) -> u32 {
        let two = 2 * self.own_bytes() + 2 * self.dq_stage_bytes() + 1024;
        if two <= WgmmaFwdParams::SHARED_LIMIT {
            2
        } else {
            1
        }
    }

    /// Bytes of one stage of the dQ kernel: a K and a V tile of [`TILE`] rows.
    const fn dq_stage_bytes(&self) -> u32 {
        TILE * (self.head_dim + self.val_dim) * 2
    }

    /// K/V stages of the dQ kernel that fit beside its Q and dO buffers, 2 to 4.
    pub const fn dq_stages(&self) -> u32 {
        stages_beside(self.dq_buffers() * self.own_bytes(), self.dq_stage_bytes())
    }

    /// Shared memory of one cube of any kernel the backward launches (the largest), in
    /// bytes: where the pass [`splits`](Self::splits), its two launches and no dQ kernel.
    pub const fn shared_bytes(&self) -> u32 {
        if self.splits() {
            let (dv, dk) = (
                self.dv_pass().dkdv_shared_bytes(),
                self.dk_pass().dkdv_shared_bytes(),
            );
            return if dv > dk { dv } else { dk };
        }
        let dkdv = self.dkdv_shared_bytes();
        let dq = self.dq_buffers() * self.own_bytes() + self.dq_stages() * self.dq_stage_bytes();
        if dkdv > dq { dkdv } else { dq }
    }

    /// Registers per consumer thread after `setmaxnreg`: what the producer releases split
    /// among the consumers, as in the forward.
    pub const fn consumer_registers(&self) -> u32 {
        super::attention::consumer_share(self.warpgroups, Self::PRODUCER_REGISTERS, 1)
    }

    /// The forward's parameters with this kernel's masks, for the shared key walk.
    const fn walk(&self) -> WgmmaFwdParams {
        WgmmaFwdParams {
            warpgroups: self.warpgroups,
            block_kv: TILE,
            head_dim: self.head_dim,
            val_dim: self.val_dim,
            pipelined: true,
            ablation: super::attention::Ablation::None,
            has_left: self.has_left,
            has_right: self.has_right,
            out_vec: self.out_vec,
            tma: true,
            tma_store: false,
            val_pad: self.val_pad,
        }
    }
}

/// The elected producer thread's arrival on `barriers[stage]`, expecting `bytes` of copies,
/// then the copies of two tiles (`a` and `b`, `TILE` rows from `start`) into stage `stage`
/// of `a_s` and `b_s`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_pair<E: Float, N: Size>(
    a_map: &TensorMap<E, Tiled>,
    b_map: &TensorMap<E, Tiled>,
    barriers: &Sequence<Shared<Barrier>>,
    a_s: &mut SharedMemory<Vector<E, N>>,
    b_s: &mut SharedMemory<Vector<E, N>>,
    stage: u32,
    batch: u32,
    head: u32,
    start: u32,
    #[comptime] a_width: u32,
    #[comptime] b_width: u32,
    #[comptime] stages: u32,
) {
    #[unroll]
    for s in 0..stages {
        if stage == s {
            let barrier = barriers.index(s as usize);
            let _ = barrier.arrive_and_expect_tx(1u32, comptime!(TILE * (a_width + b_width) * 2));
            tma_boxes::<E, N>(
                a_map,
                barrier,
                a_s,
                comptime!(s * TILE * a_width / 8),
                batch,
                head,
                start,
                TILE,
                a_width,
                comptime!(sw_cols(a_width)),
            );
            tma_boxes::<E, N>(
                b_map,
                barrier,
                b_s,
                comptime!(s * TILE * b_width / 8),
                batch,
                head,
                start,
                TILE,
                b_width,
                comptime!(sw_cols(b_width)),
            );
        }
    }
}

/// The elected producer thread's copy of a block's resident tiles (K and V in dK/dV, Q and dO
/// in dQ; `rows()` rows from `first` of head `head`) into buffer `loads % buffers` of `a_s`
/// and `b_s`, once the consumers have freed it (`empty`), arming `full` for their bytes.
/// `loads` counts the blocks this cube copied before.
#[cube]
#[allow(clippy::too_many_arguments)]
fn copy_resident<E: Float, N: Size>(
    a_map: &TensorMap<E, Tiled>,
    b_map: &TensorMap<E, Tiled>,
    full: &Sequence<Shared<Barrier>>,
    empty: &Sequence<Shared<Barrier>>,
    a_s: &mut SharedMemory<Vector<E, N>>,
    b_s: &mut SharedMemory<Vector<E, N>>,
    loads: u32,
    batch: u32,
    head: u32,
    first: u32,
    #[comptime] p: WgmmaBwdParams,
    #[comptime] buffers: u32,
    #[comptime] with_b: bool,
) {
    let rows = comptime!(p.rows());
    let b_width = comptime!(if with_b { p.val_dim } else { 0 });
    let slot = loads % buffers;
    if loads >= buffers {
        wait_stage(empty, slot, loads / buffers - 1, buffers);
    }
    #[unroll]
    for buf in 0..buffers {
        if slot == buf {
            let barrier = full.index(buf as usize);
            let _ =
                barrier.arrive_and_expect_tx(1u32, comptime!(rows * (p.head_dim + b_width) * 2));
            tma_boxes::<E, N>(
                a_map,
                barrier,
                a_s,
                comptime!(buf * rows * p.head_dim / 8),
                batch,
                head,
                first,
                rows,
                p.head_dim,
                comptime!(sw_cols(p.head_dim)),
            );
            if comptime!(with_b) {
                tma_boxes::<E, N>(
                    b_map,
                    barrier,
                    b_s,
                    comptime!(buf * rows * p.val_dim / 8),
                    batch,
                    head,
                    first,
                    rows,
                    p.val_dim,
                    comptime!(sw_cols(p.val_dim)),
                );
            }
        }
    }
}

/// The query tiles `[t_begin, t_end)` that any key of the block from `k_first` sees: query
/// `i` sees key `j` where `j >= i + Sk - Sq - left` and `j <= i + Sk - Sq + right`.
#[cube]
fn query_tiles(
    k_first: u32,
    seq_q: u32,
    seq_kv: u32,
    s: &PortableScalars,
    #[comptime] p: WgmmaBwdParams,
) -> Array<u32> {
    let offset = seq_kv as i32 - seq_q as i32;
    let k_last = min(k_first + comptime!(p.rows()), seq_kv) as i32 - 1;
    let mut q_lo = 0i32;
    let mut q_hi = seq_q as i32;
    if comptime!(p.has_right) {
        q_lo = max(0i32, k_first as i32 - offset - s.right as i32);
    }
    if comptime!(p.has_left) {
        q_hi = min(q_hi, k_last - offset + s.left as i32 + 1);
    }
    let mut out = Array::<u32>::new(2usize);
    out[0] = (q_lo / comptime!(TILE as i32)) as u32;
    out[1] = select(
        q_hi > q_lo,
        ((q_hi + comptime!(TILE as i32 - 1)) / comptime!(TILE as i32)) as u32,
        out[0],
    );
    out
}

/// The `step`-th key block of a dK/dV cube's walk: [`walk_block`]'s blocks in order where the
/// kernel is persistent ([`WgmmaBwdParams::dkdv_walks`]), else a cube per block on a grid
/// `(G, blocks, B·Hkv / G)`: block y of head `z·G + x`, so that under a causal mask the cubes at
/// work at once share `G` heads' Q and dO in L2, and the hardware hands out single blocks as
/// SMs free up (the persistent pairs' last round left a quarter of the cubes idle: 3% of the
/// kernel at 8k, `docs/PERF.md`).
#[cube]
fn dkdv_block(
    step: u32,
    batch_heads: u32,
    blocks: u32,
    group: u32,
    #[comptime] p: WgmmaBwdParams,
) -> Array<u32> {
    let mut out = Array::<u32>::new(4usize);
    if comptime!(!p.dkdv_walks()) {
        out[0] = CUBE_POS_Y;
        out[1] = CUBE_POS_Z * CUBE_COUNT_X + CUBE_POS_X;
        out[2] = 1u32;
        out[3] = u32::cast_from(step > 0);
    } else {
        let at = walk_block(step, batch_heads, blocks, group, p);
        #[unroll]
        for i in 0..4u32 {
            out[i as usize] = at[i as usize];
        }
    }
    out
}

/// The dK/dV kernel, cube `(32, 4·warpgroups + 4)`. Where it is persistent
/// ([`WgmmaBwdParams::dkdv_walks`]) a grid `(cubes, 1, 1)`, one cube per SM, each walking key
/// blocks of `64 · warpgroups` keys in order ([`dkdv_block`]), and for each block the query
/// tiles of every head of its group. The producer copies the next block's K and V into a
/// second buffer ([`WgmmaBwdParams::kv_buffers`]), then its first query tiles, while the
/// consumers walk this block's and store its gradients: the start a cube of its own would pay
/// for (`docs/PERF.md`). Both sides count the blocks (`loads`) and query tiles (`base`) they
/// have walked: every barrier's phase. Elsewhere a cube per block
/// (`(G, blocks, B·Hkv / G)`, `G` = `launch_group`).
#[cube(launch_unchecked, fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_bwd_dkdv_wgmma<E: Float, N: Size, NO: Size, NA: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    lse2: &Tensor<f32>,
    delta: &Tensor<f32>,
    q_map: &TensorMap<E, Tiled>,
    k_map: &TensorMap<E, Tiled>,
    v_map: &TensorMap<E, Tiled>,
    do_map: &TensorMap<E, Tiled>,
    dk: &mut Tensor<Vector<E, NO>>,
    dv: &mut Tensor<Vector<E, NO>>,
    dk_map: &mut TensorMap<E, Tiled>,
    dv_map: &mut TensorMap<E, Tiled>,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    s: &PortableScalars,
    launch_group: u32,
    #[comptime] p: WgmmaBwdParams,
    #[define(E)] _dtype: StorageType,
) {
    let consumers = comptime!(p.warpgroups * 128);
    let block_k = comptime!(p.rows());
    let stages = comptime!(p.stages());
    let kv_buffers = comptime!(p.kv_buffers());
    let k_vectors = comptime!(block_k * p.head_dim / 8);
    // V stays out of a launch that computes dV alone.
    let v_vectors = comptime!(if p.grads.dk() {
        block_k * p.val_dim / 8
    } else {
        0
    });
    // The gradients' own columns (the plain stores' width).
    let d_cols = comptime!(p.head_dim - p.head_pad);
    let dv_cols = comptime!(p.val_dim - p.val_pad);
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let heads = q.shape(1) as u32;
    let kv_heads = k.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let group = heads / kv_heads;
    let blocks = seq_kv.div_ceil(block_k);
    let batch_heads = q.shape(0) as u32 * kv_heads;

    // K and V of `kv_buffers` blocks, then per stage a Q and a dO tile and their lse2 and
    // delta.
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((kv_buffers * k_vectors) as usize),
        1024usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((kv_buffers * v_vectors).max(1) as usize),
        1024usize,
    );
    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((stages * TILE * p.head_dim / 8) as usize),
        1024usize,
    );
    let mut do_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((stages * TILE * p.val_dim / 8) as usize),
        1024usize,
    );
    let mut lse_s = SharedMemory::<f32>::new(comptime!((stages * TILE) as usize));
    let mut delta_s = SharedMemory::<f32>::new(comptime!((stages * TILE) as usize));
    // The fused dQ's two dSᵀ buffers (one pair without it).
    let mut ds_s = SharedMemory::<Vector<E, Pair>>::new_aligned(
        comptime!((p.ds_bytes() / 4).max(1) as usize),
        16usize,
    );
    // `kv_full`: K and V landed; `kv_empty`: the consumers' thread 0 saw every consumer past
    // the block and the copies of its gradients out of the buffer done. `full`: the elected
    // producer thread armed it and the copies landed, and every producer thread stored its
    // share of lse2 and delta; `empty`: every consumer thread is done.
    let kv_full = stage_barriers(1u32, tid == 0, kv_buffers);
    let kv_empty = stage_barriers(1u32, tid == 0, kv_buffers);
    let full = stage_barriers(128u32, tid == 0, stages);
    let empty = stage_barriers(consumers, tid == 0, stages);
    sync_async_proxy_shared();

    let mut step = 0u32;
    let mut base = 0u32;
    let mut loads = 0u32;
    if plane >= comptime!(4 * p.warpgroups) {
        set_max_registers(WgmmaBwdParams::PRODUCER_REGISTERS);
        let ptid = tid - consumers;
        loop {
            let at = dkdv_block(step, batch_heads, blocks, launch_group, p);
            if at[3] == 1 {
                break;
            }
            if at[2] == 1 {
                let b = at[1] / kv_heads;
                let kvh = at[1] % kv_heads;
                let k_first = at[0] * block_k;
                let walk = query_tiles(k_first, seq_q, seq_kv, s, p);
                let t_begin = walk[0];
                let tiles = walk[1] - t_begin;
                let steps = tiles * group;
                if steps > 0 {
                    if ptid == 0 {
                        copy_resident::<E, N>(
                            k_map,
                            v_map,
                            &kv_full,
                            &kv_empty,
                            &mut k_s,
                            &mut v_s,
                            loads,
                            b,
                            kvh,
                            k_first,
                            p,
                            kv_buffers,
                            p.grads.dk(),
                        );
                    }
                    let mut i = 0u32;
                    while i < steps {
                        // The tile's place among every tile this cube has copied.
                        let n = base + i;
                        let stage = n % stages;
                        let h = kvh * group + i / tiles;
                        let q0 = (t_begin + i % tiles) * TILE;
                        if n >= stages {
                            wait_stage(&empty, stage, n / stages - 1, stages);
                        }
                        // The tile's lse2 and delta, 64 values each: threads 0-63 and 64-127,
                        // stored before each thread's arrival releases them.
                        let row = q0 + ptid % TILE;
                        let at_l = b as usize * lse2.stride(0)
                            + h as usize * lse2.stride(1)
                            + min(row, seq_q - 1) as usize * lse2.stride(2);
                        let to = (stage * TILE + ptid % TILE) as usize;
                        if ptid < TILE {
                            lse_s[to] = lse2[at_l];
                        } else if comptime!(p.grads.dk()) {
                            let at_d = b as usize * delta.stride(0)
                                + h as usize * delta.stride(1)
                                + min(row, seq_q - 1) as usize * delta.stride(2);
                            delta_s[to] = delta[at_d];
                        }
                        if ptid == 0 {
                            stage_pair::<E, N>(
                                q_map, do_map, &full, &mut q_s, &mut do_s, stage, b, h, q0,
                                p.head_dim, p.val_dim, stages,
                            );
                        } else {
                            release_stage(&full, stage, stages);
                        }
                        i += 1;
                    }
                    base += steps;
                    loads += 1;
                }
            }
            step += 1;
        }
    } else {
        set_max_registers(comptime!(p.consumer_registers()));
        // An accumulator a launch leaves out keeps one pair, never touched.
        let dk_len = comptime!(if p.grads.dk() { p.head_dim / 4 } else { 1 });
        let dv_len = comptime!(if p.grads.dv() { p.val_dim / 4 } else { 1 });
        let mut dk_acc = Array::<Vector<f32, Pair>>::new(dk_len as usize);
        let mut dv_acc = Array::<Vector<f32, Pair>>::new(dv_len as usize);
        loop {
            let at = dkdv_block(step, batch_heads, blocks, launch_group, p);
            if at[3] == 1 {
                break;
            }
            if at[2] == 1 {
                let b = at[1] / kv_heads;
                let kvh = at[1] % kv_heads;
                let k_first = at[0] * block_k;
                let walk = query_tiles(k_first, seq_q, seq_kv, s, p);
                let t_begin = walk[0];
                let tiles = walk[1] - t_begin;
                let steps = tiles * group;
                // Row g and g + 8 of this plane's 16 keys.
                let row0 = k_first + plane * 16 + lane / 4;
                #[unroll]
                for i in 0..dk_len {
                    dk_acc[i as usize] = Vector::new(0.0f32);
                }
                #[unroll]
                for i in 0..dv_len {
                    dv_acc[i as usize] = Vector::new(0.0f32);
                }
                if steps > 0 {
                    let slot = loads % kv_buffers;
                    wait_stage(&kv_full, slot, loads / kv_buffers, kv_buffers);
                    dkdv_consume::<E, N, NA>(
                        &mut dk_acc,
                        &mut dv_acc,
                        &k_s,
                        &v_s,
                        &q_s,
                        &do_s,
                        &lse_s,
                        &delta_s,
                        &mut ds_s,
                        dq_acc,
                        &full,
                        &empty,
                        b,
                        kvh,
                        group,
                        k_first,
                        seq_q,
                        seq_kv,
                        t_begin,
                        tiles,
                        slot,
                        base,
                        s,
                        p,
                    );
                    // Every consumer's last products, which read K and V, are done.
                    named_barrier(1u32, consumers, false);
                    if comptime!(p.tma_store) {
                        let mut scale = Array::<f32>::new(2usize);
                        scale[0] = s.scale;
                        scale[1] = s.scale;
                        stage_sw::<E, N>(
                            &dk_acc,
                            &scale,
                            &mut k_s,
                            slot * k_vectors,
                            block_k,
                            p.head_dim,
                        );
                        scale[0] = 1.0f32;
                        scale[1] = 1.0f32;
                        stage_sw::<E, N>(
                            &dv_acc,
                            &scale,
                            &mut v_s,
                            slot * v_vectors,
                            block_k,
                            p.val_dim,
                        );
                        named_barrier(1u32, consumers, false);
                        if tid == 0 {
                            store_sw::<E, N>(
                                &k_s,
                                slot * k_vectors,
                                dk_map,
                                b,
                                kvh,
                                k_first,
                                block_k,
                                block_k,
                                p.head_dim,
                            );
                            store_sw::<E, N>(
                                &v_s,
                                slot * v_vectors,
                                dv_map,
                                b,
                                kvh,
                                k_first,
                                block_k,
                                block_k,
                                p.val_dim,
                            );
                            tma_group_commit();
                            // The next copy into the buffer must wait for the stores' reads.
                            tma_group_wait_read(0u32);
                        }
                    } else {
                        write_grads::<E, NO>(
                            dk, dv, &dk_acc, &dv_acc, row0, seq_kv, b, kvh, s.scale, d_cols,
                            dv_cols, p,
                        );
                    }
                    if tid == 0 {
                        release_stage(&kv_empty, slot, kv_buffers);
                    }
                    base += steps;
                    loads += 1;
                } else {
                    // Keys that no query sees: zero gradients, stored without a buffer (the
                    // producer may be filling both).
                    write_grads::<E, NO>(
                        dk, dv, &dk_acc, &dv_acc, row0, seq_kv, b, kvh, s.scale, d_cols, dv_cols, p,
                    );
                }
            }
            step += 1;
        }
    }
}

/// The consumer warpgroups' walk of [`attention_bwd_dkdv_wgmma`].
#[cube]
#[allow(clippy::too_many_arguments)]
fn dkdv_consume<E: Float, N: Size, NA: Size>(
    dk_acc: &mut Array<Vector<f32, Pair>>,
    dv_acc: &mut Array<Vector<f32, Pair>>,
    k_s: &SharedMemory<Vector<E, N>>,
    v_s: &SharedMemory<Vector<E, N>>,
    q_s: &SharedMemory<Vector<E, N>>,
    do_s: &SharedMemory<Vector<E, N>>,
    lse_s: &SharedMemory<f32>,
    delta_s: &SharedMemory<f32>,
    ds_s: &mut SharedMemory<Vector<E, Pair>>,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    full: &Sequence<Shared<Barrier>>,
    empty: &Sequence<Shared<Barrier>>,
    b: u32,
    kvh: u32,
    group: u32,
    k_first: u32,
    seq_q: u32,
    seq_kv: u32,
    t_begin: u32,
    tiles: u32,
    slot: u32,
    base: u32,
    s: &PortableScalars,
    #[comptime] p: WgmmaBwdParams,
) {
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let t = lane % 4;
    let stages = comptime!(p.stages());
    let block_k = comptime!(p.rows());
    let scale_log2 = s.scale * LOG2_E;
    let offset = seq_kv as i32 - seq_q as i32;
    let k_last = min(k_first + block_k, seq_kv) as i32 - 1;
    let steps = tiles * group;
    let mut token = SharedMemory::<f32>::new(1usize);
    // This warpgroup's 64 keys of buffer `slot` as the A operand of Sᵀ = K·Qᵀ and
    // dPᵀ = V·dOᵀ. In swizzled rows of 128 (64) bytes, 64 rows are 512 (256) vectors.
    let warpgroup = plane / 4;
    let k_first_vector = slot * comptime!(block_k * p.head_dim / 8);
    let v_first_vector = slot * comptime!(block_k * p.val_dim / 8);
    let k_addr = smem_address::<E, N>(&k_s.slice(
        (k_first_vector + warpgroup * comptime!(4 * sw_row_bytes(p.head_dim))) as usize,
        1usize,
    ));
    let v_addr = smem_address::<E, N>(&v_s.slice(
        (v_first_vector + warpgroup * comptime!(4 * sw_row_bytes(p.val_dim))) as usize,
        1usize,
    ));
    let q_addr = smem_address::<E, N>(&q_s.slice(0usize, 1usize));
    let k_base = smem_address::<E, N>(&k_s.slice(k_first_vector as usize, 1usize));
    let do_addr = smem_address::<E, N>(&do_s.slice(0usize, 1usize));
    let q_tile_bytes = comptime!(TILE * p.head_dim * 2);
    let do_tile_bytes = comptime!(TILE * p.val_dim * 2);
    // This lane's keys (rows g and g + 8 of its plane's 16).
    let key0 = (k_first + plane * 16 + lane / 4) as i32;

    let pairs = comptime!(TILE / 4);
    let mut s_acc = Array::<Vector<f32, Pair>>::new(pairs as usize);
    let mut dp_acc = Array::<Vector<f32, Pair>>::new(pairs as usize);
    let mut p_frag = Array::<Vector<E, Pair>>::new(pairs as usize);
    let mut ds_frag = Array::<Vector<E, Pair>>::new(pairs as usize);

    let mut i = 0u32;
    while i < steps {
        // The tile's place among every tile this cube has walked.
        let n = base + i;
        let stage = n % stages;
        let q0 = (t_begin + i % tiles) * TILE;
        #[unroll]
        for j in 0..pairs {
            s_acc[j as usize] = Vector::new(0.0f32);
            dp_acc[j as usize] = Vector::new(0.0f32);
        }
        wait_stage(full, stage, n / stages, stages);
        let q_tile = q_addr + stage * q_tile_bytes;
        let do_tile = do_addr + stage * do_tile_bytes;
        issue_ss_sw::<E>(
            k_addr,
            q_tile,
            &mut s_acc,
            block_k,
            TILE,
            TILE,
            p.head_dim,
            PROXY_FENCE,
        );
        if comptime!(p.grads.dk()) {
            issue_ss_sw::<E>(
                v_addr,
                do_tile,
                &mut dp_acc,
                block_k,
                TILE,
                TILE,
                p.val_dim,
                PROXY_FENCE,
            );
            wgmma_wait(&mut s_acc, &mut token, true);
            wgmma_wait(&mut dp_acc, &mut token, false);
        } else {
            wgmma_wait(&mut s_acc, &mut token, false);
        }
        // Masks: queries past Sq, and the window's bounds where the tile crosses them.
        let mut full_tile = q0 + TILE <= seq_q;
        if comptime!(p.has_right) {
            full_tile = full_tile && k_last <= q0 as i32 + offset + s.right as i32;
        }
        if comptime!(p.has_left) {
            full_tile =
                full_tile && k_first as i32 >= (q0 + TILE - 1) as i32 + offset - s.left as i32;
        }
        if !full_tile {
            mask_columns(&mut s_acc, key0, q0 as i32, seq_q as i32, offset, s, p);
        }
        // Pᵀ and dSᵀ column by column: lse2 and delta of query 8j + 2t (+1).
        let cols = stage * TILE;
        #[unroll]
        for j in 0..comptime!(TILE / 8) {
            let col = (cols + j * 8 + t * 2) as usize;
            // A query that sees no key has lse2 = -inf and only masked scores: subtract 0
            // instead, so that they give exp2(-inf) = 0 rather than NaN.
            let (l0, l1) = (no_key(lse_s[col]), no_key(lse_s[col + 1]));
            #[unroll]
            for r in 0..2u32 {
                let at = (2 * j + r) as usize;
                let sv = s_acc[at];
                let mut pv = Vector::<f32, Pair>::new(0.0f32);
                pv[0] = exp2(sv[0] * scale_log2 - l0);
                pv[1] = exp2(sv[1] * scale_log2 - l1);
                if comptime!(p.grads.dv()) {
                    p_frag[at] = Vector::cast_from(pv);
                }
                if comptime!(p.grads.dk()) {
                    let (d0, d1) = (delta_s[col], delta_s[col + 1]);
                    let dpv = dp_acc[at];
                    let mut dsv = Vector::<f32, Pair>::new(0.0f32);
                    dsv[0] = pv[0] * (dpv[0] - d0);
                    dsv[1] = pv[1] * (dpv[1] - d1);
                    ds_frag[at] = Vector::cast_from(dsv);
                }
            }
        }
        let do_mn = mn_sw(do_tile, TILE, p.val_dim);
        let q_mn = mn_sw(q_tile, TILE, p.head_dim);
        if comptime!(p.grads.dv()) {
            wgmma_issue::<E, u16>(&p_frag, &do_mn, dv_acc, p.val_dim, TILE, PROXY_FENCE);
        }
        if comptime!(p.grads.dk()) {
            wgmma_issue::<E, u16>(&ds_frag, &q_mn, dk_acc, p.head_dim, TILE, PROXY_FENCE);
        }
        // The fused dQ's dSᵀ of this warpgroup's keys, while the products read the same
        // registers: buffer i % 2, so that a warp a tile ahead never overwrites what
        // another of its warpgroup still reads (the barrier below keeps them within one
        // tile).
        let ds_buf = (i % comptime!(p.ds_buffers())) * comptime!(block_k * (TILE + 8) / 2);
        if comptime!(p.fused_dq) {
            let row = ds_buf + (plane * 16 + lane / 4) * comptime!((TILE + 8) / 2) + t;
            #[unroll]
            for j in 0..comptime!(TILE / 8) {
                #[unroll]
                for r in 0..2u32 {
                    ds_s[(row + comptime!(r * 8 * (TILE + 8) / 2 + 4 * j)) as usize] =
                        ds_frag[(2 * j + r) as usize];
                }
            }
        }
        if comptime!(p.grads.dv()) {
            wgmma_wait(dv_acc, &mut token, p.grads.dk());
        }
        if comptime!(p.grads.dk()) {
            wgmma_wait(dk_acc, &mut token, false);
        }
        release_stage(empty, stage, stages);
        if comptime!(p.fused_dq) {
            if comptime!(p.dq_by_cube()) {
                // Every warpgroup's dSᵀ of the tile is in place.
                named_barrier(1u32, comptime!(p.warpgroups * 128), false);
            } else {
                // The warpgroup's dSᵀ of the tile is in place; the other warpgroup goes its
                // own pace (barriers 2 and 3).
                named_barrier(2u32 + warpgroup, 128u32, false);
            }
            let h = kvh * group + i / tiles;
            let head_base = b as usize * dq_acc.stride(0) + h as usize * dq_acc.stride(1);
            dq_tile::<E, NA>(
                ds_s, ds_buf, k_base, dq_acc, head_base, q0, seq_q, &mut token, p,
            );
        }
        i += 1;
    }
}

/// The fused dQ of one query tile (`q0..q0 + TILE` of the head at `head_base` in the
/// accumulator): `dS·K` over this warpgroup's 64 keys and every column of dQ, or (where
/// [`WgmmaBwdParams::dq_by_cube`]) over the cube's keys and this warpgroup's half of the
/// columns, in chunks of [`WgmmaBwdParams::dq_chunk`], added to the f32 accumulator (each
/// head in 8x8 blocks, `dq_block_offset`) by two-element atomics. A (`dS`, queries by keys)
/// comes from the summed keys' rows of the tile's `dSᵀ` in buffer `ds_buf` of `ds_s` through
/// the transposing `ldmatrix`; B is the same rows of the resident K, read MN-major (keys
/// along K).
#[cube]
#[allow(clippy::too_many_arguments)]
fn dq_tile<E: Float, NA: Size>(
    ds_s: &SharedMemory<Vector<E, Pair>>,
    ds_buf: u32,
    k_base: u32,
    dq_acc: &mut Tensor<Atomic<Vector<f32, NA>>>,
    head_base: usize,
    q0: u32,
    seq_q: u32,
    token: &mut SharedMemory<f32>,
    #[comptime] p: WgmmaBwdParams,
) {
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let warpgroup = plane / 4;
    // The warp's 16 queries of the tile.
    let band = plane % 4;
    let block_k = comptime!(p.rows());
    let ld = comptime!((TILE + 8) / 2);
    let cols = comptime!(p.dq_chunk());
    let by_cube = comptime!(p.dq_by_cube());
    // The keys summed: the cube's, or this warpgroup's 64; the columns: this warpgroup's
    // half from `col_base`, or all.
    let keys = comptime!(if by_cube { block_k } else { 64 });
    let key_base = select(by_cube, 0u32, warpgroup * 64);
    let col_base = select(by_cube, warpgroup * comptime!(p.dq_columns()), 0u32);
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    // Matrices (transposed): key rows 0-7 | 8-15 by query columns 0-7 | 8-15 of the band,
    // which are A's four registers of one 16-key step.
    let lm_row = lane % 8;
    let lm_mat = lane / 8;
    let lane_a =
        ds_buf + (key_base + lm_row + 8 * (lm_mat / 2)) * ld + (band * 16 + 8 * (lm_mat % 2)) / 2;
    let mut a = Array::<Vector<E, Pair>>::new(comptime!((keys / 4) as usize));
    #[unroll]
    for kk in 0..comptime!(keys / 16) {
        let at = (lane_a + comptime!(kk * 16 * ld)) as usize;
        let m = def.load_matrix::<Vector<E, Pair>, Pair>(
            &ds_s.slice(at, at + 4),
            MatrixIdent::A,
            4usize,
            true,
        );
        #[unroll]
        for x in 0..4u32 {
            a[(4 * kk + x) as usize] = m[x as usize];
        }
    }
    if comptime!(p.ds_buffers() == 1) {
        // The next tile stores its dSᵀ into this buffer once every warp that reads it has.
        if comptime!(by_cube) {
            named_barrier(1u32, comptime!(p.warpgroups * 128), false);
        } else {
            named_barrier(2u32 + warpgroup, 128u32, false);
        }
    }
    let g = lane / 4;
    let t = lane % 4;
    let row_bytes = comptime!(sw_row_bytes(p.head_dim));
    let box_cols = comptime!(sw_cols(p.head_dim));
    let mut acc = Array::<Vector<f32, Pair>>::new(comptime!((cols / 4) as usize));
    #[unroll]
    for c in 0..comptime!(p.dq_columns() / cols) {
        // The summed keys' rows of K (whole swizzle atoms into each box), from the chunk's
        // first box.
        let k_mn = mn_sw(
            k_base
                + key_base * row_bytes
                + (col_base / box_cols) * comptime!(block_k * row_bytes)
                + comptime!(c * (cols / box_cols) * block_k * row_bytes),
            block_k,
            p.head_dim,
        );
        wgmma_start::<E, u16>(&a, &k_mn, &mut acc, cols, keys, PROXY_FENCE);
        wgmma_wait(&mut acc, token, false);
        #[unroll]
        for r in 0..2u32 {
            let row = q0 + band * 16 + g + r * 8;
            if row < seq_q {
                let lane_at =
                    (head_base + dq_block_offset(row, t * 2, comptime!(p.head_dim)) as usize) / 2;
                // Each 8-column block of the row band is 64 floats further on.
                let lane_at = lane_at + (col_base / 8 * 32) as usize;
                #[unroll]
                for j in 0..comptime!(cols / 8) {
                    dq_acc[lane_at + comptime!((c * cols / 8 + j) * 32) as usize]
                        .fetch_add(Vector::cast_from(acc[(2 * j + r) as usize]));
                }
            }
        }
    }
}

/// Sets the transposed scores (rows: this lane's keys `key0`, `key0 + 8`; columns: queries
/// `q0 + 8j + 2t` and `+1`) that a query may not see to `-inf`: queries past `seq_q`, and
/// pairs outside the window.
#[cube]
fn mask_columns(
    s_acc: &mut Array<Vector<f32, Pair>>,
    key0: i32,
    q0: i32,
    seq_q: i32,
    offset: i32,
    s: &PortableScalars,
    #[comptime] p: WgmmaBwdParams,
) {
    let t = (UNIT_POS_X % 4) as i32;
    #[unroll]
    for r in 0..2u32 {
        let key = key0 + comptime!(8 * r as i32);
        #[unroll]
        for j in 0..comptime!(TILE / 8) {
            let mut pair = s_acc[(2 * j + r) as usize];
            #[unroll]
            for c in 0..2u32 {
                let query = q0 + comptime!((8 * j + c) as i32) + 2 * t;
                let mut visible = query < seq_q;
                if comptime!(p.has_left) {
                    visible = visible && key >= query + offset - s.left as i32;
                }
                if comptime!(p.has_right) {
                    visible = visible && key <= query + offset + s.right as i32;
                }
                pair[c as usize] = select(visible, pair[c as usize], s.neg_inf);
            }
            s_acc[(2 * j + r) as usize] = pair;
        }
    }
}

/// `lse2`, or 0 for a query that sees no key (`lse2 = -inf`; all its scores are masked).
#[cube]
fn no_key(lse2: f32) -> f32 {
    select(lse2 < -1.0e30f32, 0.0f32, lse2)
}

/// Writes the plane's rows `row0` and `row0 + 8` of the gradients the launch computes
/// ([`WgmmaBwdParams::grads`]): dK (times `scale`) `d_cols` wide, dV `dv_cols` wide.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_grads<E: Float, NO: Size>(
    dk: &mut Tensor<Vector<E, NO>>,
    dv: &mut Tensor<Vector<E, NO>>,
    dk_acc: &Array<Vector<f32, Pair>>,
    dv_acc: &Array<Vector<f32, Pair>>,
    row0: u32,
    rows: u32,
    b: u32,
    h: u32,
    scale: f32,
    #[comptime] d_cols: u32,
    #[comptime] dv_cols: u32,
    #[comptime] p: WgmmaBwdParams,
) {
    if comptime!(p.grads.dk()) {
        write_grad::<E, NO>(dk, dk_acc, row0, rows, b, h, scale, d_cols, p.out_vec);
    }
    if comptime!(p.grads.dv()) {
        write_grad::<E, NO>(dv, dv_acc, row0, rows, b, h, 1.0f32, dv_cols, p.out_vec);
    }
}

/// Writes the plane's rows `row0` and `row0 + 8` (of head `h` of batch `b`) of a gradient,
/// times `scale`; rows at or past `rows` are skipped.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_grad<E: Float, NO: Size>(
    out: &mut Tensor<Vector<E, NO>>,
    acc: &Array<Vector<f32, Pair>>,
    row0: u32,
    rows: u32,
    b: u32,
    h: u32,
    scale: f32,
    #[comptime] width: u32,
    #[comptime] out_vec: u32,
) {
    let t = UNIT_POS_X % 4;
    #[unroll]
    for r in 0..2u32 {
        let row = row0 + r * 8;
        if row < rows {
            let base = b as usize * out.stride(0)
                + h as usize * out.stride(1)
                + row as usize * out.stride(2);
            #[unroll]
            for i in 0..comptime!(width / 8) {
                let mut pair = acc[(2 * i + r) as usize];
                pair[0] *= scale;
                pair[1] *= scale;
                write_pair::<E, NO>(out, base + (i * 8 + t * 2) as usize, pair, out_vec);
            }
        }
    }
}

/// The dQ kernel. Grid `(cubes, 1, 1)`, cube `(32, 4·warpgroups + 4)`: persistent, one cube
/// per SM, each walking query blocks ([`walk_block`]: in order, or under a causal mask pairs
/// of blocks that weigh alike, `launch_group` heads at a time). The producer copies the next
/// block's Q and dO into a second buffer ([`WgmmaBwdParams::dq_buffers`]), then its first key
/// tiles, while the consumers walk this block's: the start a cube of its own would pay for
/// (`docs/PERF.md`). Both sides count the blocks (`loads`) and key tiles (`base`) they have
/// walked: every barrier's phase.
#[cube(launch_unchecked, fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_bwd_dq_wgmma<E: Float, N: Size, NO: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    lse2: &Tensor<f32>,
    delta: &Tensor<f32>,
    q_map: &TensorMap<E, Tiled>,
    k_map: &TensorMap<E, Tiled>,
    v_map: &TensorMap<E, Tiled>,
    do_map: &TensorMap<E, Tiled>,
    dq: &mut Tensor<Vector<E, NO>>,
    dq_map: &mut TensorMap<E, Tiled>,
    s: &PortableScalars,
    launch_group: u32,
    #[comptime] p: WgmmaBwdParams,
    #[define(E)] _dtype: StorageType,
) {
    let consumers = comptime!(p.warpgroups * 128);
    let block_q = comptime!(p.rows());
    let stages = comptime!(p.dq_stages());
    // dQ's own columns (the plain stores' width).
    let d_cols = comptime!(p.head_dim - p.head_pad);
    let q_buffers = comptime!(p.dq_buffers());
    let q_vectors = comptime!(block_q * p.head_dim / 8);
    let do_vectors = comptime!(block_q * p.val_dim / 8);
    let walk_p = comptime!(p.walk());
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let blocks = seq_q.div_ceil(block_q);
    let batch_heads = q.shape(0) as u32 * heads;

    let mut q_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((q_buffers * q_vectors) as usize),
        1024usize,
    );
    let mut do_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((q_buffers * do_vectors) as usize),
        1024usize,
    );
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((stages * TILE * p.head_dim / 8) as usize),
        1024usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((stages * TILE * p.val_dim / 8) as usize),
        1024usize,
    );
    // `q_full`: Q and dO landed; `q_empty`: the consumers' thread 0 saw every consumer past
    // the block and the copies of its dQ out of the buffer done.
    let q_full = stage_barriers(1u32, tid == 0, q_buffers);
    let q_empty = stage_barriers(1u32, tid == 0, q_buffers);
    let full = stage_barriers(1u32, tid == 0, stages);
    let empty = stage_barriers(consumers, tid == 0, stages);
    sync_async_proxy_shared();

    let mut step = 0u32;
    let mut base = 0u32;
    let mut loads = 0u32;
    if plane >= comptime!(4 * p.warpgroups) {
        set_max_registers(WgmmaBwdParams::PRODUCER_REGISTERS);
        if tid == consumers {
            loop {
                let at = walk_block(step, batch_heads, blocks, launch_group, p);
                if at[3] == 1 {
                    break;
                }
                if at[2] == 1 {
                    let b = at[1] / heads;
                    let h = at[1] % heads;
                    let kvh = h / s.group;
                    let q_first = at[0] * block_q;
                    let walk = key_tiles(q_first, seq_q, seq_kv, s, walk_p);
                    let t_begin = walk[0];
                    let tiles = walk[3] - t_begin;
                    if tiles > 0 {
                        copy_resident::<E, N>(
                            q_map, do_map, &q_full, &q_empty, &mut q_s, &mut do_s, loads, b, h,
                            q_first, p, q_buffers, true,
                        );
                        let mut i = 0u32;
                        while i < tiles {
                            // The tile's place among every tile this cube has copied.
                            let n = base + i;
                            let stage = n % stages;
                            if n >= stages {
                                wait_stage(&empty, stage, n / stages - 1, stages);
                            }
                            stage_pair::<E, N>(
                                k_map,
                                v_map,
                                &full,
                                &mut k_s,
                                &mut v_s,
                                stage,
                                b,
                                kvh,
                                (t_begin + i) * TILE,
                                p.head_dim,
                                p.val_dim,
                                stages,
                            );
                            i += 1;
                        }
                        base += tiles;
                        loads += 1;
                    }
                }
                step += 1;
            }
        }
    } else {
        set_max_registers(comptime!(p.consumer_registers()));
        let mut dq_acc = Array::<Vector<f32, Pair>>::new(comptime!((p.head_dim / 4) as usize));
        loop {
            let at = walk_block(step, batch_heads, blocks, launch_group, p);
            if at[3] == 1 {
                break;
            }
            if at[2] == 1 {
                let b = at[1] / heads;
                let h = at[1] % heads;
                let q_first = at[0] * block_q;
                let walk = key_tiles(q_first, seq_q, seq_kv, s, walk_p);
                let tiles = walk[3] - walk[0];
                let row0 = q_first + plane * 16 + lane / 4;
                #[unroll]
                for i in 0..comptime!(p.head_dim / 4) {
                    dq_acc[i as usize] = Vector::new(0.0f32);
                }
                if tiles > 0 {
                    let slot = loads % q_buffers;
                    // lse2 and delta of this lane's two rows (a clamped row past Sq is never
                    // written).
                    let mut l_row = Array::<f32>::new(2usize);
                    let mut d_row = Array::<f32>::new(2usize);
                    #[unroll]
                    for r in 0..2u32 {
                        let row = min(row0 + r * 8, seq_q - 1) as usize;
                        l_row[r as usize] = lse2[b as usize * lse2.stride(0)
                            + h as usize * lse2.stride(1)
                            + row * lse2.stride(2)];
                        d_row[r as usize] = delta[b as usize * delta.stride(0)
                            + h as usize * delta.stride(1)
                            + row * delta.stride(2)];
                    }
                    wait_stage(&q_full, slot, loads / q_buffers, q_buffers);
                    dq_consume::<E, N>(
                        &mut dq_acc,
                        &q_s,
                        &do_s,
                        &k_s,
                        &v_s,
                        &full,
                        &empty,
                        &l_row,
                        &d_row,
                        &walk,
                        slot,
                        base,
                        row0,
                        seq_q,
                        seq_kv,
                        s,
                        p,
                    );
                    // Every consumer is past the block: its Q and dO are in registers, its
                    // last products done.
                    named_barrier(1u32, consumers, false);
                    if comptime!(p.tma_store) {
                        let mut scale = Array::<f32>::new(2usize);
                        scale[0] = s.scale;
                        scale[1] = s.scale;
                        stage_sw::<E, N>(
                            &dq_acc,
                            &scale,
                            &mut q_s,
                            slot * q_vectors,
                            block_q,
                            p.head_dim,
                        );
                        named_barrier(1u32, consumers, false);
                        if tid == 0 {
                            store_sw::<E, N>(
                                &q_s,
                                slot * q_vectors,
                                dq_map,
                                b,
                                h,
                                q_first,
                                block_q,
                                block_q,
                                p.head_dim,
                            );
                            tma_group_commit();
                            // The next copy into the buffer must wait for the store's reads.
                            tma_group_wait_read(0u32);
                        }
                    } else {
                        write_grad::<E, NO>(
                            dq, &dq_acc, row0, seq_q, b, h, s.scale, d_cols, p.out_vec,
                        );
                    }
                    if tid == 0 {
                        release_stage(&q_empty, slot, q_buffers);
                    }
                    base += tiles;
                    loads += 1;
                } else {
                    // Rows that see no key: a zero gradient, stored without a buffer (the
                    // producer may be filling both).
                    write_grad::<E, NO>(dq, &dq_acc, row0, seq_q, b, h, s.scale, d_cols, p.out_vec);
                }
            }
            step += 1;
        }
    }
}

/// The `step`-th block of a persistent cube's walk (from 0; query blocks in dQ, key blocks
/// in dK/dV) as `[block, batch·head, valid, done]`. Without a causal mask, blocks in order,
/// cube `c` taking `c`, `c + cubes`, ...: the cubes at work at once cover as few heads (and
/// their streamed tiles in L2) as a cube per block did; pairs there put twice as many heads in
/// L2 and made a dQ key tile 6% slower at `Sk = 2 Sq = 4096`. Under a causal mask (dQ only)
/// the forward's pairs ([`paired_block`]), whose blocks weigh alike, `group` heads at a time.
/// A static walk leaves some cubes a pair short at its end (3% of the dQ kernel where pairs
/// are 7.76 a cube), but a cube per block or per pair with the dQ kernel's walk was slower
/// still (`docs/PERF.md`).
#[cube]
fn walk_block(
    step: u32,
    batch_heads: u32,
    blocks: u32,
    group: u32,
    #[comptime] p: WgmmaBwdParams,
) -> Array<u32> {
    let mut out = Array::<u32>::new(4usize);
    if comptime!(p.paired()) {
        let at = paired_block(step, batch_heads * blocks.div_ceil(2), blocks, group);
        #[unroll]
        for i in 0..4u32 {
            out[i as usize] = at[i as usize];
        }
    } else {
        let at = CUBE_POS_X + step * CUBE_COUNT_X;
        out[0] = at % blocks;
        out[1] = at / blocks;
        out[2] = 1u32;
        out[3] = u32::cast_from(at >= batch_heads * blocks);
    }
    out
}

/// The consumer warpgroups' walk of [`attention_bwd_dq_wgmma`] over the key tiles of `walk`
/// (from the forward's `key_tiles`; at least one), pipelined as the forward: while
/// `dQ += dS_j·K_j` runs, the scores of tile `j + 1` are already issued, and their `dS` is
/// computed before waiting for it. Three loops, masked up to `t1`, plain up to `t2`, masked
/// after, so that no branch lies between an issue and its wait (see the forward's `consume`).
/// Q and dO are in buffer `slot`; the block's first key tile is the cube's `base`-th.
#[cube]
#[allow(clippy::too_many_arguments)]
fn dq_consume<E: Float, N: Size>(
    dq_acc: &mut Array<Vector<f32, Pair>>,
    q_s: &SharedMemory<Vector<E, N>>,
    do_s: &SharedMemory<Vector<E, N>>,
    k_s: &SharedMemory<Vector<E, N>>,
    v_s: &SharedMemory<Vector<E, N>>,
    full: &Sequence<Shared<Barrier>>,
    empty: &Sequence<Shared<Barrier>>,
    l_row: &Array<f32>,
    d_row: &Array<f32>,
    walk: &Array<u32>,
    slot: u32,
    base: u32,
    row0: u32,
    seq_q: u32,
    seq_kv: u32,
    s: &PortableScalars,
    #[comptime] p: WgmmaBwdParams,
) {
    let walk_p = comptime!(p.walk());
    let scale_log2 = s.scale * LOG2_E;
    let mut token = SharedMemory::<f32>::new(1usize);
    let (t_begin, t1, t2, t_end) = (walk[0], walk[1], walk[2], walk[3]);
    let tiles = t_end - t_begin;
    let diag = row0 as i32 + seq_kv as i32 - seq_q as i32;
    let k_addr = smem_address::<E, N>(&k_s.slice(0usize, 1usize));
    let v_addr = smem_address::<E, N>(&v_s.slice(0usize, 1usize));

    let pairs = comptime!(TILE / 4);
    let mut s_acc = Array::<Vector<f32, Pair>>::new(pairs as usize);
    let mut dp_acc = Array::<Vector<f32, Pair>>::new(pairs as usize);
    // dS_j, the A operand of the `dQ` product in flight: written only once it is done.
    let mut ds_frag = Array::<Vector<E, Pair>>::new(pairs as usize);

    // The first tile's dS, before the loops (Q and dO landed: the caller waited).
    // Q and dO, resident, as the A operands of the scores: only K and V are read from shared
    // memory by their products, whose n = 64 would otherwise read as many bytes of A as of B.
    let mut q_frag = Array::<Vector<E, Pair>>::new(comptime!((p.head_dim / 4) as usize));
    let mut do_frag = Array::<Vector<E, Pair>>::new(comptime!((p.val_dim / 4) as usize));
    let rows = comptime!(p.rows());
    load_a_sw::<E, N>(
        q_s,
        &mut q_frag,
        slot * comptime!(rows * p.head_dim / 8),
        rows,
        p.head_dim,
    );
    load_a_sw::<E, N>(
        do_s,
        &mut do_frag,
        slot * comptime!(rows * p.val_dim / 8),
        rows,
        p.val_dim,
    );
    dq_issue_scores::<E>(
        base,
        &mut s_acc,
        &mut dp_acc,
        &q_frag,
        &do_frag,
        k_addr,
        v_addr,
        full,
        p,
    );
    wgmma_wait(&mut s_acc, &mut token, true);
    wgmma_wait(&mut dp_acc, &mut token, false);
    if t_begin < t1 || t_begin >= t2 {
        mask_scores(
            &mut s_acc,
            (t_begin * TILE) as i32,
            diag,
            seq_kv as i32,
            s,
            walk_p,
        );
    }
    grad_scores(&s_acc, &mut dp_acc, l_row, d_row, scale_log2);
    to_operand::<E>(&dp_acc, &mut ds_frag, TILE);

    let mut j = 0u32;
    if comptime!(p.has_left) {
        while j + 1 < tiles && t_begin + j + 1 < t1 {
            dq_step::<E>(
                j,
                base,
                dq_acc,
                &mut s_acc,
                &mut dp_acc,
                &mut ds_frag,
                &mut token,
                &q_frag,
                &do_frag,
                k_addr,
                v_addr,
                full,
                empty,
                l_row,
                d_row,
                t_begin,
                diag,
                seq_kv,
                scale_log2,
                s,
                p,
                true,
            );
            j += 1;
        }
    }
    while j + 1 < tiles && t_begin + j + 1 < t2 {
        dq_step::<E>(
            j,
            base,
            dq_acc,
            &mut s_acc,
            &mut dp_acc,
            &mut ds_frag,
            &mut token,
            &q_frag,
            &do_frag,
            k_addr,
            v_addr,
            full,
            empty,
            l_row,
            d_row,
            t_begin,
            diag,
            seq_kv,
            scale_log2,
            s,
            p,
            false,
        );
        j += 1;
    }
    while j + 1 < tiles {
        dq_step::<E>(
            j,
            base,
            dq_acc,
            &mut s_acc,
            &mut dp_acc,
            &mut ds_frag,
            &mut token,
            &q_frag,
            &do_frag,
            k_addr,
            v_addr,
            full,
            empty,
            l_row,
            d_row,
            t_begin,
            diag,
            seq_kv,
            scale_log2,
            s,
            p,
            true,
        );
        j += 1;
    }
    let stages = comptime!(p.dq_stages());
    let k_tile_bytes = comptime!(TILE * p.head_dim * 2);
    let stage = (base + j) % stages;
    let k_mn = mn_sw(k_addr + stage * k_tile_bytes, TILE, p.head_dim);
    wgmma_issue::<E, u16>(&ds_frag, &k_mn, dq_acc, p.head_dim, TILE, PROXY_FENCE);
    wgmma_wait(dq_acc, &mut token, false);
    release_stage(empty, stage, stages);
}

/// Waits for key tile `i` of the cube's walk, counted over all its blocks (K and V in stage
/// `i % stages`), and issues its
/// `S = Q·Kᵀ` and `dP = dO·Vᵀ` into zeroed accumulators: two commit groups.
#[cube]
#[allow(clippy::too_many_arguments)]
fn dq_issue_scores<E: Float>(
    i: u32,
    s_acc: &mut Array<Vector<f32, Pair>>,
    dp_acc: &mut Array<Vector<f32, Pair>>,
    q_frag: &Array<Vector<E, Pair>>,
    do_frag: &Array<Vector<E, Pair>>,
    k_addr: u32,
    v_addr: u32,
    full: &Sequence<Shared<Barrier>>,
    #[comptime] p: WgmmaBwdParams,
) {
    let stages = comptime!(p.dq_stages());
    let stage = i % stages;
    let k_tile_bytes = comptime!(TILE * p.head_dim * 2);
    let v_tile_bytes = comptime!(TILE * p.val_dim * 2);
    #[unroll]
    for j in 0..comptime!(TILE / 4) {
        s_acc[j as usize] = Vector::new(0.0f32);
        dp_acc[j as usize] = Vector::new(0.0f32);
    }
    wait_stage(full, stage, i / stages, stages);
    let k_tile = k_addr + stage * k_tile_bytes;
    let v_tile = v_addr + stage * v_tile_bytes;
    issue_rs_sw::<E>(q_frag, k_tile, s_acc, TILE, TILE, p.head_dim, PROXY_FENCE);
    issue_rs_sw::<E>(do_frag, v_tile, dp_acc, TILE, TILE, p.val_dim, PROXY_FENCE);
}

/// `dS = exp2(S · scale · log2 e − lse2) ∘ (dP − delta)` into `dp` (f32), row by row
/// (pair `2j + r`: row `g + 8r`).
#[cube]
fn grad_scores(
    s_acc: &Array<Vector<f32, Pair>>,
    dp: &mut Array<Vector<f32, Pair>>,
    l_row: &Array<f32>,
    d_row: &Array<f32>,
    scale_log2: f32,
) {
    #[unroll]
    for r in 0..2u32 {
        let l = no_key(l_row[r as usize]);
        let d = d_row[r as usize];
        #[unroll]
        for j in 0..comptime!(TILE / 8) {
            let at = (2 * j + r) as usize;
            let sv = s_acc[at];
            let mut dsv = dp[at];
            dsv[0] = exp2(sv[0] * scale_log2 - l) * (dsv[0] - d);
            dsv[1] = exp2(sv[1] * scale_log2 - l) * (dsv[1] - d);
            dp[at] = dsv;
        }
    }
}

/// One step of [`dq_consume`] at tile `j` of the block's walk (`base + j` of the cube's):
/// issues the scores of tile `j + 1`, then `dQ += dS_j·K_j`; waits for the scores (masked
/// where `masked`) and computes their `dS`, then waits for `dQ`, releases tile `j`'s stage
/// and casts the new `dS` to the operand.
#[cube]
#[allow(clippy::too_many_arguments)]
fn dq_step<E: Float>(
    j: u32,
    base: u32,
    dq_acc: &mut Array<Vector<f32, Pair>>,
    s_acc: &mut Array<Vector<f32, Pair>>,
    dp_acc: &mut Array<Vector<f32, Pair>>,
    ds_frag: &mut Array<Vector<E, Pair>>,
    token: &mut SharedMemory<f32>,
    q_frag: &Array<Vector<E, Pair>>,
    do_frag: &Array<Vector<E, Pair>>,
    k_addr: u32,
    v_addr: u32,
    full: &Sequence<Shared<Barrier>>,
    empty: &Sequence<Shared<Barrier>>,
    l_row: &Array<f32>,
    d_row: &Array<f32>,
    t_begin: u32,
    diag: i32,
    seq_kv: u32,
    scale_log2: f32,
    s: &PortableScalars,
    #[comptime] p: WgmmaBwdParams,
    #[comptime] masked: bool,
) {
    let stages = comptime!(p.dq_stages());
    let k_tile_bytes = comptime!(TILE * p.head_dim * 2);
    let next = j + 1;
    dq_issue_scores::<E>(
        base + next,
        s_acc,
        dp_acc,
        q_frag,
        do_frag,
        k_addr,
        v_addr,
        full,
        p,
    );
    let stage = (base + j) % stages;
    let k_mn = mn_sw(k_addr + stage * k_tile_bytes, TILE, p.head_dim);
    wgmma_issue::<E, u16>(ds_frag, &k_mn, dq_acc, p.head_dim, TILE, PROXY_FENCE);
    // The two score groups are the older ones: done once at most one (dQ) is left.
    wgmma_wait(s_acc, token, true);
    wgmma_wait(dp_acc, token, true);
    if comptime!(masked) {
        let start = ((t_begin + next) * TILE) as i32;
        mask_scores(s_acc, start, diag, seq_kv as i32, s, comptime!(p.walk()));
    }
    grad_scores(s_acc, dp_acc, l_row, d_row, scale_log2);
    // Keeps dS ahead of the wait, overlapping the dQ product.
    order_before_wait(dp_acc, token);
    wgmma_wait(dq_acc, token, false);
    release_stage(empty, stage, stages);
    to_operand::<E>(dp_acc, ds_frag, TILE);
}

#[cfg(test)]
mod tests {
    use super::{WgmmaBwdParams, WgmmaFwdParams};

    fn params(d: u32, dv: u32, causal: bool) -> WgmmaBwdParams {
        WgmmaBwdParams {
            warpgroups: 2,
            head_dim: d,
            val_dim: dv,
            has_right: causal,
            ..WgmmaBwdParams::default()
        }
    }

    /// Both persistent kernels' two buffers of resident tiles fit at every head dim, at the
    /// price of a stage at D = 128 (three K/V stages in dQ, three Q/dO stages in dK/dV), and
    /// both kernels fit the device. dK/dV walks blocks only at D = 128 without a causal mask or
    /// the fused dQ; elsewhere a cube per key block, one K/V buffer.
    #[test]
    fn two_buffers_fit_beside_their_stages() {
        let p = params(128, 128, false);
        assert_eq!((p.dq_buffers(), p.dq_stages()), (2, 3));
        assert_eq!((p.kv_buffers(), p.stages()), (2, 3));
        let p = params(64, 64, false);
        assert_eq!((p.dq_buffers(), p.dq_stages()), (2, 4));
        // A cube per key block at D = 64.
        assert_eq!((p.kv_buffers(), p.stages()), (1, 4));
        for (d, dv) in [(64, 64), (128, 64), (128, 128)] {
            let p = params(d, dv, true);
            assert_eq!((p.dq_buffers(), p.kv_buffers()), (2, 1));
            assert!(
                p.shared_bytes() + 1024 <= WgmmaFwdParams::SHARED_LIMIT,
                "{p:?}"
            );
            let fused = WgmmaBwdParams {
                fused_dq: true,
                ..p
            };
            assert!(fused.shared_bytes() + 1024 <= WgmmaFwdParams::SHARED_LIMIT);
            assert!(fused.stages() >= 3, "{fused:?}");
        }
        let fused = WgmmaBwdParams {
            fused_dq: true,
            ..params(128, 128, false)
        };
        assert_eq!((fused.kv_buffers(), fused.stages()), (1, 3));
        let fused = WgmmaBwdParams {
            fused_dq: true,
            ..params(64, 64, false)
        };
        assert_eq!((fused.kv_buffers(), fused.stages()), (1, 4));
    }

    /// At a run width of 256 the dK/dV pass splits: a dV launch of two warpgroups with K
    /// alone resident (two Q/dO stages), then a dK launch of two warpgroups with dQ fused in
    /// 64-column chunks (one stage, one `dSᵀ` buffer), each within the device's shared
    /// memory, and no dQ kernel runs. Below 256 nothing splits.
    #[test]
    fn head_dim_256_splits_into_two_launches() {
        for (d, dv) in [(256, 256), (256, 128), (128, 256), (256, 64), (64, 256)] {
            for causal in [false, true] {
                let p = params(d, dv, causal);
                assert!(p.splits(), "{p:?}");
                let (dv_pass, dk_pass) = (p.dv_pass(), p.dk_pass());
                assert_eq!((dv_pass.rows(), dk_pass.rows()), (128, 128));
                assert!(!dv_pass.grads.dk() && dv_pass.grads.dv() && !dv_pass.fused_dq);
                assert!(dk_pass.grads.dk() && !dk_pass.grads.dv() && dk_pass.fused_dq);
                assert_eq!(dk_pass.ds_buffers(), 1);
                assert!(dv_pass.stages() >= 2, "{dv_pass:?}");
                for pass in [dv_pass, dk_pass] {
                    assert!(!pass.dkdv_walks() && !pass.tma_store, "{pass:?}");
                    assert!(pass.stages() >= 1, "{pass:?}");
                    assert!(
                        pass.dkdv_shared_bytes() + 1024 <= WgmmaFwdParams::SHARED_LIMIT,
                        "{pass:?}"
                    );
                }
                assert!(p.shared_bytes() + 1024 <= WgmmaFwdParams::SHARED_LIMIT);
                assert_eq!(dk_pass.dq_chunk(), 64);
                // The cube sums each dQ tile over its 128 keys, a warpgroup a half of D, at
                // D = 128 and 256; at 64 each warpgroup its own keys over all of D.
                assert_eq!(dk_pass.dq_by_cube(), d >= 128);
                assert_eq!(dk_pass.dq_columns(), if d >= 128 { d / 2 } else { d });
                assert!(!dv_pass.dq_by_cube() && !p.dq_by_cube());
            }
        }
        // D = 256 with K alone: 64 KiB, against 128 KiB with V.
        assert_eq!(params(256, 256, false).dv_pass().kv_bytes(), 65536);
        for (d, dv) in [(64, 64), (128, 128), (128, 64)] {
            assert!(!params(d, dv, false).splits());
        }
    }

    /// Pairs only where the blocks' work grows with their place: a causal mask, not a
    /// window with both bounds or none.
    #[test]
    fn walks_pairs_only_under_a_causal_mask() {
        assert!(params(128, 128, true).paired());
        assert!(!params(128, 128, false).paired());
        let window = WgmmaBwdParams {
            has_left: true,
            ..params(128, 128, true)
        };
        assert!(!window.paired());
    }
}
