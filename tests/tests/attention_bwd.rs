//! Attention backward: gradients through `Autodiff<B>` against the f64 reference, on NdArray
//! (the reference composition, differentiated by Burn) and on wgpu over lavapipe (the fused
//! CubeCL backward through Burn's default fusion type), plus finite differences and a
//! property test.
//!
//! Tolerance is the FlashAttention-2 criterion: flint's error may be at most twice the error
//! of autodiff through Burn's own `attention_fallback` in f32, plus a small epsilon. Where
//! Burn cannot express a feature (window, dropout), a fixed f32 bound is used.

use burn::backend::{Autodiff, NdArray};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::module::attention_fallback;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, FloatDType, Tensor, TensorData};
use flint::FlashAttentionBackend;
use flint_tests::random_f32;
use flint_tests::reference::{
    RefGrads, RefInputs, attention_bwd_ref, attention_bwd_ref_rounded, attention_ref,
};
use proptest::prelude::*;

use crate::attention_fwd::{Case, gpu, max_err, options, tensor, to_f64};

/// The inputs of one case as f32 values, and the reference's view of them.
struct Inputs {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    dout: Vec<f32>,
    bias: Option<(Vec<f32>, [usize; 4])>,
    mask: Option<Vec<bool>>,
    reference: RefInputs,
}

impl Inputs {
    /// The output gradient in f64, as the references take it.
    fn dout64(&self) -> Vec<f64> {
        self.dout.iter().map(|&v| f64::from(v)).collect()
    }
}

fn inputs(case: &Case, seed: u64) -> Inputs {
    inputs_in(case, seed, FloatDType::F32)
}

/// [`inputs`] with every value representable in `dtype`, so that casting is exact.
fn inputs_in(case: &Case, seed: u64, dtype: FloatDType) -> Inputs {
    let round = |v: Vec<f32>| -> Vec<f32> {
        match dtype {
            FloatDType::BF16 => v
                .into_iter()
                .map(|x| burn::tensor::bf16::from_f32(x).to_f32())
                .collect(),
            FloatDType::F16 => v
                .into_iter()
                .map(|x| burn::tensor::f16::from_f32(x).to_f32())
                .collect(),
            _ => v,
        }
    };
    let random_f32 = |len, seed| round(random_f32(len, seed));
    let Case {
        b,
        h,
        hkv,
        sq,
        sk,
        d,
        dv,
        ..
    } = *case;
    let q = random_f32(b * h * sq * d, seed);
    let k = random_f32(b * hkv * sk * d, seed + 1);
    let v = random_f32(b * hkv * sk * dv, seed + 2);
    let dout = random_f32(b * h * sq * dv, seed + 5);
    let bias = case.bias.map(|(pb, ph)| {
        let shape = [if pb { b } else { 1 }, if ph { h } else { 1 }, sq, sk];
        (random_f32(shape.iter().product(), seed + 3), shape)
    });
    let mask: Option<Vec<bool>> = case.mask.then(|| {
        let r = random_f32(b * sq * sk, seed + 4);
        (0..b * sq * sk)
            .map(|i| r[i] > 1.0 || (i / sk == 0)) // ~25% masked, and row 0 of batch 0 fully
            .collect()
    });
    let reference = RefInputs::from_f32(
        (&q, &k, &v),
        (b, h, hkv, sq, sk, d, dv),
        bias.as_ref().map(|(x, shape)| (x.as_slice(), *shape)),
        mask.as_deref(),
    );
    Inputs {
        q,
        k,
        v,
        dout,
        bias,
        mask,
        reference,
    }
}

/// `dq, dk, dv` and the bias gradient (in the bias's shape) of `sum(out ∘ dout)`.
type Grads = (Vec<f64>, Vec<f64>, Vec<f64>, Option<Vec<f64>>);

/// Runs the forward through `attend` under autodiff on `B` and returns the gradients.
fn grads_of<B: AutodiffBackend>(
    case: &Case,
    x: &Inputs,
    device: &B::Device,
    dtype: FloatDType,
    attend: impl Fn(
        Tensor<B, 4>,
        Tensor<B, 4>,
        Tensor<B, 4>,
        Option<Tensor<B, 4, Bool>>,
        Option<Tensor<B, 4>>,
    ) -> Tensor<B, 4>,
) -> Grads {
    let Case {
        b,
        h,
        hkv,
        sq,
        sk,
        d,
        dv,
        ..
    } = *case;
    let input = |values: &[f32], shape| tensor::<B>(values, shape, device).cast(dtype);
    let q = input(&x.q, [b, h, sq, d]).require_grad();
    let k = input(&x.k, [b, hkv, sk, d]).require_grad();
    let v = input(&x.v, [b, hkv, sk, dv]).require_grad();
    let bias = x
        .bias
        .as_ref()
        .map(|(values, shape)| input(values, *shape).require_grad());
    let mask = x.mask.as_ref().map(|m| {
        Tensor::<B, 4, Bool>::from_data(TensorData::new(m.clone(), [b, 1, sq, sk]), device)
    });
    let dout = input(&x.dout, [b, h, sq, dv]);
    let out = attend(q.clone(), k.clone(), v.clone(), mask, bias.clone());
    let grads = (out * dout).sum().backward();
    let grad = |t: &Tensor<B, 4>| to_f64(t.grad(&grads).expect("a gradient for a tracked input"));
    (grad(&q), grad(&k), grad(&v), bias.as_ref().map(grad))
}

/// The reference's bias gradient summed over the dims the bias broadcasts.
fn reduce_dbias(g: &RefGrads, case: &Case, shape: [usize; 4]) -> Vec<f64> {
    let Case { b, h, sq, sk, .. } = *case;
    let [bb, bh, _, _] = shape;
    let mut out = vec![0.0; bb * bh * sq * sk];
    for bi in 0..b {
        for hi in 0..h {
            for ij in 0..sq * sk {
                out[((bi % bb) * bh + hi % bh) * sq * sk + ij] +=
                    g.dbias[(bi * h + hi) * sq * sk + ij];
            }
        }
    }
    out
}

/// Autodiff through Burn's `attention_fallback` on NdArray in f32 (k and v expanded over each
/// group), or `None` where Burn cannot express the case.
fn burn_grads(case: &Case, x: &Inputs) -> Option<Grads> {
    if case.opts.window != (None, None) || case.opts.dropout.is_some() {
        return None;
    }
    let Case {
        b, h, hkv, sq, sk, ..
    } = *case;
    let group = h / hkv;
    let opts = AttentionModuleOptions {
        scale: case.opts.scale,
        softcap: case.opts.softcap,
        is_causal: case.opts.causal,
    };
    type A = Autodiff<NdArray>;
    Some(grads_of::<A>(
        case,
        x,
        &Default::default(),
        FloatDType::F32,
        |q, k, v, mask, bias| {
            let expand = |t: Tensor<A, 4>| {
                let dd = t.dims()[3];
                t.unsqueeze_dim::<5>(2)
                    .expand([b, hkv, group, sk, dd])
                    .reshape([b, h, sk, dd])
            };
            attention_fallback(
                q,
                expand(k),
                expand(v),
                mask.map(|m| m.expand([b, h, sq, sk])),
                bias.map(|x| x.expand([b, h, sq, sk])),
                opts,
            )
        },
    ))
}

