//! The CUDA C++ of the tensor-core kernels, generated without a GPU: so that NVRTC
//! and `ptxas` (from NVIDIA's pip wheels) can check a kernel change for compile errors,
//! registers and spills on a machine with no CUDA device (`scripts/device/local_ptxas.sh`).
//!
//! CubeCL builds a kernel's definition through a launcher of some runtime; the wgpu one
//! serves here (any adapter, the software one included) only to register the arguments. The
//! definition then goes through CubeCL's CUDA compiler, as the CUDA runtime would compile it.

use cubecl::prelude::*;
use cubecl::wgpu::{WgpuDevice, WgpuRuntime};

use super::AttentionProblem;
use super::backward::launch::query_strides;
use super::backward::mma::{
    BwdMmaParams, DkdvGrads, QueryStrides, attention_bwd_dkdv_mma, attention_bwd_dq_mma,
};
use super::bwd_op::mma_splits_dkdv;
use super::forward::cmma::{CmmaParams, attention_fwd_cmma, score_vector};
use super::forward::mma::{MmaParams, attention_fwd_mma};
use super::forward::{PortableScalars, scalars};

/// Which forward kernel to generate (no split-K, no GQA packing).
#[derive(Clone, Debug)]
pub struct FwdSourceSpec {
    /// `f16` or `bf16`.
    pub dtype: &'static str,
    /// `D`, a multiple of 16.
    pub head_dim: u32,
    /// `Dv`, a multiple of 16.
    pub val_dim: u32,
    /// Query rows per cube: 16 (one plane), 64 or 128.
    pub block_q: u32,
    /// Keys per tile.
    pub block_kv: u32,
    /// A causal mask.
    pub causal: bool,
    /// A bias, softcap and dropout.
    pub features: bool,
}

/// `(kernel name, CUDA source)` of the forward kernel of `spec`, with 16-byte loads and
/// two-element stores as on contiguous inputs.
///
/// # Errors
/// An unsupported dtype, or CubeCL's CUDA compiler refusing the kernel.
pub fn forward_cuda_source(spec: &FwdSourceSpec) -> Result<(String, String), String> {
    crate::compile_only::on_own_thread(|| {
        use attention_fwd_mma as m;
        let dtype = storage(spec.dtype)?;
        let (d, dv) = (spec.head_dim as usize, spec.val_dim as usize);
        let (b, h, s) = (1usize, 2usize, 64usize);
        let config =
            super::AttentionFwdConfig::new(super::Variant::Mma, spec.block_q, spec.block_kv);
        let f = spec.features;
        let problem = problem(spec.dtype, d, dv, spec.causal, f, f, f);
        let params = MmaParams {
            planes: config.planes(),
            m_tiles: config.m_tiles(),
            block_kv: spec.block_kv,
            head_dim: spec.head_dim,
            val_dim: spec.val_dim,
            has_left: false,
            has_right: spec.causal,
            has_bias: f,
            has_softcap: f,
            has_dropout: f,
            vec: 8,
            out_vec: 2,
            heads_major: false,
            raw_max: !f,
            packed: false,
            split: false,
        };
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let settings = KernelSettings::default()
            .cube_dim(CubeDim::new_2d(32, config.planes()))
            .address_type(AddressType::U32);
        let (n, no) = (8usize, 2usize);
        let mut a = Args {
            client: client.clone(),
            launcher: KernelLauncher::new(settings.clone()),
        };
        a.launcher.with_scope(|scope| {
            scope.device_properties(client.properties());
            scope.register_size::<DynamicSize<m::_NO>>(no);
            scope.register_type::<DynamicScalar<m::_E>>(dtype);
            scope.register_type::<DynamicScalar<m::_O>>(dtype);
            scope.register_size::<DynamicSize<m::_N>>(n);
        });
        type In = Tensor<Vector<m::E, m::N>>;
        let kernel = m::AttentionFwdMma::<WgpuRuntime>::new(
            settings,
            client.clone(),
            a.tensor::<In>(&[b, h, s, d], 2),
            a.tensor::<In>(&[b, h, s, d], 2),
            a.tensor::<In>(&[b, h, s, dv], 2),
            a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
            a.tensor::<Tensor<Vector<m::O, m::NO>>>(&[b, h, s, dv], 2),
            a.tensor::<Tensor<f32>>(&[b, h, s], 4),
            PortableScalars::register(
                scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                &mut a.launcher,
            ),
            n,
            no,
            params,
            dtype,
            dtype,
        );
        Ok(("attention_fwd_mma".to_string(), compile(kernel)?))
    })
}

/// `(kernel name, CUDA source)` of the cooperative-matrix forward of `spec` (WMMA, the
/// same kernel definition that SPIR-V gets), with `vec`-element loads (8 as on CUDA, 4 as
/// on Vulkan).
///
/// # Errors
/// An unsupported dtype or tiling, or CubeCL's CUDA compiler refusing the kernel.
pub fn cmma_cuda_source(spec: &FwdSourceSpec, vec: u32) -> Result<(String, String), String> {
    crate::compile_only::on_own_thread(|| {
        use attention_fwd_cmma as m;
        let dtype = storage(spec.dtype)?;
        let (d, dv) = (spec.head_dim as usize, spec.val_dim as usize);
        let (b, h, s) = (1usize, 2usize, 64usize);
        let config =
            super::AttentionFwdConfig::new(super::Variant::Cmma, spec.block_q, spec.block_kv);
        let f = spec.features;
        let problem = problem(spec.dtype, d, dv, spec.causal, f, f, f);
        let svec = score_vector(vec);
        let params = CmmaParams {
            planes: config.planes(),
            m_frags: config.m_tiles(),
            block_kv: spec.block_kv,
            head_dim: spec.head_dim,
            val_dim: spec.val_dim,
            vec,
            svec,
            has_left: false,
            has_right: spec.causal,
            has_bias: f,
            has_softcap: f,
            has_dropout: f,
            raw_max: !f,
        };
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let (settings, mut a) = Args::for_planes(&client, config.planes());
        let (n, ns) = (vec as usize, svec as usize);
        a.launcher.with_scope(|scope| {
            scope.register_type::<DynamicScalar<m::_E>>(dtype);
            scope.register_size::<DynamicSize<m::_N>>(n);
            scope.register_size::<DynamicSize<m::_NS>>(ns);
        });
        type In = Tensor<Vector<m::E, m::N>>;
        let kernel = m::AttentionFwdCmma::<WgpuRuntime>::new(
            settings,
            client.clone(),
            a.tensor::<In>(&[b, h, s, d], 2),
            a.tensor::<In>(&[b, h, s, d], 2),
            a.tensor::<In>(&[b, h, s, dv], 2),
            a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
            a.tensor::<Tensor<m::E>>(&[b, h, s, dv], 2),
            a.tensor::<Tensor<f32>>(&[b, h, s], 4),
            PortableScalars::register(
                scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                &mut a.launcher,
            ),
            n,
            ns,
            params,
            dtype,
        );
        Ok(("attention_fwd_cmma".to_string(), compile(kernel)?))
    })
}

