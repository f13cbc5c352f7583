//! Launching the backward: choose a config through the selector (autotuning on first use of
//! a shape bucket), then run the three kernels.

use cubecl::prelude::*;
use flint_tune::{Choice, Invocation, Op, Selector};

use cubecl::server::MemoryLayoutDescriptor;
use cubecl::zspace::Shape;

use super::cmma::{BwdCmmaParams, attention_bwd_dkdv_cmma, attention_bwd_dq_cmma};
use super::dq_accum::{dq_accum_finish, dq_accum_zero};
use super::mma::{
    BwdMmaParams, DkdvGrads, QueryStridesLaunch, attention_bwd_dkdv_mma, attention_bwd_dq_mma,
};
use super::portable::{BwdParams, attention_bwd_delta, attention_bwd_dkdv, attention_bwd_dq};
use crate::attention::bwd_op::mma_splits_dkdv;
use crate::attention::forward::cmma::score_vector;
use crate::attention::forward::{
    MAX_GRID_Y, causal_order, head_groups, scalars, streaming_multiprocessors, swizzled_map,
    vector_ok,
};
use crate::attention::warm::{self, WarmKey};
use crate::attention::{AttentionBwdConfig, AttentionBwdOp, AttentionProblem, Variant};
use crate::wgmma::backward::{
    TILE, WgmmaBwdParams, attention_bwd_dkdv_wgmma, attention_bwd_dq_wgmma,
};
use crate::{CubeclBenchmark, DeviceLimits, Dispatch, KernelError, fingerprint};

/// Units per cube of the delta kernel.
const DELTA_UNITS: u32 = 256;

/// Most units that share one row in the delta kernel (a row of 32 vectors or fewer is read
/// in one step).
const DELTA_LANES: u32 = 32;

/// Units per cube of the dQ accumulator's zeroing and finishing kernels.
const ACCUM_UNITS: u32 = 256;

/// The tensors of one backward launch. Any strides are honoured.
pub struct AttentionBwdArgs<R: Runtime> {
    /// `q: [B, H, Sq, D]`.
    pub q: TensorArg<R>,
    /// `k: [B, Hkv, Sk, D]`.
    pub k: TensorArg<R>,
    /// `v: [B, Hkv, Sk, Dv]`.
    pub v: TensorArg<R>,
    /// The forward's output `[B, H, Sq, Dv]`.
    pub out: TensorArg<R>,
    /// The output's gradient `[B, H, Sq, Dv]`.
    pub dout: TensorArg<R>,
    /// The forward's log-sum-exp `[B, H, Sq]`, f32.
    pub lse: TensorArg<R>,
    /// f32 additive bias as in the forward (any 1-element f32 tensor without one).
    pub bias: TensorArg<R>,
    /// Bias strides over batch and heads (0 where it broadcasts).
    pub bias_strides: (usize, usize),
    /// Scratch `[B, H, Sq]` f32 for `rowsum(dO ∘ O)`.
    pub delta: TensorArg<R>,
    /// Scratch `[B, H, Sq]` f32 for the log-sum-exp in base 2 (`lse · log2 e`), which the
    /// delta kernel writes for the tensor-core kernels.
    pub lse2: TensorArg<R>,
    /// `dq: [B, H, Sq, D]`, written.
    pub dq: TensorArg<R>,
    /// `dk: [B, Hkv, Sk, D]`, written.
    pub dk: TensorArg<R>,
    /// `dv: [B, Hkv, Sk, Dv]`, written.
    pub dv: TensorArg<R>,
    /// The score gradient `[B, H, Sq, Sk]` f32, zero-initialised, written where visible when
    /// the bias gradient is wanted (any 1-element f32 tensor otherwise).
    pub dbias: TensorArg<R>,
}