/// One gradient: its name, the reference, flint's and Burn's.
type Compared<'a> = (
    &'a str,
    &'a [f64],
    Option<&'a Vec<f64>>,
    Option<&'a Vec<f64>>,
);

/// Checks flint's gradients on `B` against the f64 reference for one case.
pub fn check_bwd<B: AutodiffBackend + FlashAttentionBackend>(
    case: &Case,
    device: &B::Device,
    seed: u64,
) {
    let x = inputs(case, seed);
    let dout64 = x.dout64();
    let want = attention_bwd_ref(&x.reference, &case.opts, &dout64);
    let want_dbias = x.bias.as_ref().map(|(_, s)| reduce_dbias(&want, case, *s));
    let got = grads_of::<B>(case, &x, device, FloatDType::F32, |q, k, v, mask, bias| {
        flint::try_flash_attention_full(q, k, v, mask, bias, options(&case.opts, None))
            .unwrap_or_else(|e| panic!("{case:?}: {e}"))
            .out
    });
    let burn = burn_grads(case, &x);
    let named: [Compared; 4] = [
        ("dq", &want.dq, Some(&got.0), burn.as_ref().map(|g| &g.0)),
        ("dk", &want.dk, Some(&got.1), burn.as_ref().map(|g| &g.1)),
        ("dv", &want.dv, Some(&got.2), burn.as_ref().map(|g| &g.2)),
        (
            "dbias",
            want_dbias.as_deref().unwrap_or(&[]),
            got.3.as_ref(),
            burn.as_ref().and_then(|g| g.3.as_ref()),
        ),
    ];
    // dV is P·dO: never all zero unless every row is masked, so the check is never vacuous
    // (dQ and dK legitimately vanish with a single visible key).
    assert!(
        want.dv.iter().any(|w| w.abs() > 1e-3),
        "{case:?}: the reference dv is all near zero, the check would be vacuous"
    );
    for (name, want, got, burn) in named {
        let Some(got) = got else { continue };
        let magnitude = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
        let burn_err = burn.map(|g| max_err(g, want)).filter(|e| e.is_finite());
        let tol = burn_err.map_or(2e-4 * magnitude, |e| 2.0 * e + 1e-5 * magnitude);
        let err = max_err(got, want);
        assert!(
            err <= tol,
            "{case:?}: {name} error {err:e} > {tol:e} (Burn's autodiff fallback: {burn_err:?}, magnitude {magnitude:e})"
        );
    }
}

fn cases() -> Vec<(&'static str, Case)> {
    let mut v = vec![("plain", Case::new(1, 2, 2, 17, 19, 32))];
    let mut c = Case::new(2, 4, 1, 9, 33, 64);
    c.opts.causal = true;
    v.push(("gqa4 causal sq<sk", c));
    let mut c = Case::new(1, 4, 2, 24, 13, 32);
    c.opts.causal = true;
    v.push(("gqa2 causal sq>sk (fully masked rows)", c));
    let mut c = Case::new(1, 2, 2, 37, 37, 32);
    c.opts.window = (Some(5), Some(3));
    v.push(("window", c));
    let mut c = Case::new(1, 2, 2, 20, 31, 96);
    c.opts.softcap = Some(2.0);
    c.opts.scale = Some(0.3);
    v.push(("softcap scale d96", c));
    let mut c = Case::new(2, 2, 1, 16, 21, 32);
    c.bias = Some((false, true));
    c.mask = true;
    v.push(("mask and head-broadcast bias (dbias)", c));
    let mut c = Case::new(2, 2, 2, 11, 14, 32);
    c.bias = Some((true, true));
    v.push(("full bias (dbias)", c));
    let mut c = Case::new(1, 2, 2, 8, 40, 128);
    c.dv = 64;
    v.push(("dv != d, d128", c));
    let mut c = Case::new(1, 2, 2, 19, 23, 32);
    c.opts.dropout = Some((0.2, 1234));
    v.push(("dropout", c));
    v.push(("single query", Case::new(1, 2, 2, 1, 50, 64)));
    v.push(("single key", Case::new(1, 2, 2, 5, 1, 32)));
    v
}

#[test]
fn gradients_match_reference_on_ndarray() {
    for (name, case) in cases() {
        eprintln!("ndarray: {name}");
        check_bwd::<Autodiff<NdArray>>(&case, &Default::default(), 21);
    }
}

#[test]
fn gradients_match_reference_on_gpu() {
    let started = std::time::Instant::now();
    let device = gpu();
    for (name, case) in cases() {
        eprintln!("gpu: {name} at {:?}", started.elapsed());
        check_bwd::<Autodiff<crate::attention_fwd::Gpu>>(&case, &device, 21);
    }
}

#[test]
fn head_dim_256_gradients_on_gpu() {
    check_bwd::<Autodiff<crate::attention_fwd::Gpu>>(&Case::new(1, 1, 1, 9, 10, 256), &gpu(), 3);
}

/// The output's gradient reaches the backward as a strided view, not a dense tensor: through
/// `swap_dims` (rows `H·Dv` apart, still fit for vector loads) and through `cat` along the
/// last dim (rows `Dv + 1` apart: every kernel must fall back to one element at a time).
#[test]
fn strided_output_gradients_on_gpu() {
    type G = Autodiff<crate::attention_fwd::Gpu>;
    let device = gpu();
    let case = Case::new(1, 2, 2, 21, 19, 32);
    let Case {
        b,
        h,
        sq,
        sk,
        d,
        dv,
        ..
    } = case;
    let x = inputs(&case, 31);
    let dout64 = x.dout64();
    let want = attention_bwd_ref(&x.reference, &case.opts, &dout64);
    for layout in ["swap_dims", "cat"] {
        let q = tensor::<G>(&x.q, [b, h, sq, d], &device).require_grad();
        let k = tensor::<G>(&x.k, [b, h, sk, d], &device).require_grad();
        let v = tensor::<G>(&x.v, [b, h, sk, dv], &device).require_grad();
        let out = flint::flash_attention(q.clone(), k.clone(), v.clone());
        let loss = if layout == "swap_dims" {
            // dO arrives as the [B, Sq, H, Dv] weights viewed as [B, H, Sq, Dv].
            let mut w = vec![0.0f32; x.dout.len()];
            for hi in 0..h {
                for i in 0..sq {
                    for c in 0..dv {
                        w[(i * h + hi) * dv + c] = x.dout[(hi * sq + i) * dv + c];
                    }
                }
            }
            (out.swap_dims(1, 2) * tensor::<G>(&w, [b, sq, h, dv], &device)).sum()
        } else {
            // dO arrives as the first Dv columns of a [B, H, Sq, Dv + 1] gradient.
            let mut w = vec![0.5f32; b * h * sq * (dv + 1)];
            for r in 0..h * sq {
                w[r * (dv + 1)..r * (dv + 1) + dv].copy_from_slice(&x.dout[r * dv..(r + 1) * dv]);
            }
            let pad = Tensor::<G, 4>::ones([b, h, sq, 1], &device);
            (Tensor::cat(vec![out, pad], 3) * tensor::<G>(&w, [b, h, sq, dv + 1], &device)).sum()
        };
        let grads = loss.backward();
        let got = |t: &Tensor<G, 4>| to_f64(t.grad(&grads).expect("a gradient"));
        for (name, want, got) in [
            ("dq", &want.dq, got(&q)),
            ("dk", &want.dk, got(&k)),
            ("dv", &want.dv, got(&v)),
        ] {
            let magnitude = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
            let err = max_err(&got, want);
            assert!(
                err <= 2e-4 * magnitude,
                "{layout}: {name} error {err:e} (magnitude {magnitude:e})"
            );
        }
    }
}

