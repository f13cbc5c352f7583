//! The extension trait every backend implements.

use burn::tensor::backend::Backend;
use burn::tensor::ops::FloatTensor;
use burn::tensor::{Tensor, TensorPrimitive};
use flint_kernels::attention::{AttentionBwdConfig, AttentionFwdConfig, AttentionProblem};

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

    /// [`flash_attention_fwd`](Self::flash_attention_fwd) with a config that this backend's
    /// [`flash_attention_fwd_config`](Self::flash_attention_fwd_config) returned for the same
    /// problem on the same device: a deferred launcher (`Fusion<B>`) chooses on the caller's
    /// thread and launches here, on its stream's thread, where the host work of each call sets
    /// the pace of short kernels. The provided method is `flash_attention_fwd`; `CubeBackend`
    /// launches the config without the selector's tiers.
    ///
    /// # Errors
    /// As [`flash_attention_fwd`](Self::flash_attention_fwd).
    fn flash_attention_fwd_chosen(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        problem: &AttentionProblem,
        config: Option<AttentionFwdConfig>,
    ) -> Result<(FloatTensor<Self>, FloatTensor<Self>), AttentionError> {
        Self::flash_attention_fwd(q, k, v, bias, problem, config)
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

    /// Attention backward: the gradients of q, k, v (and of the bias when `want_dbias`) from
    /// the forward's inputs, its output and LSE, and the output's gradient. With GQA, dK and
    /// dV are summed over each query-head group; the bias gradient is reduced over the dims
    /// the bias broadcasts.
    ///
    /// The provided method differentiates the reference composition with Burn's autodiff
    /// (O(Sq·Sk) memory); CubeCL backends run the fused kernels.
    ///
    /// # Errors
    /// When the kernel layer cannot run the call.
    fn flash_attention_bwd(
        inputs: AttentionBwdInputs<Self>,
        problem: &AttentionProblem,
        want_dbias: bool,
        config: Option<AttentionBwdConfig>,
    ) -> Result<AttentionGrads<Self>, AttentionError> {
        let _ = config;
        Ok(reference::backward::<Self>(inputs, problem, want_dbias))
    }

    /// [`flash_attention_bwd`](Self::flash_attention_bwd) with a config that this backend's
    /// [`flash_attention_bwd_config`](Self::flash_attention_bwd_config) returned, as
    /// [`flash_attention_fwd_chosen`](Self::flash_attention_fwd_chosen) is for the forward.
    ///
    /// # Errors
    /// As [`flash_attention_bwd`](Self::flash_attention_bwd).
    fn flash_attention_bwd_chosen(
        inputs: AttentionBwdInputs<Self>,
        problem: &AttentionProblem,
        want_dbias: bool,
        config: Option<AttentionBwdConfig>,
    ) -> Result<AttentionGrads<Self>, AttentionError> {
        Self::flash_attention_bwd(inputs, problem, want_dbias, config)
    }

    /// Chooses the backward config ahead of a deferred launch, as
    /// [`flash_attention_fwd_config`](Self::flash_attention_fwd_config) does for the forward.
    ///
    /// # Errors
    /// When no config can run the problem on this device, or `requested` cannot.
    fn flash_attention_bwd_config(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        want_dbias: bool,
        device: &Self::Device,
        requested: Option<AttentionBwdConfig>,
    ) -> Result<Option<AttentionBwdConfig>, AttentionError> {
        let _ = (problem, dtype, want_dbias, device);
        Ok(requested)
    }

    /// Starts compiling the forward's candidates of `problem` before the forward chooses,
    /// where its first call would autotune them and the backend compiles in the background
    /// (CUDA): the autodiff forward calls it ahead of
    /// [`flash_attention_bwd_prepare`](Self::flash_attention_bwd_prepare), so that the
    /// forward's compiles, which its own tuning waits for, come before the backward's.
    /// Returns whether it started any; the provided method does nothing.
    fn flash_attention_fwd_prepare(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        device: &Self::Device,
    ) -> bool {
        let _ = (problem, dtype, device);
        false
    }

    /// Starts compiling the backward's kernels of `problem` before the backward runs, where
    /// its first call would autotune them and the backend compiles in the background (CUDA):
    /// the autodiff forward calls it ahead of its own launch when a gradient is tracked, so
    /// that the backward's compiles overlap the forward's. Returns whether it started any;
    /// the provided method does nothing.
    fn flash_attention_bwd_prepare(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        want_dbias: bool,
        device: &Self::Device,
    ) -> bool {
        let _ = (problem, dtype, want_dbias, device);
        false
    }
}

/// What the backward reads: the forward's inputs, output and LSE, and the output's gradient.
#[derive(Clone, Debug)]
pub struct AttentionBwdInputs<B: Backend> {
    /// `q: [B, H, Sq, D]`.
    pub q: FloatTensor<B>,
    /// `k: [B, Hkv, Sk, D]`.
    pub k: FloatTensor<B>,
    /// `v: [B, Hkv, Sk, Dv]`.
    pub v: FloatTensor<B>,
    /// The forward's output `[B, H, Sq, Dv]`.
    pub out: FloatTensor<B>,
    /// The forward's log-sum-exp `[B, H, Sq]` (f32).
    pub lse: FloatTensor<B>,
    /// The gradient of the output, `[B, H, Sq, Dv]`.
    pub dout: FloatTensor<B>,
    /// The forward's additive bias (with any bool mask folded in as `-inf`).
    pub bias: Option<FloatTensor<B>>,
}

/// Gradients of an attention call.
#[derive(Clone, Debug)]
pub struct AttentionGrads<B: Backend> {
    /// `[B, H, Sq, D]`.
    pub dq: FloatTensor<B>,
    /// `[B, Hkv, Sk, D]`.
    pub dk: FloatTensor<B>,
    /// `[B, Hkv, Sk, Dv]`.
    pub dv: FloatTensor<B>,
    /// The bias gradient, in the bias's own (broadcast) shape, when asked for.
    pub dbias: Option<FloatTensor<B>>,
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