/// Runs the backward of `problem`. `args` makes fresh launch arguments; it is called once per
/// kernel of every benchmark run and of the final launch. `dtype` is the element type of
/// q, k, v, out and their gradients; `dbias` asks for the score gradient; `config`
/// overrides the selector.
///
/// # Errors
/// [`KernelError::Tune`] when no config can run the problem on this device,
/// [`KernelError::Launch`] when a launch fails.
#[allow(clippy::too_many_arguments)]
pub fn launch_attention_bwd<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    problem: &AttentionProblem,
    dtype: StorageType,
    dbias: bool,
    config: Option<AttentionBwdConfig>,
    args: impl Fn() -> AttentionBwdArgs<R> + Send + Sync,
) -> Result<Choice<AttentionBwdConfig>, KernelError> {
    let choice = choose_attention_bwd(
        client, device, selector, problem, dtype, dbias, config, &args,
    )?;
    launch_attention_bwd_chosen(client, problem, dtype, dbias, &choice.config, args)?;
    Ok(choice)
}

/// Runs the backward of `problem` with `config`, already chosen or checked for this problem
/// on this device ([`choose_attention_bwd`]), as [`launch_attention_fwd_chosen`] does for the
/// forward.
///
/// [`launch_attention_fwd_chosen`]: crate::attention::launch_attention_fwd_chosen
///
/// # Errors
/// [`KernelError::Launch`] when a launch fails.
pub fn launch_attention_bwd_chosen<R: Runtime>(
    client: &ComputeClient<R>,
    problem: &AttentionProblem,
    dtype: StorageType,
    dbias: bool,
    config: &AttentionBwdConfig,
    args: impl Fn() -> AttentionBwdArgs<R> + Send + Sync,
) -> Result<(), KernelError> {
    launch_with(client, problem, dtype, dbias, config, &args, Dispatch::Run).map_err(|reason| {
        KernelError::Launch {
            kernel: "attention_bwd",
            reason,
        }
    })
}

/// Chooses the backward config of `problem` without launching it; on a cache miss the
/// candidates are benchmarked on the tensors `args` makes (scratch tensors will do).
///
/// # Errors
/// [`KernelError::Tune`] when no config can run the problem on this device.
#[allow(clippy::too_many_arguments)]
pub fn choose_attention_bwd<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    problem: &AttentionProblem,
    dtype: StorageType,
    dbias: bool,
    config: Option<AttentionBwdConfig>,
    args: impl Fn() -> AttentionBwdArgs<R> + Send + Sync,
) -> Result<Choice<AttentionBwdConfig>, KernelError> {
    let warm_key = config
        .is_none()
        .then(|| WarmKey::new::<R>(device, problem, dtype, dbias));
    warm::choose_warm(&warm::BWD, selector, warm_key, || {
        let (op, mut inv) = bwd_invocation(client, device, problem, dbias);
        if let Some(config) = config {
            inv = inv.with_override(config);
        }
        let mut bench =
            CubeclBenchmark::new(client, "attention_bwd", |c: &AttentionBwdConfig, d| {
                launch_with(client, problem, dtype, dbias, c, &args, d)
            });
        Ok(selector.choose(&op, &inv, Some(&mut bench))?)
    })
}

/// Starts compiling the backward's candidates for `problem` ahead of its first call, when
/// that call would autotune (see [`Selector::prepare`]) and the runtime compiles in the
/// background ([`crate::compiles_in_background`]); e.g. from the forward of a first training
/// step, so that the backward's compiles overlap the forward's tuning. Returns whether it
/// started any. Nothing runs: `args` may make uninitialised tensors of the call's shapes, and
/// is called only when there is something to compile.
#[allow(clippy::too_many_arguments)]
pub fn prepare_attention_bwd<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    problem: &AttentionProblem,
    dtype: StorageType,
    dbias: bool,
    args: impl Fn() -> AttentionBwdArgs<R> + Send + Sync,
) -> bool {
    let key = WarmKey::new::<R>(device, problem, dtype, dbias);
    let (op, inv) = bwd_invocation(client, device, problem, dbias);
    warm::prepare_cold(
        &warm::BWD,
        selector,
        &key,
        client,
        "attention_bwd",
        &op,
        &inv,
        |c| {
            launch_with(
                client,
                problem,
                dtype,
                dbias,
                c,
                &args,
                Dispatch::CompileOnly,
            )
        },
    )
}

