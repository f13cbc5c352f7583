mod base;
mod ops;

pub use base::*;
