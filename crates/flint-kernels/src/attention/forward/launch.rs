//! Launching the forward: choose a config through the selector (autotuning on first use of
//! a shape bucket), then run it.

use cubecl::prelude::*;
use cubecl::server::{MemoryLayout, MemoryLayoutDescriptor};
use cubecl::zspace::Shape;
use flint_tune::{Choice, Invocation, Op, Selector};

use super::cmma::{CmmaParams, attention_fwd_cmma, score_vector};
use super::combine::{COMBINE_PLANES, attention_fwd_combine};
use super::mma::{MmaParams, attention_fwd_mma};
use super::portable::{PortableParams, PortableScalarsLaunch, attention_fwd_portable};
use crate::attention::dropout::kernel_seed;
use crate::attention::warm::{self, WarmKey};
use crate::attention::{AttentionFwdConfig, AttentionFwdOp, AttentionProblem, Variant};
use crate::wgmma::attention::WgmmaFwdParams;
use crate::wgmma::pipelined::attention_fwd_wgmma_pipelined;
use crate::{CubeclBenchmark, DeviceLimits, Dispatch, KernelError, fingerprint};

/// The tensors of one forward launch. Any strides are honoured.
pub struct AttentionFwdArgs<R: Runtime> {
    /// `q: [B, H, Sq, D]`.
    pub q: TensorArg<R>,
    /// `k: [B, Hkv, Sk, D]`.
    pub k: TensorArg<R>,
    /// `v: [B, Hkv, Sk, Dv]`.
    pub v: TensorArg<R>,
    /// f32 additive bias, 4-D with the last two dims `[Sq, Sk]`; any 1-element f32
    /// tensor when the problem has none.
    pub bias: TensorArg<R>,
    /// Bias strides over batch and heads (0 where it broadcasts).
    pub bias_strides: (usize, usize),
    /// `out: [B, H, Sq, Dv]`, written.
    pub out: TensorArg<R>,
    /// `lse: [B, H, Sq]` in f32, written.
    pub lse: TensorArg<R>,
}

/// Runs the forward of `problem`. `args` makes fresh launch arguments (it is called once per
/// benchmark run and once for the final launch); `dtype` is the element type of q, k, v and
/// out; `config` overrides the selector.
///
/// # Errors
/// [`KernelError::Tune`] when no config can run the problem on this device (with every
/// tier's reason), [`KernelError::Launch`] when the launch fails.
pub fn launch_attention_fwd<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    problem: &AttentionProblem,
    dtype: StorageType,
    config: Option<AttentionFwdConfig>,
    args: impl Fn() -> AttentionFwdArgs<R> + Send + Sync,
) -> Result<Choice<AttentionFwdConfig>, KernelError> {
    let choice = choose_attention_fwd(client, device, selector, problem, dtype, config, &args)?;
    launch_attention_fwd_chosen(client, problem, dtype, &choice.config, args())?;
    Ok(choice)
}

/// Runs the forward of `problem` with `config`, which the selector has already chosen or
/// checked for this problem on this device ([`choose_attention_fwd`]): a deferred launcher
/// (Burn's fusion stream) chooses on the caller's thread and launches here, without the
/// selector's tiers a second time on the stream's thread, where each call's host work sets
/// the pace of short kernels.
///
/// # Errors
/// [`KernelError::Launch`] when the launch fails.
pub fn launch_attention_fwd_chosen<R: Runtime>(
    client: &ComputeClient<R>,
    problem: &AttentionProblem,
    dtype: StorageType,
    config: &AttentionFwdConfig,
    args: AttentionFwdArgs<R>,
) -> Result<(), KernelError> {
    launch_with(client, problem, dtype, config, args, Dispatch::Run).map_err(|reason| {
        KernelError::Launch {
            kernel: "attention_fwd",
            reason,
        }
    })
}

