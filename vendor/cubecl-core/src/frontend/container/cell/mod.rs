mod comptime;
mod runtime;

pub use comptime::*;
pub use runtime::*;
