//! Does CubeCL's cooperative-matrix (`cmma`) path work on a device, and how fast is it?
//!
//! Flint's tensor-core attention kernels use CubeCL's register-level `mma` (CUDA's
//! `mma.sync` with `ldmatrix`). CubeCL's Vulkan backend (SPIR-V, `VK_KHR_cooperative_matrix`)
//! registers only `cmma` shapes, so on wgpu the attention runs its portable kernel. This probe
//! answers whether a cmma kernel would be an option there: it lists what each runtime in the
//! build reports (runtime name, adapter, cmma and mma shapes, plane ops), runs one f16 x f16 ->
//! f32 cmma matmul, checks it against an f64 CPU product, and times it at a size that fills
//! the device. The same kernel runs on CUDA (as WMMA) for a side-by-side figure.
//!
//! The kernel is deliberately simple (fragments loaded straight from global memory, no shared
//! memory staging): it measures that the path works and gives a floor for its speed, not the
//! best a tuned cmma kernel could reach.

use std::time::Instant;

use cubecl::ir::features::MmaConfig;
use cubecl::ir::{ElemType, FloatKind, StorageType};
use cubecl::prelude::*;
use half::f16;

/// Rows and columns of C computed by one plane (2 x 2 fragments of 16 x 16).
const PLANE_TILE: usize = 32;
/// Planes per cube, arranged 2 x 2: a cube computes 64 x 64 of C.
const PLANES: u32 = 4;
/// Rows and columns of C per cube.
const CUBE_TILE: usize = 64;

/// `c = a · b` for row-major `a` `[m, k]`, `b` `[k, n]` (f16) and `c` `[m, n]` (f32), with
/// `m`, `n` multiples of 64 and `k` of 16 (the host checks).
#[cube(launch_unchecked)]
fn cmma_matmul(a: &Array<f16>, b: &Array<f16>, c: &mut Array<f32>, n: usize, k: usize) {
    let plane = UNIT_POS_Y as usize;
    let row0 = CUBE_POS_Y as usize * 64 + (plane / 2) * 32;
    let col0 = CUBE_POS_X as usize * 64 + (plane % 2) * 32;

    let acc00 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let acc01 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let acc10 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let acc11 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let a0 = unsafe {
        cmma::Matrix::<f16>::uninitialized(
            cmma::MatrixIdent::A,
            16usize,
            16usize,
            16usize,
            cmma::MatrixLayout::RowMajor,
        )
    };
    let a1 = unsafe {
        cmma::Matrix::<f16>::uninitialized(
            cmma::MatrixIdent::A,
            16usize,
            16usize,
            16usize,
            cmma::MatrixLayout::RowMajor,
        )
    };
    let b0 = unsafe {
        cmma::Matrix::<f16>::uninitialized(
            cmma::MatrixIdent::B,
            16usize,
            16usize,
            16usize,
            cmma::MatrixLayout::RowMajor,
        )
    };
    let b1 = unsafe {
        cmma::Matrix::<f16>::uninitialized(
            cmma::MatrixIdent::B,
            16usize,
            16usize,
            16usize,
            cmma::MatrixLayout::RowMajor,
        )
    };

    let a_len = a.len();
    let b_len = b.len();
    let stride_a = k as u32;
    let stride_b = n as u32;
    for step in 0..k / 16 {
        let kk = step * 16;
        cmma::load(&a0, &a.slice(row0 * k + kk, a_len), stride_a);
        cmma::load(&a1, &a.slice((row0 + 16) * k + kk, a_len), stride_a);
        cmma::load(&b0, &b.slice(kk * n + col0, b_len), stride_b);
        cmma::load(&b1, &b.slice(kk * n + col0 + 16, b_len), stride_b);
        cmma::execute::<f16, f16, f32, f32>(&a0, &b0, &acc00, &acc00);
        cmma::execute::<f16, f16, f32, f32>(&a0, &b1, &acc01, &acc01);
        cmma::execute::<f16, f16, f32, f32>(&a1, &b0, &acc10, &acc10);
        cmma::execute::<f16, f16, f32, f32>(&a1, &b1, &acc11, &acc11);
    }

    let c_len = c.len();
    let stride_c = n as u32;
    cmma::store(
        &mut c.slice_mut(row0 * n + col0, c_len),
        &acc00,
        stride_c,
        cmma::MatrixLayout::RowMajor,
    );
    cmma::store(
        &mut c.slice_mut(row0 * n + col0 + 16, c_len),
        &acc01,
        stride_c,
        cmma::MatrixLayout::RowMajor,
    );
    cmma::store(
        &mut c.slice_mut((row0 + 16) * n + col0, c_len),
        &acc10,
        stride_c,
        cmma::MatrixLayout::RowMajor,
    );
    cmma::store(
        &mut c.slice_mut((row0 + 16) * n + col0 + 16, c_len),
        &acc11,
        stride_c,
        cmma::MatrixLayout::RowMajor,
    );
}