/// What the GPU under test supports (CUDA when built with it, else wgpu).
fn gpu_limits() -> flint::kernels::DeviceLimits {
    use cubecl::Runtime;
    #[cfg(feature = "cuda")]
    let client = cubecl::cuda::CudaRuntime::client(&gpu());
    #[cfg(not(feature = "cuda"))]
    let client = cubecl::wgpu::WgpuRuntime::client(&gpu());
    flint::kernels::DeviceLimits::of(&client)
}

/// The backward op of the GPU under test, for scoped overlays that force its configs.
fn gpu_bwd_op() -> flint::kernels::attention::AttentionBwdOp {
    flint::kernels::attention::AttentionBwdOp::new(gpu_limits())
}

/// Central finite differences of `sum(out ∘ dout)` through the fused forward agree with the
/// fused backward's gradient, coordinate by coordinate, at a tiny size with causal masking,
/// softcap and a bias, for the selector's choice and for every portable tiling forced (with
/// the accumulators in registers too, where the device allows them).
#[test]
fn gradients_match_finite_differences_on_gpu() {
    use flint::{AttentionBwdConfig, Overlay, Variant, overlay};
    let op = gpu_bwd_op();
    let mut forced: Vec<Option<AttentionBwdConfig>> = vec![None];
    let tilings = [(16, 16), (32, 16), (16, 32), (8, 8)];
    forced.extend(
        tilings
            .iter()
            .map(|&(bq, bkv)| Some(AttentionBwdConfig::new(Variant::Portable, bq, bkv))),
    );
    if gpu_limits().arrays_across_barriers {
        forced.extend(tilings.iter().map(|&(bq, bkv)| {
            Some(AttentionBwdConfig::new(Variant::Portable, bq, bkv).with_registers())
        }));
        forced.extend(tilings.iter().map(|&(bq, bkv)| {
            Some(AttentionBwdConfig::new(Variant::Portable, bq, bkv).with_slices())
        }));
    } else {
        eprintln!("SKIPPED (registers): arrays may not be kept across barriers here (wgpu)");
    }
    // Inputs of their own for each config (see `register_accumulator_gradients_match_reference_on_gpu`).
    for (i, config) in (0u64..).zip(forced) {
        let _guard = config.map(|c| overlay(Overlay::new().set(&op, c).strict()));
        finite_differences(config, 31 + 10 * i);
    }
}

/// The portable backward with its gradient accumulators in registers, forced at tilings from
/// 128x32 to 32x16 on every f32 case (the selector takes it for f32 on CUDA and ROCm), and
/// with dQ fused into the dK/dV kernel where the device has two-element f32 atomics.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: on wgpu the portable accumulators stay in shared memory (run with \
              --features cuda)"
)]
fn register_accumulator_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Overlay, Variant, overlay};
    let op = gpu_bwd_op();
    let device = gpu();
    let regs = |bq, bkv| AttentionBwdConfig::new(Variant::Portable, bq, bkv).with_registers();
    let mut configs = vec![regs(128, 32), regs(64, 64), regs(32, 32), regs(32, 16)];
    if gpu_limits().atomic_add_f32x2 {
        configs.extend([regs(64, 64).with_fused_dq(), regs(128, 32).with_fused_dq()]);
    } else {
        eprintln!("SKIPPED (fused dQ): this device has no two-element f32 atomic add (sm90+)");
    }
    // Inputs of its own for each config: the pool could otherwise hand a config gradient
    // buffers still holding the previous config's correct values, and a kernel that leaves
    // rows unwritten would pass.
    for (i, c) in (0u64..).zip(configs) {
        let _guard = overlay(Overlay::new().set(&op, c).strict());
        for (name, case) in cases() {
            eprintln!("{c:?}: {name}");
            check_bwd::<Autodiff<crate::attention_fwd::Gpu>>(&case, &device, 21 + 50 * i);
        }
    }
}

/// The portable backward's sliced form (products over `D` staged 32 columns at a time,
/// products over a tile's rows a chunk of rows at a time), forced on every f32 case and on
/// a longer one at D = 128 that walks several tiles, with dQ fused where the device has
/// two-element f32 atomics.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: on wgpu the portable kernels keep no arrays across barriers here \
              (run with --features cuda)"
)]
fn sliced_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Overlay, Variant, overlay};
    let op = gpu_bwd_op();
    let device = gpu();
    let sliced = |bq, bkv| AttentionBwdConfig::new(Variant::Portable, bq, bkv).with_slices();
    // (16x16 would keep 256 registers per unit at D = 128: refused.)
    let mut configs = vec![sliced(64, 32), sliced(32, 64), sliced(32, 32)];
    if gpu_limits().atomic_add_f32x2 {
        configs.insert(1, sliced(64, 32).with_fused_dq());
    } else {
        eprintln!("SKIPPED (fused dQ): this device has no two-element f32 atomic add (sm90+)");
    }
    let mut all = cases();
    let mut c = Case::new(1, 2, 1, 130, 100, 128);
    c.opts.causal = true;
    all.push(("long causal gqa2 d128", c));
    // Inputs of its own for each config, as in the register form's test above.
    for (i, c) in (0u64..).zip(configs) {
        let _guard = overlay(Overlay::new().set(&op, c).strict());
        for (name, case) in &all {
            eprintln!("{c:?}: {name}");
            check_bwd::<Autodiff<crate::attention_fwd::Gpu>>(case, &device, 21 + 50 * i);
        }
    }
}

