//! A first flash-attention forward on warpgroup MMA (sm_90a): the prototype that measures
//! what `super::wgmma` gives the attention, before it joins the selector.
//!
//! Each warpgroup owns 64 query rows (plane `w` of it rows `16w..16w + 16`, as in the
//! accumulator layout of `super`); a cube has `warpgroups` of them. Q stays in registers as
//! A fragments. K and V tiles arrive by asynchronous 16-byte copies in the core-matrix layout
//! of `super::core_chunk` (written chunk by chunk in that order), both stored key by key: K is then the K-major B of `S = Q·Kᵀ`
//! and V the MN-major B of `O += P·V`. The scores of two adjacent 8-key tiles have the layout
//! of one A fragment, so P goes from the softmax into `P·V` by a cast, pair for pair. The
//! softmax is the MMA kernel's (`attention::forward::mma`): base-2 exponents of raw scores,
//! and O rescaled only when a row's maximum moves by more than the slack.
//!
//! Scope of the prototype: no mask, bias, softcap, dropout, window or GQA; contiguous
//! `[B, H, S, D]` inputs; the host checks that the lengths are multiples of the tiles.

use cubecl::ir::FastMath;
use cubecl::prelude::barrier::Barrier;
use cubecl::prelude::*;

use super::pipelined::{online_softmax, rescale, to_operand, write_rows};
use super::{b_descriptor, descriptor, smem_address, wgmma};
use crate::attention::forward::mma::{Pair, copy_chunk};

/// Slack of the reference maximum, as in the MMA kernel: ln 256, here in base-2 units (8).
pub(super) const RESCALE_SLACK_LOG2: f32 = 5.545_177 * core::f32::consts::LOG2_E;
/// ln 2: the log-sum-exp from base-2 maxima.
pub(super) const LN_2: f32 = core::f32::consts::LN_2;

/// Compile-time shape of one warpgroup-MMA forward kernel: the prototype or the pipelined
/// kernel (`Variant::Wgmma` of the selector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct WgmmaFwdParams {
    /// Warpgroups per cube (64 query rows each).
    pub warpgroups: u32,
    /// Keys per tile (a multiple of 16, up to 256).
    pub block_kv: u32,
    /// `D` (a multiple of 16, up to 256).
    pub head_dim: u32,
    /// `Dv` (a multiple of 16, up to 256).
    pub val_dim: u32,
    /// FlashAttention-3's shape (`super::pipelined`): a producer warp, asynchronous
    /// products, Q in shared memory, K and V in 2-4 buffers. Otherwise this module's
    /// synchronous prototype.
    pub pipelined: bool,
    /// A timing experiment of the pipelined kernel, which then gives wrong results.
    pub ablation: Ablation,
    /// Pipelined only: a window bound on the left.
    pub has_left: bool,
    /// Pipelined only: a window bound on the right (causal).
    pub has_right: bool,
    /// Output elements written at once: 2, or 1 where the output's strides are odd.
    pub out_vec: u32,
    /// Pipelined only: the producer copies by TMA (one thread, one instruction per 16-byte
    /// column of a tile) instead of cp.async (every producer thread, one per 16 bytes).
    pub tma: bool,
    /// Pipelined only: O leaves by TMA, staged by `stmatrix` in the block's last V buffer,
    /// instead of each thread's 4-byte stores (`super::pipelined::store_rows_tma`). Needs
    /// [`WgmmaFwdParams::tma_store_fits`].
    pub tma_store: bool,
    /// Pipelined only: columns of `val_dim` past the output's own Dv (0, or 32 where
    /// D = 96 runs as 128 in 128-byte swizzled rows). TMA fills the extra columns of every
    /// copy with zeros and clips them from its store; the plain stores leave them out.
    pub val_pad: u32,
}

/// Work the pipelined kernel leaves out, to time what remains (its results are then wrong).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Ablation {
    /// Nothing: the real kernel.
    #[default]
    None,
    /// K and V are copied into each buffer once; later tiles reuse them.
    NoLoads,
}

