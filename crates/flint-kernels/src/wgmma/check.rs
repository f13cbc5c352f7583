//! A checked warpgroup product and a timed loop of them (CUDA on sm_90a only): what the
//! CUDA test and `wgmma_probe` run to verify [`super::wgmma`] against an f64 product and to
//! measure it.

use std::time::Instant;

use cubecl::ir::{ElemType, FloatKind};
use cubecl::prelude::*;

use super::{b_descriptor, core_chunk, descriptor, smem_address, wgmma};
use crate::attention::forward::mma::Pair;
use crate::attention::mma_tiles::{acc_tiles, mma_step};

/// Elements per 16-byte chunk (2-byte elements).
const CHUNK: usize = 8;

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
    let desc = descriptor::<E>(addr, lbo, sbo, step, mn_major);
    wgmma::<E>(&frag, &desc, &mut acc, n, k);
    #[unroll]
    for p in 0..comptime!(n / 4) {
        let row = w * 16 + g + (p % 2) * 8;
        let col = (p / 2) * 8 + 2 * t;
        c[(row * n + col) as usize] = acc[p as usize][0];
        c[(row * n + col + 1) as usize] = acc[p as usize][1];
    }
}

/// `iters` warpgroup products per warpgroup on a shared-memory-resident K-major B (`[n, k]`,
/// 16-byte chunks), A taken from B's first rows; each warpgroup adds its accumulators into
/// `out[cube · warpgroups + warpgroup]` so that nothing is optimised away.
#[cube(launch_unchecked)]
pub(crate) fn wgmma_loop<E: Float, N: Size>(
    b: &Array<Vector<E, N>>,
    out: &mut Array<f32>,
    iters: u32,
    #[comptime] warpgroups: u32,
    #[comptime] n: u32,
    #[comptime] k: u32,
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
    let (lbo, sbo, step) = comptime!(b_descriptor(n, k, false));
    let desc = descriptor::<E>(addr, lbo, sbo, step, false);
    for _ in 0..iters {
        wgmma::<E>(&frag, &desc, &mut acc, n, k);
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
/// loop as [`wgmma_loop`], for a side-by-side ceiling: each plane runs `iters` times eight
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

/// Times [`mma_loop`]: `cubes` cubes of `planes` planes, `iters` steps of eight `m16n8k16`
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

/// [`bf16_values`] scaled by 1e-3, so that sums over many iterations stay finite.
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

/// Runs [`wgmma_product`] on bf16 values and returns `max |c − ref| / max |ref|` against the
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

/// Times [`wgmma_loop`]: `cubes` cubes of `warpgroups` warpgroups, `iters` products each of
/// `64 x n x k`; the median of `rounds` launches. Returns (milliseconds, TFLOP/s).
pub fn loop_speed<R: Runtime>(
    client: &ComputeClient<R>,
    (n, k): (u32, u32),
    (cubes, warpgroups): (u32, u32),
    iters: u32,
    rounds: usize,
) -> Result<(f64, f64), String> {
    check_shape(n, k)?;
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
                bf16(),
            );
        }
    };
    let ms = time_launches(client, launch, rounds, out_h.clone())?;
    let flops = 2.0 * 64.0 * f64::from(n) * f64::from(k) * f64::from(iters) * slots as f64;
    Ok((ms, flops / (ms * 1e-3) / 1e12))
}
