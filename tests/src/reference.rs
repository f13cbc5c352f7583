//! An independent f64 CPU reference for attention: plain loops over the definition, sharing
//! nothing with the kernels but the dropout draw (which defines the mask).

/// Inputs in row-major `[B, H, S, D]` order, as f64.
#[derive(Clone, Debug)]
pub struct RefInputs {
    /// `[B, H, Sq, D]`.
    pub q: Vec<f64>,
    /// `[B, Hkv, Sk, D]`.
    pub k: Vec<f64>,
    /// `[B, Hkv, Sk, Dv]`.
    pub v: Vec<f64>,
    /// `(B, H, Hkv, Sq, Sk, D, Dv)`.
    pub dims: (usize, usize, usize, usize, usize, usize, usize),
    /// Additive bias, already broadcast to `[B, H, Sq, Sk]` (`-inf` = masked).
    pub bias: Option<Vec<f64>>,
}

/// A test's bias, `[Bb, Hb, Sq, Sk]` with `Bb` 1 or B and `Hb` 1 or H (broadcast over the
/// dims of size 1), as its values and shape.
pub type RefBias<'a> = (&'a [f32], [usize; 4]);

impl RefInputs {
    /// The reference's inputs from a test's f32 values: q, k and v widened to f64, and the
    /// bias and the boolean mask (`[B, Sq, Sk]`, `true` = masked, the same for every head)
    /// folded into one additive bias broadcast to `[B, H, Sq, Sk]`; `None` without either.
    pub fn from_f32(
        (q, k, v): (&[f32], &[f32], &[f32]),
        dims: (usize, usize, usize, usize, usize, usize, usize),
        bias: Option<RefBias<'_>>,
        mask: Option<&[bool]>,
    ) -> Self {
        let to64 = |x: &[f32]| x.iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
        let (b, h, _, sq, sk, _, _) = dims;
        let plane = sq * sk;
        let dense = (bias.is_some() || mask.is_some()).then(|| {
            (0..b * h * plane)
                .map(|at| {
                    let (bi, hi, ij) = (at / (h * plane), at / plane % h, at % plane);
                    if mask.is_some_and(|m| m[bi * plane + ij]) {
                        return f64::NEG_INFINITY;
                    }
                    bias.map_or(0.0, |(x, [bb, bh, _, _])| {
                        f64::from(x[((bi % bb) * bh + hi % bh) * plane + ij])
                    })
                })
                .collect()
        });
        Self {
            q: to64(q),
            k: to64(k),
            v: to64(v),
            dims,
            bias: dense,
        }
    }
}

/// Options of the reference, mirroring `AttentionOptions`.
#[derive(Clone, Debug, Default)]
pub struct RefOptions {
    /// Causal (bottom-right aligned).
    pub causal: bool,
    /// Scale (default `1/sqrt(D)`).
    pub scale: Option<f64>,
    /// Softcap.
    pub softcap: Option<f64>,
    /// Window `(left, right)`.
    pub window: (Option<usize>, Option<usize>),
    /// Dropout `(p, seed)`.
    pub dropout: Option<(f64, u64)>,
}

/// Output `[B, H, Sq, Dv]` and LSE `[B, H, Sq]`.
pub fn attention_ref(x: &RefInputs, o: &RefOptions) -> (Vec<f64>, Vec<f64>) {
    attention_ref_rounded(x, o, &|v| v)
}