/// Registers per thread that `warpgroups` consumer warpgroups take with `setmaxnreg` beside
/// one producer warpgroup left with `producer`, `cubes_per_sm` cubes sharing an SM: the
/// launch's share (65536 over the threads of those cubes, down to a multiple of 8, at most
/// 256) plus what the producer releases, split among them.
pub const fn consumer_share(warpgroups: u32, producer: u32, cubes_per_sm: u32) -> u32 {
    let threads = 128 * (warpgroups + 1) * cubes_per_sm;
    let share = 65536 / threads / 8 * 8;
    let base = if share > 256 { 256 } else { share };
    let extra = (base - producer) / warpgroups / 8 * 8;
    if base + extra > 256 {
        256
    } else {
        base + extra
    }
}

impl WgmmaFwdParams {
    /// Shared memory a cube may use on sm_90 (227 KiB).
    pub const SHARED_LIMIT: u32 = 227 * 1024;

    /// Cubes of the pipelined kernel that share an SM: two with one consumer warpgroup
    /// (64-row blocks), so that one cube's block prologue and epilogue (its Q wait, first
    /// scores and softmax, last `P·V` and output) run under the other's products, which the
    /// warpgroups of one cube, walking the same block, cannot hide for each other; else one.
    pub const fn cubes_per_sm(&self) -> u32 {
        if self.pipelined && self.warpgroups == 1 {
            2
        } else {
            1
        }
    }

    /// Shared memory one cube of the pipelined kernel may use: [`Self::SHARED_LIMIT`] alone
    /// on its SM; beside a second cube, half of the SM's 228 KiB less each cube's 1 KiB
    /// reserve (113 KiB; the barriers take the first 1 KiB of it, as the buffer counts
    /// allow for).
    pub const fn shared_limit(&self) -> u32 {
        if self.cubes_per_sm() == 2 {
            113 * 1024
        } else {
            Self::SHARED_LIMIT
        }
    }

    /// Whether the warpgroups move registers with `setmaxnreg`: with two or more consumer
    /// warpgroups, or two cubes an SM (whose even share, 128 a thread, holds no tiling).
    pub const fn moves_registers(&self) -> bool {
        self.warpgroups > 1 || self.cubes_per_sm() > 1
    }

    /// Bytes of one block's Q: one buffer of the Q ring.
    pub const fn q_bytes(&self) -> u32 {
        64 * self.warpgroups * self.head_dim * 2
    }

    /// Whether each consumer loads its 64 rows of Q into registers once per work item, as
    /// `S = Q·Kᵀ`'s A operand, so that the product reads only K from shared memory: with
    /// swizzled tiles, `D = 128` and two consumer warpgroups, whose share of the register
    /// file leaves room for Q's 64 registers a thread (three leave 160 a thread, too few).
    /// Measured 1-3% faster at `D = 128` and 1-2% slower at `D = 64` (`docs/PERF.md`).
    pub const fn q_in_registers(&self) -> bool {
        self.swizzle() && self.warpgroups == 2 && self.head_dim == 128
    }

    /// Bytes of one K tile: one buffer of the K ring.
    pub const fn k_tile_bytes(&self) -> u32 {
        self.block_kv * self.head_dim * 2
    }

    /// Bytes of one V tile: one buffer of the V ring.
    pub const fn v_tile_bytes(&self) -> u32 {
        self.block_kv * self.val_dim * 2
    }

    /// Bytes of one K tile and one V tile together.
    const fn kv_bytes(&self) -> u32 {
        self.k_tile_bytes() + self.v_tile_bytes()
    }

