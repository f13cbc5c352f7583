//! A checked warpgroup product and a timed loop of them (CUDA on sm_90a only): what the
//! CUDA test and `wgmma_probe` run to verify `super::wgmma` against an f64 product and to
//! measure it.

use std::time::Instant;

use cubecl::ir::{ElemType, FloatKind};
use cubecl::prelude::*;

use super::attention::{WgmmaFwdParams, attention_fwd_wgmma};
use super::pipelined::attention_fwd_wgmma_pipelined;
use super::{
    b_descriptor, core_chunk, descriptor, smem_address, wgmma, wgmma_ss_issue, wgmma_wait,
};
use crate::attention::AttentionProblem;
use crate::attention::forward::mma::Pair;
use crate::attention::forward::{scalars, tile_map};
use crate::attention::mma_tiles::{acc_tiles, mma_step};

/// Elements per 16-byte chunk (2-byte elements).
const CHUNK: usize = 8;

/// How `wgmma_loop` reads its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoopForm {
    /// A in registers, B K-major in shared memory.
    KMajor,
    /// A in registers, B MN-major in shared memory (`P·V`'s form).
    MnMajor,
    /// A and B in shared memory, both K-major (`Q·Kᵀ`'s form in the pipelined kernel).
    Shared,
}

/// One warpgroup's `c = a · b`: `a` `[64, k]` row-major, `b` as 16-byte chunks of `[n, k]`
/// (K-major, B transposed) or `[k, n]` (MN-major), `c` `[64, n]` f32. The descriptor's byte
/// offsets come from the caller, so that a probe can try either reading of them.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn wgmma_product<E: Float, N: Size>(
    a: &Array<E>,
    b: &Array<Vector<E, N>>,
    c: &mut Array<f32>,
    lbo: u32,
    sbo: u32,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] mn_major: bool,
    #[define(E)] _dtype: StorageType,
) {
    let lane = UNIT_POS_X;
    let w = UNIT_POS_Y;
    let g = lane / 4;
    let t = lane % 4;
    let chunks = comptime!(n * k / 8);
    let row_chunks = comptime!(if mn_major { n / 8 } else { k / 8 });
    let mut tile = SharedMemory::<Vector<E, N>>::new_aligned(chunks as usize, 16usize);
    let mut i = w * 32 + lane;
    while i < chunks {
        tile[core_chunk(i / row_chunks, i % row_chunks, row_chunks) as usize] = b[i as usize];
        i += 128;
    }
    sync_cube();

    let mut frag = Array::<Vector<E, Pair>>::new(comptime!((k / 4) as usize));
    #[unroll]
    for s in 0..comptime!(k / 16) {
        #[unroll]
        for q in 0..4u32 {
            let row = w * 16 + g + (q % 2) * 8;
            let col = s * 16 + (q / 2) * 8 + 2 * t;
            let mut pair = Vector::<E, Pair>::new(E::from_int(0));
            pair[0] = a[(row * k + col) as usize];
            pair[1] = a[(row * k + col + 1) as usize];
            frag[(s * 4 + q) as usize] = pair;
        }
    }
    let mut acc = Array::<Vector<f32, Pair>>::new(comptime!((n / 4) as usize));
    #[unroll]
    for p in 0..comptime!(n / 4) {
        acc[p as usize] = Vector::new(0.0f32);
    }
    let addr = smem_address::<E, N>(&tile.slice(0usize, chunks as usize));
    let step = comptime!(b_descriptor(n, k, mn_major).2);
    if comptime!(mn_major) {
        let desc = descriptor::<u16>(addr, lbo, sbo, step);
        wgmma::<E, u16>(&frag, &desc, &mut acc, n, k);
    } else {
        let desc = descriptor::<E>(addr, lbo, sbo, step);
        wgmma::<E, E>(&frag, &desc, &mut acc, n, k);
    }
    #[unroll]
    for p in 0..comptime!(n / 4) {
        let row = w * 16 + g + (p % 2) * 8;
        let col = (p / 2) * 8 + 2 * t;
        c[(row * n + col) as usize] = acc[p as usize][0];
        c[(row * n + col + 1) as usize] = acc[p as usize][1];
    }
}

