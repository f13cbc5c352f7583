//! Checks every rule of an attention call before anything is launched.

use burn::tensor::backend::Backend;
use burn::tensor::{Bool, DType, Tensor};
use flint_kernels::attention::{AttentionProblem, SUPPORTED_HEAD_DIMS};

use super::AttentionOptions;
use crate::AttentionError;

fn shape_err(arg: &'static str, got: [usize; 4], rule: String) -> AttentionError {
    AttentionError::Shape {
        arg,
        got: got.to_vec(),
        rule,
    }
}

/// The element type name the kernels know, or an error naming `q`.
pub(crate) fn dtype_name(dtype: DType) -> Result<&'static str, AttentionError> {
    match dtype {
        DType::F32 => Ok("f32"),
        DType::F16 => Ok("f16"),
        DType::BF16 => Ok("bf16"),
        other => Err(AttentionError::Mismatch {
            arg: "q",
            rule: format!("has dtype {other:?}; flash attention supports f32, f16 and bf16"),
        }),
    }
}

/// Validates the call and describes it. Every rule is checked here, once, so that backends
/// and kernels receive only calls they can run.
pub(crate) fn validate<B: Backend>(
    q: &Tensor<B, 4>,
    k: &Tensor<B, 4>,
    v: &Tensor<B, 4>,
    mask: Option<&Tensor<B, 4, Bool>>,
    bias: Option<&Tensor<B, 4>>,
    options: &AttentionOptions,
) -> Result<AttentionProblem, AttentionError> {
    let [b, h, sq, d] = q.dims();
    let [kb, hkv, sk, kd] = k.dims();
    let [vb, vh, vs, dv] = v.dims();
    if kb != b {
        return Err(shape_err(
            "k",
            k.dims(),
            format!("batch {kb} must equal q's batch {b}"),
        ));
    }
    if vb != b {
        return Err(shape_err(
            "v",
            v.dims(),
            format!("batch {vb} must equal q's batch {b}"),
        ));
    }
    if kd != d {
        return Err(shape_err(
            "k",
            k.dims(),
            format!("head dim {kd} must equal q's head dim {d}"),
        ));
    }
    if vh != hkv || vs != sk {
        return Err(shape_err(
            "v",
            v.dims(),
            format!("heads and sequence ({vh}, {vs}) must equal k's ({hkv}, {sk})"),
        ));
    }
    if hkv == 0 || h % hkv != 0 {
        return Err(shape_err(
            "k",
            k.dims(),
            format!("q's {h} heads must be a multiple of k's {hkv} heads (H % Hkv == 0)"),
        ));
    }
    for (arg, got, x) in [("q", q.dims(), d), ("v", v.dims(), dv)] {
        if !SUPPORTED_HEAD_DIMS.contains(&x) {
            return Err(shape_err(
                arg,
                got,
                format!("head dim {x} is not supported; supported: {SUPPORTED_HEAD_DIMS:?}"),
            ));
        }
    }
    let broadcast_rule = |arg: &'static str, dims: [usize; 4]| {
        let [mb, mh, ms, mk] = dims;
        if (mb == b || mb == 1) && (mh == h || mh == 1) && ms == sq && mk == sk {
            Ok(())
        } else {
            Err(shape_err(
                arg,
                dims,
                format!(
                    "must be [{b} or 1, {h} or 1, {sq}, {sk}] (broadcast over batch and heads)"
                ),
            ))
        }
    };
    if let Some(mask) = mask {
        broadcast_rule("mask", mask.dims())?;
    }
    if let Some(bias) = bias {
        broadcast_rule("bias", bias.dims())?;
    }
    let dtype = dtype_name(q.dtype())?;
    for (arg, t) in [("k", k), ("v", v)] {
        if t.dtype() != q.dtype() {
            return Err(AttentionError::Mismatch {
                arg,
                rule: format!("has dtype {:?} but q has {:?}", t.dtype(), q.dtype()),
            });
        }
    }
    let device = q.device();
    let devices = [("k", k.device()), ("v", v.device())]
        .into_iter()
        .chain(mask.map(|m| ("mask", m.device())))
        .chain(bias.map(|t| ("bias", t.device())));
    for (arg, other) in devices {
        if other != device {
            return Err(AttentionError::Mismatch {
                arg,
                rule: format!("is on device {other:?} but q is on {device:?}"),
            });
        }
    }
    if let Some(softcap) = options.softcap
        && !(softcap.is_finite() && softcap > 0.0)
    {
        return Err(AttentionError::Option {
            arg: "softcap",
            rule: format!("must be finite and > 0, got {softcap}"),
        });
    }
    if let Some(scale) = options.scale
        && !scale.is_finite()
    {
        return Err(AttentionError::Option {
            arg: "scale",
            rule: format!("must be finite, got {scale}"),
        });
    }
    if let Some((p, _)) = options.dropout
        && !(0.0..1.0).contains(&p)
    {
        return Err(AttentionError::Option {
            arg: "dropout",
            rule: format!("probability must be in [0, 1), got {p}"),
        });
    }
    index_range(
        q.dims(),
        k.dims(),
        v.dims(),
        mask.is_some() || bias.is_some(),
    )?;
    Ok(AttentionProblem {
        batch: b,
        heads: h,
        kv_heads: hkv,
        seq_q: sq,
        seq_kv: sk,
        head_dim: d,
        val_dim: dv,
        dtype,
        scale: options.scale.unwrap_or(1.0 / (d as f64).sqrt()),
        softcap: options.softcap,
        window: options.effective_window(),
        has_bias: mask.is_some() || bias.is_some(),
        dropout: options.dropout.filter(|(p, _)| *p > 0.0),
    })
}

