//! `enable_kernel_cache` in a process of its own: CubeCL's configuration is process-wide and
//! set once, so this is the file's only test.

use cubecl::config::cache::CacheConfig;
use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
use flint::KernelCache;
use flint::kernel_cache::enable_kernel_cache_in;

#[test]
fn the_kernel_cache_is_set_once_before_cubecl_reads_its_configuration() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let kernels = dir.path().join("kernels");
    // Off asks for nothing and leaves the configuration unread.
    assert_eq!(enable_kernel_cache_in(None), KernelCache::Off);
    // The test runs in the crate directory, whose parents hold no cubecl.toml.
    assert_eq!(
        enable_kernel_cache_in(Some(kernels.clone())),
        KernelCache::Enabled(kernels.clone())
    );
    let config = CubeClRuntimeConfig::get();
    match &config.compilation.cache {
        Some(CacheConfig::File(path)) => assert_eq!(path, &kernels),
        other => panic!("CubeCL's cache is {other:?}, not {kernels:?}"),
    }
    // Once CubeCL's configuration exists, a second call changes nothing and says so.
    assert_eq!(
        enable_kernel_cache_in(Some(dir.path().join("elsewhere"))),
        KernelCache::TooLate { cached: true }
    );
    assert!(matches!(
        &CubeClRuntimeConfig::get().compilation.cache,
        Some(CacheConfig::File(path)) if path == &kernels
    ));
}