/// `iters` warpgroup products per warpgroup on a shared-memory-resident B (`[n, k]`, 16-byte
/// chunks) read as `form` says: [`LoopForm::KMajor`] or [`LoopForm::MnMajor`] B with A in
/// registers (taken from B's first chunks), or [`LoopForm::Shared`], A from B's first 64 rows
/// too. Each warpgroup adds its accumulators into `out[cube · warpgroups + warpgroup]` so that
/// nothing is optimised away.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn wgmma_loop<E: Float, N: Size>(
    b: &Array<Vector<E, N>>,
    out: &mut Array<f32>,
    iters: u32,
    #[comptime] warpgroups: u32,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] form: LoopForm,
    #[define(E)] _dtype: StorageType,
) {
    let lane = UNIT_POS_X;
    let chunks = comptime!(n * k / 8);
    let row_chunks = comptime!(k / 8);
    let mut tile = SharedMemory::<Vector<E, N>>::new_aligned(chunks as usize, 16usize);
    let mut i = UNIT_POS_Y * 32 + lane;
    while i < chunks {
        tile[core_chunk(i / row_chunks, i % row_chunks, row_chunks) as usize] = b[i as usize];
        i += comptime!(warpgroups * 128);
    }
    sync_cube();
    let mut frag = Array::<Vector<E, Pair>>::new(comptime!((k / 4) as usize));
    #[unroll]
    for s in 0..comptime!(k / 4) {
        let v = b[(s % chunks) as usize];
        let mut pair = Vector::<E, Pair>::new(v[0]);
        pair[1] = v[1];
        frag[s as usize] = pair;
    }
    let mut acc = Array::<Vector<f32, Pair>>::new(comptime!((n / 4) as usize));
    #[unroll]
    for p in 0..comptime!(n / 4) {
        acc[p as usize] = Vector::new(0.0f32);
    }
    let addr = smem_address::<E, N>(&tile.slice(0usize, chunks as usize));
    let mut token = SharedMemory::<f32>::new(1usize);
    match form {
        LoopForm::KMajor => {
            let (lbo, sbo, step) = comptime!(b_descriptor(n, k, false));
            let desc = descriptor::<E>(addr, lbo, sbo, step);
            for _ in 0..iters {
                wgmma::<E, E>(&frag, &desc, &mut acc, n, k);
            }
        }
        LoopForm::MnMajor => {
            let (lbo, sbo, step) = comptime!(b_descriptor(n, k, true));
            let desc = descriptor::<u16>(addr, lbo, sbo, step);
            for _ in 0..iters {
                wgmma::<E, u16>(&frag, &desc, &mut acc, n, k);
            }
        }
        LoopForm::Shared => {
            let (lbo, sbo, step) = comptime!(b_descriptor(n, k, false));
            let desc = descriptor::<E>(addr, lbo, sbo, step);
            let (a_lbo, a_sbo, a_step) = comptime!(b_descriptor(64, k, false));
            let a_desc = descriptor::<u16>(addr, a_lbo, a_sbo, a_step);
            for _ in 0..iters {
                wgmma_ss_issue::<E>(&a_desc, &desc, &mut acc, n, k, true);
                wgmma_wait(&mut acc, &mut token, false);
            }
        }
    }
    let mut sum = 0.0f32;
    #[unroll]
    for p in 0..comptime!(n / 4) {
        sum += acc[p as usize][0] + acc[p as usize][1];
    }
    sum = plane_sum(sum);
    if lane == 0 {
        out[(CUBE_POS_X * warpgroups + UNIT_POS_Y / 4) as usize] = sum;
    }
}