/// A standard, unfused attention in a low-precision dtype, as a framework runs it: the score
/// matmul, the softmax output and the output matmul each produce values rounded by `round`
/// (accumulating in f64). Its error against [`attention_ref`] is the baseline of the
/// FlashAttention-2 accuracy criterion.
pub fn attention_ref_rounded(
    x: &RefInputs,
    o: &RefOptions,
    round: &dyn Fn(f64) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let (b, h, hkv, sq, sk, d, dv) = x.dims;
    let scale = o.scale.unwrap_or(1.0 / (d as f64).sqrt());
    let group = h / hkv;
    let offset = sk as i64 - sq as i64;
    let right = if o.causal { Some(0) } else { o.window.1 };
    let left = o.window.0;
    let mut out = vec![0.0; b * h * sq * dv];
    let mut lse = vec![f64::NEG_INFINITY; b * h * sq];
    for bi in 0..b {
        for hi in 0..h {
            let kh = hi / group;
            for i in 0..sq {
                let mut scores = vec![f64::NEG_INFINITY; sk];
                for (j, score) in scores.iter_mut().enumerate() {
                    let rel = j as i64 - (i as i64 + offset);
                    if right.is_some_and(|r| rel > r as i64)
                        || left.is_some_and(|l| rel < -(l as i64))
                    {
                        continue;
                    }
                    let mut s = 0.0;
                    for di in 0..d {
                        s += x.q[((bi * h + hi) * sq + i) * d + di]
                            * x.k[((bi * hkv + kh) * sk + j) * d + di];
                    }
                    s = round(s) * scale;
                    if let Some(c) = o.softcap {
                        s = c * (s / c).tanh();
                    }
                    if let Some(bias) = &x.bias {
                        s += bias[((bi * h + hi) * sq + i) * sk + j];
                    }
                    *score = s;
                }
                // A NaN among the visible scores makes the row NaN (f64::max would skip it).
                let m = if scores.iter().any(|s| s.is_nan()) {
                    f64::NAN
                } else {
                    scores.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                };
                if m == f64::NEG_INFINITY {
                    continue; // fully masked: output 0, LSE -inf
                }
                let sum: f64 = scores.iter().map(|s| (s - m).exp()).sum();
                lse[(bi * h + hi) * sq + i] = m + sum.ln();
                for (j, s) in scores.iter().enumerate() {
                    let mut p = round((s - m).exp() / sum);
                    if let Some((drop, seed)) = o.dropout {
                        let bh = (bi * h + hi) as u32;
                        p = if flint_kernels::attention::dropout::keep(
                            seed, drop, bh, i as u32, j as u32,
                        ) {
                            p / (1.0 - drop)
                        } else {
                            0.0
                        };
                    }
                    for di in 0..dv {
                        out[((bi * h + hi) * sq + i) * dv + di] +=
                            p * x.v[((bi * hkv + kh) * sk + j) * dv + di];
                    }
                }
            }
        }
    }
    for x in &mut out {
        *x = round(*x);
    }
    (out, lse)
}

/// Gradients of [`attention_ref`] for an output gradient `dout: [B, H, Sq, Dv]`.
#[derive(Clone, Debug)]
pub struct RefGrads {
    /// `[B, H, Sq, D]`.
    pub dq: Vec<f64>,
    /// `[B, Hkv, Sk, D]`.
    pub dk: Vec<f64>,
    /// `[B, Hkv, Sk, Dv]`.
    pub dv: Vec<f64>,
    /// The score gradient `[B, H, Sq, Sk]` (the gradient of a full, unbroadcast bias).
    pub dbias: Vec<f64>,
}

/// The backward of [`attention_ref`] by the chain rule on the definition, in f64:
/// `dV = (P∘Z)ᵀ dO`, `dP = Z∘(dO Vᵀ)`, `dS = P∘(dP − rowsum(P∘dP))`, through the softcap's
/// `tanh`, then `dQ = dS K · scale` and `dK = dSᵀ Q · scale` (summed over each GQA group).
pub fn attention_bwd_ref(x: &RefInputs, o: &RefOptions, dout: &[f64]) -> RefGrads {
    attention_bwd_ref_rounded(x, o, dout, &|v| v)
}

