//! Sets `flint_background_compile` when the build's CubeCL CUDA runtime is the workspace's
//! patched one, and `flint_wgpu_background_compile` for its patched wgpu runtime
//! (`vendor/README.md`): on those, an empty dispatch compiles a kernel on a background
//! thread. With CubeCL's published runtimes an empty dispatch is a launch error (CUDA) or a
//! compile in line (wgpu), so the tuner then compiles candidates one by one, on their first
//! runs.

fn main() {
    for (var, cfg) in [
        (
            "DEP_CUBECL_CUDA_FLINT_BACKGROUND_COMPILE",
            "flint_background_compile",
        ),
        (
            "DEP_CUBECL_WGPU_FLINT_BACKGROUND_COMPILE",
            "flint_wgpu_background_compile",
        ),
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo::rerun-if-env-changed={var}");
        if std::env::var_os(var).is_some() {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