/// Chooses the forward config of `problem` without the final launch. On a cache miss the
/// candidates are benchmarked on the tensors `args` makes, which may be scratch tensors of
/// the right shapes: a deferred launcher (Burn's fusion streams) tunes here, ahead of time,
/// because benchmarking needs device syncs that must not run inside a stream.
///
/// # Errors
/// [`KernelError::Tune`] when no config can run the problem on this device.
pub fn choose_attention_fwd<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    problem: &AttentionProblem,
    dtype: StorageType,
    config: Option<AttentionFwdConfig>,
    args: impl Fn() -> AttentionFwdArgs<R> + Send + Sync,
) -> Result<Choice<AttentionFwdConfig>, KernelError> {
    let warm_key = config
        .is_none()
        .then(|| WarmKey::new::<R>(device, problem, dtype, false));
    warm::choose_warm(&warm::FWD, selector, warm_key, || {
        let (op, mut inv) = fwd_invocation(client, device, problem);
        if let Some(config) = config {
            inv = inv.with_override(config);
        }
        let mut bench =
            CubeclBenchmark::new(client, "attention_fwd", |c: &AttentionFwdConfig, d| {
                launch_with(client, problem, dtype, c, args(), d)
            });
        Ok(selector.choose(&op, &inv, Some(&mut bench))?)
    })
}

/// Starts compiling the forward's candidates for `problem` ahead of its first call, when
/// that call would autotune and the runtime compiles in the background
/// ([`crate::compiles_in_background`]); [`prepare_attention_bwd`](crate::attention::prepare_attention_bwd)
/// for the forward. A training step's first forward calls it before preparing the backward:
/// the runtime compiles a bounded number of kernels at a time, and the forward's candidates,
/// which the forward's tuning waits for, then take the first of those slots rather than wait
/// behind the backward's. Returns whether it started any. Nothing runs: `args` may make
/// uninitialised tensors of the call's shapes, and is called only when there is something to
/// compile.
pub fn prepare_attention_fwd<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    problem: &AttentionProblem,
    dtype: StorageType,
    args: impl Fn() -> AttentionFwdArgs<R> + Send + Sync,
) -> bool {
    let key = WarmKey::new::<R>(device, problem, dtype, false);
    let (op, inv) = fwd_invocation(client, device, problem);
    warm::prepare_cold(
        &warm::FWD,
        selector,
        &key,
        client,
        "attention_fwd",
        &op,
        &inv,
        |c| launch_with(client, problem, dtype, c, args(), Dispatch::CompileOnly),
    )
}

/// The forward op on `client`'s device and the invocation of `problem` it is chosen for.
fn fwd_invocation<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    problem: &AttentionProblem,
) -> (AttentionFwdOp, Invocation) {
    let op = AttentionFwdOp::new(DeviceLimits::of(client));
    let inv = Invocation::new(
        op.id(),
        problem.signature(),
        fingerprint::<R>(client, device),
    );
    (op, inv)
}

