mod assignation;
mod base;
mod binary;
mod branch;
mod cmp;
mod copy;
#[path = "fma.rs"]
mod fma_internal;
mod unary;

pub use assignation::*;
pub use base::*;
pub use binary::*;
pub use branch::*;
pub use cmp::*;
pub use copy::*;
pub use fma_internal::*;
pub use unary::*;
