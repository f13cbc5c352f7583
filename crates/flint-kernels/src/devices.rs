//! The CubeCL devices this build can reach (`flint devices`).

use cubecl::Runtime;
use flint_tune::DeviceFingerprint;

use crate::{DeviceLimits, fingerprint};

/// One device, as the selector sees it.
#[derive(Clone, Debug)]
pub struct DeviceReport {
    /// The runtime and device, e.g. `cuda:0` or `wgpu:DiscreteGpu(0)`.
    pub id: String,
    /// The fingerprint that keys its cache entries.
    pub fingerprint: DeviceFingerprint,
    /// The limits kernel configs are checked against.
    pub limits: DeviceLimits,
}

/// Describes `device` of runtime `R` (starts its client).
pub fn describe<R: Runtime>(id: String, device: &R::Device) -> DeviceReport {
    let client = R::client(device);
    DeviceReport {
        id,
        fingerprint: fingerprint::<R>(&client, device),
        limits: DeviceLimits::of(&client),
    }
}

/// Every CUDA device the driver reports (none when the driver is absent).
#[cfg(feature = "cuda")]
pub fn cuda_devices() -> Vec<cubecl::cuda::CudaDevice> {
    use cudarc::driver::result;
    let count = result::init()
        .and_then(|()| result::device::get_count())
        .unwrap_or(0);
    (0..usize::try_from(count).unwrap_or(0))
        .map(cubecl::cuda::CudaDevice::new)
        .collect()
}

/// The peak memory bandwidth of CUDA device `index` in GB/s: its memory clock times its bus
/// width, twice per clock (HBM and GDDR move data on both edges): 4814 on an H200 (about
/// 3350 on an H100 SXM). `None` where the driver is absent or does not say.
#[cfg(feature = "cuda")]
pub fn cuda_memory_bandwidth_gbps(index: usize) -> Option<f64> {
    use cudarc::driver::{result, sys::CUdevice_attribute as A};
    result::init().ok()?;
    let dev = result::device::get(i32::try_from(index).ok()?).ok()?;
    // SAFETY: `dev` is a valid handle from `device::get`; the attributes are plain queries.
    let (khz, bits) = unsafe {
        (
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).ok()?,
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
                .ok()?,
        )
    };
    (khz > 0 && bits > 0).then(|| 2.0 * f64::from(khz) * 1e3 * f64::from(bits) / 8.0 / 1e9)
}

/// Every wgpu adapter of the primary backends (Vulkan, Metal, DX12), as the `WgpuDevice`
/// that selects it.
#[cfg(feature = "wgpu")]
pub fn wgpu_devices() -> Vec<cubecl::wgpu::WgpuDevice> {
    use cubecl::wgpu::WgpuDevice as D;
    use wgpu::DeviceType as T;
    let (mut discrete, mut integrated, mut virt) = (0, 0, 0);
    let next = |n: &mut usize| {
        *n += 1;
        *n - 1
    };
    crate::device::wgpu_adapters()
        .iter()
        .filter_map(|a| match a.device_type {
            T::DiscreteGpu => Some(D::DiscreteGpu(next(&mut discrete))),
            T::IntegratedGpu => Some(D::IntegratedGpu(next(&mut integrated))),
            T::VirtualGpu => Some(D::VirtualGpu(next(&mut virt))),
            T::Cpu => Some(D::Cpu),
            T::Other => None,
        })
        .collect()
}