/// `(kernel name, CUDA source)` of the cooperative-matrix backward's dK/dV and dQ kernels of
/// `bwd` in `dtype` (WMMA, the same definitions that SPIR-V gets), at head dims `d` and
/// `dv` with `vec`-element loads, plain or causal with a bias, its gradient, softcap and
/// dropout.
///
/// # Errors
/// An unsupported dtype, or CubeCL's CUDA compiler refusing a kernel.
pub fn cmma_backward_cuda_sources(
    bwd: &super::AttentionBwdConfig,
    dtype: &'static str,
    (d, dv): (usize, usize),
    vec: u32,
    causal: bool,
) -> Result<Vec<(String, String)>, String> {
    crate::compile_only::on_own_thread(|| {
        use super::backward::cmma::{attention_bwd_dkdv_cmma, attention_bwd_dq_cmma};
        let ty = storage(dtype)?;
        let (b, h, s) = (1usize, 2usize, 64usize);
        let problem = problem(dtype, d, dv, causal, causal, causal, causal);
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let with_features = |dkdv: bool| super::backward::cmma::BwdCmmaParams {
            has_right: causal,
            has_bias: causal,
            has_dbias: causal && dkdv,
            has_softcap: causal,
            has_dropout: causal,
            ..bwd.cmma_params(d, dv, vec, dkdv)
        };
        let (n, ns) = (vec as usize, score_vector(vec) as usize);
        let mut out = Vec::new();
        {
            use attention_bwd_dkdv_cmma as m;
            let (settings, mut a) = Args::for_planes(&client, bwd.planes);
            a.launcher.with_scope(|scope| {
                scope.register_type::<DynamicScalar<m::_E>>(ty);
                scope.register_size::<DynamicSize<m::_N>>(n);
                scope.register_size::<DynamicSize<m::_NS>>(ns);
            });
            type In = Tensor<Vector<m::E, m::N>>;
            let kernel = m::AttentionBwdDkdvCmma::<WgpuRuntime>::new(
                settings,
                client.clone(),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Tensor<m::E>>(&[b, h, s, d], 2),
                a.tensor::<Tensor<m::E>>(&[b, h, s, dv], 2),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                n,
                ns,
                with_features(true),
                ty,
            );
            out.push(("attention_bwd_dkdv_cmma".to_string(), compile(kernel)?));
        }
        {
            use attention_bwd_dq_cmma as m;
            let (settings, mut a) = Args::for_planes(&client, bwd.planes);
            a.launcher.with_scope(|scope| {
                scope.register_type::<DynamicScalar<m::_E>>(ty);
                scope.register_size::<DynamicSize<m::_N>>(n);
                scope.register_size::<DynamicSize<m::_NS>>(ns);
            });
            type In = Tensor<Vector<m::E, m::N>>;
            let kernel = m::AttentionBwdDqCmma::<WgpuRuntime>::new(
                settings,
                client.clone(),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Tensor<m::E>>(&[b, h, s, d], 2),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                n,
                ns,
                with_features(false),
                ty,
            );
            out.push(("attention_bwd_dq_cmma".to_string(), compile(kernel)?));
        }
        Ok(out)
    })
}

/// `(kernel name, CUDA source)` of the portable kernels in f32: the forward of `fwd` and the
/// backward's dK/dV and (unless fused) dQ kernels of `bwd`, at head dims `d` and `dv`, plain
/// or causal with a bias, softcap and dropout. The same definitions go to SPIR-V; this
/// checks that they expand (their sliced forms cannot run on lavapipe, which keeps no
/// arrays across barriers).
///
/// # Errors
/// CubeCL's CUDA compiler refusing a kernel.
pub fn portable_cuda_sources(
    fwd: &super::AttentionFwdConfig,
    bwd: &super::AttentionBwdConfig,
    (d, dv): (usize, usize),
    causal: bool,
) -> Result<Vec<(String, String)>, String> {
    crate::compile_only::on_own_thread(|| {
        use cubecl::ir::{ElemType, FloatKind};
        let dtype = StorageType::Scalar(ElemType::Float(FloatKind::F32));
        let (b, h, s) = (1usize, 2usize, 64usize);
        let problem = problem("f32", d, dv, causal, causal, causal, causal);
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let settings = |units: u32| {
            KernelSettings::default()
                .cube_dim(CubeDim::new_1d(units))
                .address_type(AddressType::U32)
        };
        let args = |units| {
            let mut a = Args {
                client: client.clone(),
                launcher: KernelLauncher::new(settings(units)),
            };
            a.launcher
                .with_scope(|scope| scope.device_properties(client.properties()));
            a
        };
        let mut out = Vec::new();
        {
            use super::forward::attention_fwd_portable as m;
            let mut a = args(fwd.units());
            a.launcher
                .with_scope(|scope| scope.register_type::<DynamicScalar<m::_F>>(dtype));
            let params = super::forward::PortableParams {
                has_right: causal,
                has_bias: causal,
                has_softcap: causal,
                has_dropout: causal,
                ..fwd.portable_params(d, dv)
            };
            let kernel = m::AttentionFwdPortable::<WgpuRuntime>::new(
                settings(fwd.units()),
                client.clone(),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                params,
                dtype,
            );
            out.push(("attention_fwd_portable".to_string(), compile(kernel)?));
        }
        let params = super::backward::portable::BwdParams {
            has_right: causal,
            has_bias: causal,
            has_dbias: causal,
            has_softcap: causal,
            has_dropout: causal,
            ..bwd.portable_params(d, dv)
        };
        {
            use super::backward::portable::attention_bwd_dkdv as m;
            let na = if bwd.fused_dq { 2usize } else { 1 };
            let mut a = args(bwd.units());
            a.launcher.with_scope(|scope| {
                scope.register_type::<DynamicScalar<m::_F>>(dtype);
                scope.register_size::<DynamicSize<m::_NA>>(na);
            });
            let kernel = m::AttentionBwdDkdv::<WgpuRuntime>::new(
                settings(bwd.units()),
                client.clone(),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<Atomic<Vector<f32, m::NA>>>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                na,
                params,
                dtype,
            );
            out.push(("attention_bwd_dkdv".to_string(), compile(kernel)?));
        }
        if !bwd.fused_dq {
            use super::backward::portable::attention_bwd_dq as m;
            let mut a = args(bwd.units());
            a.launcher
                .with_scope(|scope| scope.register_type::<DynamicScalar<m::_F>>(dtype));
            let kernel = m::AttentionBwdDq::<WgpuRuntime>::new(
                settings(bwd.units()),
                client.clone(),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, dv], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Tensor<m::F>>(&[b, h, s, d], 4),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                params,
                dtype,
            );
            out.push(("attention_bwd_dq".to_string(), compile(kernel)?));
        }
        Ok(out)
    })
}