    /// Q buffers of the pipelined kernel: 2 where O leaves by TMA store and two blocks' Q
    /// still leave two buffers each of K and V, so that the producer copies the next
    /// block's Q, K and V while the consumers finish a block; otherwise 1, and the next
    /// block's copies wait until every consumer is past the block's last scores. The TMA
    /// store's barrier among all consumers keeps the turns of the next block behind the
    /// first warpgroup's last turn, which a Q copied ahead no longer does.
    pub const fn q_buffers(&self) -> u32 {
        let two = 2 * self.q_bytes() + 2 * self.kv_bytes() + 1024;
        if self.pipelined && self.tma_store && two <= self.shared_limit() {
            2
        } else {
            1
        }
    }

    /// V buffers of the pipelined kernel: as many K and V pairs as fit beside Q (and 1 KiB
    /// for the barriers), 2 to 4.
    pub const fn v_stages(&self) -> u32 {
        let q = self.q_buffers() * self.q_bytes();
        let fit = self.shared_limit().saturating_sub(q + 1024) / self.kv_bytes();
        if fit < 2 {
            2
        } else if fit > 4 {
            4
        } else {
            fit
        }
    }

    /// K buffers of the pipelined kernel: [`Self::v_stages`], plus one where a K tile still
    /// fits (K is needed a step before V, so its ring gains most from the extra room).
    pub const fn k_stages(&self) -> u32 {
        let v = self.v_stages();
        let used = self.q_buffers() * self.q_bytes() + v * self.kv_bytes() + 1024;
        if v < 4 && used + self.k_tile_bytes() <= self.shared_limit() {
            v + 1
        } else {
            v
        }
    }

    /// Whether the TMA copies land in swizzled rows (`super::sw_descriptor`): 64-element
    /// columns in 128-byte rows, or at a width of 32 the whole 64-byte row
    /// (`super::sw_row_bytes`), one copy per box row instead of one per 16 bytes, which
    /// halves the L2 traffic of the 16-byte boxes (each fetched a 32-byte sector for half of
    /// it). Needs `D` and `Dv` of 32 or multiples of 64; the others keep the 16-byte columns.
    pub const fn swizzle(&self) -> bool {
        const fn rows_swizzle(x: u32) -> bool {
            x == 32 || x.is_multiple_of(64)
        }
        self.pipelined && self.tma && rows_swizzle(self.head_dim) && rows_swizzle(self.val_dim)
    }

    /// Whether each product needs a proxy fence first (`super::wgmma_issue`): `cp.async`
    /// copies write shared memory through the generic proxy, which `wgmma` reads through the
    /// async one. TMA copies write through the async proxy, so their tiles need none; the
    /// output staged by `stmatrix` has its own fence before the TMA store reads it.
    pub const fn proxy_fence(&self) -> bool {
        !self.tma
    }

    /// Whether O can leave by TMA store: the copies land in swizzled rows (the store uses
    /// the same layout) and a block's rows fit in one V buffer (`64 · warpgroups` rows of
    /// `Dv` beside `block_kv` rows of `Dv`).
    pub const fn tma_store_fits(&self) -> bool {
        self.swizzle() && 64 * self.warpgroups <= self.block_kv
    }

    /// Whether each consumer warpgroup stores its own 64 rows of O by TMA, staged in its own
    /// rows of the block's Q buffer (free once Q is in its registers), so that warpgroups never
    /// wait for each other at a block's end: with Q in registers (`D = 128`, two consumers)
    /// and `Dv <= D`, where O leaves by TMA. The Q buffer then goes back to the producer
    /// once both warpgroups' stores have read it.
    pub const fn own_store(&self) -> bool {
        self.tma_store && self.own_store_fits()
    }

    /// Whether [`Self::own_store`] holds wherever O leaves by TMA: Q in registers and
    /// `Dv <= D`, so that a warpgroup's 64 rows of O fit its rows of the Q buffer. The launch
    /// sizes the output map's boxes by it before it knows whether the map can be made.
    pub const fn own_store_fits(&self) -> bool {
        self.q_in_registers() && self.val_dim <= self.head_dim
    }