fn finite_differences(tiles: Option<flint::AttentionBwdConfig>, seed: u64) {
    type G = Autodiff<crate::attention_fwd::Gpu>;
    let device = gpu();
    let mut case = Case::new(1, 2, 1, 5, 7, 32);
    case.opts.causal = true;
    case.opts.softcap = Some(3.0);
    case.bias = Some((true, true));
    let x = inputs(&case, seed);
    let run = |q: &[f32], k: &[f32], v: &[f32], bias: &[f32]| -> f64 {
        let t = |vals: &[f32], s| tensor::<G>(vals, s, &device);
        let out = flint::flash_attention_full(
            t(q, [1, 2, 5, 32]),
            t(k, [1, 1, 7, 32]),
            t(v, [1, 1, 7, 32]),
            None,
            Some(t(bias, [1, 2, 5, 7])),
            options(&case.opts, None),
        )
        .out;
        let dout = t(&x.dout, [1, 2, 5, 32]);
        f64::from((out * dout).sum().into_scalar())
    };
    let (dq, dk, dv, dbias) = grads_of::<G>(
        &case,
        &x,
        &device,
        FloatDType::F32,
        |q, k, v, mask, bias| {
            flint::flash_attention_full(q, k, v, mask, bias, options(&case.opts, None)).out
        },
    );
    let dbias = dbias.expect("the bias is tracked");
    let bias0 = x.bias.as_ref().map(|b| b.0.clone()).expect("a bias");
    let step = 1e-2f32;
    let mut checked = 0;
    // (which input, index): spread over every input, including masked-out scores.
    let coords = [
        (0, 0),
        (0, 45),
        (0, 200),
        (1, 3),
        (1, 150),
        (2, 7),
        (2, 190),
        (3, 0),
        (3, 6),
        (3, 40),
        (3, 52),
    ];
    for (which, at) in coords {
        let mut ins = [x.q.clone(), x.k.clone(), x.v.clone(), bias0.clone()];
        ins[which][at] += step;
        let plus = run(&ins[0], &ins[1], &ins[2], &ins[3]);
        ins[which][at] -= 2.0 * step;
        let minus = run(&ins[0], &ins[1], &ins[2], &ins[3]);
        let numeric = (plus - minus) / (2.0 * f64::from(step));
        let analytic = [&dq, &dk, &dv, &dbias][which][at];
        let err = (numeric - analytic).abs();
        assert!(
            err <= 2e-2 * (1.0 + analytic.abs()),
            "tiles {tiles:?}: input {which} index {at}: finite difference {numeric} vs gradient {analytic}"
        );
        checked += 1;
    }
    assert_eq!(checked, coords.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Random shapes and options: the fused backward on lavapipe matches the f64 reference.
    #[test]
    fn random_problems_match_reference_on_gpu(
        b in 1usize..3,
        group in prop::sample::select(vec![1usize, 2]),
        hkv in 1usize..3,
        sq in 1usize..24,
        sk in 1usize..24,
        causal in any::<bool>(),
        softcap in prop::option::of(1.0f64..5.0),
        left in prop::option::of(0usize..8),
        seed in 0u64..1000,
    ) {
        let mut case = Case::new(b, group * hkv, hkv, sq, sk, 32);
        case.opts.causal = causal;
        case.opts.softcap = softcap;
        case.opts.window = (left, None);
        check_bwd::<Autodiff<crate::attention_fwd::Gpu>>(&case, &gpu(), seed);
    }
}

/// Cases sized to cross the tensor-core backward's tiles (64 keys or queries per cube, 32 or
/// 64 per tile) with tails on both sides.
fn half_cases() -> Vec<(&'static str, Case)> {
    let mut v = vec![("plain d64", Case::new(1, 2, 2, 100, 130, 64))];
    let mut c = Case::new(2, 4, 1, 70, 150, 128);
    c.opts.causal = true;
    v.push(("gqa4 causal sq<sk d128", c));
    let mut c = Case::new(1, 8, 2, 150, 70, 64);
    c.opts.causal = true;
    v.push(("gqa4 causal sq>sk (fully masked rows)", c));
    let mut c = Case::new(1, 2, 2, 97, 97, 32);
    c.opts.window = (Some(20), Some(7));
    v.push(("window d32", c));
    let mut c = Case::new(1, 2, 1, 65, 80, 96);
    c.opts.scale = Some(0.3);
    v.push(("scale d96", c));
    let mut c = Case::new(1, 2, 2, 40, 90, 128);
    c.dv = 64;
    v.push(("dv != d", c));
    let mut c = Case::new(1, 2, 2, 70, 80, 64);
    c.opts.softcap = Some(2.0);
    c.bias = Some((true, false));
    c.mask = true;
    v.push(("softcap, mask and bias (dbias)", c));
    let mut c = Case::new(1, 4, 2, 90, 110, 64);
    c.opts.causal = true;
    c.opts.dropout = Some((0.2, 77));
    v.push(("dropout gqa2 causal", c));
    v.push(("single query", Case::new(1, 4, 1, 1, 200, 128)));
    v
}

/// bf16 gradients (and the bias gradient) against the f64 reference, through the selector
/// and through each backward variant forced by a scoped overlay (tensor cores in two tilings,
/// and portable). The baseline is an unfused backward rounding like a framework's
/// half-precision ops. One test per dtype keeps each within a device call's time.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn half_precision_gradients_match_reference_on_gpu() {
    check_half_gradients(&[FloatDType::BF16], half_configs);
}

/// [`half_precision_gradients_match_reference_on_gpu`] in f16.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn half_precision_f16_gradients_match_reference_on_gpu() {
    check_half_gradients(&[FloatDType::F16], half_configs);
}

/// The selector's choice, the portable backward and two tensor-core tilings.
fn half_configs() -> Vec<Option<flint::AttentionBwdConfig>> {
    use flint::{AttentionBwdConfig, Variant};
    let config = AttentionBwdConfig::new;
    vec![
        None,
        Some(config(Variant::Portable, 16, 16)),
        Some(config(Variant::Mma, 64, 64)),
        Some(config(Variant::Mma, 32, 32)),
    ]
}

/// The MMA backward at D = 256 in bf16 against the f64 reference: its dK/dV pass runs as
/// two launches (dV, then dK), whose accumulators together would spill. Partial tiles, GQA
/// with causal masks both ways (rows that see no key), `Dv = 128`, a window, dropout, and
/// softcap with a mask and the bias gradient (which the dK launch writes), each through the
/// selector and forced 64x32 and 32x32 tilings (softcap's derivatives fit only the 32-query
/// tile), and with dQ fused into the dK launch (8 planes, plain and as a grid).
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn head_dim_256_half_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    let mma = |bq, bkv| Some(AttentionBwdConfig::new(Variant::Mma, bq, bkv));
    let mut plain = vec![("plain d256", Case::new(1, 2, 2, 100, 130, 256))];
    let mut c = Case::new(2, 4, 1, 70, 150, 256);
    c.opts.causal = true;
    plain.push(("gqa4 causal sq<sk d256", c));
    let mut c = Case::new(1, 4, 2, 150, 70, 256);
    c.opts.causal = true;
    plain.push(("gqa2 causal sq>sk d256", c));
    let mut c = Case::new(1, 2, 2, 90, 80, 256);
    c.dv = 128;
    c.opts.window = (Some(30), Some(10));
    plain.push(("window, dv 128", c));
    let mut c = Case::new(1, 4, 2, 90, 110, 256);
    c.opts.causal = true;
    c.opts.dropout = Some((0.2, 77));
    plain.push(("dropout gqa2 causal d256", c));
    // The fused dQ rides in the dK launch (sm90's two-element atomics).
    let fused = gpu_limits().atomic_add_f32x2;
    if !fused {
        eprintln!("SKIPPED: the fused dQ at D = 256 (no two-element f32 atomic add, needs sm90+)");
    }
    check_half_gradients_on(&[FloatDType::BF16], plain, || {
        let mut v = vec![None, mma(64, 32), mma(32, 32)];
        if fused {
            let p8 = AttentionBwdConfig::new(Variant::Mma, 32, 32)
                .with_planes(8)
                .with_fused_dq();
            v.extend([Some(p8), Some(p8.with_grid())]);
        }
        v
    });
    let mut c = Case::new(1, 2, 2, 70, 80, 256);
    c.opts.softcap = Some(2.0);
    c.bias = Some((true, false));
    c.mask = true;
    let capped = vec![("softcap, mask and bias (dbias) d256", c)];
    check_half_gradients_on(&[FloatDType::BF16], capped, || vec![None, mma(32, 32)]);
}

