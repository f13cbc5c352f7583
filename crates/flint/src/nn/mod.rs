//! Burn modules built on flash attention.

mod mha;

pub use mha::{
    FlashMhaInput, FlashMhaOutput, FlashMultiHeadAttention, FlashMultiHeadAttentionConfig,
    RopeConfig,
};