/// The `m16n8k16` register MMA (`mma.sync`, what the attention kernels use) in the same
/// loop as `wgmma_loop`, for a side-by-side ceiling: each plane runs `iters` times eight
/// products into eight 16x8 accumulator tiles (a 16x64x16 step), operands in registers.
#[cube(launch_unchecked)]
pub(crate) fn mma_loop<E: Float, N: Size>(
    b: &Array<Vector<E, N>>,
    out: &mut Array<f32>,
    iters: u32,
    #[comptime] planes: u32,
    #[define(E)] _dtype: StorageType,
) {
    let lane = UNIT_POS_X;
    let v = b[(lane % 8) as usize];
    let mut a = Array::<Vector<E, Pair>>::new(4usize);
    let mut bf = Array::<Vector<E, Pair>>::new(2usize);
    #[unroll]
    for i in 0..4u32 {
        let mut pair = Vector::<E, Pair>::new(v[i as usize]);
        pair[1] = v[(i + 4) as usize];
        a[i as usize] = pair;
    }
    bf[0] = a[1];
    bf[1] = a[2];
    let mut acc = acc_tiles(8u32);
    for _ in 0..iters {
        #[unroll]
        for j in 0..8u32 {
            mma_step::<E>(&a, &bf, acc.index_mut(j as usize));
        }
    }
    let mut sum = 0.0f32;
    #[unroll]
    for j in 0..8u32 {
        sum += acc[j as usize][0][0] + acc[j as usize][1][1];
    }
    sum = plane_sum(sum);
    if lane == 0 {
        out[(CUBE_POS_X * planes + UNIT_POS_Y) as usize] = sum;
    }
}

/// Times `mma_loop`: `cubes` cubes of `planes` planes, `iters` steps of eight `m16n8k16`
/// products per plane; the median of `rounds` launches. Returns (milliseconds, TFLOP/s).
pub fn mma_loop_speed<R: Runtime>(
    client: &ComputeClient<R>,
    (cubes, planes): (u32, u32),
    iters: u32,
    rounds: usize,
) -> Result<(f64, f64), String> {
    if !(1..=32).contains(&planes) || cubes == 0 || iters == 0 || rounds == 0 {
        return Err(format!(
            "need 1-32 planes and positive cubes, iterations and rounds, got {planes}, {cubes}, {iters}, {rounds}"
        ));
    }
    let b: Vec<u16> = small_values(64, 14);
    let b_h = client.create_from_slice(&bytes(&b));
    let slots = (cubes * planes) as usize;
    let out_h = client.create_from_slice(&0f32.to_le_bytes().repeat(slots));
    let launch = || {
        // SAFETY: `b` holds 64 bf16 values (eight 16-byte vectors, of which lane % 8 is read)
        // and `out` one f32 per plane of the grid.
        unsafe {
            mma_loop::launch_unchecked::<R>(
                client,
                CubeCount::Static(cubes, 1, 1),
                CubeDim::new_2d(32, planes),
                CHUNK,
                ArrayArg::from_raw_parts(b_h.clone(), 64),
                ArrayArg::from_raw_parts(out_h.clone(), slots),
                iters,
                planes,
                bf16(),
            );
        }
    };
    let ms = time_launches(client, launch, rounds, out_h.clone())?;
    let flops = 2.0 * 16.0 * 64.0 * 16.0 * f64::from(iters) * slots as f64;
    Ok((ms, flops / (ms * 1e-3) / 1e12))
}

/// The median milliseconds of `rounds` launches (after one untimed), checking that the
/// loop's sums in `out` are finite.
fn time_launches<R: Runtime>(
    client: &ComputeClient<R>,
    launch: impl Fn(),
    rounds: usize,
    out: cubecl::server::Handle,
) -> Result<f64, String> {
    let sync = || cubecl::future::block_on(client.sync()).map_err(|e| format!("{e:?}"));
    launch();
    sync()?;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        launch();
        sync()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let sums = client.read_one(out).map_err(|e| format!("{e:?}"))?;
    if sums
        .chunks_exact(4)
        .any(|w| !f32::from_le_bytes([w[0], w[1], w[2], w[3]]).is_finite())
    {
        return Err("the loop's sums are not finite".into());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// `bf16_values` scaled by 1e-3, so that sums over many iterations stay finite.
fn small_values(len: usize, seed: u64) -> Vec<u16> {
    bf16_values(len, seed)
        .into_iter()
        .map(|v| ((f32::from_bits(u32::from(v) << 16) * 1e-3).to_bits() >> 16) as u16)
        .collect()
}

/// Deterministic values in [-1, 1) rounded to bf16 (a 64-bit LCG).
fn bf16_values(len: usize, seed: u64) -> Vec<u16> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
            // Round to nearest even on the upper 16 bits.
            let bits = x.to_bits();
            ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
        })
        .collect()
}