fn launch_with<R: Runtime>(
    client: &ComputeClient<R>,
    problem: &AttentionProblem,
    dtype: StorageType,
    c: &AttentionFwdConfig,
    args: AttentionFwdArgs<R>,
    dispatch: Dispatch,
) -> Result<(), String> {
    let to_u32 =
        |x: usize, what: &str| u32::try_from(x).map_err(|_| format!("{what} {x} exceeds u32"));
    let q_blocks = to_u32(problem.seq_q.div_ceil(c.block_q as usize), "query blocks")?;
    let bh = to_u32(problem.batch * problem.heads, "batch x heads")?;
    let (left, right) = problem.window;
    // Split-K: whole tiles per part, so that only the sequence's last tile is partial.
    let splits = c.splits.max(1) as usize;
    let split_keys = if splits > 1 {
        problem
            .seq_kv
            .div_ceil(splits)
            .div_ceil(c.block_kv as usize)
            * c.block_kv as usize
    } else {
        0
    };
    let scalars = scalars::<R>(problem, args.bias_strides, split_keys)?;
    let head_dim = to_u32(problem.head_dim, "head_dim")?;
    let val_dim = to_u32(problem.val_dim, "val_dim")?;
    match c.variant {
        Variant::Cmma => {
            // Vectors as wide as the device and every input allow (Vulkan: 4 elements).
            let most = client.properties().hardware.max_vector_size;
            let widths: &[usize] = match most {
                8.. => &[8, 4],
                4..8 => &[4],
                _ => &[],
            };
            let vec = input_vector(&args, problem, widths);
            let svec = score_vector(vec as u32) as usize;
            let params = CmmaParams {
                planes: c.planes(),
                m_frags: c.m_tiles(),
                block_kv: c.block_kv,
                head_dim,
                val_dim,
                vec: vec as u32,
                svec: svec as u32,
                has_left: left.is_some(),
                has_right: right.is_some(),
                has_bias: problem.has_bias,
                has_softcap: problem.softcap.is_some(),
                has_dropout: problem.dropout.is_some(),
                raw_max: !problem.has_bias && problem.softcap.is_none() && problem.scale > 0.0,
            };
            // SAFETY: the kernel guards each global index against the shapes it is given, and
            // its fragments address shared memory it sized from the same parameters (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_fwd_cmma::launch_unchecked::<R>(
                    client,
                    dispatch.grid(q_blocks, bh, 1),
                    CubeDim::new_2d(32, c.planes()),
                    vec,
                    svec,
                    args.q,
                    args.k,
                    args.v,
                    args.bias,
                    args.out,
                    args.lse,
                    scalars,
                    params,
                    dtype,
                );
            }
        }
        Variant::Portable => {
            let params = PortableParams {
                has_left: left.is_some(),
                has_right: right.is_some(),
                has_bias: problem.has_bias,
                has_softcap: problem.softcap.is_some(),
                has_dropout: problem.dropout.is_some(),
                ..c.portable_params(problem.head_dim, problem.val_dim)
            };
            // SAFETY: the kernel guards each index against the shapes it is given (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_fwd_portable::launch_unchecked::<R>(
                    client,
                    dispatch.grid(q_blocks, bh, 1),
                    CubeDim::new_1d(c.units()),
                    args.q,
                    args.k,
                    args.v,
                    args.bias,
                    args.out,
                    args.lse,
                    scalars,
                    params,
                    dtype,
                );
            }
        }
        Variant::Wgmma => {
            // The kernel copies 16-byte rows and takes raw maxima (a positive scale). The
            // other calls of its bucket, which no signature field tells apart, run the MMA
            // kernel, which any tensor-core device with warpgroup MMA also has.
            let wide = input_vector(&args, problem, &[8]) == 8;
            if !wide || problem.scale <= 0.0 {
                let mma = AttentionFwdConfig::new(Variant::Mma, 64, 64);
                return launch_with(client, problem, dtype, &mma, args, dispatch);
            }
            let out_vec = if vector_ok(args.out.strides(), 2) {
                2
            } else {
                1
            };
            let mut params = WgmmaFwdParams {
                has_left: left.is_some(),
                has_right: right.is_some(),
                out_vec: out_vec as u32,
                tma: true,
                ..c.wgmma_params(problem.head_dim, problem.val_dim)
            };
            // A persistent grid: as many cubes as the SMs hold at once (one each, or two of
            // one consumer warpgroup; their registers and shared memory bound them).
            let slots = streaming_multiprocessors(client) * params.cubes_per_sm();
            let g = head_groups(problem, bh, q_blocks, slots);
            // Pairs of query blocks (see `paired_block`).
            let pairs = q_blocks
                .div_ceil(2)
                .checked_mul(bh)
                .ok_or_else(|| format!("{q_blocks} query blocks x {bh} heads exceed u32"))?;
            let cubes = pairs.min(slots);
            let grid = dispatch.grid(cubes, 1, 1);
            let (bq, bkv) = (c.block_q as usize, c.block_kv as usize);
            // Each tensor's boxes at its run width where the rows are swizzled.
            let sw = params.swizzle();
            let (d_sw, dv_sw) = (sw.then_some(params.head_dim), sw.then_some(params.val_dim));
            let (Some(q_map), Some(k_map), Some(v_map)) = (
                tile_map(&args.q, bq, dtype, d_sw),
                tile_map(&args.k, bkv, dtype, d_sw),
                tile_map(&args.v, bkv, dtype, dv_sw),
            ) else {
                return Err("the wgmma kernel's inputs must be tensor handles".into());
            };
            // O leaves by TMA where its strides allow a tensor map (16-byte rows); otherwise
            // the kernel takes Q's map in that place and never reads it.
            // Boxes of a warpgroup's 64 rows where each stores its own (`own_store`).
            let out_rows = if params.own_store_fits() { 64 } else { bq };
            let out_map = if params.tma_store_fits() && vector_ok(args.out.strides(), 8) {
                tile_map(&args.out, out_rows, dtype, dv_sw)
            } else {
                None
            };
            params.tma_store = out_map.is_some();
            let Some(out_map) = out_map.or_else(|| tile_map(&args.q, bq, dtype, d_sw)) else {
                return Err("the wgmma kernel's inputs must be tensor handles".into());
            };
            // SAFETY: the kernel guards each global index against the shapes it is given
            // (rows past Sq or Sk are zero-filled and masked); its shared-memory layout is
            // sized from the same parameters (see `crate::attention` on bounds).
            unsafe {
                attention_fwd_wgmma_pipelined::launch_unchecked::<R>(
                    client,
                    grid,
                    CubeDim::new_2d(32, c.planes()),
                    8,
                    out_vec,
                    args.q,
                    args.k,
                    args.v,
                    q_map,
                    k_map,
                    v_map,
                    args.out,
                    out_map,
                    args.lse,
                    scalars,
                    g,
                    params,
                    dtype,
                );
            }
        }
        Variant::Mma => {
            // 16-byte loads where every input allows them, else one element at a time.
            let vec = input_vector(&args, problem, &[8]);
            let wide = vec == 8;
            let out_vec = if vector_ok(args.out.strides(), 2) {
                2
            } else {
                1
            };
            // GQA packing: when a whole group's queries fit one block, one cube per KV head
            // serves them all, reading each K and V tile once instead of once per query head.
            let group = problem.heads / problem.kv_heads.max(1);
            let packed = wide && group > 1 && problem.seq_q * group <= c.block_q as usize;
            let (q_blocks, bh) = if packed {
                (
                    1,
                    to_u32(problem.batch * problem.kv_heads, "batch x kv heads")?,
                )
            } else {
                (q_blocks, bh)
            };
            // Causal work grows with the query block: launch every head's heavy blocks
            // first. Otherwise neighbouring cubes share a head, and its K and V in L2.
            let heads_major = causal_order(problem) && q_blocks <= MAX_GRID_Y;
            let z = to_u32(splits, "splits")?;
            let grid = if heads_major {
                dispatch.grid(bh, q_blocks, z)
            } else {
                dispatch.grid(q_blocks, bh, z)
            };
            let split = splits > 1;
            let out_vec = if split { 2 } else { out_vec };
            let params = MmaParams {
                split,
                vec: vec as u32,
                out_vec: out_vec as u32,
                planes: c.planes(),
                m_tiles: c.m_tiles(),
                block_kv: c.block_kv,
                head_dim,
                val_dim,
                has_left: left.is_some(),
                has_right: right.is_some(),
                has_bias: problem.has_bias,
                has_softcap: problem.softcap.is_some(),
                has_dropout: problem.dropout.is_some(),
                packed,
                raw_max: !problem.has_bias && problem.softcap.is_none() && problem.scale > 0.0,
                heads_major,
            };
            if !split {
                // SAFETY: the kernel guards each index against the shapes it is given (see
                // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
                unsafe {
                    attention_fwd_mma::launch_unchecked::<R>(
                        client,
                        grid,
                        CubeDim::new_2d(32, c.planes()),
                        vec,
                        out_vec,
                        args.q,
                        args.k,
                        args.v,
                        args.bias,
                        args.out,
                        args.lse,
                        scalars,
                        params,
                        dtype,
                        dtype,
                    );
                }
                return Ok(());
            }
            // Each part's output (f32) and LSE, part z at batch z·B + b, then the merge.
            let (b, h, sq, dv) = (problem.batch, problem.heads, problem.seq_q, problem.val_dim);
            let o_shape = [splits * b, h, sq, dv];
            let l_shape = [splits * b, h, sq];
            // Both in one allocation task.
            let mut parts = client
                .empty_tensors(vec![
                    MemoryLayoutDescriptor::contiguous(o_shape.to_vec().into(), 4),
                    MemoryLayoutDescriptor::contiguous(l_shape.to_vec().into(), 4),
                ])
                .into_iter();
            let (Some(o_part), Some(l_part)) = (parts.next(), parts.next()) else {
                return Err("no split-K workspace was allocated".into());
            };
            // SAFETY: each layout was just allocated for exactly this shape.
            let part = |layout: &MemoryLayout, shape: &[usize]| unsafe {
                TensorArg::<R>::from_raw_parts(
                    layout.memory.clone(),
                    layout.strides.clone(),
                    Shape::from(shape.to_vec()),
                )
            };
            let f32_type = f32::as_type_native_unchecked().storage_type();
            // SAFETY: the kernel guards each index against the shapes it is given (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_fwd_mma::launch_unchecked::<R>(
                    client,
                    grid,
                    CubeDim::new_2d(32, c.planes()),
                    vec,
                    out_vec,
                    args.q,
                    args.k,
                    args.v,
                    args.bias,
                    part(&o_part, &o_shape),
                    part(&l_part, &l_shape),
                    scalars,
                    params,
                    dtype,
                    f32_type,
                );
            }
            let rows = to_u32(b * h * sq, "output rows")?;
            // SAFETY: the kernel guards each index against the shapes it is given (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_fwd_combine::launch_unchecked::<R>(
                    client,
                    dispatch.grid(rows, 1, 1),
                    CubeDim::new_2d(32, COMBINE_PLANES),
                    part(&o_part, &o_shape),
                    part(&l_part, &l_shape),
                    args.out,
                    args.lse,
                    f32::NEG_INFINITY,
                    f32::NAN,
                    z,
                    val_dim,
                    dtype,
                );
            }
        }
    }
    Ok(())
}

