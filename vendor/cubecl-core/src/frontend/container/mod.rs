mod array;
mod base;
mod cell;
mod iter;
mod registry;
mod sequence;
mod shared_memory;
mod slice;
mod tensor;
mod vector;

pub(crate) use base::*;

pub use array::*;
pub use cell::*;
pub use iter::*;
pub use registry::*;
pub use sequence::*;
pub use shared_memory::*;
pub use slice::*;
pub use tensor::*;
pub use vector::*;
