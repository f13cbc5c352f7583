//! The backward pass: kernels and the launcher that picks a config through the selector.

pub(crate) mod cmma;
mod dq_accum;
pub(crate) mod launch;
pub(crate) mod mma;
pub(crate) mod portable;

pub use launch::{
    AttentionBwdArgs, choose_attention_bwd, launch_attention_bwd, launch_attention_bwd_chosen,
    prepare_attention_bwd,
};