/// A TMA map of `t` (`[B, H, S, D]`) that copies `rows` rows of one 8-element column of one
/// (batch, head) at a time, or with `swizzle` (the tile's width) one box of swizzled rows
/// ([`swizzled_map`]); `None` for an aliased argument.
pub(crate) fn tile_map<R: Runtime>(
    t: &TensorArg<R>,
    rows: usize,
    dtype: StorageType,
    swizzle: Option<u32>,
) -> Option<TensorMapArg<R, Tiled>> {
    if let Some(width) = swizzle {
        return swizzled_map(t, rows, dtype, width);
    }
    let tile_size = [1, 1, rows, 8].to_vec().into();
    Some(TensorMapArg::new(
        TiledArgs { tile_size },
        handle_arg(t)?,
        dtype,
    ))
}

/// `t` as a handle argument a tensor map can own, or `None` for an aliased argument.
fn handle_arg<R: Runtime>(t: &TensorArg<R>) -> Option<TensorArg<R>> {
    let TensorArg::Handle { handle } = t else {
        return None;
    };
    Some(TensorArg::Handle {
        handle: handle.clone(),
    })
}

/// A TMA map of `t` (`[B, H, S, D]`) that copies `rows` rows of one box of a tile `width`
/// columns wide in swizzled rows (`crate::wgmma::sw_cols` columns a box: 128-byte rows, or
/// 64-byte ones at a width of 32), or `None` for an aliased argument.
pub(crate) fn swizzled_map<R: Runtime>(
    t: &TensorArg<R>,
    rows: usize,
    dtype: StorageType,
    width: u32,
) -> Option<TensorMapArg<R, Tiled>> {
    let tensor = handle_arg(t)?;
    let cols = crate::wgmma::sw_cols(width);
    let swizzle = if crate::wgmma::sw_row_bytes(width) == 128 {
        TensorMapSwizzle::B128
    } else {
        TensorMapSwizzle::B64
    };
    let tile_size = [1, 1, rows, cols as usize].to_vec().into();
    Some(TensorMapArg::new(TiledArgs { tile_size }, tensor, dtype).with_swizzle(swizzle))
}