/// The kernels address elements with 32-bit offsets: the largest tensor a call touches (the
/// output, the inputs, and with a bias or mask its `[B, H, Sq, Sk]` gradient) must stay below
/// 2^31 elements. Larger calls are refused here, never wrapped around on the device.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 31;

fn index_range(
    q: [usize; 4],
    k: [usize; 4],
    v: [usize; 4],
    scores: bool,
) -> Result<(), AttentionError> {
    let [b, h, sq, _] = q;
    let [_, _, sk, dv] = v;
    let count = |dims: &[usize]| dims.iter().fold(1u64, |n, &x| n.saturating_mul(x as u64));
    let mut tensors = vec![
        ("q", q.to_vec()),
        ("k", k.to_vec()),
        ("v", v.to_vec()),
        ("q", vec![b, h, sq, dv]),
    ];
    if scores {
        tensors.push(("bias", vec![b, h, sq, sk]));
    }
    for (arg, dims) in tensors {
        let n = count(&dims);
        if n >= MAX_ELEMENTS {
            return Err(AttentionError::Shape {
                arg,
                got: dims,
                rule: format!(
                    "{n} elements (with the output and, for a bias or mask, the [B, H, Sq, Sk] \
                     scores it covers) exceed the kernels' 32-bit addressing limit of 2^31"
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_past_32_bit_addressing_are_refused_with_the_argument_named() {
        let small = [1, 1, 4096, 128];
        assert!(index_range(small, small, small, true).is_ok());
        // 2^31 query elements: q is named.
        let err = index_range(
            [1 << 16, 1 << 10, 1, 32],
            [1 << 16, 1, 1, 32],
            [1 << 16, 1, 1, 32],
            false,
        )
        .expect_err("2^31 query elements");
        assert!(
            err.to_string().contains("`q`") && err.to_string().contains("32-bit"),
            "{err}"
        );
        // A value head dim that makes only the output too large is charged to q's call too.
        let err = index_range(
            [1, 1 << 15, 1 << 10, 32],
            [1, 1, 1, 32],
            [1, 1, 1, 256],
            false,
        )
        .expect_err("2^33 output elements");
        assert!(err.to_string().contains("32-bit"), "{err}");
        // 2^32 scores under a bias or mask: the bias is named; without one the same shapes run.
        let long = [1, 1, 1 << 16, 32];
        let err = index_range(long, long, long, true).expect_err("2^32 scores");
        assert!(err.to_string().contains("`bias`"), "{err}");
        assert!(index_range(long, long, long, false).is_ok());
        // Overflowing products saturate rather than wrap.
        assert!(index_range([usize::MAX, 2, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1], false).is_err());
    }
}