/// The backward op on `client`'s device and the invocation of `problem` it is chosen for.
fn bwd_invocation<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    problem: &AttentionProblem,
    dbias: bool,
) -> (AttentionBwdOp, Invocation) {
    let op = AttentionBwdOp::new(DeviceLimits::of(client));
    let inv = Invocation::new(
        op.id(),
        problem.signature().with("dbias", dbias),
        fingerprint::<R>(client, device),
    );
    (op, inv)
}

fn launch_with<R: Runtime>(
    client: &ComputeClient<R>,
    problem: &AttentionProblem,
    dtype: StorageType,
    dbias: bool,
    c: &AttentionBwdConfig,
    args: &dyn Fn() -> AttentionBwdArgs<R>,
    dispatch: Dispatch,
) -> Result<(), String> {
    // Blocks of at least 64 rows, along the grid's y where dK/dV runs a cube per block.
    let grid_rows = problem.seq_q.max(problem.seq_kv).div_ceil(64);
    if c.variant == Variant::Wgmma
        && (!sixteen_byte_rows(&args()) || grid_rows > MAX_GRID_Y as usize)
    {
        // TMA needs strides in whole 16 bytes: where an input's do not allow them (or a
        // sequence needs more blocks than a grid's y holds), the calls of this bucket run the
        // two-kernel MMA backward.
        let mma = AttentionBwdConfig::new(Variant::Mma, 64, 64);
        return launch_with(client, problem, dtype, dbias, &mma, args, dispatch);
    }
    let to_u32 =
        |x: usize, what: &str| u32::try_from(x).map_err(|_| format!("{what} {x} exceeds u32"));
    let bh = to_u32(problem.batch * problem.heads, "batch x heads")?;
    let bhkv = to_u32(problem.batch * problem.kv_heads, "batch x kv heads")?;
    let q_rows = to_u32(problem.seq_q, "seq_q")?;
    let (left, right) = problem.window;
    // The kernels take the head dims as u32 (`portable_params` casts them).
    to_u32(problem.head_dim.max(problem.val_dim), "head_dim")?;
    let params = BwdParams {
        has_left: left.is_some(),
        has_right: right.is_some(),
        has_bias: problem.has_bias,
        has_dbias: dbias,
        has_softcap: problem.softcap.is_some(),
        has_dropout: problem.dropout.is_some(),
        ..c.portable_params(problem.head_dim, problem.val_dim)
    };
    // delta = rowsum(dO ∘ O) and lse2 = lse · log2 e: memory-bound, one kernel for every
    // variant.
    let a = args();
    // Only the vector width is needed: `DeviceLimits::of` would build its lists on every call.
    let max_vec = client.properties().hardware.max_vector_size;
    let vec = [8usize, 4, 2]
        .into_iter()
        .find(|&w| {
            w <= max_vec
                && problem.val_dim.is_multiple_of(w)
                && vector_ok(a.out.strides(), w)
                && vector_ok(a.dout.strides(), w)
        })
        .unwrap_or(1);
    let vectors = to_u32(problem.val_dim / vec, "value dim")?;
    let lanes = vectors.clamp(1, DELTA_LANES);
    let rows = (DELTA_UNITS / lanes).max(1);
    // SAFETY: the kernel guards each row against Sq and each vector against `vectors`; the
    // vector width divides Dv and every stride but the last, which is 1 (`vector_ok`).
    unsafe {
        attention_bwd_delta::launch_unchecked::<R>(
            client,
            dispatch.grid(q_rows.div_ceil(rows), bh, 1),
            CubeDim::new_2d(lanes, rows),
            vec,
            a.out,
            a.dout,
            a.lse,
            a.delta,
            a.lse2,
            vectors,
            lanes,
            rows,
            dtype,
        );
    }
    match c.variant {
        Variant::Cmma => {
            let a = args();
            // Vectors as wide as the device and every input allow (Vulkan: 4 elements).
            let most = client.properties().hardware.max_vector_size;
            let vec = [8usize, 4]
                .into_iter()
                .find(|&w| {
                    w <= most
                        && problem.head_dim.is_multiple_of(w)
                        && problem.val_dim.is_multiple_of(w)
                        && [&a.q, &a.k, &a.v, &a.dout]
                            .iter()
                            .all(|t| vector_ok(t.strides(), w))
                })
                .unwrap_or(1);
            let svec = score_vector(vec as u32) as usize;
            let cmma = |dkdv: bool| BwdCmmaParams {
                has_left: left.is_some(),
                has_right: right.is_some(),
                has_bias: params.has_bias,
                has_dbias: params.has_dbias && dkdv,
                has_softcap: params.has_softcap,
                has_dropout: params.has_dropout,
                ..c.cmma_params(problem.head_dim, problem.val_dim, vec as u32, dkdv)
            };
            // Resident rows per cube: 16 a plane, or a pair's (grid).
            let rows = cmma(true).rows() as usize;
            let cube = CubeDim::new_2d(32, c.planes);
            // SAFETY: the kernel guards each global index against the shapes it is given, and
            // its fragments address shared memory it sized from the same parameters (see
            // `crate::attention` on bounds); the vector width divides D, Dv and every stride
            // but the last, which is 1.
            unsafe {
                attention_bwd_dkdv_cmma::launch_unchecked::<R>(
                    client,
                    dispatch.grid(
                        to_u32(problem.seq_kv.div_ceil(rows), "key blocks")?,
                        bhkv,
                        1,
                    ),
                    cube,
                    vec,
                    svec,
                    a.q,
                    a.k,
                    a.v,
                    a.dout,
                    a.lse,
                    a.delta,
                    a.bias,
                    a.dk,
                    a.dv,
                    a.dbias,
                    scalars::<R>(problem, a.bias_strides, 0)?,
                    cmma(true),
                    dtype,
                );
            }
            let a = args();
            // SAFETY: as for the dK/dV kernel above.
            unsafe {
                attention_bwd_dq_cmma::launch_unchecked::<R>(
                    client,
                    dispatch.grid(to_u32(problem.seq_q.div_ceil(rows), "query blocks")?, bh, 1),
                    cube,
                    vec,
                    svec,
                    a.q,
                    a.k,
                    a.v,
                    a.dout,
                    a.lse,
                    a.delta,
                    a.bias,
                    a.dq,
                    scalars::<R>(problem, a.bias_strides, 0)?,
                    cmma(false),
                    dtype,
                );
            }
        }
        Variant::Wgmma => {
            let a = args();
            let base = c.wgmma_params(problem.head_dim, problem.val_dim);
            let rows = base.rows() as usize;
            let tile = TILE as usize;
            let query_blocks = to_u32(problem.seq_q.div_ceil(rows), "query blocks")?;
            let out_vec = grad_out_vec(&a);
            // The gradients leave by TMA where every one's strides allow a tensor map
            // (16-byte rows); otherwise the kernels take an input's map there and never read it.
            let tma_store = [&a.dq, &a.dk, &a.dv]
                .iter()
                .all(|t| vector_ok(t.strides(), 8));
            let params = WgmmaBwdParams {
                has_left: left.is_some(),
                has_right: right.is_some(),
                out_vec,
                tma_store,
                ..base
            };
            // A persistent grid, one cube per SM, over a kernel's blocks (see `walk_block`),
            // `group` heads at a time: dQ's in pairs under a causal mask, else in order, as
            // dK/dV's where it walks (`dkdv_walks`).
            let sms = streaming_multiprocessors(client);
            let persistent = |blocks: u32, heads: u32| {
                let group = head_groups(problem, heads, blocks, sms);
                let units = if params.paired() {
                    blocks.div_ceil(2)
                } else {
                    blocks
                };
                let units = units
                    .checked_mul(heads)
                    .ok_or_else(|| format!("{blocks} blocks x {heads} heads exceed u32"))?;
                Ok::<_, String>((dispatch.grid(units.min(sms), 1, 1), group))
            };
            // Each tensor's boxes at its run width (`swizzled_map`: 64-byte rows at 32).
            let (d_run, dv_run) = (params.head_dim, params.val_dim);
            let maps = |a: &AttentionBwdArgs<R>, q_rows: usize, k_rows: usize| match (
                swizzled_map(&a.q, q_rows, dtype, d_run),
                swizzled_map(&a.k, k_rows, dtype, d_run),
                swizzled_map(&a.v, k_rows, dtype, dv_run),
                swizzled_map(&a.dout, q_rows, dtype, dv_run),
            ) {
                (Some(q), Some(k), Some(v), Some(d)) => Ok((q, k, v, d)),
                _ => Err("the wgmma backward's inputs must be tensor handles".to_string()),
            };
            let cube = CubeDim::new_2d(32, 4 * params.warpgroups + 4);
            let grad_map = |g: &TensorArg<R>, fallback: &TensorArg<R>, rows: usize, width: u32| {
                swizzled_map(if tma_store { g } else { fallback }, rows, dtype, width).ok_or_else(
                    || "the wgmma backward's outputs must be tensor handles".to_string(),
                )
            };
            // Where the pass splits, two launches (dV, then dK with dQ fused) of their own
            // rows a cube, and no dQ kernel.
            let passes = if params.splits() {
                vec![params.dv_pass(), params.dk_pass()]
            } else {
                vec![params]
            };
            // The fused dQ's accumulator, for any launch that fuses it; without it the kernel
            // never touches this argument, so the LSE scratch stands in rather than a fresh
            // allocation.
            let acc = if passes.iter().any(|pass| pass.fused_dq) {
                Some(DqAccumulator::new(client, problem, true, dispatch)?)
            } else {
                None
            };
            for pass in passes {
                let a = args();
                let pass_rows = pass.rows() as usize;
                let (q_map, k_map, v_map, do_map) = maps(&a, tile, pass_rows)?;
                let dk_map = grad_map(&a.dk, &a.k, pass_rows, d_run)?;
                let dv_map = grad_map(&a.dv, &a.v, pass_rows, dv_run)?;
                let acc_arg = match &acc {
                    Some(acc) => acc.arg(),
                    None => args().lse2,
                };
                let pass_blocks = to_u32(problem.seq_kv.div_ceil(pass_rows), "key blocks")?;
                let (dkdv_grid, dkdv_group) = if !pass.dkdv_walks() {
                    // A cube per key block (see `dkdv_block`).
                    let g = head_groups(problem, bhkv, pass_blocks, sms);
                    (dispatch.grid(g, pass_blocks, bhkv / g), g)
                } else {
                    persistent(pass_blocks, bhkv)?
                };
                // SAFETY: TMA zero-fills rows past each tensor's end; the kernel guards every
                // other global index against the shapes it is given, and its shared memory is
                // sized from the same parameters (see `crate::attention` on bounds). The
                // accumulator holds every head's rows padded to 8 and all D columns where dQ
                // is fused (two-element atomics need sm90, which the wgmma variant implies).
                unsafe {
                    attention_bwd_dkdv_wgmma::launch_unchecked::<R>(
                        client,
                        dkdv_grid,
                        CubeDim::new_2d(32, 4 * pass.warpgroups + 4),
                        8,
                        out_vec as usize,
                        if pass.fused_dq { 2 } else { 1 },
                        a.q,
                        a.k,
                        a.lse2,
                        a.delta,
                        q_map,
                        k_map,
                        v_map,
                        do_map,
                        a.dk,
                        a.dv,
                        dk_map,
                        dv_map,
                        acc_arg,
                        scalars::<R>(problem, a.bias_strides, 0)?,
                        dkdv_group,
                        pass,
                        dtype,
                    );
                }
            }
            if let Some(acc) = acc {
                // The kernel's dS is unscaled.
                return acc.finish(client, args().dq, problem.scale as f32, dtype, dispatch);
            }
            let a = args();
            let (q_map, k_map, v_map, do_map) = maps(&a, rows, tile)?;
            let dq_map = grad_map(&a.dq, &a.q, rows, d_run)?;
            let (dq_grid, group) = persistent(query_blocks, bh)?;
            // SAFETY: as for the dK/dV kernel above.
            unsafe {
                attention_bwd_dq_wgmma::launch_unchecked::<R>(
                    client,
                    dq_grid,
                    cube,
                    8,
                    out_vec as usize,
                    a.q,
                    a.k,
                    a.lse2,
                    a.delta,
                    q_map,
                    k_map,
                    v_map,
                    do_map,
                    a.dq,
                    dq_map,
                    scalars::<R>(problem, a.bias_strides, 0)?,
                    group,
                    params,
                    dtype,
                );
            }
        }
        Variant::Portable => {
            let acc = DqAccumulator::new(client, problem, c.fused_dq, dispatch)?;
            let a = args();
            // SAFETY: the kernel guards each index against the shapes it is given (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_bwd_dkdv::launch_unchecked::<R>(
                    client,
                    dispatch.grid(
                        to_u32(problem.seq_kv.div_ceil(c.block_kv as usize), "key blocks")?,
                        bhkv,
                        1,
                    ),
                    CubeDim::new_1d(c.units()),
                    // Two-element atomics need sm90; the stand-in is never touched.
                    if c.fused_dq { 2 } else { 1 },
                    a.q,
                    a.k,
                    a.v,
                    a.dout,
                    a.lse,
                    a.delta,
                    a.bias,
                    a.dk,
                    a.dv,
                    acc.arg(),
                    a.dbias,
                    scalars::<R>(problem, a.bias_strides, 0)?,
                    params,
                    dtype,
                );
            }
            if c.fused_dq {
                // The portable kernel's dS is scaled already.
                return acc.finish(client, args().dq, 1.0, dtype, dispatch);
            }
            let a = args();
            // SAFETY: the kernel guards each index against the shapes it is given (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_bwd_dq::launch_unchecked::<R>(
                    client,
                    dispatch.grid(q_rows.div_ceil(c.block_q), bh, 1),
                    CubeDim::new_1d(c.units()),
                    a.q,
                    a.k,
                    a.v,
                    a.dout,
                    a.lse,
                    a.delta,
                    a.bias,
                    a.dq,
                    scalars::<R>(problem, a.bias_strides, 0)?,
                    params,
                    dtype,
                );
            }
        }
        Variant::Mma => {
            let a = args();
            // 16-byte loads where every input allows them, else one element at a time.
            let wide = sixteen_byte_rows(&a)
                && problem.head_dim.is_multiple_of(8)
                && problem.val_dim.is_multiple_of(8);
            let vec = if wide { 8 } else { 1 };
            let out_vec = grad_out_vec(&a) as usize;
            let rows = 16 * c.planes as usize;
            let key_blocks = to_u32(problem.seq_kv.div_ceil(rows), "key blocks")?;
            let query_blocks = to_u32(problem.seq_q.div_ceil(rows), "query blocks")?;
            // Causal: every head's heavy blocks first (see the forward's launch).
            let heads_major = causal_order(problem) && key_blocks.max(query_blocks) <= MAX_GRID_Y;
            let grid = |blocks, heads| {
                if heads_major {
                    dispatch.grid(heads, blocks, 1)
                } else {
                    dispatch.grid(blocks, heads, 1)
                }
            };
            let mma = |tile, grid, grads| BwdMmaParams {
                planes: c.planes,
                tile,
                head_dim: params.head_dim,
                val_dim: params.val_dim,
                has_left: left.is_some(),
                has_right: right.is_some(),
                vec: vec as u32,
                out_vec: out_vec as u32,
                heads_major,
                fused_dq: c.fused_dq,
                grid,
                has_bias: params.has_bias,
                has_dbias: params.has_dbias,
                has_softcap: params.has_softcap,
                has_dropout: params.has_dropout,
                grads,
            };
            // dV, then dK, where both accumulators in one launch would spill; a fused dQ is
            // the dK launch's (it holds dSᵀ).
            let passes: &[DkdvGrads] =
                if mma_splits_dkdv(problem.head_dim, problem.val_dim, params.has_softcap) {
                    &[DkdvGrads::DvOnly, DkdvGrads::DkOnly]
                } else {
                    &[DkdvGrads::Both]
                };
            let acc = DqAccumulator::new(client, problem, c.fused_dq, dispatch)?;
            let acc_arg = || acc.arg();
            for &grads in passes {
                let a = args();
                let strides = query_strides::<R>(
                    a.q.strides(),
                    a.dout.strides(),
                    a.lse2.strides(),
                    a.delta.strides(),
                    if c.fused_dq { acc.strides() } else { &[0; 4] },
                )?;
                // SAFETY: the kernel guards each index against the shapes it is given (see
                // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
                unsafe {
                    attention_bwd_dkdv_mma::launch_unchecked::<R>(
                        client,
                        grid(key_blocks, bhkv),
                        CubeDim::new_2d(32, c.planes),
                        vec,
                        out_vec,
                        // Two-element atomics need sm90; the stand-in is never touched.
                        if c.fused_dq { 2 } else { 1 },
                        a.q,
                        a.k,
                        a.v,
                        a.dout,
                        a.lse2,
                        a.delta,
                        a.bias,
                        a.dk,
                        a.dv,
                        acc_arg(),
                        a.dbias,
                        scalars::<R>(problem, a.bias_strides, 0)?,
                        strides,
                        mma(c.block_q, c.grid, grads),
                        dtype,
                    );
                }
            }
            if c.fused_dq {
                // The MMA kernels' dS is unscaled.
                return acc.finish(client, args().dq, problem.scale as f32, dtype, dispatch);
            }
            let a = args();
            // SAFETY: the kernel guards each index against the shapes it is given (see
            // `crate::attention` on bounds); CubeCL's own checks would only repeat them.
            unsafe {
                attention_bwd_dq_mma::launch_unchecked::<R>(
                    client,
                    grid(query_blocks, bh),
                    CubeDim::new_2d(32, c.planes),
                    vec,
                    out_vec,
                    a.q,
                    a.k,
                    a.v,
                    a.dout,
                    a.lse2,
                    a.delta,
                    a.bias,
                    a.dq,
                    scalars::<R>(problem, a.bias_strides, 0)?,
                    // The grid is the dK/dV kernel's alone.
                    mma(c.block_kv, false, DkdvGrads::Both),
                    dtype,
                );
            }
        }
    }
    Ok(())
}