/// The most cubes a grid may have along y.
pub(crate) const MAX_GRID_Y: u32 = 65_535;

/// Whether the work per block is uneven enough (a right window bound, no left one: causal)
/// to launch heavy blocks first: those of every head in the MMA kernels' grids, those of a
/// group of heads at a time in the warpgroup kernels' ([`head_groups`]).
pub(crate) fn causal_order(problem: &AttentionProblem) -> bool {
    problem.window.1.is_some() && problem.window.0.is_none()
}

/// The device's SM count, or a typical one where the runtime does not tell.
pub(crate) fn streaming_multiprocessors<R: Runtime>(client: &ComputeClient<R>) -> u32 {
    client
        .properties()
        .hardware
        .num_streaming_multiprocessors
        .unwrap_or(128)
}

/// Heads per group of the warpgroup kernels' walks: the backward's grids `(G, blocks,
/// B·H / G)`, which launch x first, and the forward's persistent walk (`paired_block`). Each
/// group of `G` heads runs its blocks (heaviest first under a causal mask) before the next
/// group starts. Without a causal mask `G = 1`, each head's blocks in turn. With
/// one, `G` aims at about sixteen blocks per head among the cubes of a wave (`sms`: as many as
/// the SMs hold at once), so
/// that those blocks share their K and V in L2. Launching every head at once (`G = B·H`)
/// streams K and V from memory once per block: at 2k on an H100 that read 870 MB where
/// groups of 8 read 201, and ran 30% slower (docs/PERF.md).
pub(crate) fn head_groups(problem: &AttentionProblem, bh: u32, blocks: u32, sms: u32) -> u32 {
    if !causal_order(problem) {
        return 1;
    }
    let target = sms.div_ceil(blocks.clamp(1, 16)).max(1);
    if bh <= target {
        return bh;
    }
    // The divisor of B·H nearest the target within a factor of two, else every head.
    let g = (target.div_ceil(2)..=2 * target)
        .filter(|g| bh.is_multiple_of(*g))
        .min_by_key(|g| g.abs_diff(target))
        .unwrap_or(bh);
    if bh / g > MAX_GRID_Y { bh } else { g }
}