/// A small problem with the given features, for the kernels' scalar arguments.
fn problem(
    dtype: &'static str,
    d: usize,
    dv: usize,
    causal: bool,
    bias: bool,
    softcap: bool,
    dropout: bool,
) -> AttentionProblem {
    AttentionProblem {
        batch: 1,
        heads: 2,
        kv_heads: 2,
        seq_q: 64,
        seq_kv: 64,
        head_dim: d,
        val_dim: dv,
        dtype,
        scale: 0.125,
        softcap: softcap.then_some(30.0),
        window: (None, causal.then_some(0)),
        has_bias: bias,
        dropout: dropout.then_some((0.1, 1)),
    }
}

/// Which backward kernels to generate.
#[derive(Clone, Debug)]
pub struct BwdSourceSpec {
    /// `f16` or `bf16`.
    pub dtype: &'static str,
    /// `D`, a multiple of 16.
    pub head_dim: u32,
    /// `Dv`, a multiple of 16.
    pub val_dim: u32,
    /// Query tile of the dK/dV kernel.
    pub block_q: u32,
    /// Key tile of the dQ kernel.
    pub block_kv: u32,
    /// dQ fused into the dK/dV kernel (then no dQ kernel).
    pub fused_dq: bool,
    /// A causal mask.
    pub causal: bool,
    /// A bias and its gradient.
    pub bias: bool,
    /// Softcap.
    pub softcap: bool,
    /// Dropout.
    pub dropout: bool,
    /// Planes per cube (16 keys or queries each).
    pub planes: u32,
    /// The dK/dV kernel's planes as a grid (Pᵀ and dSᵀ through shared memory).
    pub grid: bool,
}

/// Registers kernel arguments on small wgpu buffers.
struct Args {
    client: ComputeClient<WgpuRuntime>,
    launcher: KernelLauncher<WgpuRuntime>,
}

impl Args {
    /// Settings for a cube of `planes` planes with 32-bit addresses, and a launcher whose
    /// scope knows the device's properties.
    fn for_planes(client: &ComputeClient<WgpuRuntime>, planes: u32) -> (KernelSettings, Self) {
        let settings = KernelSettings::default()
            .cube_dim(CubeDim::new_2d(32, planes))
            .address_type(AddressType::U32);
        let mut args = Self {
            client: client.clone(),
            launcher: KernelLauncher::new(settings.clone()),
        };
        args.launcher
            .with_scope(|scope| scope.device_properties(client.properties()));
        (settings, args)
    }

    fn tensor<T: LaunchArg<RuntimeArg<WgpuRuntime> = TensorArg<WgpuRuntime>>>(
        &mut self,
        shape: &[usize],
        elem_bytes: usize,
    ) -> T::CompilationArg {
        let len: usize = shape.iter().product();
        let handle = self.client.create_from_slice(&vec![0u8; len * elem_bytes]);
        let mut strides = vec![1usize; shape.len()];
        for i in (0..shape.len() - 1).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        // SAFETY: the buffer was just made for this contiguous shape; nothing launches.
        let arg =
            unsafe { TensorArg::from_raw_parts(handle, strides.into(), shape.to_vec().into()) };
        T::register(arg, &mut self.launcher)
    }

    fn array<T: LaunchArg<RuntimeArg<WgpuRuntime> = ArrayArg<WgpuRuntime>>>(
        &mut self,
        len: usize,
        elem_bytes: usize,
    ) -> T::CompilationArg {
        let handle = self.client.create_from_slice(&vec![0u8; len * elem_bytes]);
        // SAFETY: the buffer was just made for `len` elements; nothing launches.
        let arg = unsafe { ArrayArg::from_raw_parts(handle, len) };
        T::register(arg, &mut self.launcher)
    }
}

fn storage(dtype: &str) -> Result<StorageType, String> {
    use cubecl::ir::{ElemType, FloatKind};
    let kind = match dtype {
        "f16" => FloatKind::F16,
        "bf16" => FloatKind::BF16,
        other => return Err(format!("dtype {other} has no tensor-core kernels")),
    };
    Ok(StorageType::Scalar(ElemType::Float(kind)))
}

/// A kernel's CUDA source for an sm_90 device.
fn compile<K: CubeKernel>(kernel: K) -> Result<String, String> {
    crate::wgmma::cuda_kernel_source(kernel)
}

