//! `FlashMultiHeadAttention`: multi-head attention whose core is [`crate::flash_attention`],
//! with GQA, a causal option, rotary position embeddings and attention dropout.

use std::sync::atomic::{AtomicU64, Ordering};

use burn::config::Config;
use burn::module::Module;
use burn::nn::attention::MultiHeadAttention;
use burn::nn::{Initializer, Linear, LinearConfig, RotaryEncoding, RotaryEncodingConfig};
use burn::tensor::{Bool, Tensor};

use crate::{AttentionOptions, FlashAttentionBackend};

/// Rotary position embeddings applied to queries and keys.
#[derive(Config, Debug)]
pub struct RopeConfig {
    /// The longest sequence (plus offset) the module will see.
    pub max_sequence_length: usize,
    /// The frequency base.
    #[config(default = "10000.0")]
    pub theta: f32,
}

/// Configuration of a [`FlashMultiHeadAttention`], in the style of Burn's
/// `MultiHeadAttentionConfig` (same field names where they mean the same thing).
///
/// ```
/// use burn::backend::NdArray;
/// use burn::tensor::{Distribution, Tensor};
/// use flint::nn::{FlashMhaInput, FlashMultiHeadAttentionConfig, RopeConfig};
///
/// let device = Default::default();
/// let mha = FlashMultiHeadAttentionConfig::new(256, 8)
///     .with_n_kv_heads(Some(2))
///     .with_causal(true)
///     .with_rope(Some(RopeConfig::new(1024)))
///     .init::<NdArray>(&device);
/// let x = Tensor::<NdArray, 3>::random([2, 16, 256], Distribution::Default, &device);
/// let y = mha.forward(FlashMhaInput::self_attn(x)).context;
/// assert_eq!(y.dims(), [2, 16, 256]);
/// ```
#[derive(Config, Debug)]
pub struct FlashMultiHeadAttentionConfig {
    /// The model width (input and output features).
    pub d_model: usize,
    /// Query heads; the head dim `d_model / n_heads` must be one flint supports (32, 64, 96,
    /// 128, 256).
    pub n_heads: usize,
    /// Key/value heads (GQA/MQA); `None` means `n_heads`. Must divide `n_heads`.
    #[config(default = "None")]
    pub n_kv_heads: Option<usize>,
    /// Attention dropout probability, applied while training (under `Autodiff`) only.
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Mask keys after each query (aligned like `burn::tensor::module::attention`).
    #[config(default = false)]
    pub causal: bool,
    /// Rotary position embeddings on queries and keys.
    #[config(default = "None")]
    pub rope: Option<RopeConfig>,
    /// Whether the projections have a bias.
    #[config(default = true)]
    pub bias: bool,
    /// How the projections are initialised (Burn's MHA default, a gain of 1/sqrt(3)).
    #[config(
        default = "Initializer::KaimingUniform{gain: 0.577_350_269_189_625_8, fan_out_only: false}"
    )]
    pub initializer: Initializer,
}

/// Multi-head attention on flash attention: never materialises the `[Sq, Sk]` weights, and
/// trains through flint's fused backward under `Autodiff`.
///
/// A drop-in alongside `burn::nn::attention::MultiHeadAttention`: the same projections
/// (`From<MultiHeadAttention<B>>` converts one, weights included), an input with the same
/// builder methods, and an output without the weights.
#[derive(Module, Debug)]
pub struct FlashMultiHeadAttention<B: FlashAttentionBackend> {
    /// Input -> queries, `d_model -> n_heads * d_k`.
    pub query: Linear<B>,
    /// Input -> keys, `d_model -> n_kv_heads * d_k`.
    pub key: Linear<B>,
    /// Input -> values, `d_model -> n_kv_heads * d_k`.
    pub value: Linear<B>,
    /// Heads -> output, `n_heads * d_k -> d_model`.
    pub output: Linear<B>,
    /// Rotary embeddings, when configured.
    pub rope: Option<RotaryEncoding<B>>,
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads.
    pub n_kv_heads: usize,
    /// Head dim.
    pub d_k: usize,
    /// Attention dropout probability (training only).
    pub dropout: f64,
    /// Causal masking.
    pub causal: bool,
}

