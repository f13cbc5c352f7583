//! The extension trait every backend implements.

use burn::tensor::backend::Backend;
use burn::tensor::ops::FloatTensor;
use burn::tensor::{Tensor, TensorPrimitive};
use flint_kernels::attention::{AttentionFwdConfig, AttentionProblem};

use super::reference;
use crate::AttentionError;

/// A backend that runs flash attention.
///
/// The provided method is the reference composition from Burn's own ops, so a backend
/// without flint kernels (NdArray, Flex) implements the trait with an empty `impl`.
/// `CubeBackend` overrides it with the CubeCL kernels and `Fusion<B>` forwards it to its
/// inner backend as an opaque op.
pub trait FlashAttentionBackend: Backend {
    /// Attention forward on validated inputs: `q: [B, H, Sq, D]`, `k: [B, Hkv, Sk, D]`,
    /// `v: [B, Hkv, Sk, Dv]` and an optional additive f32-compatible `bias` broadcastable to
    /// `[B, H, Sq, Sk]` (bool masks arrive folded into it as `-inf`). Returns the output
    /// `[B, H, Sq, Dv]` and the f32 log-sum-exp `[B, H, Sq]`.
    ///
    /// # Errors
    /// When the kernel layer cannot run the call (no config, launch failure).
    fn flash_attention_fwd(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        problem: &AttentionProblem,
        config: Option<AttentionFwdConfig>,
    ) -> Result<(FloatTensor<Self>, FloatTensor<Self>), AttentionError> {
        let _ = config;
        let wrap = |t| Tensor::<Self, 4>::from_primitive(TensorPrimitive::Float(t));
        let (out, lse) =
            reference::forward::<Self>(wrap(q), wrap(k), wrap(v), bias.map(wrap), problem);
        let lse = lse.cast(burn::tensor::DType::F32);
        Ok((out.into_primitive().tensor(), lse.into_primitive().tensor()))
    }

    /// Chooses the forward config of `problem` (`dtype` on `device`) ahead of a deferred
    /// launch, autotuning on scratch inputs on a cache miss, or checks the `requested`
    /// config. Backends without flint kernels return `None`.
    ///
    /// # Errors
    /// When no config can run the problem on this device, or `requested` cannot.
    fn flash_attention_fwd_config(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        device: &Self::Device,
        requested: Option<AttentionFwdConfig>,
    ) -> Result<Option<AttentionFwdConfig>, AttentionError> {
        let _ = (problem, dtype, device);
        Ok(requested)
    }
}

impl<E, I, Q> FlashAttentionBackend for burn::backend::NdArray<E, I, Q>
where
    E: burn::backend::ndarray::FloatNdArrayElement,
    I: burn::backend::ndarray::IntNdArrayElement,
    Q: burn::backend::ndarray::QuantElement,
    burn::backend::ndarray::NdArrayTensor: From<burn::backend::ndarray::SharedArray<E>>,
    burn::backend::ndarray::NdArrayTensor: From<burn::backend::ndarray::SharedArray<I>>,
{
}

impl FlashAttentionBackend for burn::backend::Flex {}

/// Under autodiff the forward is, for now, the reference composition on autodiff tensors,
/// so gradients flow through Burn's ops. The fused backward node replaces it.
impl<B: FlashAttentionBackend, C: burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy>
    FlashAttentionBackend for burn::backend::Autodiff<B, C>
{
}
