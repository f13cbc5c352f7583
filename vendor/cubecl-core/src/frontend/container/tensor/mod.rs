mod base;
mod launch;
mod tensormap;

pub use base::*;
pub use launch::*;
pub use tensormap::*;