/// The cooperative-matrix backward (Vulkan's tensor-core path, run here through CUDA's WMMA
/// from the same kernel definitions) against the f64 reference in bf16, in five
/// tilings: one, two and four planes, 16- to 64-row tiles, and four and eight planes in pairs
/// sharing rows (grid). Every half-precision case runs,
/// masks, GQA, bias and its gradient, softcap and dropout included.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no cooperative matrices (run with --features cuda)"
)]
fn cmma_gradients_match_reference_on_gpu() {
    check_half_gradients(&[FloatDType::BF16], cmma_configs);
}

/// [`cmma_gradients_match_reference_on_gpu`] in f16.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no cooperative matrices (run with --features cuda)"
)]
fn cmma_f16_gradients_match_reference_on_gpu() {
    check_half_gradients(&[FloatDType::F16], cmma_configs);
}

/// The cooperative-matrix tilings the cmma gradient tests force.
fn cmma_configs() -> Vec<Option<flint::AttentionBwdConfig>> {
    use flint::{AttentionBwdConfig, Variant};
    let cmma =
        |planes, bq, bkv| Some(AttentionBwdConfig::new(Variant::Cmma, bq, bkv).with_planes(planes));
    let grid = |planes, bq, bkv| cmma(planes, bq, bkv).map(|c| c.with_grid());
    vec![
        cmma(2, 32, 32),
        cmma(4, 64, 16),
        cmma(1, 16, 64),
        grid(4, 32, 32),
        grid(8, 32, 64),
    ]
}

/// The fused dQ (the dK/dV kernel adding dQ through f32 atomics, several key blocks into the
/// same rows) against the f64 reference, at both query tilings; bf16, the cases the tensor
/// cores run. Devices without two-element f32 atomics refuse the config: skipped there,
/// visibly.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn fused_dq_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().atomic_add_f32x2 {
        eprintln!("SKIPPED: this device has no two-element f32 atomic add (needs sm90+)");
        return;
    }
    check_half_gradients(&[FloatDType::BF16], || {
        let fused = |bq| AttentionBwdConfig::new(Variant::Mma, bq, 64).with_fused_dq();
        vec![
            Some(fused(64)),
            Some(fused(32)),
            Some(fused(64).with_planes(8)),
        ]
    });
}

/// The tensor-core backward on strided views, in bf16: q, k, v and the output's gradient
/// arrive as `[B, S, H, D]` buffers viewed as `[B, H, S, D]` through `swap_dims` (a model's
/// usual head split), so every row and head stride differs from a dense tensor's. Run under
/// the fused dQ with 8 planes and the two-kernel tiling, whose query-side strides reach the
/// kernel as launch scalars rather than tensor metadata.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn strided_half_gradients_on_gpu() {
    use flint::{AttentionBwdConfig, Overlay, Variant, overlay};
    type G = Autodiff<crate::attention_fwd::Gpu>;
    let device = gpu();
    let op = gpu_bwd_op();
    let fused = gpu_limits().atomic_add_f32x2;
    let dtype = FloatDType::BF16;
    let round = |v: f64| burn::tensor::bf16::from_f64(v).to_f64();
    let mut failures = Vec::new();
    let mut causal = Case::new(2, 4, 2, 150, 150, 128);
    causal.opts.causal = true;
    for (name, case) in [
        ("gqa2 sq<sk d128", Case::new(2, 4, 2, 100, 190, 128)),
        ("gqa2 causal d128", causal),
    ] {
        let Case {
            b,
            h,
            hkv,
            sq,
            sk,
            d,
            dv,
            ..
        } = case;
        let x = inputs_in(&case, 13, dtype);
        let dout64 = x.dout64();
        let want = attention_bwd_ref(&x.reference, &case.opts, &dout64);
        let base = attention_bwd_ref_rounded(&x.reference, &case.opts, &dout64, &round);
        // [B, H, S, D] values laid out as [B, S, H, D].
        fn heads_inner<T: Copy>(v: &[T], b: usize, h: usize, s: usize, d: usize) -> Vec<T> {
            let mut out = Vec::with_capacity(v.len());
            for bi in 0..b {
                for si in 0..s {
                    for hi in 0..h {
                        let at = ((bi * h + hi) * s + si) * d;
                        out.extend_from_slice(&v[at..at + d]);
                    }
                }
            }
            out
        }
        let leaf = |v: &[f32], h, s, d| {
            tensor::<G>(&heads_inner(v, b, h, s, d), [b, s, h, d], &device)
                .cast(dtype)
                .require_grad()
        };
        let want_out = attention_ref(&x.reference, &case.opts).0;
        for config in [
            AttentionBwdConfig::new(Variant::Mma, 64, 64)
                .with_fused_dq()
                .with_planes(8),
            AttentionBwdConfig::new(Variant::Mma, 64, 64),
        ] {
            if config.fused_dq && !fused {
                eprintln!("SKIPPED {config:?}: no two-element f32 atomic add (needs sm90+)");
                continue;
            }
            let _guard = overlay(Overlay::new().set(&op, config).strict());
            let (q, k, v) = (
                leaf(&x.q, h, sq, d),
                leaf(&x.k, hkv, sk, d),
                leaf(&x.v, hkv, sk, dv),
            );
            let out = flint::flash_attention_with(
                q.clone().swap_dims(1, 2),
                k.clone().swap_dims(1, 2),
                v.clone().swap_dims(1, 2),
                options(&case.opts, None),
            );
            let w = tensor::<G>(&heads_inner(&x.dout, b, h, sq, dv), [b, sq, h, dv], &device)
                .cast(dtype);
            let out_err = max_err(&to_f64(out.clone()), &want_out);
            let out_magnitude = want_out.iter().fold(1.0f64, |m, w| m.max(w.abs()));
            if out_err > 2e-2 * out_magnitude {
                failures.push(format!(
                    "{name} {config:?}: forward output error {out_err:e} (magnitude {out_magnitude:e})"
                ));
            }
            let grads = (out.swap_dims(1, 2) * w).sum().backward();
            let got = |t: &Tensor<G, 4>| to_f64(t.grad(&grads).expect("a gradient"));
            for (gname, got, want, base) in [
                (
                    "dq",
                    got(&q),
                    heads_inner(&want.dq, b, h, sq, d),
                    heads_inner(&base.dq, b, h, sq, d),
                ),
                (
                    "dk",
                    got(&k),
                    heads_inner(&want.dk, b, hkv, sk, d),
                    heads_inner(&base.dk, b, hkv, sk, d),
                ),
                (
                    "dv",
                    got(&v),
                    heads_inner(&want.dv, b, hkv, sk, dv),
                    heads_inner(&base.dv, b, hkv, sk, dv),
                ),
            ] {
                let magnitude = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
                let tol = 2.0 * max_err(&base, &want) + 2e-3 * magnitude;
                let err = max_err(&got, &want);
                if err > tol {
                    failures.push(format!(
                        "{name} {config:?}: {gname} error {err:e} > {tol:e} (magnitude {magnitude:e})"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The tensor-core backward with 8 planes per cube (128 keys per dK/dV cube, 128 queries per
/// dQ cube) against the f64 reference in bf16, at both query tilings.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn eight_plane_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    check_half_gradients(&[FloatDType::BF16], || {
        [(64, 64), (32, 32)]
            .map(|(bq, bkv)| Some(AttentionBwdConfig::new(Variant::Mma, bq, bkv).with_planes(8)))
            .to_vec()
    });
}

/// The dK/dV kernel's planes as a grid (Pᵀ and dSᵀ through shared memory) against the f64
/// reference in bf16: with the fused dQ in 128-key cubes (sm90+), two-kernel in 128-key
/// cubes, and two-kernel in 64-key cubes with 32-query tiles (16 queries per plane), on
/// every half-precision case (the grid halves D = 96 into 48-column steps).
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn grid_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    let fused = gpu_limits().atomic_add_f32x2;
    if !fused {
        eprintln!("SKIPPED: the fused grid (no two-element f32 atomic add, needs sm90+)");
    }
    check_half_gradients(&[FloatDType::BF16], || {
        let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
        let mut v = vec![
            Some(mma(64, 32).with_planes(8).with_grid()),
            Some(mma(32, 32).with_grid()),
        ];
        if fused {
            v.insert(
                0,
                Some(mma(64, 64).with_planes(8).with_fused_dq().with_grid()),
            );
        }
        v
    });
}

/// The fused grid with 128-query tiles (FlashAttention-2's 128x128 tiling, D and Dv up to 64)
/// against the f64 reference in bf16, on every half-precision case it accepts: one or two
/// partial query tiles, GQA, causal with fully masked rows, a window at D = 32, bias with its
/// gradient, a mask and dropout.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn tall_grid_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().atomic_add_f32x2 {
        eprintln!("SKIPPED: the fused grid (no two-element f32 atomic add, needs sm90+)");
        return;
    }
    let tall = AttentionBwdConfig::new(Variant::Mma, 128, 64)
        .with_planes(8)
        .with_fused_dq()
        .with_grid();
    // Softcap's derivatives beside 128 scores per lane would spill: the op refuses it.
    let cases: Vec<_> = half_cases()
        .into_iter()
        .filter(|(_, c)| c.d <= 64 && c.dv <= 64 && c.opts.softcap.is_none())
        .collect();
    assert!(cases.len() >= 4, "{} cases", cases.len());
    check_half_gradients_on(&[FloatDType::BF16], cases, || vec![Some(tall)]);
}

/// The warpgroup-MMA backward (two TMA-fed kernels, sm_90) against the f64 reference in bf16
/// and f16: partial query and key tiles, GQA with causal masks (`Sq < Sk`, and `Sq > Sk` with
/// rows that see no key), a causal grid of two head groups, a window with both bounds,
/// `Dv != D`, and cubes of both persistent kernels that walk several blocks.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().wgmma {
        eprintln!("SKIPPED wgmma_gradients_match_reference_on_gpu: no warpgroup MMA (sm_90)");
        return;
    }
    let cases = wgmma_cases();
    let wgmma = AttentionBwdConfig::new(Variant::Wgmma, 128, 128);
    check_half_gradients_on(&[FloatDType::BF16, FloatDType::F16], cases, || {
        vec![Some(wgmma)]
    });
}