/// The input of [`FlashMultiHeadAttention::forward`], built like Burn's `MhaInput`.
#[derive(Debug, Clone)]
pub struct FlashMhaInput<B: FlashAttentionBackend> {
    query: Tensor<B, 3>,
    key: Tensor<B, 3>,
    value: Tensor<B, 3>,
    mask_pad: Option<Tensor<B, 2, Bool>>,
    mask_attn: Option<Tensor<B, 3, Bool>>,
    offset: usize,
}

impl<B: FlashAttentionBackend> FlashMhaInput<B> {
    /// Self-attention over `x`: `[batch, seq, d_model]`.
    pub fn self_attn(x: Tensor<B, 3>) -> Self {
        Self::new(x.clone(), x.clone(), x)
    }

    /// Attention of `query` (`[batch, seq_q, d_model]`) over `key`/`value`
    /// (`[batch, seq_k, d_model]`).
    pub fn new(query: Tensor<B, 3>, key: Tensor<B, 3>, value: Tensor<B, 3>) -> Self {
        Self {
            query,
            key,
            value,
            mask_pad: None,
            mask_attn: None,
            offset: 0,
        }
    }

    /// Padding mask `[batch, seq_k]`: `true` keys are ignored.
    pub fn mask_pad(mut self, mask: Tensor<B, 2, Bool>) -> Self {
        self.mask_pad = Some(mask);
        self
    }

    /// Attention mask `[batch, seq_q, seq_k]`: `true` pairs are ignored.
    pub fn mask_attn(mut self, mask: Tensor<B, 3, Bool>) -> Self {
        self.mask_attn = Some(mask);
        self
    }

    /// Position of the first query and key for the rotary embeddings (decoding with a
    /// cache); 0 by default.
    pub fn rope_offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }
}

/// The output of [`FlashMultiHeadAttention::forward`].
#[derive(Debug, Clone)]
pub struct FlashMhaOutput<B: FlashAttentionBackend> {
    /// `[batch, seq_q, d_model]`.
    pub context: Tensor<B, 3>,
}

impl FlashMultiHeadAttentionConfig {
    /// The module, with freshly initialised projections.
    ///
    /// # Panics
    /// When `d_model` is not a multiple of `n_heads`, `n_kv_heads` does not divide `n_heads`,
    /// or the dropout probability is outside `[0, 1)`.
    pub fn init<B: FlashAttentionBackend>(&self, device: &B::Device) -> FlashMultiHeadAttention<B> {
        let (d_k, n_kv_heads) = self.check();
        let linear = |d_in: usize, d_out: usize| {
            LinearConfig::new(d_in, d_out)
                .with_bias(self.bias)
                .with_initializer(self.initializer.clone())
                .init(device)
        };
        FlashMultiHeadAttention {
            query: linear(self.d_model, self.n_heads * d_k),
            key: linear(self.d_model, n_kv_heads * d_k),
            value: linear(self.d_model, n_kv_heads * d_k),
            output: linear(self.n_heads * d_k, self.d_model),
            rope: self.rope.as_ref().map(|r| {
                RotaryEncodingConfig::new(r.max_sequence_length, d_k)
                    .with_theta(r.theta)
                    .init(device)
            }),
            n_heads: self.n_heads,
            n_kv_heads,
            d_k,
            dropout: self.dropout,
            causal: self.causal,
        }
    }

    /// `(d_k, n_kv_heads)`, or a panic naming the broken rule.
    fn check(&self) -> (usize, usize) {
        let n_kv_heads = self.n_kv_heads.unwrap_or(self.n_heads);
        assert!(
            self.n_heads > 0 && self.d_model.is_multiple_of(self.n_heads),
            "FlashMultiHeadAttentionConfig: d_model ({}) must be a positive multiple of n_heads ({})",
            self.d_model,
            self.n_heads
        );
        assert!(
            n_kv_heads > 0 && self.n_heads.is_multiple_of(n_kv_heads),
            "FlashMultiHeadAttentionConfig: n_kv_heads ({n_kv_heads}) must divide n_heads ({})",
            self.n_heads
        );
        assert!(
            (0.0..1.0).contains(&self.dropout),
            "FlashMultiHeadAttentionConfig: dropout ({}) must be in [0, 1)",
            self.dropout
        );
        (self.d_model / self.n_heads, n_kv_heads)
    }
}