    /// Whether the consumer warpgroups issue their products in turn (the ping-pong): with
    /// two or more of them, except where each stores its own output ([`Self::own_store`]),
    /// whose warpgroups run free.
    pub const fn turns(&self) -> bool {
        self.warpgroups > 1 && !self.own_store()
    }

    /// Registers per thread of the pipelined kernel's producer warpgroup, after it releases
    /// the rest with `setmaxnreg`: 40 beside two consumers (whose 232 hold every tiling), 32
    /// beside three, which lifts their share from 152 to 160, enough for 128-key tiles at
    /// Dv = 64. The producer's one TMA thread needs few.
    pub const fn producer_registers(&self) -> u32 {
        if self.warpgroups >= 3 { 32 } else { 40 }
    }

    /// Registers per thread the pipelined kernel's consumer warpgroups take with `setmaxnreg`
    /// ([`consumer_share`] of [`Self::producer_registers`]).
    pub const fn consumer_registers(&self) -> u32 {
        consumer_share(
            self.warpgroups,
            self.producer_registers(),
            self.cubes_per_sm(),
        )
    }

    /// Shared memory of one cube, in bytes (2-byte elements).
    pub const fn shared_bytes(&self) -> u32 {
        if self.pipelined {
            self.q_buffers() * self.q_bytes()
                + self.k_stages() * self.k_tile_bytes()
                + self.v_stages() * self.v_tile_bytes()
        } else {
            self.kv_bytes()
        }
    }
}

/// Copies rows `start..start + rows` of one (batch, head) of `src` into `tile` in the
/// core-matrix layout, 16 bytes per copy: consecutive lanes fill consecutive chunks of the
/// tile, eight rows of one 16-byte column per core matrix. Rows at or past `seq` are zero.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_core_async<E: Float, N: Size>(
    src: &Tensor<Vector<E, N>>,
    base: usize,
    start: u32,
    seq: u32,
    tile: &mut SharedMemory<Vector<E, N>>,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let per_row = comptime!(width / 8);
    let total = comptime!(rows * width / 8);
    let stride = src.stride(2) / 8;
    #[unroll]
    for i in 0..comptime!(total.div_ceil(units)) {
        let idx = tid + i * units;
        if idx < total {
            // `idx` is the destination: core matrix idx / 8 = (row / 8) · per_row + chunk.
            let r = (idx / comptime!(8 * per_row)) * 8 + idx % 8;
            let c = (idx / 8) % per_row;
            let row = start + r;
            let inside = row < seq;
            let at = base / 8 + select(inside, row, 0u32) as usize * stride + c as usize;
            copy_chunk::<E, N>(src, at, inside, tile, idx as usize);
        }
    }
}

/// Elements `2t` and `2t + 1` of a 16-byte vector, without a dynamic index (which would
/// put the vector in local memory).
#[cube]
fn pair_at<E: Float, N: Size>(v: Vector<E, N>, t: u32) -> Vector<E, Pair> {
    let mut out = Vector::<E, Pair>::new(v[0]);
    out[1] = v[1];
    #[unroll]
    for i in 1..4u32 {
        if t == i {
            out[0] = v[(2 * i) as usize];
            out[1] = v[(2 * i + 1) as usize];
        }
    }
    out
}