fn bf16_to_f64(v: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(v) << 16))
}

fn bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bf16() -> StorageType {
    StorageType::Scalar(ElemType::Float(FloatKind::BF16))
}

fn check_shape(n: u32, k: u32) -> Result<(), String> {
    if n == 0 || n > 256 || !n.is_multiple_of(16) || k == 0 || k > 256 || !k.is_multiple_of(16) {
        return Err(format!(
            "the product needs n a multiple of 16 up to 256 and k of 16 up to 256, got n {n}, k {k}"
        ));
    }
    Ok(())
}

/// Runs `wgmma_product` on bf16 values and returns `max |c − ref| / max |ref|` against the
/// f64 product. `offsets` overrides the descriptor's `(lbo, sbo)` bytes
/// ([`b_descriptor`]'s by default).
pub fn product_error<R: Runtime>(
    client: &ComputeClient<R>,
    n: u32,
    k: u32,
    mn_major: bool,
    offsets: Option<(u32, u32)>,
) -> Result<f64, String> {
    check_shape(n, k)?;
    let (nu, ku) = (n as usize, k as usize);
    let a = bf16_values(64 * ku, 11);
    let b = bf16_values(nu * ku, 12);
    // b[kk][j] of the product, whichever way it is stored.
    let b_at = |kk: usize, j: usize| {
        if mn_major {
            bf16_to_f64(b[kk * nu + j])
        } else {
            bf16_to_f64(b[j * ku + kk])
        }
    };
    let a_h = client.create_from_slice(&bytes(&a));
    let b_h = client.create_from_slice(&bytes(&b));
    // Poisoned output: every element must be written.
    let c_h = client.create_from_slice(&f32::NAN.to_le_bytes().repeat(64 * nu));
    let (lbo, sbo, _) = b_descriptor(n, k, mn_major);
    let (lbo, sbo) = offsets.unwrap_or((lbo, sbo));
    // SAFETY: the buffers hold 64·k and n·k bf16 and 64·n f32 values, the sizes the kernel
    // indexes for these n and k (checked above); one cube of one warpgroup.
    unsafe {
        wgmma_product::launch_unchecked::<R>(
            client,
            CubeCount::Static(1, 1, 1),
            CubeDim::new_2d(32, 4),
            CHUNK,
            ArrayArg::from_raw_parts(a_h, 64 * ku),
            ArrayArg::from_raw_parts(b_h, nu * ku),
            ArrayArg::from_raw_parts(c_h.clone(), 64 * nu),
            lbo,
            sbo,
            n,
            k,
            mn_major,
            bf16(),
        );
    }
    let out = client.read_one(c_h).map_err(|e| format!("{e:?}"))?;
    let mut err = 0.0f64;
    let mut scale = 0.0f64;
    for i in 0..64 {
        for j in 0..nu {
            let reference: f64 = (0..ku)
                .map(|kk| bf16_to_f64(a[i * ku + kk]) * b_at(kk, j))
                .sum();
            let at = 4 * (i * nu + j);
            let got = f64::from(f32::from_le_bytes([
                out[at],
                out[at + 1],
                out[at + 2],
                out[at + 3],
            ]));
            // NaN (an element never written) counts as an infinite error.
            err = if got.is_nan() {
                f64::INFINITY
            } else {
                err.max((got - reference).abs())
            };
            scale = scale.max(reference.abs());
        }
    }
    Ok(err / scale.max(f64::MIN_POSITIVE))
}