/// [`attention_bwd_ref`] as an unfused low-precision backward runs it: the scores, the
/// probabilities, dP, dS and the resulting gradients are each rounded by `round`. Its error
/// against [`attention_bwd_ref`] is the baseline of the FlashAttention-2 criterion.
pub fn attention_bwd_ref_rounded(
    x: &RefInputs,
    o: &RefOptions,
    dout: &[f64],
    round: &dyn Fn(f64) -> f64,
) -> RefGrads {
    let (b, h, hkv, sq, sk, d, dv) = x.dims;
    let scale = o.scale.unwrap_or(1.0 / (d as f64).sqrt());
    let group = h / hkv;
    let offset = sk as i64 - sq as i64;
    let right = if o.causal { Some(0) } else { o.window.1 };
    let left = o.window.0;
    let mut g = RefGrads {
        dq: vec![0.0; b * h * sq * d],
        dk: vec![0.0; b * hkv * sk * d],
        dv: vec![0.0; b * hkv * sk * dv],
        dbias: vec![0.0; b * h * sq * sk],
    };
    for bi in 0..b {
        for hi in 0..h {
            let kh = hi / group;
            let qrow = |i: usize| &x.q[((bi * h + hi) * sq + i) * d..][..d];
            let krow = |j: usize| &x.k[((bi * hkv + kh) * sk + j) * d..][..d];
            let vrow = |j: usize| &x.v[((bi * hkv + kh) * sk + j) * dv..][..dv];
            for i in 0..sq {
                let go = &dout[((bi * h + hi) * sq + i) * dv..][..dv];
                // Scores (masked = None) and the softcap's tanh.
                let mut scores = vec![None; sk];
                for (j, score) in scores.iter_mut().enumerate() {
                    let rel = j as i64 - (i as i64 + offset);
                    if right.is_some_and(|r| rel > r as i64)
                        || left.is_some_and(|l| rel < -(l as i64))
                    {
                        continue;
                    }
                    let raw: f64 =
                        qrow(i).iter().zip(krow(j)).map(|(a, c)| a * c).sum::<f64>() * scale;
                    let (mut s, t) = match o.softcap {
                        Some(c) => {
                            let t = (raw / c).tanh();
                            (c * t, t)
                        }
                        None => (raw, 0.0),
                    };
                    if let Some(bias) = &x.bias {
                        s += bias[((bi * h + hi) * sq + i) * sk + j];
                    }
                    if s != f64::NEG_INFINITY {
                        *score = Some((s, t));
                    }
                }
                let m = scores
                    .iter()
                    .flatten()
                    .map(|s| s.0)
                    .fold(f64::NEG_INFINITY, f64::max);
                if m == f64::NEG_INFINITY {
                    continue; // fully masked: no gradient
                }
                let sum: f64 = scores.iter().flatten().map(|s| (s.0 - m).exp()).sum();
                let mut probs = vec![0.0; sk];
                let mut dps = vec![0.0; sk];
                let mut delta = 0.0;
                for j in 0..sk {
                    let Some((s, _)) = scores[j] else { continue };
                    let p = round((s - m).exp() / sum);
                    let keep = match o.dropout {
                        Some((drop, seed)) => {
                            let bh = (bi * h + hi) as u32;
                            if flint_kernels::attention::dropout::keep(
                                seed, drop, bh, i as u32, j as u32,
                            ) {
                                1.0 / (1.0 - drop)
                            } else {
                                0.0
                            }
                        }
                        None => 1.0,
                    };
                    let dp = keep * round(go.iter().zip(vrow(j)).map(|(a, c)| a * c).sum::<f64>());
                    for (di, gd) in go.iter().enumerate() {
                        g.dv[((bi * hkv + kh) * sk + j) * dv + di] += p * keep * gd;
                    }
                    probs[j] = p;
                    dps[j] = dp;
                    delta += p * dp;
                }
                for j in 0..sk {
                    let Some((_, t)) = scores[j] else { continue };
                    let ds = round(probs[j] * (dps[j] - delta));
                    g.dbias[((bi * h + hi) * sq + i) * sk + j] = ds;
                    let ds_raw = if o.softcap.is_some() {
                        ds * (1.0 - t * t)
                    } else {
                        ds
                    } * scale;
                    for di in 0..d {
                        g.dq[((bi * h + hi) * sq + i) * d + di] += ds_raw * krow(j)[di];
                        g.dk[((bi * hkv + kh) * sk + j) * d + di] += ds_raw * qrow(i)[di];
                    }
                }
            }
        }
    }
    for v in [&mut g.dq, &mut g.dk, &mut g.dv, &mut g.dbias] {
        v.iter_mut().for_each(|x| *x = round(*x));
    }
    g
}