/// The prototype forward. Grid `(Sq / (64·warpgroups), B·H)`, cube `(32, 4·warpgroups)`;
/// `scale_log2` is the softmax scale times log2(e).
#[cube(launch_unchecked, fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_fwd_wgmma<E: Float, N: Size, NO: Size>(
    q: &Tensor<Vector<E, N>>,
    k: &Tensor<Vector<E, N>>,
    v: &Tensor<Vector<E, N>>,
    out: &mut Tensor<Vector<E, NO>>,
    lse: &mut Tensor<f32>,
    scale_log2: f32,
    #[comptime] p: WgmmaFwdParams,
    #[define(E)] _dtype: StorageType,
) {
    let units = comptime!(p.warpgroups * 128);
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let tid = plane * 32 + lane;
    let g = lane / 4;
    let t = lane % 4;
    let heads = q.shape(1) as u32;
    let seq_q = q.shape(2) as u32;
    let seq_kv = k.shape(2) as u32;
    let bh = CUBE_POS_Y;
    let b = bh / heads;
    let h = bh % heads;
    // Row g of this plane's 16; row g + 8 is the second of each pair.
    let row0 = CUBE_POS_X * comptime!(64 * p.warpgroups) + plane * 16 + g;

    let k_base = b as usize * k.stride(0) + h as usize * k.stride(1);
    let v_base = b as usize * v.stride(0) + h as usize * v.stride(1);
    let mut k_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.block_kv * p.head_dim / 8) as usize),
        16usize,
    );
    let mut v_s = SharedMemory::<Vector<E, N>>::new_aligned(
        comptime!((p.block_kv * p.val_dim / 8) as usize),
        16usize,
    );
    let k_ready = Barrier::shared(units, tid == 0);
    let v_ready = Barrier::shared(units, tid == 0);
    stage_core_async::<E, N>(
        k, k_base, 0u32, seq_kv, &mut k_s, p.block_kv, p.head_dim, units, tid,
    );
    k_ready.commit_copy_async();
    k_ready.arrive();

    // Q as A fragments: step s, pair 2·half + r holds row g + 8r, columns 16s + 8·half + 2t.
    let q_base = b as usize * q.stride(0) + h as usize * q.stride(1);
    let mut q_frag = Array::<Vector<E, Pair>>::new(comptime!((p.head_dim / 4) as usize));
    #[unroll]
    for s in 0..comptime!(p.head_dim / 16) {
        #[unroll]
        for half in 0..2u32 {
            #[unroll]
            for r in 0..2u32 {
                let row = min(row0 + r * 8, seq_q - 1);
                let at = (q_base + row as usize * q.stride(2)) / 8 + (2 * s + half) as usize;
                q_frag[(4 * s + 2 * half + r) as usize] = pair_at::<E, N>(q[at], t);
            }
        }
    }

    let s_pairs = comptime!(p.block_kv / 4);
    let o_pairs = comptime!(p.val_dim / 4);
    let mut s_acc = Array::<Vector<f32, Pair>>::new(s_pairs as usize);
    let mut o_acc = Array::<Vector<f32, Pair>>::new(o_pairs as usize);
    let mut p_frag = Array::<Vector<E, Pair>>::new(s_pairs as usize);
    #[unroll]
    for i in 0..o_pairs {
        o_acc[i as usize] = Vector::new(0.0f32);
    }
    let mut m_run = Array::<f32>::new(2usize);
    let mut l_run = Array::<f32>::new(2usize);
    let mut alpha = Array::<f32>::new(2usize);
    #[unroll]
    for r in 0..2u32 {
        m_run[r as usize] = f32::new(-3.0e38);
        l_run[r as usize] = 0.0f32;
    }
    let (k_lbo, k_sbo, k_step) = comptime!(b_descriptor(p.block_kv, p.head_dim, false));
    let (v_lbo, v_sbo, v_step) = comptime!(b_descriptor(p.val_dim, p.block_kv, true));
    let k_desc = descriptor::<E>(
        smem_address::<E, N>(&k_s.slice(0usize, 1usize)),
        k_lbo,
        k_sbo,
        k_step,
    );
    let v_desc = descriptor::<u16>(
        smem_address::<E, N>(&v_s.slice(0usize, 1usize)),
        v_lbo,
        v_sbo,
        v_step,
    );

    let mut parity = 0u32;
    let mut start = 0u32;
    while start < seq_kv {
        k_ready.wait_parity(parity);
        // Every plane is past the previous tile's P·V before V is overwritten.
        sync_cube();
        stage_core_async::<E, N>(
            v, v_base, start, seq_kv, &mut v_s, p.block_kv, p.val_dim, units, tid,
        );
        v_ready.commit_copy_async();
        v_ready.arrive();

        #[unroll]
        for i in 0..s_pairs {
            s_acc[i as usize] = Vector::new(0.0f32);
        }
        wgmma::<E, E>(&q_frag, &k_desc, &mut s_acc, p.block_kv, p.head_dim);

        v_ready.wait_parity(parity);
        // Every plane is past S = Q·Kᵀ before K is overwritten.
        sync_cube();
        let next = start + p.block_kv;
        if next < seq_kv {
            stage_core_async::<E, N>(
                k, k_base, next, seq_kv, &mut k_s, p.block_kv, p.head_dim, units, tid,
            );
            k_ready.commit_copy_async();
            k_ready.arrive();
        }

        // Online softmax on raw scores (pair 2j + r of S: row g + 8r, keys 8j + 2t, +1).
        if online_softmax(
            &mut s_acc, &mut m_run, &mut l_run, &mut alpha, scale_log2, p.block_kv,
        ) {
            rescale(&mut o_acc, &alpha, p.val_dim);
        }
        to_operand::<E>(&s_acc, &mut p_frag, p.block_kv);
        wgmma::<E, u16>(&p_frag, &v_desc, &mut o_acc, p.val_dim, p.block_kv);
        parity ^= 1;
        start = next;
    }

    // Every row sees every key here, so no row has l = 0 and the LSE's stand-in for -inf
    // is never written.
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
        scale_log2,
        f32::new(-3.0e38),
        p.val_dim,
        p.out_vec,
    );
}