/// The fused dQ's f32 accumulator: each head in 8x8 blocks, rows padded to a multiple of 8
/// (see `dq_block_offset`), zeroed before the dK/dV kernel adds into it. Without the fused
/// dQ, a two-element stand-in that no kernel touches.
struct DqAccumulator {
    layout: cubecl::server::MemoryLayout,
    shape: [usize; 4],
    len: u32,
}

impl DqAccumulator {
    /// Allocates the accumulator of `problem` (the stand-in unless `fused`) and zeroes it.
    fn new<R: Runtime>(
        client: &ComputeClient<R>,
        problem: &AttentionProblem,
        fused: bool,
        dispatch: Dispatch,
    ) -> Result<Self, String> {
        let shape = if fused {
            [
                problem.batch,
                problem.heads,
                problem.seq_q.div_ceil(8) * 8,
                problem.head_dim,
            ]
        } else {
            [1, 1, 1, 2]
        };
        let len = u32::try_from(shape.iter().product::<usize>())
            .map_err(|_| "the dQ accumulator's elements exceed u32".to_string())?;
        let layout = client
            .empty_tensors(vec![MemoryLayoutDescriptor::contiguous(
                shape.to_vec().into(),
                4,
            )])
            .into_iter()
            .next()
            .ok_or("no dQ accumulator was allocated")?;
        let acc = Self { layout, shape, len };
        if fused {
            // SAFETY: one unit per 4 elements, guarded by the count (D is a multiple of 8 in
            // both fused kernels, so 4 divides the length).
            unsafe {
                dq_accum_zero::launch_unchecked::<R>(
                    client,
                    dispatch.grid((len / 4).div_ceil(ACCUM_UNITS), 1, 1),
                    CubeDim::new_1d(ACCUM_UNITS),
                    4,
                    acc.arg(),
                    len / 4,
                );
            }
        }
        Ok(acc)
    }

