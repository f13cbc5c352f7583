//! The forward pass: kernels and the launcher that picks one through the selector.

mod launch;
mod portable;

pub use launch::{AttentionFwdArgs, choose_attention_fwd, launch_attention_fwd};