/// What one runtime reported and measured.
#[derive(Clone, Debug)]
pub struct ProbeReport {
    /// CubeCL's runtime name (`cuda`, `wgpu<spirv>`, `wgpu<wgsl>`).
    pub runtime: String,
    /// The device as CubeCL names it.
    pub device: String,
    /// cmma shapes with f16 inputs and f32 accumulators, as `m x n x k`.
    pub cmma_f16: Vec<String>,
    /// Whether the register-level `m16n8k16` MMA (flint's tensor-core kernels) is available.
    pub mma_16x8x16: bool,
    /// Whether plane (subgroup) operations are available.
    pub plane_ops: bool,
    /// The outcome of the cmma check and timing.
    pub outcome: ProbeOutcome,
}

/// The result of running the cmma kernel.
#[derive(Clone, Debug)]
pub enum ProbeOutcome {
    /// The runtime reports no 16 x 16 x 16 f16 -> f32 cmma shape; nothing ran.
    Unsupported,
    /// The kernel ran: its relative error against the f64 product, and its speed.
    Ran {
        /// `‖c − ref‖ / ‖ref‖` at the check size.
        rel_error: f64,
        /// The size timed (`m = n = k`).
        size: usize,
        /// Median milliseconds per product.
        ms: f64,
        /// TFLOP/s (2·m·n·k per product).
        tflops: f64,
    },
    /// Compilation, launch or read-back failed.
    Failed(String),
}

impl std::fmt::Display for ProbeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "runtime {} on {}", self.runtime, self.device)?;
        writeln!(
            f,
            "  cmma f16->f32 shapes: [{}]; mma m16n8k16: {}; plane ops: {}",
            self.cmma_f16.join(", "),
            self.mma_16x8x16,
            self.plane_ops
        )?;
        match &self.outcome {
            ProbeOutcome::Unsupported => write!(f, "  cmma 16x16x16: not reported, not run"),
            ProbeOutcome::Ran {
                rel_error,
                size,
                ms,
                tflops,
            } => write!(
                f,
                "  cmma matmul: rel. error {rel_error:.2e} vs f64; {size}^3 in {ms:.3} ms = {tflops:.1} TFLOP/s"
            ),
            ProbeOutcome::Failed(e) => write!(f, "  cmma matmul FAILED: {e}"),
        }
    }
}

/// Probes `device`'s runtime: its features, one checked cmma product at 256 x 192 x 128 and
/// the median of `rounds` timed products at `size`³ (`size` a multiple of 64).
pub fn probe<R: Runtime>(device: &R::Device, size: usize, rounds: usize) -> ProbeReport {
    let client = R::client(device);
    let props = client.properties();
    let f16 = StorageType::Scalar(ElemType::Float(FloatKind::F16));
    let f32 = StorageType::Scalar(ElemType::Float(FloatKind::F32));
    let shapes = |set: &std::collections::BTreeSet<MmaConfig>| -> Vec<(u32, u32, u32)> {
        set.iter()
            .filter(|c| c.a_type == f16 && c.b_type == f16 && c.cd_type == f32)
            .map(|c| (c.m, c.n, c.k))
            .collect()
    };
    let cmma = shapes(&props.features.matmul.cmma);
    let report = |outcome| ProbeReport {
        runtime: R::name(&client).to_string(),
        device: format!("{device:?}"),
        cmma_f16: cmma
            .iter()
            .map(|(m, n, k)| format!("{m}x{n}x{k}"))
            .collect(),
        mma_16x8x16: shapes(&props.features.matmul.mma).contains(&(16, 8, 16)),
        plane_ops: props.features.plane.contains(cubecl::features::Plane::Ops),
        outcome,
    };
    if !cmma.contains(&(16, 16, 16)) {
        return report(ProbeOutcome::Unsupported);
    }
    let plane_size = props.hardware.plane_size_max;
    let outcome = match run_checked::<R>(&client, plane_size, size, rounds) {
        Ok((rel_error, ms)) => ProbeOutcome::Ran {
            rel_error,
            size,
            ms,
            tflops: 2.0 * (size as f64).powi(3) / (ms * 1e-3) / 1e12,
        },
        Err(e) => ProbeOutcome::Failed(e),
    };
    report(outcome)
}

