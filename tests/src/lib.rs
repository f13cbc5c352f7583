//! Shared harness for Flint's integration tests: device set-up with clear failure messages
//! and the independent f64 reference.

pub mod reference;

use cubecl::Runtime;
use cubecl::prelude::ComputeClient;

/// The software Vulkan device (Mesa lavapipe) that every machine running the tests has.
///
/// # Panics
/// With instructions when no CPU Vulkan adapter exists: the README's test command installs
/// `mesa-vulkan-drivers`, so a missing adapter is a broken set-up, not a reason to skip.
#[cfg(feature = "wgpu")]
pub fn lavapipe() -> (
    ComputeClient<cubecl::wgpu::WgpuRuntime>,
    cubecl::wgpu::WgpuDevice,
) {
    let device = cubecl::wgpu::WgpuDevice::Cpu;
    let client = std::panic::catch_unwind(|| cubecl::wgpu::WgpuRuntime::client(&device))
        .unwrap_or_else(|_| {
            panic!(
                "no CPU Vulkan adapter: install Mesa's lavapipe (`apt-get install mesa-vulkan-drivers`) \
                 or run the tests through `scripts/test.sh`, which checks and installs it"
            )
        });
    (client, device)
}

/// The first CUDA device and its CubeCL client.
///
/// # Panics
/// When the tests were built with `--features cuda` but no CUDA device can be opened.
#[cfg(feature = "cuda")]
pub fn cuda() -> (
    ComputeClient<cubecl::cuda::CudaRuntime>,
    cubecl::cuda::CudaDevice,
) {
    let device = cubecl::cuda::CudaDevice::new(0);
    let client = std::panic::catch_unwind(|| cubecl::cuda::CudaRuntime::client(&device))
        .expect("built with `--features cuda` but no CUDA device could be opened");
    (client, device)
}

/// Whether a warpgroup-MMA test must skip because CUDA device 0 is not sm_90; says so on
/// stderr under the test's name, so that the skip is visible.
#[cfg(feature = "cuda")]
pub fn skip_without_wgmma(test: &str) -> bool {
    let skip = !flint_kernels::wgmma::cuda_device_has_wgmma(0);
    if skip {
        eprintln!("SKIPPED {test}: CUDA device 0 is not sm_90");
    }
    skip
}

/// Reads a whole f32 buffer back.
pub fn read_f32<R: Runtime>(client: &ComputeClient<R>, handle: cubecl::server::Handle) -> Vec<f32> {
    let bytes = client
        .read_one(handle)
        .expect("reading back a buffer the test created");
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Deterministic, non-zero test data in [-2, 2): a small LCG, so no dependency on `rand`.
pub fn random_f32(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// Little-endian bytes of an f32 slice.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
