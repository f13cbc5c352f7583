use cudarc::driver::sys::CUDA_VERSION;

fn main() {
    // flint patch: tells direct dependents (DEP_CUBECL_CUDA_FLINT_BACKGROUND_COMPILE) that an
    // empty dispatch compiles the kernel in the background.
    println!("cargo::metadata=background_compile=1");
    println!("cargo::rustc-check-cfg=cfg(cuda_12050)");
    println!("cargo::rustc-check-cfg=cfg(cuda_12080)");

    if CUDA_VERSION >= 12050 {
        println!("cargo:rustc-cfg=cuda_12050");
    }
    if CUDA_VERSION >= 12080 {
        println!("cargo:rustc-cfg=cuda_12080");
    }
}
