mod info;
mod integrator;
mod metadata;
mod scalars;

mod compiler;

pub use compiler::*;
pub use info::*;
pub use integrator::*;
pub use metadata::*;
pub use scalars::*;