    /// A launch argument for the accumulator.
    fn arg<R: Runtime>(&self) -> TensorArg<R> {
        // SAFETY: the layout was allocated for exactly this shape.
        unsafe {
            TensorArg::<R>::from_raw_parts(
                self.layout.memory.clone(),
                self.layout.strides.clone(),
                Shape::from(self.shape.to_vec()),
            )
        }
    }

    /// The accumulator's strides, in f32.
    fn strides(&self) -> &[usize] {
        &self.layout.strides[..]
    }

    /// Writes `dq = scale · acc`, cast to `dtype`.
    fn finish<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        dq: TensorArg<R>,
        scale: f32,
        dtype: StorageType,
        dispatch: Dispatch,
    ) -> Result<(), String> {
        // dQ comes from the caller's allocation: contiguous rows in practice, written four
        // elements at a time, but any strides are honoured (one element per unit then).
        let width = if vector_ok(dq.strides(), 4) { 4u32 } else { 1 };
        let count = self.len / width;
        // SAFETY: one unit per `width` elements, guarded by the count; the kernel skips the
        // accumulator's padding rows. D is a multiple of 8 in both fused kernels, so 4
        // divides a row, and with width 4 every element offset of dQ is a multiple of 4.
        unsafe {
            dq_accum_finish::launch_unchecked::<R>(
                client,
                dispatch.grid(count.div_ceil(ACCUM_UNITS), 1, 1),
                CubeDim::new_1d(ACCUM_UNITS),
                width as usize,
                self.arg(),
                dq,
                scale,
                count,
                width,
                dtype,
            );
        }
        Ok(())
    }
}

