//! Flint's CubeCL kernels and the bridge between CubeCL and the selector.
//!
//! - [`fingerprint`] and [`DeviceLimits`] describe a CubeCL device to `flint-tune`.
//! - [`CubeclBenchmark`] implements the Tuner's timing trait with CubeCL's profiler.
//! - [`attention`] is flash attention (forward).
//! - [`scale`] is a small tunable kernel that exercises the whole path.
//!
//! No Burn here: launchers take a CubeCL `ComputeClient` and buffer handles.
#![warn(missing_docs)]

pub mod attention;
mod cached;
#[cfg(feature = "cuda")]
mod compile_only;
mod device;
pub mod devices;
mod error;
pub mod scale;
mod timing;
pub mod wgmma;

pub use cached::check_entry;
pub use device::{DeviceLimits, fingerprint};
pub use error::KernelError;
pub use timing::{CubeclBenchmark, Dispatch, compiles_in_background};

/// The contracts of every op this crate registers, for the manifest validator.
pub fn op_specs() -> Vec<flint_tune::OpSpec> {
    vec![
        scale::ScaleOp::spec(),
        attention::AttentionFwdOp::spec(),
        attention::AttentionBwdOp::spec(),
    ]
}