/// Times `wgmma_loop`: `cubes` cubes of `warpgroups` warpgroups, `iters` products each of
/// `64 x n x k`; the median of `rounds` launches. Returns (milliseconds, TFLOP/s).
pub fn loop_speed<R: Runtime>(
    client: &ComputeClient<R>,
    (n, k, form): (u32, u32, LoopForm),
    (cubes, warpgroups): (u32, u32),
    iters: u32,
    rounds: usize,
) -> Result<(f64, f64), String> {
    check_shape(n, k)?;
    if form == LoopForm::Shared && n < 64 {
        return Err(format!(
            "the SS form reads A from B's first 64 rows; n = {n}"
        ));
    }
    if !(1..=4).contains(&warpgroups) || cubes == 0 || iters == 0 || rounds == 0 {
        return Err(format!(
            "need 1-4 warpgroups and positive cubes, iterations and rounds, got {warpgroups}, {cubes}, {iters}, {rounds}"
        ));
    }
    let len = (n * k) as usize;
    let b = small_values(len, 13);
    let b_h = client.create_from_slice(&bytes(&b));
    let slots = (cubes * warpgroups) as usize;
    let out_h = client.create_from_slice(&0f32.to_le_bytes().repeat(slots));
    let launch = || {
        // SAFETY: `b` holds n·k bf16 values and `out` one f32 per warpgroup of the grid,
        // which is what the kernel indexes.
        unsafe {
            wgmma_loop::launch_unchecked::<R>(
                client,
                CubeCount::Static(cubes, 1, 1),
                CubeDim::new_2d(32, 4 * warpgroups),
                CHUNK,
                ArrayArg::from_raw_parts(b_h.clone(), len),
                ArrayArg::from_raw_parts(out_h.clone(), slots),
                iters,
                warpgroups,
                n,
                k,
                form,
                bf16(),
            );
        }
    };
    let ms = time_launches(client, launch, rounds, out_h.clone())?;
    let flops = 2.0 * 64.0 * f64::from(n) * f64::from(k) * f64::from(iters) * slots as f64;
    Ok((ms, flops / (ms * 1e-3) / 1e12))
}

/// A contiguous `[b, h, s, d]` tensor argument over `handle`.
fn tensor_arg<R: Runtime>(handle: &cubecl::server::Handle, shape: [usize; 4]) -> TensorArg<R> {
    let strides = vec![
        shape[1] * shape[2] * shape[3],
        shape[2] * shape[3],
        shape[3],
        1,
    ];
    // SAFETY: every caller made `handle` for this contiguous shape.
    unsafe { TensorArg::from_raw_parts(handle.clone(), strides.into(), shape.to_vec().into()) }
}

