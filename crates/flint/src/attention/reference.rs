//! The reference composition: attention from Burn's own tensor ops, with exactly the
//! kernels' semantics. It is the implementation on backends without flint kernels (NdArray,
//! Flex), forward and backward; the backward materialises the `[B, H, Sq, Sk]` scores, as
//! any unfused attention does.

use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData, TensorPrimitive};
use flint_kernels::attention::{AttentionProblem, dropout};

use super::backend::{AttentionBwdInputs, AttentionGrads};

/// The softmax of one call, with what the backward needs to differentiate it.
struct Softmax<B: Backend> {
    /// k and v repeated over each query-head group: `[B, H, Sk, D|Dv]`.
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    /// The probabilities (0 where masked, 0 for a fully masked row).
    probs: Tensor<B, 4>,
    /// The dropout keep mask scaled by `1 / (1 - p)`, if dropout is on.
    keep: Option<Tensor<B, 4>>,
    /// `tanh` of the capped scores, if softcap is on.
    tanh: Option<Tensor<B, 4>>,
    /// `[B, H, Sq, 1]`: rows with a NaN among their visible scores.
    nan_rows: Tensor<B, 4, burn::tensor::Bool>,
    /// `[B, H, Sq]`.
    lse: Tensor<B, 3>,
}

fn softmax<B: Backend>(
    q: Tensor<B, 4>,
    k: Tensor<B, 4>,
    v: Tensor<B, 4>,
    bias: Option<Tensor<B, 4>>,
    p: &AttentionProblem,
) -> Softmax<B> {
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

    let mut scores = q.matmul(k.clone().swap_dims(2, 3)).mul_scalar(p.scale);
    let mut tanh = None;
    if let Some(cap) = p.softcap {
        let t = scores.div_scalar(cap).tanh();
        scores = t.clone().mul_scalar(cap);
        tanh = Some(t);
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
    let probs = exp / sum.clamp_min(f32::MIN_POSITIVE);
    let keep = p
        .dropout
        .map(|(drop, seed)| dropout_mask::<B>(p, drop, seed, dtype, &device));
    Softmax {
        k,
        v,
        probs,
        keep,
        tanh,
        nan_rows,
        lse,
    }
}

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
    let sm = softmax(q, k, v, bias, p);
    let weights = match sm.keep {
        Some(keep) => sm.probs * keep,
        None => sm.probs,
    };
    let out = weights.matmul(sm.v);
    let [b, h, sq, _] = out.dims();
    let out = out.mask_fill(sm.nan_rows.clone().expand([b, h, sq, p.val_dim]), f32::NAN);
    (
        out,
        sm.lse.mask_fill(sm.nan_rows.squeeze_dim::<3>(3), f32::NAN),
    )
}

/// The gradients of [`forward`] for the output gradient `dout`, by the chain rule on the
/// materialised probabilities: `dV = (P∘Z)ᵀ dO`, `dP = Z∘(dO Vᵀ)`,
/// `dS = P∘(dP − rowsum(P∘dP))`, through the softcap's `tanh`, then `dQ = dS K · scale` and
/// `dK = dSᵀ Q · scale`; dK and dV are summed over each query-head group.
pub(crate) fn backward<B: Backend>(
    inputs: AttentionBwdInputs<B>,
    p: &AttentionProblem,
    want_dbias: bool,
) -> AttentionGrads<B> {
    let wrap = |t| Tensor::<B, 4>::from_primitive(TensorPrimitive::Float(t));
    let (q, dout) = (wrap(inputs.q), wrap(inputs.dout));
    let bias = inputs.bias.map(wrap);
    let bias_dims = bias.as_ref().map(|b| b.dims());
    let sm = softmax(q.clone(), wrap(inputs.k), wrap(inputs.v), bias, p);
    let (b, h, hkv) = (p.batch, p.heads, p.kv_heads);
    let group = h / hkv;
    // [B, H, S, X] -> [B, Hkv, S, X], summing each group of query heads.
    let fold_heads = |t: Tensor<B, 4>| {
        let [_, _, s, x] = t.dims();
        t.reshape([b, hkv, group, s, x])
            .sum_dim(2)
            .reshape([b, hkv, s, x])
    };
    let weights = match &sm.keep {
        Some(keep) => sm.probs.clone() * keep.clone(),
        None => sm.probs.clone(),
    };
    let dv = fold_heads(weights.swap_dims(2, 3).matmul(dout.clone()));
    let mut dp = dout.matmul(sm.v.swap_dims(2, 3));
    if let Some(keep) = sm.keep {
        dp = dp * keep;
    }
    let delta = (sm.probs.clone() * dp.clone()).sum_dim(3);
    let ds = sm.probs * (dp - delta);
    let dbias = match (want_dbias, bias_dims) {
        (true, Some([bb, bh, _, _])) => {
            let mut g = ds.clone();
            if bb == 1 && b != 1 {
                g = g.sum_dim(0);
            }
            if bh == 1 && h != 1 {
                g = g.sum_dim(1);
            }
            Some(g.into_primitive().tensor())
        }
        _ => None,
    };
    let ds = match sm.tanh {
        Some(t) => ds * (t.clone() * t).neg().add_scalar(1.0),
        None => ds,
    }
    .mul_scalar(p.scale);
    let dq = ds.clone().matmul(sm.k);
    let dk = fold_heads(ds.swap_dims(2, 3).matmul(q));
    AttentionGrads {
        dq: dq.into_primitive().tensor(),
        dk: dk.into_primitive().tensor(),
        dv: dv.into_primitive().tensor(),
        dbias,
    }
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