/// The warpgroup-MMA backward with dQ fused into the dK/dV kernel: dQ is added into an f32
/// accumulator by atomics from every key block's warpgroups, so partial blocks, GQA (several
/// query heads adding into their rows from one cube), rows with no key, windows and several
/// head groups each get a case, at both head dims.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_fused_dq_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().wgmma {
        eprintln!(
            "SKIPPED wgmma_fused_dq_gradients_match_reference_on_gpu: no warpgroup MMA (sm_90)"
        );
        return;
    }
    let cases = wgmma_cases();
    let fused = AttentionBwdConfig::new(Variant::Wgmma, 128, 128).with_fused_dq();
    check_half_gradients_on(&[FloatDType::BF16, FloatDType::F16], cases, || {
        vec![Some(fused)]
    });
}

/// The warpgroup backward at D = 96, which runs padded to 128 (TMA fills the extra columns
/// with zeros and clips them from its stores; the plain stores of key blocks no query sees
/// leave them out), in bf16 and f16: partial blocks, GQA under a causal mask, `Dv = 128`
/// beside `D = 96` and the reverse, cubes of the persistent dK/dV kernel walking several key
/// blocks, and a window whose first key blocks see no query.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_padded_head_dim_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().wgmma {
        eprintln!(
            "SKIPPED wgmma_padded_head_dim_gradients_match_reference_on_gpu: no warpgroup MMA \
             (sm_90)"
        );
        return;
    }
    let mut cases = vec![("plain d96 s300", Case::new(1, 2, 2, 300, 260, 96))];
    let mut c = Case::new(1, 8, 2, 200, 333, 96);
    c.opts.causal = true;
    cases.push(("gqa4 causal sq<sk d96", c));
    let mut c = Case::new(1, 2, 2, 260, 190, 96);
    c.dv = 128;
    cases.push(("d96 dv128", c));
    let mut c = Case::new(1, 2, 1, 190, 260, 128);
    c.dv = 96;
    c.opts.causal = true;
    cases.push(("d128 dv96 causal", c));
    cases.push((
        "gqa2 sq<sk, several key blocks a cube d96",
        Case::new(8, 8, 4, 200, 1100, 96),
    ));
    let mut c = Case::new(8, 4, 4, 200, 1100, 96);
    c.opts.window = (Some(100), Some(50));
    cases.push(("window, key blocks no query sees d96", c));
    let wgmma = AttentionBwdConfig::new(Variant::Wgmma, 128, 128);
    check_half_gradients_on(&[FloatDType::BF16, FloatDType::F16], cases, || {
        vec![Some(wgmma)]
    });
}

/// The warpgroup backward at D = 256, its dK/dV pass split in two launches of two
/// warpgroups (dV with K alone resident, then dK with dQ fused, summed over the cube's keys
/// a half of D a warpgroup), in
/// bf16 and f16: partial blocks, GQA under causal masks both ways (rows that see no key),
/// `Dv = 128` and `D = 128` or 64 beside 256, a window whose first key blocks see no query,
/// and many key blocks adding into the same dQ rows.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_head_dim_256_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().wgmma {
        eprintln!(
            "SKIPPED wgmma_head_dim_256_gradients_match_reference_on_gpu: no warpgroup MMA \
             (sm_90)"
        );
        return;
    }
    let mut cases = head_dim_cases(256);
    let mut c = Case::new(1, 2, 2, 260, 190, 256);
    c.dv = 128;
    cases.push(("d256 dv128", c));
    let mut c = Case::new(1, 2, 1, 190, 260, 128);
    c.dv = 256;
    c.opts.causal = true;
    cases.push(("d128 dv256 causal", c));
    let mut c = Case::new(1, 2, 2, 150, 270, 64);
    c.dv = 256;
    cases.push(("d64 dv256 (each warpgroup's own keys)", c));
    let split = AttentionBwdConfig::new(Variant::Wgmma, 128, 128).with_fused_dq();
    check_half_gradients_on(&[FloatDType::BF16, FloatDType::F16], cases, || {
        vec![Some(split)]
    });
}