/// Whether a 4-D tensor with `strides` can be read `width` elements at a time along its last
/// dim: that dim contiguous and every other stride a multiple of `width`.
pub(crate) fn vector_ok(strides: &[usize], width: usize) -> bool {
    strides.len() == 4 && strides[3] == 1 && strides[..3].iter().all(|s| s % width == 0)
}

/// The first of `widths` (elements) at which q, k and v can all be read as vectors: every
/// stride allows it and D and Dv are multiples of it; else 1.
fn input_vector<R: Runtime>(
    args: &AttentionFwdArgs<R>,
    problem: &AttentionProblem,
    widths: &[usize],
) -> usize {
    widths
        .iter()
        .copied()
        .find(|&w| {
            [&args.q, &args.k, &args.v]
                .iter()
                .all(|t| vector_ok(t.strides(), w))
                && problem.head_dim.is_multiple_of(w)
                && problem.val_dim.is_multiple_of(w)
        })
        .unwrap_or(1)
}

/// The runtime scalars every attention kernel takes.
pub(crate) fn scalars<R: Runtime>(
    problem: &AttentionProblem,
    bias_strides: (usize, usize),
    split_keys: usize,
) -> Result<PortableScalarsLaunch<R>, String> {
    let to_u32 =
        |x: usize, what: &str| u32::try_from(x).map_err(|_| format!("{what} {x} exceeds u32"));
    let (left, right) = problem.window;
    let (p, seed) = problem.dropout.unwrap_or((0.0, 0));
    Ok(PortableScalarsLaunch::new(
        problem.scale as f32,
        problem.softcap.unwrap_or(1.0) as f32,
        f32::NEG_INFINITY,
        f32::NAN,
        to_u32(left.unwrap_or(0).min(u32::MAX as usize / 4), "window left")?,
        to_u32(
            right.unwrap_or(0).min(u32::MAX as usize / 4),
            "window right",
        )?,
        p as f32,
        kernel_seed(seed),
        to_u32(problem.heads / problem.kv_heads.max(1), "heads per kv head")?,
        to_u32(bias_strides.0, "bias batch stride")?,
        to_u32(bias_strides.1, "bias head stride")?,
        to_u32(split_keys, "keys per split")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(causal: bool) -> AttentionProblem {
        AttentionProblem {
            batch: 8,
            heads: 16,
            kv_heads: 16,
            seq_q: 2048,
            seq_kv: 2048,
            head_dim: 128,
            val_dim: 128,
            dtype: "bf16",
            scale: 0.088,
            softcap: None,
            window: (None, causal.then_some(0)),
            has_bias: false,
            dropout: None,
        }
    }

    #[test]
    fn causal_grids_group_heads_so_a_wave_holds_several_blocks_of_each() {
        // Without a mask every head's blocks run in turn.
        assert_eq!(head_groups(&problem(false), 128, 16, 132), 1);
        // 132 SMs at sixteen blocks a head: the divisor of 128 nearest 9.
        assert_eq!(head_groups(&problem(true), 128, 16, 132), 8);
        assert_eq!(head_groups(&problem(true), 16, 128, 132), 8);
        // Four blocks a head: 33 wanted, 32 divides 128.
        assert_eq!(head_groups(&problem(true), 128, 4, 132), 32);
        // Fewer heads than wanted: all of them, heaviest blocks first.
        assert_eq!(head_groups(&problem(true), 16, 8, 132), 16);
        // A prime count of heads has no divisor near the target: all of them.
        assert_eq!(head_groups(&problem(true), 131, 16, 132), 131);
        // The groups fit the grid's z.
        let g = head_groups(&problem(true), 1 << 20, 16, 132);
        assert!((1 << 20) / g <= MAX_GRID_Y && (1u32 << 20).is_multiple_of(g));
    }
}
