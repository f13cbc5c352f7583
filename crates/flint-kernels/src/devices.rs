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
