//! The CubeCL side of a device: its fingerprint and the limits ops filter candidates by.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cubecl::Runtime;
use cubecl::prelude::ComputeClient;
use flint_tune::DeviceFingerprint;

/// The device limits that decide which kernel configs can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Shared memory per cube, in bytes.
    pub shared_memory: usize,
    /// Units per cube.
    pub max_units_per_cube: u32,
    /// Largest vector width, in elements.
    pub max_vector_size: usize,
    /// Smallest and largest plane (warp) size.
    pub plane_size: (u32, u32),
    /// Whether plane (warp) operations are available.
    pub plane_ops: bool,
    /// Whether any cmma (tensor core) shape is available.
    pub cmma: bool,
    /// Element types (`f16`, `bf16`) with a register-level `m16n8k16` MMA into f32.
    pub mma_16x8x16: Vec<&'static str>,
    /// Element types (`f16`, `bf16`) with a cooperative-matrix (`cmma`) 16 x 16 x 16 product
    /// into f32: CUDA's WMMA, Vulkan's cooperative matrices (SPIR-V), ROCm's WMMA.
    pub cmma_16x16x16: Vec<&'static str>,
    /// Whether global memory takes atomic adds of two f32 at once (CUDA sm90+).
    pub atomic_add_f32x2: bool,
    /// Whether the device runs Hopper's warpgroup MMA (`wgmma`): CUDA at compute capability
    /// 9.x, which CubeCL compiles for `sm_90a` (later architectures dropped the instruction).
    pub wgmma: bool,
    /// Whether kernels may keep a unit's arrays (accumulators in registers) across cube
    /// barriers: CUDA, ROCm, and wgpu adapters whose planes hold 32 lanes or more (the GPUs of
    /// NVIDIA, AMD, Apple and Intel). Not software rasterisers, whose planes are the CPU's
    /// vector width (lavapipe: 8): lavapipe lowers barriers into coroutines, and arrays kept
    /// across one made its LLVM take minutes to compile a kernel.
    pub arrays_across_barriers: bool,
}

impl DeviceLimits {
    /// The limits of `client`'s device.
    pub fn of<R: Runtime>(client: &ComputeClient<R>) -> Self {
        let props = client.properties();
        let hw = &props.hardware;
        Self {
            shared_memory: hw.max_shared_memory_size,
            max_units_per_cube: hw.max_units_per_cube,
            max_vector_size: hw.max_vector_size,
            plane_size: (hw.plane_size_min, hw.plane_size_max),
            plane_ops: props.features.plane.contains(cubecl::features::Plane::Ops),
            cmma: !props.features.matmul.cmma.is_empty(),
            mma_16x8x16: f32_products(&props.features.matmul.mma, (16, 8, 16)),
            cmma_16x16x16: f32_products(&props.features.matmul.cmma, (16, 16, 16)),
            atomic_add_f32x2: {
                use cubecl::ir::{ElemType, FloatKind, StorageType, Type};
                let f32x2 = Type::new(StorageType::Atomic(ElemType::Float(FloatKind::F32)))
                    .with_vector_size(2);
                props
                    .atomic_type_usage(f32x2)
                    .contains(cubecl::ir::features::AtomicUsage::Add)
            },
            wgmma: wgmma_device(client),
            arrays_across_barriers: keeps_arrays(R::name(client), hw.plane_size_max),
        }
    }
}

/// [`DeviceLimits::arrays_across_barriers`] for a runtime name and the largest plane.
fn keeps_arrays(runtime: &str, plane_max: u32) -> bool {
    match runtime {
        "cuda" | "hip" => true,
        r if r.starts_with("wgpu") => plane_max >= 32,
        _ => false,
    }
}

/// Whether `client`'s device runs warpgroup MMA and this build's compiler emits it. CubeCL's
/// CUDA runtime does not report the compute capability; it registers TMA from sm_90 and its
/// wide im2col from sm_100, so the pair marks 9.x.
fn wgmma_device<R: Runtime>(client: &ComputeClient<R>) -> bool {
    use cubecl::ir::features::Tma;
    let tma = client.properties().features.tma;
    let sm90 =
        R::name(client) == "cuda" && tma.contains(Tma::Base) && !tma.contains(Tma::Im2colWide);
    #[cfg(feature = "cuda")]
    {
        sm90 && crate::wgmma::compiler_emits_wgmma(client)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = sm90;
        false
    }
}

