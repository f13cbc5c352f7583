mod builder;
mod launcher;

pub use builder::*;
pub use launcher::*;