/// The warpgroup backward at D = 32, in 64-byte swizzled rows (TMA's `SWIZZLE_64B`, 32-column
/// boxes, the matching descriptors and `ldmatrix`/`stmatrix` addresses), both as two kernels
/// and with dQ fused, bf16 and f16 against the f64 reference: partial blocks, GQA with causal
/// masks both ways (rows that see no key), a window whose first key blocks see no query,
/// D = 32 beside Dv = 64 and the reverse (each tensor's tiles at their own width), and many
/// key blocks into the same dQ rows.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_head_dim_32_gradients_match_reference_on_gpu() {
    use flint::{AttentionBwdConfig, Variant};
    if !gpu_limits().wgmma {
        eprintln!(
            "SKIPPED wgmma_head_dim_32_gradients_match_reference_on_gpu: no warpgroup MMA \
             (sm_90)"
        );
        return;
    }
    let mut cases = head_dim_cases(32);
    let mut c = Case::new(1, 2, 2, 260, 190, 32);
    c.dv = 64;
    cases.push(("d32 dv64", c));
    let mut c = Case::new(1, 2, 1, 190, 260, 64);
    c.dv = 32;
    c.opts.causal = true;
    cases.push(("d64 dv32 causal", c));
    let wgmma = AttentionBwdConfig::new(Variant::Wgmma, 128, 128);
    check_half_gradients_on(&[FloatDType::BF16, FloatDType::F16], cases, || {
        vec![Some(wgmma), Some(wgmma.with_fused_dq())]
    });
}

/// The cases every head dim of its own gets (D = Dv = `d`; the test's name says which):
/// partial blocks, GQA under causal masks both ways (rows that see no key), a window whose
/// first key blocks see no query, and 1100 keys adding into the same dQ rows.
fn head_dim_cases(d: usize) -> Vec<(&'static str, Case)> {
    let mut cases = vec![("plain s300", Case::new(1, 2, 2, 300, 260, d))];
    let mut c = Case::new(1, 8, 2, 200, 333, d);
    c.opts.causal = true;
    cases.push(("gqa4 causal sq<sk", c));
    let mut c = Case::new(1, 4, 2, 330, 150, d);
    c.opts.causal = true;
    cases.push(("gqa2 causal sq>sk (rows with no key)", c));
    let mut c = Case::new(2, 4, 4, 200, 900, d);
    c.opts.window = (Some(100), Some(50));
    cases.push(("window, key blocks no query sees", c));
    cases.push(("many key blocks into dQ", Case::new(1, 2, 2, 140, 1100, d)));
    cases
}

/// The warpgroup backward's cases, at both of its head dims: partial blocks, GQA with causal
/// masks both ways (`Sq < Sk`, and `Sq > Sk` with rows that see no key), two head groups of a
/// causal grid, a window with both bounds, `Dv` below `D`, and cubes of either persistent
/// kernel that walk several blocks (key blocks that no query sees among them).
fn wgmma_cases() -> Vec<(&'static str, Case)> {
    let mut cases = vec![("plain d128 s300", Case::new(1, 2, 2, 300, 300, 128))];
    let mut c = Case::new(1, 8, 2, 200, 333, 128);
    c.opts.causal = true;
    cases.push(("gqa4 causal sq<sk d128", c));
    let mut c = Case::new(1, 2, 1, 400, 150, 64);
    c.opts.causal = true;
    cases.push(("gqa2 causal sq>sk (rows with no key) d64", c));
    // 64 heads in 4 blocks: a 132-SM grid launches them in two groups of 32 (both kernels).
    let mut c = Case::new(8, 8, 8, 512, 512, 64);
    c.opts.causal = true;
    cases.push(("causal, two head groups d64", c));
    let mut c = Case::new(1, 2, 2, 600, 550, 64);
    c.opts.window = (Some(150), Some(40));
    cases.push(("window left 150 right 40 d64", c));
    let mut c = Case::new(1, 2, 2, 260, 190, 128);
    c.dv = 64;
    cases.push(("dv 64 d128", c));
    // 320 query blocks, 192 causal pairs: on a 132-SM grid the persistent dQ kernel's cubes
    // walk two or three blocks (its Q buffers reused), or one or two pairs, among them blocks
    // whose rows see no key.
    cases.push((
        "gqa4 sq>sk, several blocks a cube d64",
        Case::new(4, 16, 4, 640, 384, 64),
    ));
    let mut c = Case::new(4, 16, 4, 640, 384, 64);
    c.opts.causal = true;
    cases.push(("gqa4 causal sq>sk, several pairs a cube d64", c));
    // 9 key blocks (the last partial) of 32 KV heads: 288 blocks, so the persistent dK/dV
    // kernel's cubes (D = 128, no causal mask) walk two or three blocks (its K/V buffers
    // reused); under a causal mask a cube per key block.
    cases.push((
        "gqa2 sq<sk, several key blocks a cube d128",
        Case::new(8, 8, 4, 200, 1100, 128),
    ));
    let mut c = Case::new(8, 8, 4, 200, 1100, 128);
    c.opts.causal = true;
    cases.push(("gqa2 causal sq<sk, 9 key blocks d128", c));
    // Keys before 800 are seen by no query: the first 6 of each head's 9 key blocks get zero
    // gradients without a buffer, between blocks that use one.
    let mut c = Case::new(8, 4, 4, 200, 1100, 128);
    c.opts.window = (Some(100), Some(50));
    cases.push(("window, key blocks no query sees, several a cube d128", c));
    cases
}

/// Runs every half-precision case in each of `dtypes` under each config `forced` gives
/// (`None`: the selector's choice) and checks dQ, dK, dV and the bias gradient against the
/// f64 reference, with a tolerance of twice an unfused backward's error in the same
/// precision.
fn check_half_gradients(
    dtypes: &[FloatDType],
    forced: impl Fn() -> Vec<Option<flint::AttentionBwdConfig>>,
) {
    check_half_gradients_on(dtypes, half_cases(), forced);
}