impl DeviceLimits {
    /// The limits recorded in a fingerprint made by [`fingerprint`] (its compute field lists
    /// them), so that a config tuned elsewhere can be checked without the device.
    ///
    /// # Errors
    /// When the fingerprint does not record them (made by hand or by another release).
    pub fn from_fingerprint(fp: &DeviceFingerprint) -> Result<Self, String> {
        let compute = fp.compute();
        let field = |name: &str| -> Result<&str, String> {
            let start = compute
                .find(&format!("{name}="))
                .map(|i| i + name.len() + 1)
                .ok_or_else(|| format!("the fingerprint records no `{name}` limit"))?;
            let rest = &compute[start..];
            Ok(rest.split(' ').next().unwrap_or(rest))
        };
        let num = |name: &str| -> Result<usize, String> {
            field(name)?
                .parse()
                .map_err(|_| format!("the fingerprint's `{name}` is not a number"))
        };
        let flag = |name: &str| field(name).map(|v| v == "true");
        let (lo, hi) = field("plane")?
            .split_once("..")
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or("the fingerprint's `plane` is not `min..max`")?;
        let mma_start = compute
            .find("mma=[")
            .ok_or("the fingerprint records no `mma` list")?;
        let mma_list = &compute[mma_start + 5..];
        let mma_list = &mma_list[..mma_list.find(']').unwrap_or(mma_list.len())];
        // Absent from fingerprints of older releases: no cmma shape assumed.
        let cmma_list = compute.find("cmma16=[").map_or("", |at| {
            let list = &compute[at + 8..];
            &list[..list.find(']').unwrap_or(list.len())]
        });
        let dtypes = |list: &str| -> Vec<&'static str> {
            ["f16", "bf16"]
                .into_iter()
                .filter(|t| list.contains(&format!("\"{t}\"")))
                .collect()
        };
        Ok(Self {
            shared_memory: num("smem")?,
            max_units_per_cube: u32::try_from(num("units")?)
                .map_err(|_| "the fingerprint's `units` is out of range")?,
            max_vector_size: num("vec")?,
            plane_size: (lo, hi),
            plane_ops: flag("plane_ops")?,
            cmma: flag("cmma")?,
            mma_16x8x16: dtypes(mma_list),
            cmma_16x16x16: dtypes(cmma_list),
            // Absent from fingerprints of older releases: assume the narrower device.
            atomic_add_f32x2: flag("f32x2_add").unwrap_or(false),
            wgmma: flag("wgmma").unwrap_or(false),
            arrays_across_barriers: flag("live_arrays").unwrap_or(false),
        })
    }
}

/// The element types (`f16`, `bf16`) of `set` with an f32 accumulator at shape `(m, n, k)`.
fn f32_products(
    set: &std::collections::BTreeSet<cubecl::ir::features::MmaConfig>,
    shape: (u32, u32, u32),
) -> Vec<&'static str> {
    use cubecl::ir::{ElemType, FloatKind, StorageType};
    let f32_acc = StorageType::Scalar(ElemType::Float(FloatKind::F32));
    [("f16", FloatKind::F16), ("bf16", FloatKind::BF16)]
        .into_iter()
        .filter(|(_, kind)| {
            let ab = StorageType::Scalar(ElemType::Float(*kind));
            set.iter().any(|c| {
                c.a_type == ab && c.b_type == ab && c.cd_type == f32_acc && (c.m, c.n, c.k) == shape
            })
        })
        .map(|(name, _)| name)
        .collect()
}

/// The fingerprint of `device`, computed once per process and device.
///
/// It names the runtime, the device (GPU or adapter name where the runtime can tell, else
/// the device id), its compute capability or adapter details plus the limits kernels depend
/// on, and the driver version.
pub fn fingerprint<R: Runtime>(client: &ComputeClient<R>, device: &R::Device) -> DeviceFingerprint {
    static CACHE: OnceLock<Mutex<HashMap<String, DeviceFingerprint>>> = OnceLock::new();
    let runtime = R::name(client);
    let id = format!("{runtime}/{device:?}");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(fp) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
        return fp.clone();
    }
    let native = identity(device as &dyn Any);
    let limits = DeviceLimits::of(client);
    let (name, compute, driver) =
        native.unwrap_or_else(|| (format!("{device:?}"), String::new(), "unknown".into()));
    let compute = format!(
        "{compute} smem={} units={} vec={} plane={}..{} plane_ops={} cmma={} mma={:?} f32x2_add={} cmma16={:?} wgmma={} live_arrays={} sms={:?}",
        limits.shared_memory,
        limits.max_units_per_cube,
        limits.max_vector_size,
        limits.plane_size.0,
        limits.plane_size.1,
        limits.plane_ops,
        limits.cmma,
        limits.mma_16x8x16,
        limits.atomic_add_f32x2,
        limits.cmma_16x16x16,
        limits.wgmma,
        limits.arrays_across_barriers,
        client.properties().hardware.num_streaming_multiprocessors,
    );
    let fp = DeviceFingerprint::new(runtime, name, compute.trim(), driver);
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, fp.clone());
    fp
}