/// The prototype's launch on bf16 `q`, `k`, `v` (`[b, h, s, d]`, as handles) into `out` and
/// `lse` (`[b, h, s]`, f32): the shape and tiling checked once, then a launch per call of
/// the returned closure.
fn attention_launcher<'a, R: Runtime>(
    client: &'a ComputeClient<R>,
    shape: [usize; 4],
    p: WgmmaFwdParams,
    [q, k, v, out, lse]: [&'a cubecl::server::Handle; 5],
) -> Result<impl Fn() + 'a, String> {
    let [b, h, s, d] = shape;
    let block_q = 64 * p.warpgroups as usize;
    if d != p.head_dim as usize
        || d != p.val_dim as usize
        || !s.is_multiple_of(block_q)
        || !s.is_multiple_of(p.block_kv as usize)
        || !(1..=3).contains(&p.warpgroups)
    {
        return Err(format!(
            "the prototype needs D = {} and S a multiple of {block_q} and of {}, 1-3 warpgroups; got {shape:?}",
            p.head_dim, p.block_kv
        ));
    }
    if p.shared_bytes() > p.shared_limit() {
        return Err(format!(
            "{p:?} needs {} bytes of shared memory per cube; it may use {} on sm_90",
            p.shared_bytes(),
            p.shared_limit()
        ));
    }
    if !p.pipelined && p.block_kv == p.head_dim && p.block_kv == p.val_dim {
        // Both products would have one shape (64 x n x n): ptxas (12.8 here, the driver's on
        // the H200) then gives P the registers Q lives in across the key loop, and Q is lost
        // after the first tile (docs/PERF.md, "Warpgroup MMA").
        return Err(format!(
            "block_kv {} equal to D and Dv gives both products one shape, which ptxas miscompiles",
            p.block_kv
        ));
    }
    let scale_log2 = (1.0 / (d as f32).sqrt()) * std::f32::consts::LOG2_E;
    // The pipelined kernel is the selector's: it takes the problem's scalars (no mask here).
    let problem = AttentionProblem {
        batch: b,
        heads: h,
        kv_heads: h,
        seq_q: s,
        seq_kv: s,
        head_dim: d,
        val_dim: d,
        dtype: "bf16",
        scale: 1.0 / (d as f64).sqrt(),
        softcap: None,
        window: (None, None),
        has_bias: false,
        dropout: None,
    };
    scalars::<R>(&problem, (0, 0), 0)?;
    let cubes_x = u32::try_from(s / block_q).map_err(|e| e.to_string())?;
    let cubes_y = u32::try_from(b * h).map_err(|e| e.to_string())?;
    Ok(move || {
        // SAFETY: `lse` holds b·h·s f32 values.
        let lse_arg = unsafe {
            TensorArg::from_raw_parts(lse.clone(), vec![h * s, s, 1].into(), vec![b, h, s].into())
        };
        if p.pipelined {
            // Made once above, where it cannot fail either; the maps of handles always exist.
            let Ok(scalars) = scalars::<R>(&problem, (0, 0), 0) else {
                return;
            };
            // One D for every tensor here (`attention_speed`'s square problems).
            let sw = p.swizzle().then_some(p.head_dim);
            let map = |h, rows| tile_map(&tensor_arg::<R>(h, shape), rows, bf16(), sw);
            let (Some(q_map), Some(k_map), Some(v_map), Some(out_map)) = (
                map(q, 64 * p.warpgroups as usize),
                map(k, p.block_kv as usize),
                map(v, p.block_kv as usize),
                // Q's map stands in where O does not leave by TMA (never read then).
                map(
                    if p.tma_store { out } else { q },
                    64 * p.warpgroups as usize,
                ),
            ) else {
                return;
            };
            // SAFETY: as for the prototype below; the kernel also guards its own rows.
            unsafe {
                attention_fwd_wgmma_pipelined::launch_unchecked::<R>(
                    client,
                    CubeCount::Static(cubes_x.div_ceil(2) * cubes_y, 1, 1),
                    CubeDim::new_2d(32, 4 * p.warpgroups + 4),
                    CHUNK,
                    2usize,
                    tensor_arg(q, shape),
                    tensor_arg(k, shape),
                    tensor_arg(v, shape),
                    q_map,
                    k_map,
                    v_map,
                    tensor_arg(out, shape),
                    out_map,
                    lse_arg,
                    scalars,
                    1u32,
                    p,
                    bf16(),
                );
            }
        } else {
            // SAFETY: q, k, v and out hold b·h·s·d bf16 values and lse b·h·s f32 ones (the
            // callers made them so); S is a multiple of both tiles (checked above), so every
            // row and key the kernel reads or writes exists.
            unsafe {
                attention_fwd_wgmma::launch_unchecked::<R>(
                    client,
                    CubeCount::Static(cubes_x, cubes_y, 1),
                    CubeDim::new_2d(32, 4 * p.warpgroups),
                    CHUNK,
                    2usize,
                    tensor_arg(q, shape),
                    tensor_arg(k, shape),
                    tensor_arg(v, shape),
                    tensor_arg(out, shape),
                    lse_arg,
                    scale_log2,
                    p,
                    bf16(),
                );
            }
        }
    })
}