/// A fresh dropout seed per call: a process-wide counter started from the clock.
fn next_seed() -> u64 {
    static SEED: AtomicU64 = AtomicU64::new(0);
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9, |d| d.as_nanos() as u64);
    let _ = SEED.compare_exchange(0, start | 1, Ordering::Relaxed, Ordering::Relaxed);
    SEED.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
}

impl<B: FlashAttentionBackend> FlashMultiHeadAttention<B> {
    /// `[batch, seq, heads * d_k]` -> `[batch, heads, seq, d_k]`.
    fn split_heads(&self, x: Tensor<B, 3>, heads: usize) -> Tensor<B, 4> {
        let [batch, seq, _] = x.dims();
        x.reshape([batch, seq, heads, self.d_k]).swap_dims(1, 2)
    }

    /// Attention of the input's queries over its keys and values.
    ///
    /// # Panics
    /// When the shapes break a rule of [`crate::flash_attention_full`] (named in the
    /// message), or a mask does not match `[batch, seq_k]` / `[batch, seq_q, seq_k]`.
    pub fn forward(&self, input: FlashMhaInput<B>) -> FlashMhaOutput<B> {
        let [batch, seq_q, _] = input.query.dims();
        let [_, seq_k, _] = input.key.dims();
        let mut q = self.split_heads(self.query.forward(input.query), self.n_heads);
        let mut k = self.split_heads(self.key.forward(input.key), self.n_kv_heads);
        let v = self.split_heads(self.value.forward(input.value), self.n_kv_heads);
        if let Some(rope) = &self.rope {
            q = rope.apply(q, input.offset);
            k = rope.apply(k, input.offset);
        }
        let mask = match (input.mask_pad, input.mask_attn) {
            (None, None) => None,
            (pad, attn) => {
                let pad = pad.map(|m| {
                    assert_eq!(
                        m.dims(),
                        [batch, seq_k],
                        "FlashMhaInput: mask_pad must be [batch, seq_k]"
                    );
                    m.reshape([batch, 1, 1, seq_k])
                        .expand([batch, 1, seq_q, seq_k])
                });
                let attn = attn.map(|m| {
                    assert_eq!(
                        m.dims(),
                        [batch, seq_q, seq_k],
                        "FlashMhaInput: mask_attn must be [batch, seq_q, seq_k]"
                    );
                    m.reshape([batch, 1, seq_q, seq_k])
                });
                match (pad, attn) {
                    (Some(p), Some(a)) => Some(p.bool_or(a)),
                    (p, a) => p.or(a),
                }
            }
        };
        let mut options = AttentionOptions::new().with_causal(self.causal);
        if self.dropout > 0.0 && B::ad_enabled(&q.device()) {
            options = options.dropout(self.dropout, next_seed());
        }
        let out = crate::flash_attention_full(q, k, v, mask, None, options).out;
        let context = out
            .swap_dims(1, 2)
            .reshape([batch, seq_q, self.n_heads * self.d_k]);
        FlashMhaOutput {
            context: self.output.forward(context),
        }
    }
}

impl<B: FlashAttentionBackend> From<MultiHeadAttention<B>> for FlashMultiHeadAttention<B> {
    /// The same projections (weights included), no dropout, no mask, no rotary embeddings.
    ///
    /// Burn initialises parameters lazily: convert the module itself, or a clone taken after
    /// its first use (or after loading a record), since two clones of a never-used module draw
    /// their weights separately.
    fn from(mha: MultiHeadAttention<B>) -> Self {
        Self {
            query: mha.query,
            key: mha.key,
            value: mha.value,
            output: mha.output,
            rope: None,
            n_heads: mha.n_heads,
            n_kv_heads: mha.n_heads,
            d_k: mha.d_k,
            dropout: 0.0,
            causal: false,
        }
    }
}
