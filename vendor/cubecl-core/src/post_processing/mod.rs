pub mod checked_io;
pub mod predicate;
pub mod saturating;
pub mod unroll;
