//! Sets `flint_background_compile` when the build's CubeCL CUDA runtime is the workspace's
//! patched one (`vendor/README.md`), on which an empty dispatch compiles a kernel on a
//! background thread. With CubeCL's published runtime an empty dispatch is a launch error,
//! so the tuner then compiles candidates one by one, on their first runs.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(flint_background_compile)");
    println!("cargo::rerun-if-env-changed=DEP_CUBECL_CUDA_FLINT_BACKGROUND_COMPILE");
    if std::env::var_os("DEP_CUBECL_CUDA_FLINT_BACKGROUND_COMPILE").is_some() {
        println!("cargo::rustc-cfg=flint_background_compile");
    }
}
