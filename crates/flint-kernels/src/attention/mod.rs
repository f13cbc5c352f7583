//! Flash attention: problem description, configs, the tunable ops and their kernels.

pub mod backward;
mod bwd_op;
mod config;
pub mod dropout;
pub mod forward;
mod op;
mod problem;

pub use backward::{AttentionBwdArgs, choose_attention_bwd, launch_attention_bwd};
pub use bwd_op::AttentionBwdOp;
pub use config::{AttentionBwdConfig, AttentionFwdConfig, MMA_PLANES, Variant};
pub use forward::{AttentionFwdArgs, choose_attention_fwd, launch_attention_fwd};
pub use op::AttentionFwdOp;
pub use problem::{AttentionProblem, SUPPORTED_HEAD_DIMS};