/// `(kernel name, CUDA source)` for the dK/dV kernel and, unless fused, the dQ kernel of
/// `spec`, with 16-byte loads and two-element stores as on contiguous inputs.
///
/// # Errors
/// An unsupported dtype, or CubeCL's CUDA compiler refusing the kernel.
pub fn backward_cuda_sources(spec: &BwdSourceSpec) -> Result<Vec<(String, String)>, String> {
    crate::compile_only::on_own_thread(|| {
        let dtype = storage(spec.dtype)?;
        let (d, dv) = (spec.head_dim as usize, spec.val_dim as usize);
        let (b, h, s) = (1usize, 2usize, 64usize);
        let problem = problem(
            spec.dtype,
            d,
            dv,
            spec.causal,
            spec.bias,
            spec.softcap,
            spec.dropout,
        );
        let params = |tile, fused_dq, grid, grads| BwdMmaParams {
            planes: spec.planes,
            tile,
            head_dim: spec.head_dim,
            val_dim: spec.val_dim,
            has_left: false,
            has_right: spec.causal,
            vec: 8,
            out_vec: 2,
            heads_major: false,
            fused_dq,
            grid,
            has_bias: spec.bias,
            has_dbias: spec.bias,
            has_softcap: spec.softcap,
            has_dropout: spec.dropout,
            grads,
        };
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let settings = KernelSettings::default()
            .cube_dim(CubeDim::new_2d(32, spec.planes))
            .address_type(AddressType::U32);
        let (n, no) = (8usize, 2usize);
        let mut out = Vec::new();
        // dV, then dK, where the launch splits the pass (D = 256).
        let passes: &[(DkdvGrads, &str)] =
            if mma_splits_dkdv(spec.head_dim as usize, spec.val_dim as usize, spec.softcap) {
                &[(DkdvGrads::DvOnly, "_dv"), (DkdvGrads::DkOnly, "_dk")]
            } else {
                &[(DkdvGrads::Both, "")]
            };

        for &(grads, suffix) in passes {
            use attention_bwd_dkdv_mma as m;
            let na = if spec.fused_dq { 2usize } else { 1 };
            let mut a = Args {
                client: client.clone(),
                launcher: KernelLauncher::new(settings.clone()),
            };
            a.launcher.with_scope(|scope| {
                scope.device_properties(client.properties());
                scope.register_size::<DynamicSize<m::_NA>>(na);
                scope.register_size::<DynamicSize<m::_NO>>(no);
                scope.register_type::<DynamicScalar<m::_E>>(dtype);
                scope.register_size::<DynamicSize<m::_N>>(n);
            });
            type In = Tensor<Vector<m::E, m::N>>;
            type Out = Tensor<Vector<m::E, m::NO>>;
            let kernel = m::AttentionBwdDkdvMma::<WgpuRuntime>::new(
                settings.clone(),
                client.clone(),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Out>(&[b, h, s, d], 2),
                a.tensor::<Out>(&[b, h, s, dv], 2),
                a.tensor::<Tensor<Atomic<Vector<f32, m::NA>>>>(&[b, h, s, d], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                QueryStrides::register(
                    query_strides::<WgpuRuntime>(
                        &[h * s * d, s * d, d, 1],
                        &[h * s * dv, s * dv, dv, 1],
                        &[h * s, s, 1],
                        &[h * s, s, 1],
                        &[h * s * d, s * d, d, 1],
                    )?,
                    &mut a.launcher,
                ),
                n,
                no,
                na,
                params(spec.block_q, spec.fused_dq, spec.grid, grads),
                dtype,
            );
            out.push((format!("attention_bwd_dkdv_mma{suffix}"), compile(kernel)?));
        }
        if !spec.fused_dq {
            use attention_bwd_dq_mma as m;
            let mut a = Args {
                client: client.clone(),
                launcher: KernelLauncher::new(settings.clone()),
            };
            a.launcher.with_scope(|scope| {
                scope.device_properties(client.properties());
                scope.register_size::<DynamicSize<m::_NO>>(no);
                scope.register_type::<DynamicScalar<m::_E>>(dtype);
                scope.register_size::<DynamicSize<m::_N>>(n);
            });
            type In = Tensor<Vector<m::E, m::N>>;
            type Out = Tensor<Vector<m::E, m::NO>>;
            let kernel = m::AttentionBwdDqMma::<WgpuRuntime>::new(
                settings,
                client.clone(),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, d], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<In>(&[b, h, s, dv], 2),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s], 4),
                a.tensor::<Tensor<f32>>(&[b, h, s, s], 4),
                a.tensor::<Out>(&[b, h, s, d], 2),
                PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                ),
                n,
                no,
                params(spec.block_kv, false, false, DkdvGrads::Both),
                dtype,
            );
            out.push(("attention_bwd_dq_mma".to_string(), compile(kernel)?));
        }
        Ok(out)
    })
}