/// Deterministic values in [-1, 1) (a 64-bit LCG), so that a run is repeatable.
fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn f16_bytes(v: &[f32]) -> (Vec<u8>, Vec<f64>) {
    let halves: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
    let bytes = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    (
        bytes,
        halves.iter().map(|h| f64::from(h.to_f32())).collect(),
    )
}

fn launch<R: Runtime>(
    client: &ComputeClient<R>,
    plane_size: u32,
    (m, n, k): (usize, usize, usize),
    a: &cubecl::server::Handle,
    b: &cubecl::server::Handle,
    c: &cubecl::server::Handle,
) -> Result<(), String> {
    if m % CUBE_TILE != 0 || n % CUBE_TILE != 0 || k % 16 != 0 || PLANE_TILE * 2 != CUBE_TILE {
        return Err(format!(
            "the probe needs m, n multiples of 64 and k of 16, got {m} x {n} x {k}"
        ));
    }
    let cubes = |len: usize| u32::try_from(len / CUBE_TILE).map_err(|e| e.to_string());
    // SAFETY: the buffers hold m·k and k·n f16 and m·n f32 values (made by the caller for
    // these sizes), and every fragment the kernel loads or stores lies inside them because
    // m and n are multiples of the cube tile and k of the fragment depth (checked above).
    unsafe {
        cmma_matmul::launch_unchecked::<R>(
            client,
            CubeCount::Static(cubes(n)?, cubes(m)?, 1),
            CubeDim::new_2d(plane_size, PLANES),
            ArrayArg::from_raw_parts(a.clone(), m * k),
            ArrayArg::from_raw_parts(b.clone(), k * n),
            ArrayArg::from_raw_parts(c.clone(), m * n),
            n,
            k,
        );
    }
    Ok(())
}

fn run_checked<R: Runtime>(
    client: &ComputeClient<R>,
    plane_size: u32,
    size: usize,
    rounds: usize,
) -> Result<(f64, f64), String> {
    let sync = |client: &ComputeClient<R>| {
        cubecl::future::block_on(client.sync()).map_err(|e| format!("{e:?}"))
    };
    // Check: a non-square product against the f64 reference.
    let (m, n, k) = (256, 192, 128);
    let (a_bytes, a_ref) = f16_bytes(&values(m * k, 1));
    let (b_bytes, b_ref) = f16_bytes(&values(k * n, 2));
    let a = client.create_from_slice(&a_bytes);
    let b = client.create_from_slice(&b_bytes);
    // Poisoned output: every element must be written.
    let c = client.create_from_slice(&f32::NAN.to_le_bytes().repeat(m * n));
    launch(client, plane_size, (m, n, k), &a, &b, &c)?;
    let out = client.read_one(c).map_err(|e| format!("{e:?}"))?;
    let out: Vec<f64> = out
        .chunks_exact(4)
        .map(|w| f64::from(f32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .collect();
    let (mut err, mut norm) = (0.0f64, 0.0f64);
    for i in 0..m {
        for j in 0..n {
            let r: f64 = (0..k).map(|p| a_ref[i * k + p] * b_ref[p * n + j]).sum();
            let d = out[i * n + j] - r;
            err += if d.is_nan() { f64::INFINITY } else { d * d };
            norm += r * r;
        }
    }
    let rel_error = (err / norm).sqrt();

    // Timing: products back to back, one sync per round, median round.
    let (a_bytes, _) = f16_bytes(&values(size * size, 3));
    let (b_bytes, _) = f16_bytes(&values(size * size, 4));
    let a = client.create_from_slice(&a_bytes);
    let b = client.create_from_slice(&b_bytes);
    let c = client.empty(size * size * 4);
    let shape = (size, size, size);
    launch(client, plane_size, shape, &a, &b, &c)?;
    sync(client)?;
    const PER_ROUND: usize = 10;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        for _ in 0..PER_ROUND {
            launch(client, plane_size, shape, &a, &b, &c)?;
        }
        sync(client)?;
        times.push(start.elapsed().as_secs_f64() * 1e3 / PER_ROUND as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok((rel_error, times[times.len() / 2]))
}
