//! The forward pass: kernels and the launcher that picks one through the selector.

pub(crate) mod cmma;
mod combine;
mod launch;
pub(crate) mod mma;
mod portable;

pub use launch::{
    AttentionFwdArgs, choose_attention_fwd, launch_attention_fwd, launch_attention_fwd_chosen,
    prepare_attention_fwd,
};
pub(crate) use launch::{
    MAX_GRID_Y, causal_order, head_groups, scalars, streaming_multiprocessors, swizzled_map,
    tile_map, vector_ok,
};
#[cfg(all(feature = "cuda", feature = "wgpu"))]
pub(crate) use portable::attention_fwd_portable;
pub(crate) use portable::{PortableParams, PortableScalars};

/// Scores at or below this are masked. Real scores never get near it; a bias of `-inf`
/// (how bool masks arrive) always does.
pub(crate) const MASKED_BELOW: f32 = -1.0e38;
/// The running maximum before any unmasked score (a finite stand-in for `-inf`, which WGSL
/// cannot spell as a literal).
pub(crate) const NO_MAX: f32 = -3.0e38;
/// log2(e): the tensor-core kernels take their exponents in base 2, with this factor folded
/// into the scale.
pub(crate) const LOG2_E: f32 = core::f32::consts::LOG2_E;