/// `(kernel name, CUDA source)` of the warpgroup-MMA kernels (`crate::wgmma`): the checked
/// product with K-major and with MN-major B, the timed loop, the attention prototype at four
/// tilings and the pipelined attention at two.
///
/// # Errors
/// CubeCL's CUDA compiler refusing a kernel.
pub fn wgmma_cuda_sources() -> Result<Vec<(String, String)>, String> {
    crate::compile_only::on_own_thread(|| {
        use crate::wgmma::check::{wgmma_loop, wgmma_product};
        let dtype = storage("bf16")?;
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let mut out = Vec::new();
        for (n, k, mn_major) in [(64u32, 64u32, false), (128, 64, true)] {
            let (settings, mut a) = Args::for_planes(&client, 4);
            use wgmma_product as m;
            a.launcher.with_scope(|scope| {
                scope.register_type::<DynamicScalar<m::_E>>(dtype);
                scope.register_size::<DynamicSize<m::_N>>(8);
            });
            // Arguments register in their order: the arrays, then the two offsets.
            let a_arg = a.array::<Array<m::E>>(64 * k as usize, 2);
            let b_arg = a.array::<Array<Vector<m::E, m::N>>>((n * k) as usize, 2);
            let c_arg = a.array::<Array<f32>>(64 * n as usize, 4);
            <u32 as LaunchArg>::register(0u32, &mut a.launcher);
            <u32 as LaunchArg>::register(0u32, &mut a.launcher);
            let kernel = m::WgmmaProduct::<WgpuRuntime>::new(
                settings,
                client.clone(),
                a_arg,
                b_arg,
                c_arg,
                (),
                (),
                8usize,
                n,
                k,
                mn_major,
                dtype,
            );
            let major = if mn_major { "mn" } else { "k" };
            out.push((format!("wgmma_product_n{n}_k{k}_{major}"), compile(kernel)?));
        }
        let (n, k, warpgroups) = (128u32, 64u32, 2u32);
        let (settings, mut a) = Args::for_planes(&client, 4 * warpgroups);
        use wgmma_loop as l;
        a.launcher.with_scope(|scope| {
            scope.register_type::<DynamicScalar<l::_E>>(dtype);
            scope.register_size::<DynamicSize<l::_N>>(8);
        });
        let b_arg = a.array::<Array<Vector<l::E, l::N>>>((n * k) as usize, 2);
        let out_arg = a.array::<Array<f32>>(2, 4);
        <u32 as LaunchArg>::register(1u32, &mut a.launcher);
        let kernel = l::WgmmaLoop::<WgpuRuntime>::new(
            settings,
            client.clone(),
            b_arg,
            out_arg,
            (),
            8usize,
            warpgroups,
            n,
            k,
            crate::wgmma::check::LoopForm::KMajor,
            dtype,
        );
        out.push((format!("wgmma_loop_n{n}_k{k}"), compile(kernel)?));
        // The prototype, then the pipelined kernel: one generator for both kernel types.
        // `$scalars` registers the kernel's scalar arguments (the prototype's scale, the
        // pipelined kernel's problem scalars and launch group) and returns what its launcher
        // takes for the first; `$after` are the launcher's arguments for the others.
        macro_rules! attention_source {
            ($m:ident :: $f:ident, $kernel:ident, $name:literal, $configs:expr, $pipelined:expr, $scalars:expr, [$($map:expr),*], [$($out_map:expr),*], [$($after:expr),*]) => {
                for (warpgroups, block_kv, d, causal) in $configs {
                    use crate::wgmma::attention::WgmmaFwdParams;
                    use crate::wgmma::$m::$f as f;
                    // The pipelined kernel's producer warpgroup follows its warpgroups.
                    let planes = 4 * (warpgroups + u32::from($pipelined));
                    let (settings, mut a) = Args::for_planes(&client, planes);
                    a.launcher.with_scope(|scope| {
                        scope.register_type::<DynamicScalar<f::_E>>(dtype);
                        scope.register_size::<DynamicSize<f::_N>>(8);
                        scope.register_size::<DynamicSize<f::_NO>>(2);
                    });
                    let shape = [1usize, 2, 256, d as usize];
                    type In = Tensor<Vector<f::E, f::N>>;
                    let (q, k, v) = (
                        a.tensor::<In>(&shape, 2),
                        a.tensor::<In>(&shape, 2),
                        a.tensor::<In>(&shape, 2),
                    );
                    let o = a.tensor::<Tensor<Vector<f::E, f::NO>>>(&shape, 2);
                    let lse = a.tensor::<Tensor<f32>>(&shape[..3], 4);
                    let scalar_arg = ($scalars)(&mut a, d as usize, causal)?;
                    let params = WgmmaFwdParams {
                        warpgroups,
                        block_kv,
                        head_dim: d,
                        val_dim: d,
                        pipelined: $pipelined,
                        has_right: causal,
                        out_vec: 2,
                        tma: $pipelined,
                        ..Default::default()
                    };
                    let params = WgmmaFwdParams {
                        tma_store: $pipelined && params.tma_store_fits(),
                        ..params
                    };
                    let kernel = f::$kernel::<WgpuRuntime>::new(
                        settings,
                        client.clone(),
                        q,
                        k,
                        v,
                        $($map,)*
                        o,
                        $($out_map,)*
                        lse,
                        scalar_arg,
                        $($after,)*
                        8usize,
                        2usize,
                        params,
                        dtype,
                    );
                    let mask = if causal { "_causal" } else { "" };
                    out.push((
                        format!(
                            concat!($name, "_d{}_wg{}_kv{}{}"),
                            d, warpgroups, block_kv, mask
                        ),
                        compile(kernel)?,
                    ));
                }
            };
        }
        attention_source!(
            attention::attention_fwd_wgmma,
            AttentionFwdWgmma,
            "attention_fwd_wgmma",
            [
                (2u32, 128u32, 128u32, false),
                (2, 64, 128, false),
                (3, 64, 128, false),
                (2, 128, 64, false)
            ],
            false,
            |a: &mut Args, _: usize, _: bool| -> Result<(), String> {
                <f32 as LaunchArg>::register(1.0f32, &mut a.launcher);
                Ok(())
            },
            [],
            [],
            []
        );
        attention_source!(
            pipelined::attention_fwd_wgmma_pipelined,
            AttentionFwdWgmmaPipelined,
            "attention_fwd_wgmma_pipelined",
            [
                (2u32, 128u32, 128u32, false),
                (2, 128, 128, true),
                (2, 64, 64, false),
                (3, 64, 128, false),
                (3, 64, 128, true),
                (2, 64, 256, false),
                (2, 64, 256, true),
                (2, 128, 32, false),
                (3, 64, 32, true),
                (3, 128, 32, false),
                (3, 128, 64, false),
                (3, 128, 64, true),
                (1, 64, 128, true),
                (1, 128, 64, false)
            ],
            true,
            |a: &mut Args, d: usize, causal: bool| -> Result<_, String> {
                let problem = problem("bf16", d, d, causal, false, false, false);
                let scalars = PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                );
                <u32 as LaunchArg>::register(1u32, &mut a.launcher);
                Ok(scalars)
            },
            [(), (), ()],
            [()],
            [()]
        );
        // The backward's two kernels, causal and not: D = 128 (two consumer warpgroups),
        // D = 256's split dK/dV pass (no dQ kernel), and D = 32 (64-byte swizzled rows).
        for (d, causal) in [
            (128u32, false),
            (128, true),
            (256, false),
            (256, true),
            (32, false),
            (32, true),
        ] {
            use crate::wgmma::backward::{
                WgmmaBwdParams, attention_bwd_dkdv_wgmma as kv, attention_bwd_dq_wgmma as q,
            };
            let params = WgmmaBwdParams {
                warpgroups: 2,
                head_dim: d,
                val_dim: d,
                has_right: causal,
                out_vec: 2,
                tma_store: true,
                ..Default::default()
            };
            let problem = problem("bf16", d as usize, d as usize, causal, false, false, false);
            let shape = [1usize, 2, 256, d as usize];
            let mask = if causal { "_causal" } else { "" };
            // The dK/dV kernel alone and with dQ fused (its f32 accumulator, pairs), or the
            // split pass's two launches.
            let passes = if params.splits() {
                vec![
                    (params.dv_pass(), "_dv"),
                    (params.dk_pass(), "_dk_fused_dq"),
                ]
            } else {
                vec![
                    (params, ""),
                    (
                        WgmmaBwdParams {
                            fused_dq: true,
                            ..params
                        },
                        "_fused_dq",
                    ),
                ]
            };
            for (params, suffix) in passes {
                let na = if params.fused_dq { 2 } else { 1 };
                let planes = 4 * params.warpgroups + 4;
                let (settings, mut a) = Args::for_planes(&client, planes);
                a.launcher.with_scope(|scope| {
                    scope.register_type::<DynamicScalar<kv::_E>>(dtype);
                    scope.register_size::<DynamicSize<kv::_N>>(8);
                    scope.register_size::<DynamicSize<kv::_NO>>(2);
                    scope.register_size::<DynamicSize<kv::_NA>>(na);
                });
                type KvIn = Tensor<Vector<kv::E, kv::N>>;
                let (qa, ka) = (a.tensor::<KvIn>(&shape, 2), a.tensor::<KvIn>(&shape, 2));
                let (la, da) = (
                    a.tensor::<Tensor<f32>>(&shape[..3], 4),
                    a.tensor::<Tensor<f32>>(&shape[..3], 4),
                );
                let (dka, dva) = (
                    a.tensor::<Tensor<Vector<kv::E, kv::NO>>>(&shape, 2),
                    a.tensor::<Tensor<Vector<kv::E, kv::NO>>>(&shape, 2),
                );
                let acc = a.tensor::<Tensor<Atomic<Vector<f32, kv::NA>>>>(&shape, 4);
                let sc = PortableScalars::register(
                    scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                    &mut a.launcher,
                );
                // The persistent walk's head group.
                <u32 as LaunchArg>::register(1u32, &mut a.launcher);
                let kernel = kv::AttentionBwdDkdvWgmma::<WgpuRuntime>::new(
                    settings,
                    client.clone(),
                    qa,
                    ka,
                    la,
                    da,
                    (),
                    (),
                    (),
                    (),
                    dka,
                    dva,
                    (),
                    (),
                    acc,
                    sc,
                    (),
                    8usize,
                    2usize,
                    na,
                    params,
                    dtype,
                );
                out.push((
                    format!("attention_bwd_dkdv_wgmma_d{d}{mask}{suffix}"),
                    compile(kernel)?,
                ));
            }
            if params.splits() {
                continue;
            }
            let (settings, mut a) = Args::for_planes(&client, 12);
            a.launcher.with_scope(|scope| {
                scope.register_type::<DynamicScalar<q::_E>>(dtype);
                scope.register_size::<DynamicSize<q::_N>>(8);
                scope.register_size::<DynamicSize<q::_NO>>(2);
            });
            type QIn = Tensor<Vector<q::E, q::N>>;
            let (qa, ka) = (a.tensor::<QIn>(&shape, 2), a.tensor::<QIn>(&shape, 2));
            let (la, da) = (
                a.tensor::<Tensor<f32>>(&shape[..3], 4),
                a.tensor::<Tensor<f32>>(&shape[..3], 4),
            );
            let dqa = a.tensor::<Tensor<Vector<q::E, q::NO>>>(&shape, 2);
            let sc = PortableScalars::register(
                scalars::<WgpuRuntime>(&problem, (0, 0), 0)?,
                &mut a.launcher,
            );
            // The persistent walk's head group.
            <u32 as LaunchArg>::register(1u32, &mut a.launcher);
            let kernel = q::AttentionBwdDqWgmma::<WgpuRuntime>::new(
                settings,
                client.clone(),
                qa,
                ka,
                la,
                da,
                (),
                (),
                (),
                (),
                dqa,
                (),
                sc,
                (),
                8usize,
                2usize,
                params,
                dtype,
            );
            out.push((
                format!("attention_bwd_dq_wgmma_d{d}{mask}"),
                compile(kernel)?,
            ));
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes its two scalars and its array's length: what a launch was given.
    #[cube(launch_unchecked)]
    fn echo_arguments(out: &mut Array<f32>, a: f32, n: u32) {
        if ABSOLUTE_POS == 0 {
            out[0] = a;
            out[1] = f32::cast_from(n);
            out[2] = f32::cast_from(out.len());
        }
    }

    /// What a launch on this thread reads of its own arguments, on the wgpu device.
    fn arguments_seen_by_next_launch() -> Vec<f32> {
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let handle = client.create_from_slice(&[0u8; 16]);
        // SAFETY: the kernel writes three of the array's four elements, from one unit.
        unsafe {
            echo_arguments::launch_unchecked::<WgpuRuntime>(
                &client,
                CubeCount::Static(1, 1, 1),
                CubeDim::new_1d(1),
                ArrayArg::from_raw_parts(handle.clone(), 4),
                2.5,
                7,
            );
        }
        let bytes = client.read_one(handle).expect("read the echo");
        bytes
            .chunks_exact(4)
            .take(3)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    /// Generating a kernel's source registers its launch arguments and never launches it;
    /// CubeCL keeps such arguments in thread-local builders until a launch. The next launch on
    /// the caller's thread must still see only its own arguments (a regression: the wgmma
    /// probe's leftovers made flint's first forward on an H100 read its shapes from the wrong
    /// place).
    #[test]
    fn generating_sources_leaves_the_next_launch_its_own_arguments() {
        let own = vec![2.5, 7.0, 4.0];
        assert_eq!(arguments_seen_by_next_launch(), own, "before any source");
        let fwd = FwdSourceSpec {
            dtype: "bf16",
            head_dim: 64,
            val_dim: 64,
            block_q: 64,
            block_kv: 64,
            causal: false,
            features: true,
        };
        forward_cuda_source(&fwd).expect("forward source");
        assert_eq!(
            arguments_seen_by_next_launch(),
            own,
            "after the forward's source"
        );
        let client = WgpuRuntime::client(&WgpuDevice::default());
        crate::wgmma::product_source(&client).expect("the wgmma probe's source");
        assert_eq!(
            arguments_seen_by_next_launch(),
            own,
            "after the wgmma probe"
        );
    }

    /// A launcher dropped with registered arguments (as by a launch that panicked midway,
    /// which the tuner survives) leaves nothing to the next launch on its thread: the
    /// workspace's patched `cubecl-core` starts each launcher from empty arguments
    /// (`vendor/README.md`).
    #[test]
    fn an_abandoned_launcher_leaves_the_next_launch_its_own_arguments() {
        let own = vec![2.5, 7.0, 4.0];
        let client = WgpuRuntime::client(&WgpuDevice::default());
        let mut abandoned = KernelLauncher::<WgpuRuntime>::new(KernelSettings::default());
        let handle = client.create_from_slice(&[0u8; 64]);
        // SAFETY: nothing launches; the handle only stands in for the array's binding.
        let array = unsafe { ArrayArg::<WgpuRuntime>::from_raw_parts(handle, 16) };
        <Array<f32> as LaunchArg>::register(array, &mut abandoned);
        abandoned.register_scalar(0.125f32);
        abandoned.register_scalar(3u32);
        abandoned.register_scalar(5u32);
        drop(abandoned);
        assert_eq!(arguments_seen_by_next_launch(), own);
    }

    /// A causal forward (bf16) and a two-kernel backward (f16), D = 64: `(name, source)`.
    fn sources() -> Vec<(String, String)> {
        let fwd = FwdSourceSpec {
            dtype: "bf16",
            head_dim: 64,
            val_dim: 64,
            block_q: 64,
            block_kv: 64,
            causal: true,
            features: false,
        };
        let bwd = BwdSourceSpec {
            dtype: "f16",
            head_dim: 64,
            val_dim: 64,
            block_q: 64,
            block_kv: 64,
            fused_dq: false,
            causal: false,
            bias: false,
            softcap: false,
            dropout: false,
            planes: 4,
            grid: false,
        };
        let mut sources = vec![forward_cuda_source(&fwd).expect("forward source")];
        sources.extend(backward_cuda_sources(&bwd).expect("backward sources"));
        assert_eq!(sources.len(), 3, "forward, dK/dV and dQ kernels");
        sources
    }

    /// The cooperative-matrix forward expands and compiles for every tiling the op offers
    /// (one and two row fragments per plane), with CUDA's and Vulkan's vector widths and
    /// unaligned inputs, plain, causal and with every feature; and its fragments are loaded
    /// from padded rows.
    #[test]
    fn cmma_kernel_compiles_in_every_tiling() {
        for (d, block_q, block_kv, vec, causal, features) in [
            (64, 64, 32, 8, false, false),
            (64, 128, 32, 4, true, false),
            (64, 128, 16, 1, false, true),
            (64, 64, 64, 4, true, true),
            (64, 16, 16, 8, false, false),
            (128, 128, 32, 4, false, false),
            (128, 64, 32, 4, true, false),
        ] {
            let spec = FwdSourceSpec {
                dtype: "f16",
                head_dim: d,
                val_dim: d,
                block_q,
                block_kv,
                causal,
                features,
            };
            let (name, source) = cmma_cuda_source(&spec, vec).expect("cmma source");
            if let Ok(dir) = std::env::var("FLINT_DUMP_CMMA") {
                let path = format!("{dir}/cmma_d{d}_{block_q}x{block_kv}_v{vec}.cu");
                std::fs::write(path, &source).expect("dump");
            }
            assert!(
                source.contains("load_matrix_sync"),
                "{name}: no fragment loads"
            );
            // K fragments at a row stride of D + 8 elements.
            assert!(
                source.contains(&format!("uint32({})", d + 8)),
                "{name} {block_q}x{block_kv}: K rows not padded"
            );
        }
    }

    /// The cooperative-matrix backward's two kernels expand and compile in each tiling the
    /// op offers, planes in pairs (grid) or not, with CUDA's and Vulkan's vector widths and
    /// unaligned inputs, plain and with every feature; their fragments read K at rows of
    /// D + 8 elements.
    #[test]
    fn cmma_backward_compiles_in_every_tiling() {
        use crate::attention::{AttentionBwdConfig, Variant};
        for (d, planes, bq, bkv, grid, vec, causal) in [
            (128, 2, 32, 32, false, 4, false),
            (128, 2, 32, 32, false, 8, true),
            (128, 1, 16, 16, false, 1, true),
            (128, 4, 32, 32, true, 4, true),
            (64, 4, 32, 32, false, 4, true),
            (64, 2, 64, 64, false, 8, false),
            (64, 8, 32, 64, true, 8, false),
            (96, 2, 16, 32, false, 4, true),
        ] {
            let c = AttentionBwdConfig {
                grid,
                ..AttentionBwdConfig::new(Variant::Cmma, bq, bkv).with_planes(planes)
            };
            let sources =
                cmma_backward_cuda_sources(&c, "bf16", (d, d), vec, causal).expect("sources");
            assert_eq!(sources.len(), 2, "dK/dV and dQ kernels");
            for (name, source) in sources {
                if let Ok(dir) = std::env::var("FLINT_DUMP_CMMA") {
                    let path = format!(
                        "{dir}/{name}_d{d}_p{planes}_{bq}x{bkv}_g{grid}_v{vec}_{causal}.cu"
                    );
                    std::fs::write(path, &source).expect("dump");
                }
                assert!(source.contains("mma_sync"), "{name}: no products");
                assert!(
                    source.contains(&format!("uint32({})", d + 8)),
                    "{name} d{d}: rows not padded"
                );
            }
        }
    }

    /// The portable kernels expand and compile in their sliced forms (D = 128 in four
    /// slices, D = 96 in three, D = 256 with V in chunks of four keys), plain and with every
    /// feature, and in their whole forms; the sliced forward stages no whole row of Q.
    #[test]
    fn portable_kernels_compile_sliced_and_whole() {
        use crate::attention::{AttentionBwdConfig, AttentionFwdConfig, Variant};
        let fwd = |bq, bkv| AttentionFwdConfig::new(Variant::Portable, bq, bkv);
        let bwd = |bq, bkv| AttentionBwdConfig::new(Variant::Portable, bq, bkv);
        for (f, b, dims, causal) in [
            (
                fwd(128, 32).with_slices(),
                bwd(64, 32).with_slices(),
                (128, 128),
                false,
            ),
            (
                fwd(64, 64).with_slices(),
                bwd(32, 64).with_slices(),
                (96, 96),
                true,
            ),
            (
                fwd(64, 32).with_slices(),
                bwd(64, 32).with_slices().with_fused_dq(),
                (128, 128),
                true,
            ),
            (
                fwd(32, 16).with_slices(),
                bwd(16, 16).with_slices(),
                (256, 128),
                false,
            ),
            (
                fwd(64, 32).with_registers(),
                bwd(32, 32).with_registers(),
                (64, 64),
                true,
            ),
            (fwd(16, 16), bwd(16, 16), (64, 64), false),
        ] {
            let sources = portable_cuda_sources(&f, &b, dims, causal).expect("portable sources");
            assert_eq!(sources.len(), if b.fused_dq { 2 } else { 3 });
            if let Ok(dir) = std::env::var("FLINT_DUMP_PORTABLE") {
                for (name, source) in &sources {
                    let tag = format!(
                        "{}x{}_{}x{}_d{}",
                        f.block_q, f.block_kv, b.block_q, b.block_kv, dims.0
                    );
                    let path = format!("{dir}/{name}_{tag}_s{}.cu", u8::from(f.sliced));
                    std::fs::write(path, source).expect("dump");
                }
            }
            for (name, source) in &sources {
                assert!(source.contains("__syncthreads"), "{name}: no barriers");
            }
        }
    }

    /// Every exponential in the tensor-core kernels is `exp2` through the fast `powf`, which
    /// the workspace's patched `cubecl-cpp` emits as PTX's flush-to-zero `ex2`
    /// (`vendor/README.md`). Without the patch the source holds `__powf` and the SASS four
    /// instructions per exponential instead of one: this test catches a lost patch.
    #[test]
    fn exponentials_flush_to_zero() {
        for (name, source) in &sources() {
            assert!(
                source.contains("ex2.approx.ftz.f32"),
                "{name}: no flush-to-zero ex2"
            );
            assert!(
                !source.contains("__powf"),
                "{name}: an exponential is still __powf"
            );
        }
    }

    /// The tensor-core products read their operands where they live (`mma_tiles.rs`): when
    /// each product copied its A, B and C registers into temporaries and C back, ten element
    /// copies per product made up half of a kernel's source and NVRTC's time. A few copies
    /// per product remain (the upper half of each B pair, the score casts, stores of results).
    #[test]
    fn mma_operands_are_not_copied() {
        for (name, source) in &sources() {
            let products = source.matches("__mma_m16n8k16_").count() - 1; // less the helper
            let copies = source.matches("] = reinterpret_cast< ").count();
            assert!(products >= 32, "{name}: only {products} products");
            assert!(
                copies <= 4 * products,
                "{name}: {copies} element copies for {products} products"
            );
        }
    }

    /// A kernel compiles to the same CUDA source every time (the patched `cubecl-opt` and
    /// `cubecl-cpp`, `vendor/README.md`). With CubeCL's randomly seeded hash orders, shared
    /// memory moved and locals were declared in another order from one compile to the next,
    /// and with them the SASS.
    #[test]
    fn sources_are_deterministic() {
        let first = sources();
        for _ in 0..3 {
            for ((name, a), (_, b)) in first.iter().zip(&sources()) {
                assert!(a == b, "{name}: a second compile gave another source");
            }
        }
    }

    /// The kernels' barriers (the forward's asynchronous copies) come from the patched
    /// `cubecl-cpp`'s light prelude of PTX `mbarrier` instructions, not from libcu++'s
    /// `<cuda/barrier>` and cooperative groups, whose parsing costs NVRTC 1.5-2 s per kernel
    /// with CUDA 13's headers (`vendor/README.md`): this test catches a lost patch.
    #[test]
    fn barriers_without_libcudacxx_headers() {
        let sources = sources();
        for (name, source) in &sources {
            for header in ["<cuda/barrier>", "<cooperative_groups"] {
                assert!(
                    !source.contains(&format!("#include {header}")),
                    "{name}: includes {header}"
                );
            }
        }
        let (name, forward) = &sources[0];
        assert!(
            forward.contains("#define __FLINT_MBAR_WAIT \"try_wait\"")
                && forward.contains("mbarrier.\" __FLINT_MBAR_WAIT \".parity.shared.b64")
                && forward.contains("wait_parity("),
            "{name}: the forward's barrier waits are not the light prelude's"
        );
    }

    /// The patched `cubecl-cpp` compiles a manual MMA of `m = 64` to `wgmma` steps after a
    /// fence, then a commit; a three-matrix store to a wait that fences the accumulators; a
    /// three-matrix load to a shared-memory address (`crate::wgmma`); nothing of it becomes
    /// an `ldmatrix` or `stmatrix` (the fused dQ's transposing `ldmatrix` of dS and the loads of
    /// A operands into registers are their own).
    #[test]
    fn warpgroup_mma_compiles_to_wgmma() {
        // What `DeviceLimits` asks before it offers the variant: true with the patched compiler.
        let client = WgpuRuntime::client(&WgpuDevice::default());
        assert!(crate::wgmma::compiler_emits_wgmma(&client));
        let sources = super::wgmma_cuda_sources().expect("the wgmma kernels compile");
        assert_eq!(sources.len(), 37);
        // For ptxas by hand (`scripts/device/local_ptxas.sh`'s tools): the sources as files.
        if let Ok(dir) = std::env::var("FLINT_DUMP_WGMMA") {
            for (name, source) in &sources {
                std::fs::write(format!("{dir}/{name}.cu"), source).expect("dump writes");
            }
        }
        for (name, source) in &sources {
            for needle in [
                "wgmma.fence.sync.aligned",
                "wgmma.mma_async.sync.aligned.m64n",
                "wgmma.commit_group.sync.aligned; }",
                "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" : \"+f\"(",
                "__cvta_generic_to_shared(",
            ] {
                assert!(source.contains(needle), "{name}: no {needle}");
            }
            // The pipelined forward's 128-row tiles stage O by `stmatrix` and store it by
            // TMA (the light prelude's wrappers), and so do the backward's two kernels with
            // their gradients; nothing else stores either way.
            // D = 256's split launches store their gradients plainly.
            let split = name.starts_with("attention_bwd_dkdv_wgmma_d256");
            // The pipelined forward with one consumer warpgroup: two cubes an SM.
            let two_cubes =
                name.starts_with("attention_fwd_wgmma_pipelined") && name.contains("_wg1_");
            let staged = name.starts_with("attention_fwd_wgmma_pipelined_d128_wg2_kv128")
                || two_cubes
                || name.starts_with("attention_fwd_wgmma_pipelined_d32_wg2_kv128")
                || (name.starts_with("attention_bwd_") && !split);
            for needle in [
                "__stmatrix_m8n8___nv_bfloat16_4x(reinterpret_cast",
                "experimental::cp_async_bulk_tensor_4d_shared_to_global(&",
                "experimental::cp_async_bulk_wait_group_read<0>();",
            ] {
                assert_eq!(
                    source.contains(needle),
                    staged,
                    "{name}: {needle}: expected {staged}"
                );
            }
            // The pipelined kernel reads Q from shared memory (the SS form) and waits for
            // S with P·V still in flight.
            // So does the backward (S and dP, both with the other in flight).
            let pipelined = name.starts_with("attention_fwd_wgmma_pipelined")
                || name.starts_with("attention_bwd_");
            // Except where Q (and, in dQ, dO) is loaded into registers by `ldmatrix` as the
            // scores' A operand: the forward's two warpgroups at D = 128 and the dQ kernel.
            let a_in_registers = name.starts_with("attention_fwd_wgmma_pipelined_d128_wg2")
                || name.starts_with("attention_bwd_dq_");
            let ss = pipelined && !a_in_registers;
            assert_eq!(
                source.contains("_f32_ss(") && source.contains(", p, 1, 1, 0, 0; "),
                ss,
                "{name}: SS helper present: expected {ss}"
            );
            if a_in_registers {
                assert!(
                    source.contains(", p, 1, 1, 0; "),
                    "{name}: no product with A in registers and a K-major B"
                );
            }
            // One consumer warpgroup asks for two cubes an SM, whose launch bounds cap a
            // thread's registers at 128 until `setmaxnreg` moves them; the other kernels
            // that move registers ask for one, and the rest for none.
            let bounds = source
                .split_once("__launch_bounds__(")
                .and_then(|(_, rest)| rest.split_once(')'))
                .map(|(args, _)| args);
            let threads = bounds.map(|b| b.split(',').next().unwrap_or(b));
            let expected = match (two_cubes, source.contains("setmaxnreg")) {
                (true, _) => Some("256, 2".to_string()),
                (false, true) => threads.map(|t| format!("{t}, 1")),
                (false, false) => threads.map(str::to_string),
            };
            assert_eq!(
                bounds.map(str::to_string),
                expected,
                "{name}: launch bounds"
            );
            // The split pass's dV launch has one product in flight at a time.
            let one_left = pipelined && !name.ends_with("_dv");
            assert_eq!(
                source.contains("wgmma.wait_group.sync.aligned 1;"),
                one_left,
                "{name}: a wait with one group left: expected {one_left}"
            );
            // It copies by TMA (the light prelude's wrappers, not libcu++'s barrier headers).
            assert_eq!(
                source.contains("cp_async_bulk_tensor_4d_global_to_shared(shared_memory"),
                pipelined,
                "{name}: TMA tile copies: expected {pipelined}"
            );
            assert!(
                !source.contains("#include <cuda/barrier>"),
                "{name}: includes <cuda/barrier>"
            );
            let fused = name.ends_with("_fused_dq");
            let ldmatrix = fused || a_in_registers;
            assert_eq!(
                source.contains("__ldmatrix_"),
                ldmatrix,
                "{name}: an ldmatrix: expected {ldmatrix}"
            );
            // The fused dQ: a product from zero on the MN-major K, and two-element atomics.
            assert_eq!(source.contains("atomicAdd("), fused, "{name}: atomics");
            // Operands copied by TMA (the pipelined kernels') need no proxy fence before a
            // product; those the prototype and the check store or `cp.async` do.
            assert_eq!(
                source.contains(
                    "static_cast<uint64>(b_0);\n  asm volatile(\"fence.proxy.async.shared::cta;\""
                ),
                !pipelined,
                "{name}: a proxy fence in the products' helpers: expected {}",
                !pipelined
            );
            // The barriers' initialisation is fenced for the async proxy all the same.
            assert!(
                source.contains("fence.proxy.async.shared::cta"),
                "{name}: no proxy fence at all"
            );
            // An MN-major B (V, or the MN-major check) has its own transposed helper.
            let mn = name.ends_with("_mn") || name.starts_with("attention_");
            assert_eq!(
                source.contains("_f32_mn(") && source.contains(", p, 1, 1, 1; "),
                mn,
                "{name}: MN-major helper present: expected {mn}"
            );
        }
    }
}