/// Runs the prototype on bf16 values (`[b, h, s, d]`) and returns the largest error of the
/// output against the f64 attention, relative to the output's largest magnitude, and the
/// largest absolute error of the log-sum-exp.
pub fn attention_error<R: Runtime>(
    client: &ComputeClient<R>,
    shape: [usize; 4],
    p: WgmmaFwdParams,
) -> Result<(f64, f64), String> {
    let [b, h, s, d] = shape;
    let len = b * h * s * d;
    let (qv, kv, vv) = (
        bf16_values(len, 21),
        bf16_values(len, 22),
        bf16_values(len, 23),
    );
    let handles = [&qv, &kv, &vv].map(|x| client.create_from_slice(&bytes(x)));
    let out = client.create_from_slice(&[0xffu8, 0x7f].repeat(len)); // bf16 NaN
    let lse = client.create_from_slice(&f32::NAN.to_le_bytes().repeat(b * h * s));
    attention_launcher(
        client,
        shape,
        p,
        [&handles[0], &handles[1], &handles[2], &out, &lse],
    )?();
    let got = client.read_one(out).map_err(|e| format!("{e:?}"))?;
    let got_lse = client.read_one(lse).map_err(|e| format!("{e:?}"))?;
    let scale = 1.0 / (d as f64).sqrt();
    let (mut err, mut mag, mut lse_err) = (0.0f64, 0.0f64, 0.0f64);
    for bh in 0..b * h {
        let at = |x: &[u16], row: usize, col: usize| bf16_to_f64(x[(bh * s + row) * d + col]);
        for i in 0..s {
            let scores: Vec<f64> = (0..s)
                .map(|j| (0..d).map(|c| at(&qv, i, c) * at(&kv, j, c)).sum::<f64>() * scale)
                .collect();
            let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = scores.iter().map(|x| (x - m).exp()).collect();
            let l: f64 = w.iter().sum();
            for c in 0..d {
                let reference = (0..s).map(|j| w[j] * at(&vv, j, c)).sum::<f64>() / l;
                let k = 2 * ((bh * s + i) * d + c);
                let value = bf16_to_f64(u16::from_le_bytes([got[k], got[k + 1]]));
                err = if value.is_nan() {
                    f64::INFINITY
                } else {
                    err.max((value - reference).abs())
                };
                mag = mag.max(reference.abs());
            }
            let k = 4 * (bh * s + i);
            let value = f64::from(f32::from_le_bytes([
                got_lse[k],
                got_lse[k + 1],
                got_lse[k + 2],
                got_lse[k + 3],
            ]));
            let reference = m + l.ln();
            lse_err = if value.is_nan() {
                f64::INFINITY
            } else {
                lse_err.max((value - reference).abs())
            };
        }
    }
    Ok((err / mag.max(f64::MIN_POSITIVE), lse_err))
}

/// Times the prototype on `[b, h, s, d]` bf16 inputs: the median of `rounds` launches.
/// Returns (milliseconds, TFLOP/s at 4·b·h·s²·d).
pub fn attention_speed<R: Runtime>(
    client: &ComputeClient<R>,
    shape: [usize; 4],
    p: WgmmaFwdParams,
    rounds: usize,
) -> Result<(f64, f64), String> {
    let [b, h, s, d] = shape;
    let len = b * h * s * d;
    let values = bf16_values(len, 31);
    let q = client.create_from_slice(&bytes(&values));
    let k = client.create_from_slice(&bytes(&values));
    let v = client.create_from_slice(&bytes(&values));
    let out = client.create_from_slice(&vec![0u8; 2 * len]);
    let lse = client.create_from_slice(&vec![0u8; 4 * b * h * s]);
    let launch = attention_launcher(client, shape, p, [&q, &k, &v, &out, &lse])?;
    let ms = time_launches(client, launch, rounds, lse.clone())?;
    let flops = 4.0 * (b * h) as f64 * (s as f64).powi(2) * d as f64;
    Ok((ms, flops / (ms * 1e-3) / 1e12))
}
