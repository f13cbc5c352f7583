mod base;
mod launch;

pub use base::*;
pub use launch::*;
