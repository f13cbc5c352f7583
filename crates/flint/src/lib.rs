//! Flint: tuned GPU kernels for Burn, written once in CubeCL.
//!
//! Flint's first op is flash attention (forward and fused backward) for Burn's
//! `Tensor<B, 4>`; its kernels choose their configuration through a tiered selector
//! (override, scoped overlay, memory cache, disk cache, autotune, heuristic) backed by a
//! persistent per-device cache. This crate re-exports that machinery; the attention entry
//! points land on top of it.
//!
//! Scoped overlays pin a config for the calls made on this thread while a guard lives:
//!
//! ```
//! use flint::kernels::scale::{ScaleConfig, ScaleOp};
//! use flint::kernels::DeviceLimits;
//!
//! # let limits = DeviceLimits { shared_memory: 32768, max_units_per_cube: 256,
//! #     max_vector_size: 4, plane_size: (32, 32), plane_ops: true, cmma: false };
//! let op = ScaleOp::new(limits);
//! let _guard = flint::overlay(flint::Overlay::new().set(&op, ScaleConfig { vector_size: 4, cube_size: 256 }));
//! assert_eq!(flint::tune::overlay_depth(), 1);
//! ```
#![warn(missing_docs)]

pub use flint_kernels as kernels;
pub use flint_tune as tune;
pub use flint_tune::{Overlay, OverlayGuard, Policy, Selector, overlay};

/// The Burn version this release of flint is built against.
pub const BURN_VERSION: &str = "0.21.0";

/// Burn itself, re-exported so that model code and flint agree on one version.
pub use burn;