/// [`check_half_gradients`] on the named `cases`.
fn check_half_gradients_on(
    dtypes: &[FloatDType],
    cases: Vec<(&'static str, Case)>,
    forced: impl Fn() -> Vec<Option<flint::AttentionBwdConfig>>,
) {
    use flint::{Overlay, overlay};
    type G = Autodiff<crate::attention_fwd::Gpu>;
    let device = gpu();
    let op = gpu_bwd_op();
    let started = std::time::Instant::now();
    for &dtype in dtypes {
        let round = move |v: f64| match dtype {
            FloatDType::BF16 => burn::tensor::bf16::from_f64(v).to_f64(),
            _ => burn::tensor::f16::from_f64(v).to_f64(),
        };
        for (name, case) in &cases {
            let (name, case) = (*name, case.clone());
            // Inputs of its own for each forced config: a kernel that leaves part of a
            // gradient unwritten cannot then pass on the values of the config before it, which
            // a reused allocation may still hold.
            for (i, c) in forced().into_iter().enumerate() {
                let x = inputs_in(&case, 9 + i as u64, dtype);
                let dout64 = x.dout64();
                let want = attention_bwd_ref(&x.reference, &case.opts, &dout64);
                let base = attention_bwd_ref_rounded(&x.reference, &case.opts, &dout64, &round);
                let dbias = |g: &RefGrads| {
                    x.bias
                        .as_ref()
                        .map_or(Vec::new(), |(_, shape)| reduce_dbias(g, &case, *shape))
                };
                let (want_dbias, base_dbias) = (dbias(&want), dbias(&base));
                eprintln!("{dtype:?} {name} {c:?} at {:?}", started.elapsed());
                // Strict: a forced config the op refused would otherwise fall through to the
                // selector's choice and be tested under the forced config's name.
                let _guard = c.map(|c| overlay(Overlay::new().set(&op, c).strict()));
                let got = grads_of::<G>(&case, &x, &device, dtype, |q, k, v, mask, bias| {
                    flint::try_flash_attention_full(q, k, v, mask, bias, options(&case.opts, None))
                        .unwrap_or_else(|e| panic!("{case:?}: {e}"))
                        .out
                });
                assert_eq!(got.3.is_some(), x.bias.is_some(), "{name}: a bias gradient");
                let no_bias = Vec::new();
                for (gname, got, want, base) in [
                    ("dq", &got.0, &want.dq, &base.dq),
                    ("dk", &got.1, &want.dk, &base.dk),
                    ("dv", &got.2, &want.dv, &base.dv),
                    (
                        "dbias",
                        got.3.as_ref().unwrap_or(&no_bias),
                        &want_dbias,
                        &base_dbias,
                    ),
                ] {
                    let magnitude = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
                    let tol = 2.0 * max_err(base, want) + 2e-3 * magnitude;
                    let err = max_err(got, want);
                    assert!(
                        err <= tol,
                        "{dtype:?} {name} {c:?}: {gname} error {err:e} > {tol:e} (magnitude {magnitude:e})"
                    );
                }
            }
        }
    }
}

/// The bias gradient straight from each layer of the GPU backend, without autodiff: the
/// CubeCL backend itself and Burn's fusion type over it.
#[test]
fn bias_gradient_matches_reference_at_every_layer_on_gpu() {
    #[cfg(feature = "cuda")]
    type Inner = burn_cubecl::CubeBackend<cubecl::cuda::CudaRuntime, f32, i32, u8>;
    #[cfg(not(feature = "cuda"))]
    type Inner = burn_cubecl::CubeBackend<cubecl::wgpu::WgpuRuntime, f32, i32, u32>;
    let mut case = Case::new(2, 2, 1, 5, 7, 32);
    case.opts.causal = true;
    case.bias = Some((false, true));
    let x = inputs(&case, 41);
    let dout64 = x.dout64();
    let want = attention_bwd_ref(&x.reference, &case.opts, &dout64);
    let (_, shape) = x.bias.clone().expect("a bias");
    let want_dbias = reduce_dbias(&want, &case, shape);
    let inner = layer_dbias::<Inner>(&case, &x);
    let fused = layer_dbias::<crate::attention_fwd::Gpu>(&case, &x);
    for (name, got) in [("cube", inner), ("fusion", fused)] {
        let err = max_err(&got, &want_dbias);
        assert!(
            err <= 1e-4,
            "{name}: dbias error {err:e}: got {got:?}, want {want_dbias:?}"
        );
    }
}

fn layer_dbias<B: FlashAttentionBackend>(case: &Case, x: &Inputs) -> Vec<f64> {
    use burn::tensor::TensorPrimitive;
    let device: B::Device = Default::default();
    let Case {
        b,
        h,
        hkv,
        sq,
        sk,
        d,
        dv,
        ..
    } = *case;
    let (values, shape) = x.bias.clone().expect("a bias");
    let q = tensor::<B>(&x.q, [b, h, sq, d], &device);
    let k = tensor::<B>(&x.k, [b, hkv, sk, d], &device);
    let v = tensor::<B>(&x.v, [b, hkv, sk, dv], &device);
    let bias = tensor::<B>(&values, shape, &device);
    let dout = tensor::<B>(&x.dout, [b, h, sq, dv], &device);
    let fwd = flint::try_flash_attention_full(
        q.clone(),
        k.clone(),
        v.clone(),
        None,
        Some(bias.clone()),
        options(&case.opts, None),
    )
    .expect("the forward");
    let problem = flint::kernels::attention::AttentionProblem {
        batch: b,
        heads: h,
        kv_heads: hkv,
        seq_q: sq,
        seq_kv: sk,
        head_dim: d,
        val_dim: dv,
        dtype: "f32",
        scale: 1.0 / (d as f64).sqrt(),
        softcap: None,
        window: (None, Some(0)),
        has_bias: true,
        dropout: None,
    };
    let prim = |t: Tensor<B, 4>| t.into_primitive().tensor();
    let grads = B::flash_attention_bwd(
        flint::AttentionBwdInputs {
            q: prim(q),
            k: prim(k),
            v: prim(v),
            out: prim(fwd.out),
            lse: fwd.lse.into_primitive().tensor(),
            dout: prim(dout),
            bias: Some(prim(bias)),
        },
        &problem,
        true,
        None,
    )
    .expect("the backward");
    let dbias = grads.dbias.expect("a bias gradient");
    to_f64(Tensor::<B, 4>::from_primitive(TensorPrimitive::Float(
        dbias,
    )))
}

/// The node works under a checkpointing strategy, and only inputs that require a gradient
/// get one (here q alone, with the reference's value), mixed with Burn's own ops around it.
#[test]
fn checkpointing_and_untracked_inputs() {
    use burn::backend::autodiff::checkpoint::strategy::BalancedCheckpointing;
    type C = Autodiff<NdArray, BalancedCheckpointing>;
    let mut case = Case::new(1, 4, 2, 9, 12, 32);
    case.opts.causal = true;
    check_bwd::<C>(&case, &Default::default(), 5);

    type A = Autodiff<NdArray>;
    let device = Default::default();
    let x = inputs(&case, 6);
    let Case {
        b,
        h,
        hkv,
        sq,
        sk,
        d,
        dv,
        ..
    } = case;
    let q = tensor::<A>(&x.q, [b, h, sq, d], &device).require_grad();
    let k = tensor::<A>(&x.k, [b, hkv, sk, d], &device);
    let v = tensor::<A>(&x.v, [b, hkv, sk, dv], &device);
    let dout = tensor::<A>(&x.dout, [b, h, sq, dv], &device);
    // q goes through a Burn op first (x2), so the gradient must flow back through it too.
    let out = flint::flash_attention_with(
        q.clone() * 2.0,
        k.clone(),
        v.clone(),
        options(&case.opts, None),
    );
    let grads = (out * dout).sum().backward();
    assert!(k.grad(&grads).is_none() && v.grad(&grads).is_none());
    let got = to_f64(q.grad(&grads).expect("q requires a gradient"));
    let mut doubled = x.reference.clone();
    doubled.q.iter_mut().for_each(|v| *v *= 2.0);
    let dout64 = x.dout64();
    let want: Vec<f64> = attention_bwd_ref(&doubled, &case.opts, &dout64)
        .dq
        .iter()
        .map(|g| 2.0 * g)
        .collect();
    let err = max_err(&got, &want);
    assert!(err < 1e-4, "dq through x2 and flint: error {err:e}");
}
