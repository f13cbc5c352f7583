//! `scale`: `out = alpha * x` over a flat f32 buffer. A small real tunable op that proves
//! the selector end to end (vector width and cube size are its config).

mod kernel;
mod launch;
mod op;

pub use launch::launch_scale;
pub use op::{ScaleConfig, ScaleOp};
