pub mod address_space;
pub mod arch;
pub mod attribute;
pub mod binding;
pub mod dialect;
mod extension;
pub mod variable;

pub use address_space::*;
pub use attribute::*;
pub use binding::*;
pub use dialect::*;
use extension::*;
