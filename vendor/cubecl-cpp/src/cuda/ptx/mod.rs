pub const TMA_LOAD_IM2COL: &str = include_str!("tma_load_im2col.cuh");
pub const COPY_ASYNC: &str = include_str!("copy_async.cuh");

mod mma;

pub use mma::*;
