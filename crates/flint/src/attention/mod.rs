//! Flash attention for Burn tensors.

mod autodiff;
mod backend;
mod cube;
mod fusion;
mod options;
mod reference;
mod validate;

use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, DType, Tensor, TensorPrimitive};

pub use backend::{AttentionBwdInputs, AttentionGrads, FlashAttentionBackend};
pub use options::AttentionOptions;

use crate::AttentionError;

/// The output of an attention call and its log-sum-exp.
#[derive(Clone, Debug)]
pub struct AttentionOutput<B: FlashAttentionBackend> {
    /// `[B, H, Sq, Dv]`.
    pub out: Tensor<B, 4>,
    /// `[B, H, Sq]` in f32: `log Σ_j exp(score_ij)`, `-inf` for a fully masked row.
    pub lse: Tensor<B, 3>,
}

/// Scaled dot-product attention, `softmax(q·kᵀ / sqrt(D)) · v`.
///
/// `q: [B, H, Sq, D]`, `k: [B, Hkv, Sk, D]`, `v: [B, Hkv, Sk, Dv]` with `H % Hkv == 0`
/// (grouped-query attention when `Hkv < H`); the output is `[B, H, Sq, Dv]`.
///
/// # Panics
/// When the inputs break a rule (see [`try_flash_attention_with`]), with a message that
/// names the argument and the rule, before any kernel runs.
///
/// # Examples
/// ```
/// use burn::backend::NdArray;
/// use burn::tensor::{Distribution, Tensor};
/// let device = Default::default();
/// let q = Tensor::<NdArray, 4>::random([1, 4, 16, 32], Distribution::Default, &device);
/// let k = Tensor::<NdArray, 4>::random([1, 2, 16, 32], Distribution::Default, &device);
/// let v = Tensor::<NdArray, 4>::random([1, 2, 16, 32], Distribution::Default, &device);
/// let out = flint::flash_attention(q, k, v);
/// assert_eq!(out.dims(), [1, 4, 16, 32]);
/// ```
pub fn flash_attention<B: FlashAttentionBackend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
) -> Tensor<B, 4> {
    flash_attention_with(q, k, v, AttentionOptions::new())
}

/// [`flash_attention`] with options (causal, scale, softcap, window, dropout, config).
///
/// # Panics
/// When the inputs or options break a rule (see [`try_flash_attention_with`]).
pub fn flash_attention_with<B: FlashAttentionBackend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    options: AttentionOptions,
) -> Tensor<B, 4> {
    unwrap_or_panic(try_flash_attention_with(q, k, v, options))
}

/// [`flash_attention_with`], returning bad input as an error instead of panicking.
///
/// # Errors
/// [`AttentionError`] naming the argument and the rule: mismatched batch, head dim or
/// sequence; `H` not a multiple of `Hkv`; an unsupported head dim (32, 64, 96, 128, 256);
/// mixed dtypes or devices; `softcap <= 0`; a dropout probability outside `[0, 1)`; or a
/// kernel that cannot run.
pub fn try_flash_attention_with<B: FlashAttentionBackend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    options: AttentionOptions,
) -> Result<Tensor<B, 4>, AttentionError> {
    try_flash_attention_full(q, k, v, None, None, options).map(|o| o.out)
}

/// The full form: an optional bool `mask` (`true` = masked) and additive `bias`, each
/// broadcastable over batch and heads (`[B or 1, H or 1, Sq, Sk]`), returning the output
/// and the log-sum-exp.
///
/// # Panics
/// When the inputs break a rule (see [`try_flash_attention_full`]).
pub fn flash_attention_full<B: FlashAttentionBackend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    mask: Option<Tensor<B, 4, Bool>>,
    bias: Option<Tensor<B, 4>>,
    options: AttentionOptions,
) -> AttentionOutput<B> {
    unwrap_or_panic(try_flash_attention_full(q, k, v, mask, bias, options))
}

/// [`flash_attention_full`], returning bad input as an error.
///
/// # Errors
/// As [`try_flash_attention_with`], plus a mask or bias of the wrong shape.
pub fn try_flash_attention_full<B: FlashAttentionBackend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    mask: Option<Tensor<B, 4, Bool>>,
    bias: Option<Tensor<B, 4>>,
    options: AttentionOptions,
) -> Result<AttentionOutput<B>, AttentionError> {
    let problem = validate::validate(&q, &k, &v, mask.as_ref(), bias.as_ref(), &options)?;
    let device = q.device();
    let p = &problem;
    if p.batch == 0 || p.heads == 0 || p.seq_q == 0 || p.seq_kv == 0 {
        // Nothing to attend over (or to): no launch. Rows with no keys are fully masked.
        let out = Tensor::zeros([p.batch, p.heads, p.seq_q, p.val_dim], (&device, q.dtype()));
        let lse = Tensor::full(
            [p.batch, p.heads, p.seq_q],
            f32::NEG_INFINITY,
            (&device, DType::F32),
        );
        return Ok(AttentionOutput { out, lse });
    }
    // A bool mask joins the bias as -inf: bias is added after masking in Burn's semantics,
    // and -inf + bias stays -inf, so one additive tensor carries both.
    let bias = match (mask, bias) {
        (None, None) => None,
        (Some(m), None) => {
            Some(Tensor::<B, 4>::zeros(m.dims(), &device).mask_fill(m, f32::NEG_INFINITY))
        }
        (None, Some(b)) => Some(b),
        (Some(m), Some(b)) => {
            // Each may broadcast over a different dim: fill on their common shape.
            let [mb, mh, _, _] = m.dims();
            let [bb, bh, _, _] = b.dims();
            let shape = [mb.max(bb), mh.max(bh), p.seq_q, p.seq_kv];
            Some(
                b.expand(shape)
                    .mask_fill(m.expand(shape), f32::NEG_INFINITY),
            )
        }
    };
    let (out, lse) = B::flash_attention_fwd(
        q.into_primitive().tensor(),
        k.into_primitive().tensor(),
        v.into_primitive().tensor(),
        bias.map(|b| b.into_primitive().tensor()),
        &problem,
        options.config,
    )?;
    Ok(AttentionOutput {
        out: Tensor::from_primitive(TensorPrimitive::Float(out)),
        lse: Tensor::from_primitive(TensorPrimitive::Float(lse)),
    })
}

/// A drop-in for `burn::tensor::module::attention`, with exactly its arguments.
///
/// # Panics
/// When the inputs break a rule, like Burn's own op.
pub fn attention<B: FlashAttentionBackend>(
    query: Tensor<B, 4>,
    key: Tensor<B, 4>,
    value: Tensor<B, 4>,
    mask: Option<Tensor<B, 4, Bool>>,
    attn_bias: Option<Tensor<B, 4>>,
    options: AttentionModuleOptions,
) -> Tensor<B, 4> {
    let mut opts = AttentionOptions::new().with_causal(options.is_causal);
    if let Some(scale) = options.scale {
        opts = opts.scale(scale);
    }
    if let Some(softcap) = options.softcap {
        opts = opts.softcap(softcap);
    }
    flash_attention_full(query, key, value, mask, attn_bias, opts).out
}

fn unwrap_or_panic<T>(result: Result<T, AttentionError>) -> T {
    result.unwrap_or_else(|e| panic!("flash attention: {e}"))
}
