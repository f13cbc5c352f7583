//! CubeCL's persistent cache of compiled kernels (CUDA and ROCm; wgpu where it compiles through
//! SPIR-V), kept beside flint's tuning cache.
//!
//! Compiling is nearly all of a first call's cost: on an H100, tuning a new shape bucket
//! whose kernels are compiled takes 0.05-0.3 s, compiling them 14-17 s. CubeCL can keep
//! compiled kernels on disk, but only when its configuration names a location, and it reads
//! that configuration once, when the first device client starts. [`enable_kernel_cache`]
//! fills in that location before then.

use std::path::PathBuf;
use std::sync::Arc;

use cubecl::config::cache::CacheConfig;
use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};

/// What [`enable_kernel_cache`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelCache {
    /// CubeCL will keep compiled kernels under this directory.
    Enabled(PathBuf),
    /// CubeCL's own configuration (`cubecl.toml`, or `burn.toml`'s `[cubecl]` section, in
    /// the working directory or a parent) names a cache location: it is left as it is.
    Configured,
    /// CubeCL had read its configuration before this call, so the call changed nothing;
    /// `cached` says whether that configuration keeps compiled kernels. Call
    /// [`enable_kernel_cache`] first thing in `main`, before any device or tensor exists.
    TooLate {
        /// Whether CubeCL's configuration names a cache location.
        cached: bool,
    },
    /// flint's policy turns its disk cache off (`FLINT_CACHE=0`), the environment's policy
    /// is invalid, or the platform has no cache directory: nothing is written.
    Off,
}

/// Makes CubeCL keep compiled kernels in `kernels/` under flint's cache directory (see
/// [`crate::Policy`]), so that later processes load them instead of compiling: a new shape
/// bucket then costs its tuning alone. Takes effect only before CubeCL reads its
/// configuration, i.e. before the first device client starts; call it first thing in `main`.
/// A cache location that CubeCL's own configuration names wins.
///
/// The directory holds CubeCL's files, which CubeCL locks across processes and reads
/// entry by entry (a corrupt entry is skipped with a warning). `flint cache clear` leaves
/// them; deleting the directory is always safe.
pub fn enable_kernel_cache() -> KernelCache {
    let dir = crate::Selector::global().ok().and_then(|s| {
        let policy = s.policy();
        policy
            .disk_cache
            .then(|| policy.resolved_cache_dir())
            .flatten()
    });
    enable_kernel_cache_in(dir.map(|d| d.join("kernels")))
}

/// [`enable_kernel_cache`] with the directory given (`None`: off).
pub fn enable_kernel_cache_in(dir: Option<PathBuf>) -> KernelCache {
    let mut state = CubeClRuntimeConfig::storage().lock();
    if let Some(config) = state.as_ref() {
        return KernelCache::TooLate {
            cached: config.compilation.cache.is_some(),
        };
    }
    let Some(dir) = dir else {
        return KernelCache::Off;
    };
    // The configuration CubeCL would have read itself: its files, then its environment.
    let mut config = CubeClRuntimeConfig::from_current_dir().override_from_env();
    let outcome = if config.compilation.cache.is_some() {
        KernelCache::Configured
    } else {
        config.compilation.cache = Some(CacheConfig::File(dir.clone()));
        KernelCache::Enabled(dir)
    };
    *state = Some(Arc::new(config));
    outcome
}
