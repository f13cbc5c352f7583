//! Flash attention: problem description, configs, the tunable op and its kernels.

mod config;
pub mod dropout;
pub mod forward;
mod op;
mod problem;

pub use config::{AttentionFwdConfig, Variant};
pub use forward::{AttentionFwdArgs, choose_attention_fwd, launch_attention_fwd};
pub use op::AttentionFwdOp;
pub use problem::{AttentionProblem, SUPPORTED_HEAD_DIMS};
