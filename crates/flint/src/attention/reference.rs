//! The reference composition: attention from Burn's own tensor ops, with exactly the
//! kernels' semantics. It is the implementation on backends without flint kernels (NdArray,
//! Flex) and under `Autodiff` until the fused backward lands.

use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};
use flint_kernels::attention::{AttentionProblem, dropout};

/// Runs attention on `q: [B, H, Sq, D]`, `k: [B, Hkv, Sk, D]`, `v: [B, Hkv, Sk, Dv]` and an
/// optional additive `bias` (broadcastable; bool masks arrive as `-inf`). Returns the output
/// `[B, H, Sq, Dv]` and the log-sum-exp `[B, H, Sq]`.
pub(crate) fn forward<B: Backend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    bias: Option<Tensor<B, 4>>,
    p: &AttentionProblem,
) -> (Tensor<B, 4>, Tensor<B, 3>) {
    let device = q.device();
    let dtype = q.dtype();
    let (b, h, sq, sk) = (p.batch, p.heads, p.seq_q, p.seq_kv);
    let group = h / p.kv_heads;
    let expand_heads = |t: Tensor<B, 4>| {
        let [_, hkv, s, d] = t.dims();
        t.unsqueeze_dim::<5>(2)
            .expand([b, hkv, group, s, d])
            .reshape([b, hkv * group, s, d])
    };
    let (k, v) = (expand_heads(k), expand_heads(v));

    let mut scores = q.matmul(k.swap_dims(2, 3)).mul_scalar(p.scale);
    if let Some(cap) = p.softcap {
        scores = scores.div_scalar(cap).tanh().mul_scalar(cap);
    }
    if let Some(hidden) = window_mask::<B>(p, &device) {
        scores = scores.mask_fill(
            hidden.unsqueeze::<4>().expand([b, h, sq, sk]),
            f32::NEG_INFINITY,
        );
    }
    if let Some(bias) = bias {
        scores = scores + bias.expand([b, h, sq, sk]);
    }

    // A NaN among a row's visible scores makes the row NaN, as in the kernels; some
    // backends' max and clamp would drop it.
    let nan_rows = scores.clone().is_nan().any_dim(3);
    // NaN-safe softmax, as Burn's fallback: a fully masked row gives 0, its LSE -inf.
    let max = scores.clone().max_dim(3).clamp_min(f32::MIN);
    let exp = (scores - max.clone()).exp();
    let sum = exp.clone().sum_dim(3);
    let lse = (max + sum.clone().log()).squeeze_dim::<3>(3);
    let mut probs = exp / sum.clamp_min(f32::MIN_POSITIVE);
    if let Some((drop, seed)) = p.dropout {
        probs = probs * dropout_mask::<B>(p, drop, seed, dtype, &device);
    }
    let out = probs.matmul(v);
    let out = out.mask_fill(nan_rows.clone().expand([b, h, sq, p.val_dim]), f32::NAN);
    (out, lse.mask_fill(nan_rows.squeeze_dim::<3>(3), f32::NAN))
}

/// `true` where the causal/window rule hides key `j` from query `i`; `None` if nothing is.
fn window_mask<B: Backend>(
    p: &AttentionProblem,
    device: &B::Device,
) -> Option<Tensor<B, 2, burn::tensor::Bool>> {
    let (left, right) = p.window;
    if left.is_none() && right.is_none() {
        return None;
    }
    let offset = p.seq_kv as i64 - p.seq_q as i64;
    let rows = Tensor::<B, 1, Int>::arange(0..p.seq_q as i64, device).reshape([p.seq_q, 1]);
    let cols = Tensor::<B, 1, Int>::arange(0..p.seq_kv as i64, device).reshape([1, p.seq_kv]);
    // rel = j - (i + offset): visible iff -left <= rel <= right.
    let rel = cols.expand([p.seq_q, p.seq_kv]) - (rows + offset).expand([p.seq_q, p.seq_kv]);
    let mut hidden: Option<Tensor<B, 2, burn::tensor::Bool>> = None;
    if let Some(right) = right {
        hidden = Some(rel.clone().greater_elem(right as i64));
    }
    if let Some(left) = left {
        let l = rel.lower_elem(-(left as i64));
        hidden = Some(match hidden {
            Some(h) => h.bool_or(l),
            None => l,
        });
    }
    hidden
}

/// The keep mask scaled by `1 / (1 - p)`, from the same counter-based draws as the kernels.
fn dropout_mask<B: Backend>(
    p: &AttentionProblem,
    drop: f64,
    seed: u64,
    dtype: burn::tensor::DType,
    device: &B::Device,
) -> Tensor<B, 4> {
    let scale = (1.0 / (1.0 - drop)) as f32;
    let mut values = Vec::with_capacity(p.batch * p.heads * p.seq_q * p.seq_kv);
    for bh in 0..(p.batch * p.heads) as u32 {
        for i in 0..p.seq_q as u32 {
            for j in 0..p.seq_kv as u32 {
                values.push(if dropout::keep(seed, drop, bh, i, j) {
                    scale
                } else {
                    0.0
                });
            }
        }
    }
    let data = TensorData::new(values, [p.batch, p.heads, p.seq_q, p.seq_kv]);
    Tensor::<B, 4>::from_data(data.convert_dtype(dtype), device)
}
