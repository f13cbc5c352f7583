//! `flint devices`: every CubeCL device this build reaches, with its fingerprint and the
//! features kernels are chosen by.

use flint_kernels::devices::DeviceReport;
use serde_json::{Value, json};

use crate::failure::Outcome;

/// The devices of every runtime compiled in.
pub fn find() -> Vec<DeviceReport> {
    #[allow(unused_mut)]
    let mut found: Vec<DeviceReport> = Vec::new();
    #[cfg(feature = "cuda")]
    for device in flint_kernels::devices::cuda_devices() {
        found.push(
            flint_kernels::devices::describe::<cubecl::cuda::CudaRuntime>(
                format!("cuda:{}", device.index),
                &device,
            ),
        );
    }
    #[cfg(feature = "wgpu")]
    for device in flint_kernels::devices::wgpu_devices() {
        found.push(
            flint_kernels::devices::describe::<cubecl::wgpu::WgpuRuntime>(
                format!("wgpu:{device:?}"),
                &device,
            ),
        );
    }
    found
}

/// The runtimes compiled into this binary.
pub fn runtimes() -> Vec<&'static str> {
    [
        ("cuda", cfg!(feature = "cuda")),
        ("wgpu", cfg!(feature = "wgpu")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect()
}

fn report_json(d: &DeviceReport) -> Value {
    let fp = &d.fingerprint;
    json!({
        "id": d.id,
        "runtime": fp.runtime(),
        "name": fp.device(),
        "compute": fp.compute(),
        "driver": fp.driver(),
        "fingerprint": fp.digest(),
        "shared_memory": d.limits.shared_memory,
        "max_units_per_cube": d.limits.max_units_per_cube,
        "plane_size": [d.limits.plane_size.0, d.limits.plane_size.1],
        "plane_ops": d.limits.plane_ops,
        "cmma": d.limits.cmma,
        "mma_16x8x16": d.limits.mma_16x8x16,
        "cmma_16x16x16": d.limits.cmma_16x16x16,
        "wgmma": d.limits.wgmma,
    })
}

/// `flint devices`. Finding none is not an error: it says so and which runtimes were looked at.
pub fn run(json: bool) -> Outcome {
    let found = find();
    if json {
        let list: Vec<Value> = found.iter().map(report_json).collect();
        println!("{}", json!({"runtimes": runtimes(), "devices": list}));
        return Ok(());
    }
    if found.is_empty() {
        println!(
            "no CubeCL device found (runtimes in this build: {}); flint runs on the CPU backends (NdArray, Flex)",
            runtimes().join(", ")
        );
    }
    for d in &found {
        let l = &d.limits;
        let fp = &d.fingerprint;
        println!("{}  {}  (driver {})", d.id, fp.device(), fp.driver());
        println!("  fingerprint   {}", fp.digest());
        let dtypes = |list: &[&str]| {
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        };
        println!(
            "  tensor cores  cmma {} (16x16x16: {}), m16n8k16 MMA {}, warpgroup MMA {}",
            if l.cmma { "yes" } else { "no" },
            dtypes(&l.cmma_16x16x16),
            dtypes(&l.mma_16x8x16),
            if l.wgmma { "yes" } else { "no" }
        );
        println!(
            "  planes        {}..{} lanes, plane ops {}",
            l.plane_size.0,
            l.plane_size.1,
            if l.plane_ops { "yes" } else { "no" }
        );
        println!(
            "  cube limits   {} KiB shared memory, {} units",
            l.shared_memory / 1024,
            l.max_units_per_cube
        );
        let lanes32 = l.plane_ops && l.plane_size == (32, 32);
        let variant = if !l.mma_16x8x16.is_empty() && lanes32 {
            format!(
                "tensor-core MMA for {}, portable otherwise",
                l.mma_16x8x16.join("/")
            )
        } else if !l.cmma_16x16x16.is_empty() && lanes32 {
            format!(
                "cooperative-matrix forward (cmma) for {}, portable otherwise",
                l.cmma_16x16x16.join("/")
            )
        } else {
            "portable (all dtypes)".to_string()
        };
        println!("  flash attention variant: {variant}");
    }
    Ok(())
}
