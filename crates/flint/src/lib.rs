//! Flint: tuned flash attention for Burn, written once in CubeCL.
//!
//! ```
//! use burn::backend::NdArray;
//! use burn::tensor::{Distribution, Tensor};
//! use flint::AttentionOptions;
//!
//! let device = Default::default();
//! let q = Tensor::<NdArray, 4>::random([2, 8, 64, 64], Distribution::Default, &device);
//! let k = Tensor::<NdArray, 4>::random([2, 2, 64, 64], Distribution::Default, &device);
//! let v = Tensor::<NdArray, 4>::random([2, 2, 64, 64], Distribution::Default, &device);
//! let out = flint::flash_attention_with(q, k, v, AttentionOptions::new().causal());
//! assert_eq!(out.dims(), [2, 8, 64, 64]);
//! ```
//!
//! The same code runs on `Wgpu`, `Cuda`, `NdArray` and `Flex`, switching only the backend
//! type. On CubeCL backends the kernel configuration comes from a tiered selector (override,
//! scoped overlay, memory cache, disk cache, autotune, heuristic) backed by a persistent
//! per-device cache: the first call on a new shape bucket autotunes, later calls and later
//! processes reuse the choice. [`enable_kernel_cache`], called first thing in `main`, keeps
//! the compiled kernels too, so that later processes skip compiling them.
#![warn(missing_docs)]

mod attention;
mod error;
pub mod kernel_cache;
pub mod nn;

pub use attention::{
    AttentionBwdInputs, AttentionGrads, AttentionOptions, AttentionOutput, FlashAttentionBackend,
    attention, flash_attention, flash_attention_full, flash_attention_with,
    try_flash_attention_full, try_flash_attention_with,
};
pub use error::AttentionError;
pub use flint_kernels as kernels;
pub use flint_kernels::attention::{AttentionBwdConfig, AttentionFwdConfig, Variant};
pub use flint_tune as tune;
pub use flint_tune::{Overlay, OverlayGuard, Policy, Selector, overlay};
pub use kernel_cache::{KernelCache, enable_kernel_cache};

/// Burn itself, re-exported so that model code and flint agree on one version.
pub use burn;