#[cfg(test)]
mod tests {
    use super::{WgmmaFwdParams, consumer_share};

    /// The register split `setmaxnreg` asks for: two consumers beside a producer of 40
    /// (the forward's) take 232, beside one of 24 (the backward's) 240, three consumers beside
    /// 40 take 152 and beside 32 (the forward's there) 160; every split stays within the
    /// launch's 65536 registers.
    #[test]
    fn consumers_take_what_the_producer_releases() {
        assert_eq!(consumer_share(2, 40, 1), 232);
        assert_eq!(consumer_share(2, 24, 1), 240);
        assert_eq!(consumer_share(3, 40, 1), 152);
        assert_eq!(consumer_share(3, 32, 1), 160);
        // One consumer beside a producer of 40, two cubes an SM: 128 + 88.
        assert_eq!(consumer_share(1, 40, 2), 216);
        for warpgroups in 1..=3 {
            for producer in [24, 32, 40] {
                for cubes in [1, 2] {
                    let consumers = consumer_share(warpgroups, producer, cubes);
                    assert!(cubes * 128 * (warpgroups * consumers + producer) <= 65536);
                    assert_eq!(consumers % 8, 0);
                }
            }
        }
        let forward = |warpgroups| WgmmaFwdParams {
            warpgroups,
            pipelined: true,
            ..Default::default()
        };
        assert_eq!(forward(2).consumer_registers(), 232);
        assert_eq!(forward(3).consumer_registers(), 160);
        assert_eq!(forward(1).consumer_registers(), 216);
        assert!(forward(1).moves_registers());
    }

    /// One consumer warpgroup runs two cubes an SM, each within half its shared memory (with
    /// the barriers' 1 KiB and the cube's 1 KiB reserve): at D = 64 128-key tiles keep two
    /// Q buffers and four K and V buffers (112 KiB); at D = 128 the 64x64 tiling keeps two
    /// Q buffers, three K and two V buffers (112 KiB), and 128-key tiles do not fit.
    #[test]
    fn one_warpgroup_shares_its_sm_with_a_second_cube() {
        let p = params(1, 128, 64, true);
        assert_eq!(p.cubes_per_sm(), 2);
        assert_eq!(buffers(p), (2, 3, 3));
        let d128 = params(1, 64, 128, true);
        assert_eq!(buffers(d128), (2, 3, 2));
        for p in [p, d128] {
            assert!(p.shared_bytes() <= 112 * 1024, "{p:?}");
            assert!(2 * (p.shared_bytes() + 2048) <= 228 * 1024);
        }
        assert!(params(1, 128, 128, true).shared_bytes() > p.shared_limit());
        assert_eq!(params(2, 128, 128, true).cubes_per_sm(), 1);
        // The prototype (not pipelined) keeps one cube an SM.
        let prototype = WgmmaFwdParams {
            pipelined: false,
            ..p
        };
        assert_eq!(prototype.cubes_per_sm(), 1);
    }

