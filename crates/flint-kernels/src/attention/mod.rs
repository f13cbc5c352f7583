//! Flash attention: problem description, configs, the tunable ops and their kernels.
//!
//! # Bounds
//! The kernels launch without CubeCL's per-access bounds checks (`launch_unchecked`): each
//! one guards its own reads and writes, rows past `Sq` or `Sk` are masked or zero-filled
//! (`copy_async_checked` for the asynchronous copies), and `flint` refuses calls whose tensors
//! reach 2^31 elements before any launch. CubeCL's checks, which clamp every index and add a compare and a
//! select to each shared-memory read in the inner loops, would only repeat them. They come
//! back, reporting any out-of-bounds index the kernels would touch, with a `cubecl.toml` in the
//! working directory holding `[compilation]` and `check_mode = "validate"` (the CUDA suite runs
//! that way; see `docs/TESTING.md`).

pub mod backward;
mod bwd_op;
mod config;
#[cfg(all(feature = "cuda", feature = "wgpu"))]
pub mod cuda_source;
pub mod dropout;
pub mod forward;
pub(crate) mod mma_tiles;
mod op;
pub(crate) mod portable_slices;
pub(crate) mod portable_tiles;
mod problem;
mod warm;

pub use backward::{
    AttentionBwdArgs, choose_attention_bwd, launch_attention_bwd, launch_attention_bwd_chosen,
    prepare_attention_bwd,
};
pub use bwd_op::AttentionBwdOp;
pub use config::{AttentionBwdConfig, AttentionFwdConfig, MMA_PLANES, Variant};
pub use forward::{
    AttentionFwdArgs, choose_attention_fwd, launch_attention_fwd, launch_attention_fwd_chosen,
    prepare_attention_fwd,
};
pub use op::AttentionFwdOp;
pub use problem::{AttentionProblem, SUPPORTED_HEAD_DIMS};