/// The dK/dV kernel's query-side strides as launch scalars (see [`QueryStrides`]): Q and dO
/// `[B, H, Sq, D]`, the LSE and delta `[B, H, Sq]` (which must share a layout: the kernel
/// indexes both with one offset), the dQ accumulator `[B, H, ·, ·]` (each head in 8x8
/// blocks, contiguous).
///
/// [`QueryStrides`]: super::mma::QueryStrides
pub(crate) fn query_strides<R: Runtime>(
    q: &[usize],
    dout: &[usize],
    lse2: &[usize],
    delta: &[usize],
    acc: &[usize],
) -> Result<QueryStridesLaunch<R>, String> {
    if lse2 != delta {
        return Err(format!(
            "the LSE scratch (strides {lse2:?}) and delta scratch (strides {delta:?}) must share a layout"
        ));
    }
    let at = |t: &[usize], i: usize, what: &str| {
        let x = t.get(i).copied().ok_or(format!("{what} has no dim {i}"))?;
        u32::try_from(x).map_err(|_| format!("{what} stride {x} exceeds u32"))
    };
    Ok(QueryStridesLaunch::new(
        at(q, 0, "q")?,
        at(q, 1, "q")?,
        at(q, 2, "q")?,
        at(dout, 0, "dout")?,
        at(dout, 1, "dout")?,
        at(dout, 2, "dout")?,
        at(lse2, 0, "lse2")?,
        at(lse2, 1, "lse2")?,
        at(lse2, 2, "lse2")?,
        at(acc, 0, "dQ accumulator")?,
        at(acc, 1, "dQ accumulator")?,
    ))
}

/// Whether every input of the backward can be read 16 bytes at a time (by 16-byte loads, or
/// by TMA, whose strides are whole 16 bytes): the last dim contiguous, every other stride a
/// multiple of 8.
fn sixteen_byte_rows<R: Runtime>(a: &AttentionBwdArgs<R>) -> bool {
    [&a.q, &a.k, &a.v, &a.dout]
        .iter()
        .all(|t| vector_ok(t.strides(), 8))
}

/// Gradient elements the tensor-core kernels write at once: 2 where every gradient's strides
/// allow it, else 1.
fn grad_out_vec<R: Runtime>(a: &AttentionBwdArgs<R>) -> u32 {
    if [&a.dq, &a.dk, &a.dv]
        .iter()
        .all(|t| vector_ok(t.strides(), 2))
    {
        2
    } else {
        1
    }
}
