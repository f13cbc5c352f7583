//! A tiny decoder-only transformer whose attention is `flint::flash_attention_with`, trained
//! on a task that needs attention: predict the token seen `LAG` positions earlier.
//!
//! The model is generic over the backend: the same code trains on `Autodiff<Wgpu>`,
//! `Autodiff<Cuda>` and `Autodiff<NdArray>`. Gradients flow through flint's fused backward.

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::activation::gelu;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Int, Tensor};
use flint::{AttentionOptions, FlashAttentionBackend};

/// How far back the target token lies.
pub const LAG: usize = 3;

/// Sizes of the model and its task.
#[derive(Clone, Copy, Debug)]
pub struct TinyConfig {
    /// Vocabulary size.
    pub vocab: usize,
    /// Sequence length.
    pub seq: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (grouped-query attention when fewer than `heads`).
    pub kv_heads: usize,
    /// Head dim (one the kernels support: 32, 64, ...).
    pub head_dim: usize,
}

impl Default for TinyConfig {
    fn default() -> Self {
        Self {
            vocab: 16,
            seq: 32,
            heads: 4,
            kv_heads: 2,
            head_dim: 32,
        }
    }
}

/// One pre-norm transformer block with GQA causal attention and an MLP, plus embeddings and
/// an output head.
#[derive(Module, Debug)]
pub struct TinyTransformer<B: Backend> {
    tokens: Embedding<B>,
    positions: Embedding<B>,
    norm1: LayerNorm<B>,
    q: Linear<B>,
    kv: Linear<B>,
    proj: Linear<B>,
    norm2: LayerNorm<B>,
    up: Linear<B>,
    down: Linear<B>,
    head: Linear<B>,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl<B: FlashAttentionBackend> TinyTransformer<B> {
    /// A freshly initialised model.
    pub fn new(c: &TinyConfig, device: &B::Device) -> Self {
        let model = c.heads * c.head_dim;
        let kv = 2 * c.kv_heads * c.head_dim;
        Self {
            tokens: EmbeddingConfig::new(c.vocab, model).init(device),
            positions: EmbeddingConfig::new(c.seq, model).init(device),
            norm1: LayerNormConfig::new(model).init(device),
            q: LinearConfig::new(model, model).init(device),
            kv: LinearConfig::new(model, kv).init(device),
            proj: LinearConfig::new(model, model).init(device),
            norm2: LayerNormConfig::new(model).init(device),
            up: LinearConfig::new(model, 2 * model).init(device),
            down: LinearConfig::new(2 * model, model).init(device),
            head: LinearConfig::new(model, c.vocab).init(device),
            heads: c.heads,
            kv_heads: c.kv_heads,
            head_dim: c.head_dim,
        }
    }

    /// Logits `[B, S, vocab]` for tokens `[B, S]`.
    pub fn forward(&self, tokens: Tensor<B, 2, Int>) -> Tensor<B, 3> {
        let [b, s] = tokens.dims();
        let device = tokens.device();
        let pos = Tensor::<B, 1, Int>::arange(0..s as i64, &device)
            .reshape([1, s])
            .expand([b, s]);
        let x = self.tokens.forward(tokens) + self.positions.forward(pos);

        let h = self.norm1.forward(x.clone());
        let (hd, nh, nkv) = (self.head_dim, self.heads, self.kv_heads);
        let q = self
            .q
            .forward(h.clone())
            .reshape([b, s, nh, hd])
            .swap_dims(1, 2);
        let kv = self
            .kv
            .forward(h)
            .reshape([b, s, 2 * nkv, hd])
            .swap_dims(1, 2);
        let k = kv.clone().narrow(1, 0, nkv);
        let v = kv.narrow(1, nkv, nkv);
        let att = flint::flash_attention_with(q, k, v, AttentionOptions::new().causal())
            .swap_dims(1, 2)
            .reshape([b, s, nh * hd]);
        let x = x + self.proj.forward(att);

        let h = self.norm2.forward(x.clone());
        let x = x + self.down.forward(gelu(self.up.forward(h)));
        self.head.forward(x)
    }
}

/// A batch of the task: random tokens, and as targets the token `LAG` positions earlier (0
/// for the first `LAG` positions).
pub fn batch<B: Backend>(
    c: &TinyConfig,
    batch: usize,
    device: &B::Device,
) -> (Tensor<B, 2, Int>, Tensor<B, 2, Int>) {
    let tokens = Tensor::<B, 2>::random(
        [batch, c.seq],
        Distribution::Uniform(1.0, c.vocab as f64),
        device,
    )
    .int();
    let targets = Tensor::cat(
        vec![
            Tensor::<B, 2, Int>::zeros([batch, LAG], device),
            tokens.clone().narrow(1, 0, c.seq - LAG),
        ],
        1,
    );
    (tokens, targets)
}

/// Trains a fresh model for `steps` Adam steps and returns the loss of every step.
pub fn train<B: AutodiffBackend + FlashAttentionBackend>(
    c: &TinyConfig,
    steps: usize,
    lr: f64,
    device: &B::Device,
) -> Vec<f32>
where
    B::InnerBackend: FlashAttentionBackend,
{
    B::seed(device, 7);
    let mut model = TinyTransformer::<B>::new(c, device);
    let mut optim = AdamConfig::new().init();
    let loss_fn = CrossEntropyLossConfig::new().init(device);
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        let (tokens, targets) = batch::<B>(c, 16, device);
        let logits = model.forward(tokens);
        let [b, s, v] = logits.dims();
        let loss = loss_fn.forward(logits.reshape([b * s, v]), targets.reshape([b * s]));
        losses.push(loss.clone().into_scalar().elem::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(lr, model, grads);
    }
    losses
}

use burn::tensor::ElementConversion;
