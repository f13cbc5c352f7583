//! Shared helpers for Flint's examples.

/// Sets up logging so that the selector's one line per tune is visible (`FLINT_LOG` or
/// `RUST_LOG` override the default `info`), and keeps compiled kernels across processes
/// ([`flint::enable_kernel_cache`]). Call it first thing in `main`.
pub fn init_logging() {
    let filter = std::env::var("FLINT_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn,flint=info,flint_tune=info,flint_kernels=info".to_string());
    let _ = env_logger::Builder::new()
        .parse_filters(&filter)
        .format_timestamp(None)
        .try_init();
    // Before any device exists: CubeCL reads its configuration when the first client starts.
    let kernels = flint::enable_kernel_cache();
    log::debug!("compiled kernels: {kernels:?}");
}

pub mod tiny_transformer;