/// `(name, compute capability or adapter details, driver)` from the native API.
fn identity(device: &dyn Any) -> Option<(String, String, String)> {
    #[cfg(feature = "cuda")]
    if let Some(d) = device.downcast_ref::<cubecl::cuda::CudaDevice>() {
        return cuda_identity(d.index);
    }
    #[cfg(feature = "wgpu")]
    if let Some(d) = device.downcast_ref::<cubecl::wgpu::WgpuDevice>() {
        return wgpu_identity(d);
    }
    let _ = device;
    None
}

#[cfg(feature = "cuda")]
pub(crate) fn cuda_identity(index: usize) -> Option<(String, String, String)> {
    use cudarc::driver::{result, sys::CUdevice_attribute as A};
    result::init().ok()?;
    let dev = result::device::get(i32::try_from(index).ok()?).ok()?;
    let name = result::device::get_name(dev).ok()?;
    // SAFETY: `dev` is a valid handle from `device::get`; the attributes are plain queries.
    let (major, minor) = unsafe {
        (
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
                .ok()?,
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
                .ok()?,
        )
    };
    let mut version = 0i32;
    // SAFETY: writes one int through a valid pointer.
    let driver = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    let driver = if driver == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("{}.{}", version / 1000, (version % 1000) / 10)
    } else {
        "unknown".into()
    };
    Some((name, format!("sm_{major}{minor}"), driver))
}

/// The adapters of wgpu's primary backends: cubecl runs on Vulkan/Metal/DX12, and probing
/// GL logs errors. Empty when wgpu cannot start.
#[cfg(feature = "wgpu")]
pub(crate) fn wgpu_adapters() -> Vec<wgpu::AdapterInfo> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::PRIMARY;
    let Ok(instance) =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wgpu::Instance::new(desc)))
    else {
        return Vec::new();
    };
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    adapters.iter().map(|a| a.get_info()).collect()
}

#[cfg(feature = "wgpu")]
fn wgpu_identity(device: &cubecl::wgpu::WgpuDevice) -> Option<(String, String, String)> {
    use cubecl::wgpu::WgpuDevice as D;
    use wgpu::DeviceType as T;
    // Mirrors how cubecl picks an adapter for each device kind.
    let wanted: Option<(T, usize)> = match device {
        D::DiscreteGpu(i) => Some((T::DiscreteGpu, *i)),
        D::IntegratedGpu(i) => Some((T::IntegratedGpu, *i)),
        D::VirtualGpu(i) => Some((T::VirtualGpu, *i)),
        D::Cpu => Some((T::Cpu, 0)),
        _ => None,
    };
    let infos = wgpu_adapters();
    let info = match wanted {
        Some((kind, index)) => infos.iter().filter(|i| i.device_type == kind).nth(index),
        // The default device: the same preference order as a high-performance request.
        None => [
            T::DiscreteGpu,
            T::IntegratedGpu,
            T::VirtualGpu,
            T::Other,
            T::Cpu,
        ]
        .iter()
        .find_map(|kind| infos.iter().find(|i| i.device_type == *kind)),
    }?;
    Some((
        info.name.clone(),
        format!(
            "{:?} {:?} vendor={:#x} device={:#x}",
            info.backend, info.device_type, info.vendor, info.device
        ),
        format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::keeps_arrays;

    /// GPUs keep arrays across barriers; software rasterisers (lavapipe's 8-lane planes, or
    /// 16 with AVX-512) and unknown runtimes do not.
    #[test]
    fn arrays_across_barriers_follow_the_runtime_and_plane_width() {
        assert!(keeps_arrays("cuda", 32));
        assert!(keeps_arrays("hip", 64));
        assert!(keeps_arrays("wgpu<spirv>", 32));
        assert!(keeps_arrays("wgpu<wgsl>", 64));
        assert!(!keeps_arrays("wgpu<wgsl>", 8));
        assert!(!keeps_arrays("wgpu<spirv>", 16));
        assert!(!keeps_arrays("cpu", 1));
    }
}
