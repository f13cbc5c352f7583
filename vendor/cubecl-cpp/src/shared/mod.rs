pub mod binary;
pub mod unary;

mod barrier;
mod base;
mod body;
mod dialect;
mod element;
mod instruction;
mod item;
mod kernel;
mod mma;
mod pipeline;
mod variable;
mod warp;

pub use base::*;
pub use body::*;
pub use dialect::*;
pub use element::*;
pub use instruction::*;
pub use item::*;
pub use kernel::*;
pub use mma::*;
pub use variable::*;
pub use warp::*;

#[cfg(feature = "metal")]
pub type MslComputeKernel = ComputeKernel<crate::metal::MslDialect>;