    fn params(warpgroups: u32, block_kv: u32, d: u32, tma_store: bool) -> WgmmaFwdParams {
        WgmmaFwdParams {
            warpgroups,
            block_kv,
            head_dim: d,
            val_dim: d,
            pipelined: true,
            tma: true,
            tma_store,
            ..WgmmaFwdParams::default()
        }
    }

    fn buffers(p: WgmmaFwdParams) -> (u32, u32, u32) {
        (p.q_buffers(), p.k_stages(), p.v_stages())
    }

    #[test]
    fn the_main_tilings_take_a_second_q_buffer_only_with_the_tma_store() {
        // 128x128, D = 128: two Q buffers cost the third V buffer, not a K one (224 KiB).
        assert_eq!(buffers(params(2, 128, 128, true)), (2, 3, 2));
        assert_eq!(params(2, 128, 128, true).shared_bytes(), 224 * 1024);
        assert_eq!(buffers(params(2, 128, 128, false)), (1, 3, 3));
        assert_eq!(params(2, 128, 128, false).shared_bytes(), 224 * 1024);
        // D = 64 has room for both.
        assert_eq!(buffers(params(2, 128, 64, true)), (2, 4, 4));
        assert_eq!(buffers(params(2, 128, 64, false)), (1, 4, 4));
    }

    #[test]
    fn every_tiling_that_fits_keeps_two_buffers_of_each_ring() {
        for wg in 1..=3 {
            for kv in [64, 96, 128, 176, 192] {
                for d in [64, 128, 192, 256] {
                    for store in [false, true] {
                        let p = params(wg, kv, d, store);
                        let (q, k, v) = buffers(p);
                        assert!(k >= v && v >= 2 && k <= 4, "{p:?}: {k} K, {v} V");
                        let one_q = params(wg, kv, d, false).shared_bytes();
                        if q == 2 {
                            assert!(store, "{p:?}");
                            assert!(p.shared_bytes() <= p.shared_limit(), "{p:?}");
                        } else if one_q <= p.shared_limit() {
                            assert!(p.shared_bytes() <= p.shared_limit(), "{p:?}");
                        }
                    }
                }
            }
        }
    }

    /// Only the two-consumer kernel with Q in registers (D = 128) and O leaving by TMA stores
    /// per warpgroup, and only there are the turns off; the three-consumer kernels, which
    /// gain from the turns, keep them.
    #[test]
    fn warpgroups_store_their_own_output_only_with_q_in_registers() {
        let own = params(2, 128, 128, true);
        assert!(own.own_store() && !own.turns());
        let narrower = WgmmaFwdParams { val_dim: 64, ..own };
        assert!(narrower.own_store());
        let wider = WgmmaFwdParams {
            val_dim: 256,
            ..own
        };
        assert!(!wider.own_store() && wider.turns());
        assert!(!params(2, 128, 128, false).own_store());
        assert!(params(2, 128, 128, false).own_store_fits());
        assert!(params(2, 128, 128, false).turns());
        for d in [32, 64, 256] {
            assert!(!params(2, 128, d, true).own_store(), "D = {d}");
            assert!(params(2, 128, d, true).turns(), "D = {d}");
        }
        assert!(params(3, 128, 64, true).turns());
        assert!(!params(1, 128, 64, true).turns());
    }
}
