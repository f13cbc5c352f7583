//! Attention forward against the f64 reference, on NdArray (reference composition) and on
//! wgpu over lavapipe (the portable CubeCL kernel, through Burn's default fusion type).
//!
//! Tolerance is the FlashAttention-2 criterion: flint's error against the f64 reference may
//! be at most twice Burn's own `attention_fallback` error in the same dtype, plus a small
//! epsilon. Where Burn cannot express a feature (window, dropout), a fixed f32 bound is used.

use burn::backend::NdArray;
use burn::tensor::FloatDType;
use burn::tensor::backend::Backend;
use burn::tensor::module::attention_fallback;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, Tensor, TensorData};
use flint::{AttentionFwdConfig, AttentionOptions, FlashAttentionBackend};
use flint_tests::random_f32;
use flint_tests::reference::{RefInputs, RefOptions, attention_ref, attention_ref_rounded};

/// One attention problem.
#[derive(Clone, Debug)]
pub struct Case {
    pub b: usize,
    pub h: usize,
    pub hkv: usize,
    pub sq: usize,
    pub sk: usize,
    pub d: usize,
    pub dv: usize,
    pub opts: RefOptions,
    /// Bias over `[B or 1, H or 1, Sq, Sk]`: `(per batch, per head)`.
    pub bias: Option<(bool, bool)>,
    /// A bool mask over `[B, 1, Sq, Sk]`, with row 0 of batch 0 fully masked.
    pub mask: bool,
}

impl Case {
    pub fn new(b: usize, h: usize, hkv: usize, sq: usize, sk: usize, d: usize) -> Self {
        Self {
            b,
            h,
            hkv,
            sq,
            sk,
            d,
            dv: d,
            opts: RefOptions::default(),
            bias: None,
            mask: false,
        }
    }
}

pub(crate) fn options(o: &RefOptions, config: Option<AttentionFwdConfig>) -> AttentionOptions {
    let mut a = AttentionOptions::new()
        .with_causal(o.causal)
        .window(o.window.0, o.window.1);
    if let Some(s) = o.scale {
        a = a.scale(s);
    }
    if let Some(c) = o.softcap {
        a = a.softcap(c);
    }
    if let Some((p, seed)) = o.dropout {
        a = a.dropout(p, seed);
    }
    if let Some(c) = config {
        a = a.config(c);
    }
    a
}

pub(crate) fn tensor<B: Backend>(
    values: &[f32],
    shape: [usize; 4],
    device: &B::Device,
) -> Tensor<B, 4> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), device)
}

pub(crate) fn to_f64<B: Backend, const N: usize>(t: Tensor<B, N>) -> Vec<f64> {
    t.into_data()
        .convert::<f32>()
        .to_vec::<f32>()
        .expect("f32 data")
        .into_iter()
        .map(f64::from)
        .collect()
}

pub(crate) fn max_err(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            if g.is_nan() || w.is_nan() {
                if g.is_nan() && w.is_nan() {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else if w.is_infinite() || g.is_infinite() {
                if g == w { 0.0 } else { f64::INFINITY }
            } else {
                (g - w).abs()
            }
        })
        .fold(0.0, f64::max)
}

/// Runs `case` on backend `B` in f32 and checks output and LSE against the f64 reference.
pub fn check<B: FlashAttentionBackend>(case: &Case, device: &B::Device, seed: u64) {
    check_in::<B>(case, device, seed, FloatDType::F32, &[None]);
}

/// Burn's `attention_fallback` on `[B, H, S, D]` tensors (k and v expanded over each query-head
/// group), or `None` where it cannot express the case (window, dropout).
fn burn_fallback<BB: Backend>(
    case: &Case,
    q: Tensor<BB, 4>,
    k: Tensor<BB, 4>,
    v: Tensor<BB, 4>,
    mask: Option<Tensor<BB, 4, Bool>>,
    bias: Option<Tensor<BB, 4>>,
) -> Option<Vec<f64>> {
    if case.opts.window != (None, None) || case.opts.dropout.is_some() {
        return None;
    }
    let Case {
        b, h, hkv, sq, sk, ..
    } = *case;
    let group = h / hkv;
    let expand = |t: Tensor<BB, 4>| {
        let dd = t.dims()[3];
        t.unsqueeze_dim::<5>(2)
            .expand([b, hkv, group, sk, dd])
            .reshape([b, h, sk, dd])
    };
    let out = attention_fallback(
        q,
        expand(k),
        expand(v),
        mask.map(|m| m.expand([b, h, sq, sk])),
        bias.map(|x| x.expand([b, h, sq, sk])),
        AttentionModuleOptions {
            scale: case.opts.scale,
            softcap: case.opts.softcap,
            is_causal: case.opts.causal,
        },
    );
    Some(to_f64(out))
}

/// Runs `case` on backend `B` with inputs in `dtype`, once per entry of `configs` (`None`: the
/// selector's choice), and checks output and LSE against the f64 reference on the same
/// (rounded) inputs. The tolerance is twice a baseline's error: Burn's fallback for f32 (on
/// NdArray: on lavapipe its matmuls would autotune for minutes), an unfused attention with
/// half-precision rounding otherwise.
pub fn check_in<B: FlashAttentionBackend>(
    case: &Case,
    device: &B::Device,
    seed: u64,
    dtype: FloatDType,
    configs: &[Option<AttentionFwdConfig>],
) {
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
    let input = |values: &[f32], shape: [usize; 4]| tensor::<B>(values, shape, device).cast(dtype);
    let rounded = |t: &Tensor<B, 4>| -> Vec<f32> {
        t.clone()
            .into_data()
            .convert::<f32>()
            .to_vec::<f32>()
            .expect("f32 data")
    };
    let qt = input(&random_f32(b * h * sq * d, seed), [b, h, sq, d]);
    let kt = input(&random_f32(b * hkv * sk * d, seed + 1), [b, hkv, sk, d]);
    let vt = input(&random_f32(b * hkv * sk * dv, seed + 2), [b, hkv, sk, dv]);
    let (q, k, v) = (rounded(&qt), rounded(&kt), rounded(&vt));
    let bias_shape = case
        .bias
        .map(|(pb, ph)| [if pb { b } else { 1 }, if ph { h } else { 1 }, sq, sk]);
    let bias_t = bias_shape.map(|s| input(&random_f32(s.iter().product(), seed + 3), s));
    let bias = bias_t.as_ref().map(rounded);
    let mask: Option<Vec<bool>> = case.mask.then(|| {
        let r = random_f32(b * sq * sk, seed + 4);
        (0..b * sq * sk)
            .map(|i| r[i] > 1.0 || (i / sk == 0)) // ~25% masked, and row 0 of batch 0 fully
            .collect()
    });

    // The reference sees bias and mask broadcast to [B, H, Sq, Sk].
    let inputs = RefInputs::from_f32(
        (&q, &k, &v),
        (b, h, hkv, sq, sk, d, dv),
        bias.as_deref().zip(bias_shape),
        mask.as_deref(),
    );
    let (want_out, want_lse) = attention_ref(&inputs, &case.opts);

    let mask_t = |dev: &B::Device| {
        mask.as_ref().map(|m| {
            Tensor::<B, 4, Bool>::from_data(TensorData::new(m.clone(), [b, 1, sq, sk]), dev)
        })
    };
    // The baseline: Burn's fallback in f32 (where it can express the case), or an unfused
    // attention rounding like a framework's half-precision matmuls and softmax.
    let baseline = if dtype == FloatDType::F32 {
        let dev = Default::default();
        let nd = |x: &[f32], s: [usize; 4]| tensor::<NdArray>(x, s, &dev);
        burn_fallback::<NdArray>(
            case,
            nd(&q, [b, h, sq, d]),
            nd(&k, [b, hkv, sk, d]),
            nd(&v, [b, hkv, sk, dv]),
            mask.as_ref().map(|m| {
                Tensor::<NdArray, 4, Bool>::from_data(
                    TensorData::new(m.clone(), [b, 1, sq, sk]),
                    &dev,
                )
            }),
            bias.as_ref().zip(bias_shape).map(|(x, s)| nd(x, s)),
        )
    } else {
        let round = |v: f64| match dtype {
            FloatDType::BF16 => burn::tensor::bf16::from_f64(v).to_f64(),
            _ => burn::tensor::f16::from_f64(v).to_f64(),
        };
        Some(attention_ref_rounded(&inputs, &case.opts, &round).0)
    };
    let burn_err = baseline.map(|o| max_err(&o, &want_out));
    let (eps, fixed, lse_tol) = if dtype == FloatDType::F32 {
        (2e-5, 1e-4, 1e-4)
    } else {
        (1e-3, 2e-2, 1e-3)
    };
    let tol = burn_err.map_or(fixed, |e| 2.0 * e + eps);
    // Every config's outputs stay alive until all have run, so that the pool never hands a
    // config buffers still holding an earlier config's correct output: a kernel that left
    // rows unwritten would pass on them.
    let mut kept = Vec::with_capacity(configs.len());
    for config in configs {
        let got = flint::try_flash_attention_full(
            qt.clone(),
            kt.clone(),
            vt.clone(),
            mask_t(device),
            bias_t.clone(),
            options(&case.opts, *config),
        )
        .unwrap_or_else(|e| panic!("{case:?} {config:?}: {e}"));
        let out_err = max_err(&to_f64(got.out.clone()), &want_out);
        assert!(
            out_err <= tol,
            "{case:?} {dtype:?} {config:?}: output error {out_err:e} > {tol:e} (Burn's fallback: {burn_err:?})"
        );
        let lse_err = max_err(&to_f64(got.lse.clone()), &want_lse);
        assert!(
            lse_err <= lse_tol,
            "{case:?} {dtype:?} {config:?}: LSE error {lse_err:e}"
        );
        kept.push(got);
    }
}

/// The GPU backend under test: CUDA when built with `--features cuda` (on the GPU
/// machine), else wgpu over lavapipe.
#[cfg(feature = "cuda")]
pub(crate) type Gpu = burn::backend::Cuda;
#[cfg(not(feature = "cuda"))]
pub(crate) type Gpu = burn::backend::Wgpu;

#[cfg(feature = "cuda")]
pub(crate) fn gpu() -> burn::backend::cuda::CudaDevice {
    burn::backend::cuda::CudaDevice::default()
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn gpu() -> burn::backend::wgpu::WgpuDevice {
    let _ = flint_tests::lavapipe(); // a clear message if the software device is missing
    burn::backend::wgpu::WgpuDevice::Cpu
}

fn cases() -> Vec<(&'static str, Case)> {
    let mut v = vec![("plain", Case::new(1, 2, 2, 17, 17, 32))];
    let mut gqa4 = Case::new(2, 4, 1, 9, 33, 64);
    gqa4.opts.causal = true;
    v.push(("gqa4 causal sq<sk", gqa4));
    let mut gqa8 = Case::new(1, 8, 1, 40, 24, 32);
    gqa8.opts.causal = true;
    v.push(("gqa8 causal sq>sk (fully masked rows)", gqa8));
    let mut w = Case::new(1, 2, 2, 37, 37, 64);
    w.opts.window = (Some(5), Some(3));
    v.push(("window", w));
    let mut sc = Case::new(1, 2, 2, 20, 31, 96);
    sc.opts.softcap = Some(2.0);
    sc.opts.scale = Some(0.3);
    v.push(("softcap scale d96", sc));
    let mut mb = Case::new(2, 2, 1, 16, 21, 32);
    mb.bias = Some((false, true));
    mb.mask = true;
    v.push(("mask and head-broadcast bias", mb));
    let mut dv = Case::new(1, 2, 2, 8, 40, 128);
    dv.dv = 64;
    v.push(("dv != d, d128", dv));
    let mut dr = Case::new(1, 2, 2, 19, 23, 32);
    dr.opts.dropout = Some((0.2, 1234));
    v.push(("dropout", dr));
    v.push(("single query", Case::new(1, 2, 2, 1, 50, 64)));
    v.push(("single key", Case::new(1, 2, 2, 5, 1, 32)));
    v
}

#[test]
fn matches_reference_on_ndarray() {
    for (name, case) in cases() {
        eprintln!("ndarray: {name}");
        check::<NdArray>(&case, &Default::default(), 11);
    }
}

#[test]
fn matches_reference_on_gpu() {
    let started = std::time::Instant::now();
    let device = gpu();
    for (name, case) in cases() {
        eprintln!("gpu: {name} at {:?}", started.elapsed());
        check::<Gpu>(&case, &device, 11);
    }
}

/// The portable forward with its output accumulator in registers, forced at tilings from
/// 128x64 to 16x16 on every f32 case (the selector takes it for f32 on CUDA and ROCm).
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: on wgpu the portable accumulator stays in shared memory (run with \
              --features cuda)"
)]
fn register_accumulator_matches_reference_on_gpu() {
    use flint::Variant;
    let device = gpu();
    let config = |block_q, block_kv| {
        Some(AttentionFwdConfig::new(Variant::Portable, block_q, block_kv).with_registers())
    };
    let configs = [
        config(128, 64),
        config(64, 32),
        config(32, 16),
        config(16, 16),
    ];
    for (name, case) in cases() {
        eprintln!("registers: {name}");
        check_in::<Gpu>(&case, &device, 11, FloatDType::F32, &configs);
    }
}

/// The portable forward's sliced form (Q and K staged 32 columns at a time, V a chunk of
/// keys at a time), forced on every f32 case and on longer ones that walk several tiles and
/// chunks at D = 128 and 256 (the form the selector takes where whole rows do not fit, as
/// in Vulkan's 48 KiB).
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: on wgpu the portable kernels keep no arrays across barriers here \
              (run with --features cuda)"
)]
fn sliced_form_matches_reference_on_gpu() {
    use flint::Variant;
    let device = gpu();
    let sliced = |block_q, block_kv| {
        Some(AttentionFwdConfig::new(Variant::Portable, block_q, block_kv).with_slices())
    };
    let configs = [sliced(128, 32), sliced(64, 64), sliced(32, 16)];
    let mut all = cases();
    let mut c = Case::new(1, 2, 1, 150, 200, 128);
    c.opts.causal = true;
    all.push(("long causal gqa2 d128", c));
    let mut c = Case::new(1, 1, 1, 70, 90, 256);
    c.dv = 128;
    all.push(("d256 dv128", c));
    for (name, case) in all {
        eprintln!("sliced: {name}");
        check_in::<Gpu>(&case, &device, 11, FloatDType::F32, &configs);
    }
}

#[test]
fn head_dim_256_on_gpu() {
    check::<Gpu>(&Case::new(1, 1, 1, 12, 12, 256), &gpu(), 5);
}

/// Cases sized to cross the tensor-core variant's tiles (64 or 128 query rows, 32 or 64 keys)
/// with tails on both sides.
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
    c.opts.softcap = Some(2.0);
    c.opts.scale = Some(0.3);
    c.bias = Some((true, false));
    v.push(("softcap scale batch-bias d96", c));
    let mut c = Case::new(2, 2, 2, 33, 66, 64);
    c.mask = true;
    v.push(("bool mask", c));
    let mut c = Case::new(1, 2, 2, 40, 90, 128);
    c.dv = 64;
    v.push(("dv != d", c));
    let mut c = Case::new(1, 2, 2, 70, 80, 64);
    c.opts.dropout = Some((0.2, 99));
    v.push(("dropout", c));
    v.push(("d256", Case::new(1, 1, 1, 70, 75, 256)));
    v.push(("single query", Case::new(1, 4, 1, 1, 200, 128)));
    // GQA packing (a group's short queries in one cube): causal rows at different
    // positions, a bias per batch and head, dropout, and a group of 8 (24 rows: packed only
    // in 64-row blocks).
    let mut c = Case::new(2, 8, 2, 3, 90, 64);
    c.opts.causal = true;
    c.bias = Some((true, true));
    v.push(("gqa4 packed causal per-head bias sq 3", c));
    let mut c = Case::new(1, 8, 1, 3, 77, 64);
    c.opts.dropout = Some((0.25, 7));
    v.push(("gqa8 packed dropout sq 3", c));
    v
}

/// f16 and bf16 against the f64 reference, through the selector and through each variant
/// forced by an explicit config (tensor cores in three tilings, split-K and one-plane
/// blocks, and the portable kernel).
/// One test per dtype: each runs about 280 s on an H100, and the GPU machine's tool allows
/// 600 s per command.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn half_precision_matches_reference_on_gpu() {
    half_precision_matches_reference(FloatDType::BF16);
}

/// [`half_precision_matches_reference_on_gpu`] in f16.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn half_precision_f16_matches_reference_on_gpu() {
    half_precision_matches_reference(FloatDType::F16);
}

fn half_precision_matches_reference(dtype: FloatDType) {
    use flint::Variant;
    let device = gpu();
    let config =
        |variant, block_q, block_kv| Some(AttentionFwdConfig::new(variant, block_q, block_kv));
    // Split-K in 3 parts: with these short key ranges some parts hold a partial tile and
    // some no key at all.
    let split = |block_q, block_kv| {
        Some(AttentionFwdConfig {
            splits: 3,
            ..AttentionFwdConfig::new(Variant::Mma, block_q, block_kv)
        })
    };
    let started = std::time::Instant::now();
    for (name, case) in half_cases() {
        // At D = 256 only one 16-row tile per plane and 32-key tiles fit the registers.
        let wide = case.d.max(case.dv) > 128;
        let configs = [
            None,
            config(Variant::Mma, 64, if wide { 32 } else { 64 }),
            config(Variant::Mma, if wide { 64 } else { 128 }, 32),
            // 128-key tiles (tuned where D <= 64): 128 rows there, 64 up to D = 128.
            config(
                Variant::Mma,
                if case.d.max(case.dv) <= 64 { 128 } else { 64 },
                if wide { 32 } else { 128 },
            ),
            config(Variant::Portable, 16, 16),
            split(64, if wide { 32 } else { 64 }),
            // One plane per 16 rows (short queries), alone and split.
            config(Variant::Mma, 16, if wide { 32 } else { 64 }),
            split(16, if wide { 32 } else { 64 }),
        ];
        eprintln!("{dtype:?} {name} at {:?}", started.elapsed());
        check_in::<Gpu>(&case, &device, 7, dtype, &configs);
    }
}

/// Decoding shapes split over the keys into many parts (the merge's unrolled loops at 16 and
/// 64 parts, parts that see no key under a window), and the selector's own choice, in bf16
/// against the f64 reference.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: split-K runs in the tensor-core kernel (run with --features cuda)"
)]
fn split_key_decoding_matches_reference_on_gpu() {
    use flint::Variant;
    let device = gpu();
    let split = |splits, block_kv| {
        Some(AttentionFwdConfig {
            splits,
            ..AttentionFwdConfig::new(Variant::Mma, 16, block_kv)
        })
    };
    let mut windowed = Case::new(1, 8, 2, 2, 1500, 128);
    windowed.opts.window = (Some(200), Some(0));
    let cases = [
        ("decode gqa4 d128", Case::new(2, 8, 2, 1, 2000, 128)),
        ("decode gqa4 window (empty parts)", windowed),
    ];
    for (name, case) in cases {
        eprintln!("{name}");
        check_in::<Gpu>(
            &case,
            &device,
            11,
            FloatDType::BF16,
            &[None, split(16, 64), split(64, 32)],
        );
    }
}

/// The cooperative-matrix kernel (the tensor-core path of Vulkan devices) against the f64
/// reference, forced in five tilings, f16 and bf16, on every half-precision case. On CUDA it
/// runs through WMMA, the same `cmma` source that SPIR-V gets.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no cooperative matrices (run with --features cuda)"
)]
fn cooperative_matrix_kernel_matches_reference_on_gpu() {
    use flint::Variant;
    let device = gpu();
    let config =
        |block_q, block_kv| Some(AttentionFwdConfig::new(Variant::Cmma, block_q, block_kv));
    let started = std::time::Instant::now();
    for dtype in [FloatDType::F16, FloatDType::BF16] {
        for (name, case) in half_cases() {
            // One and two row fragments per plane (two only up to D = 128, where their
            // registers fit), one to four planes.
            let two = case.d.max(case.dv) <= 128;
            let configs = [
                config(64, 32),
                config(if two { 128 } else { 64 }, 32),
                config(32, 64),
                config(16, 16),
                config(if two { 128 } else { 32 }, 16),
            ];
            eprintln!("{dtype:?} {name} at {:?}", started.elapsed());
            check_in::<Gpu>(&case, &device, 11, dtype, &configs);
        }
    }
}

/// The warpgroup-MMA kernel (`Variant::Wgmma`, FlashAttention-3's shape) against the f64
/// reference in bf16 and f16, forced in both tilings (three consumer warpgroups with 64-key
/// tiles, two with 128-key tiles): lengths that leave partial query blocks and key tiles,
/// causal with `Sq < Sk` and with `Sq > Sk` (rows that see no key) and with more heads than
/// one group of the causal grid launches (see `head_groups`) or cubes of a persistent grid,
/// a window with both bounds
/// (masked tiles before and after the plain ones), windows at D = 128 (a right bound
/// past the diagonal, a window narrower than a tile), GQA, `Dv != D`, D = 96 and Dv = 96
/// (run as 128), D = 32 (64-byte swizzled rows; beside Dv = 64 and the reverse), a negative
/// scale, which the launcher hands to the MMA kernel, and D = 256 (128x64 only, plain, causal
/// both ways, several blocks a cube, a window, `Dv = 128`). CUDA on an sm_90 GPU only.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_kernel_matches_reference_on_gpu() {
    use flint::Variant;
    #[cfg(feature = "cuda")]
    if flint_tests::skip_without_wgmma("wgmma_kernel_matches_reference_on_gpu") {
        return;
    }
    let device = gpu();
    let config =
        |block_q, block_kv| Some(AttentionFwdConfig::new(Variant::Wgmma, block_q, block_kv));
    let cases = wgmma_cases();
    let started = std::time::Instant::now();
    for dtype in [FloatDType::BF16, FloatDType::F16] {
        for (name, case) in &cases {
            eprintln!("{dtype:?} {name} at {:?}", started.elapsed());
            check_in::<Gpu>(
                case,
                &device,
                5,
                dtype,
                &[config(192, 64), config(128, 128)],
            );
        }
    }
    // D = 256: two warpgroups of 64-key tiles, the only tiling that holds its O.
    let mut wide = vec![("plain d256", Case::new(1, 2, 2, 300, 260, 256))];
    let mut c = Case::new(1, 8, 2, 200, 333, 256);
    c.opts.causal = true;
    wide.push(("gqa4 causal sq<sk d256", c));
    let mut c = Case::new(1, 2, 1, 400, 150, 256);
    c.opts.causal = true;
    wide.push(("gqa2 causal sq>sk (rows with no key) d256", c));
    let mut c = Case::new(4, 16, 16, 384, 384, 256);
    c.opts.causal = true;
    wide.push(("causal, several blocks per cube d256", c));
    let mut c = Case::new(1, 2, 2, 300, 300, 256);
    c.opts.window = (Some(100), Some(30));
    wide.push(("window left 100 right 30 d256", c));
    let mut c = Case::new(1, 2, 2, 260, 190, 256);
    c.dv = 128;
    wide.push(("dv 128 d256", c));
    for dtype in [FloatDType::BF16, FloatDType::F16] {
        for (name, case) in &wide {
            eprintln!("{dtype:?} {name} at {:?}", started.elapsed());
            check_in::<Gpu>(case, &device, 5, dtype, &[config(128, 64)]);
        }
    }
}

/// The warpgroup kernels' cases up to D = 128 (see `wgmma_kernel_matches_reference_on_gpu`).
fn wgmma_cases() -> Vec<(&'static str, Case)> {
    let mut cases = vec![("plain d128 s300", Case::new(2, 2, 2, 300, 300, 128))];
    let mut c = Case::new(1, 8, 2, 200, 333, 128);
    c.opts.causal = true;
    cases.push(("gqa4 causal sq<sk d128", c));
    let mut c = Case::new(1, 2, 1, 400, 150, 64);
    c.opts.causal = true;
    cases.push(("gqa2 causal sq>sk (rows with no key) d64", c));
    // 64 heads in 4 blocks: a 132-SM grid launches them in two groups of 32.
    let mut c = Case::new(8, 8, 4, 512, 512, 64);
    c.opts.causal = true;
    cases.push(("gqa2 causal, two head groups d64", c));
    // 128 heads of three 128-row blocks: a persistent grid's cubes take two or three blocks
    // each, some with no key to see (Sq > Sk), some the odd middle block.
    let mut c = Case::new(16, 8, 8, 300, 150, 64);
    c.opts.causal = true;
    cases.push(("causal sq>sk, several blocks per cube d64", c));
    // 128 heads of three 128-row blocks at D = 128: each cube walks about four blocks, so
    // the producer fills the second Q buffer while the consumers finish a block.
    let mut c = Case::new(8, 16, 16, 384, 384, 128);
    c.opts.causal = true;
    cases.push(("causal, several blocks per cube d128", c));
    // Three aligned 128-row blocks: each block's last key tile is masked on its diagonal.
    let mut c = Case::new(1, 4, 2, 384, 384, 128);
    c.opts.causal = true;
    cases.push(("gqa2 causal aligned d128", c));
    let mut c = Case::new(1, 2, 2, 700, 650, 64);
    c.opts.window = (Some(150), Some(40));
    cases.push(("window left 150 right 40 d64", c));
    // A right bound past the diagonal at D = 128: the first block's last tile holds keys
    // that no row of its first warpgroup sees.
    let mut c = Case::new(1, 2, 2, 300, 300, 128);
    c.opts.window = (Some(100), Some(30));
    cases.push(("window left 100 right 30 d128", c));
    // A narrow window: a block's last tile is cut by the left bound as well, so the
    // left-masked loop walks it (no plain tiles).
    let mut c = Case::new(1, 2, 2, 300, 300, 128);
    c.opts.window = (Some(5), Some(0));
    cases.push(("window left 5 right 0 d128", c));
    let mut c = Case::new(1, 2, 2, 260, 190, 128);
    c.dv = 64;
    cases.push(("dv 64 d128", c));
    // D = 96 runs as 128 with 32 zero columns, clipped from the TMA store (128x128) and left
    // out of the plain stores (192x64).
    cases.push(("d96", Case::new(1, 3, 3, 130, 129, 96)));
    let mut c = Case::new(4, 16, 8, 384, 384, 96);
    c.opts.causal = true;
    cases.push(("gqa2 causal, several blocks per cube d96", c));
    let mut c = Case::new(1, 2, 2, 260, 190, 128);
    c.dv = 96;
    cases.push(("dv 96 d128", c));
    let mut c = Case::new(1, 2, 2, 192, 256, 128);
    c.opts.scale = Some(-0.1);
    cases.push(("negative scale (MMA fallback)", c));
    cases.extend(head_dim_32_cases());
    cases
}

/// One consumer warpgroup a cube, two cubes an SM (`WgmmaFwdParams::cubes_per_sm`): 64x64,
/// and 64x128 where D and Dv are at most 64 (at D = 128 its tiles do not fit half an SM's
/// shared memory), on the warpgroup kernels' cases up to D = 128 (64-row blocks: more of
/// them per head, so more blocks per cube of the persistent grid and more head groups
/// under a causal mask), against the f64 reference in bf16 and f16. CUDA on an sm_90 GPU
/// only.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_one_warpgroup_two_cubes_matches_reference_on_gpu() {
    use flint::Variant;
    #[cfg(feature = "cuda")]
    if flint_tests::skip_without_wgmma("wgmma_one_warpgroup_two_cubes_matches_reference_on_gpu") {
        return;
    }
    let device = gpu();
    let config = |block_kv| Some(AttentionFwdConfig::new(Variant::Wgmma, 64, block_kv));
    let started = std::time::Instant::now();
    for dtype in [FloatDType::BF16, FloatDType::F16] {
        for (name, case) in &wgmma_cases() {
            eprintln!("{dtype:?} {name} at {:?}", started.elapsed());
            let mut configs = vec![config(64)];
            if case.d.max(case.dv) <= 64 {
                configs.push(config(128));
            }
            check_in::<Gpu>(case, &device, 7, dtype, &configs);
        }
    }
}

/// D = 32 in 64-byte swizzled rows (32-column boxes), alone and beside a Dv of 64, and the
/// reverse; causal blocks several a cube, rows that see no key, a window.
fn head_dim_32_cases() -> Vec<(&'static str, Case)> {
    let mut cases = vec![("d32 s300", Case::new(1, 2, 2, 300, 260, 32))];
    let mut c = Case::new(8, 16, 8, 384, 384, 32);
    c.opts.causal = true;
    cases.push(("gqa2 causal, several blocks per cube d32", c));
    let mut c = Case::new(1, 4, 2, 330, 150, 32);
    c.opts.causal = true;
    cases.push(("gqa2 causal sq>sk (rows with no key) d32", c));
    let mut c = Case::new(1, 2, 2, 260, 190, 32);
    c.dv = 64;
    cases.push(("dv 64 d32", c));
    let mut c = Case::new(1, 2, 2, 190, 260, 64);
    c.dv = 32;
    cases.push(("dv 32 d64", c));
    let mut c = Case::new(1, 2, 2, 600, 550, 32);
    c.opts.window = (Some(150), Some(40));
    cases.push(("window left 150 right 40 d32", c));
    cases
}

/// Three warpgroups with 128-key tiles (192x128), which a Dv of 32 or 64 leaves the registers
/// for (`check` refuses it beside a wider Dv): the D = 32 cases with Dv = 32, and at D = 64
/// (and D = 128 beside Dv = 64) a plain block, GQA causal both ways (rows that see no key),
/// cubes walking several blocks, a window and 1100 keys, against the f64 reference in bf16
/// and f16. CUDA on an sm_90 GPU only.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_192x128_matches_reference_on_gpu() {
    use flint::Variant;
    #[cfg(feature = "cuda")]
    if flint_tests::skip_without_wgmma("wgmma_192x128_matches_reference_on_gpu") {
        return;
    }
    let device = gpu();
    let config = Some(AttentionFwdConfig::new(Variant::Wgmma, 192, 128));
    let mut cases: Vec<_> = head_dim_32_cases()
        .into_iter()
        .filter(|(_, c)| c.dv == 32)
        .collect();
    cases.push(("d64 s300", Case::new(1, 2, 2, 300, 260, 64)));
    let mut c = Case::new(1, 4, 2, 400, 150, 64);
    c.opts.causal = true;
    cases.push(("gqa2 causal sq>sk (rows with no key) d64", c));
    let mut c = Case::new(1, 8, 2, 200, 333, 64);
    c.opts.causal = true;
    cases.push(("gqa4 causal sq<sk d64", c));
    // 128 heads of two 192-row blocks: each cube of a 132-SM grid walks about two.
    let mut c = Case::new(16, 8, 8, 384, 384, 64);
    c.opts.causal = true;
    cases.push(("causal, several blocks per cube d64", c));
    let mut c = Case::new(1, 2, 2, 700, 650, 64);
    c.opts.window = (Some(150), Some(40));
    cases.push(("window left 150 right 40 d64", c));
    cases.push(("d64 1100 keys", Case::new(1, 2, 1, 200, 1100, 64)));
    let mut c = Case::new(1, 2, 2, 260, 190, 128);
    c.dv = 64;
    cases.push(("dv 64 d128", c));
    for dtype in [FloatDType::BF16, FloatDType::F16] {
        for (name, case) in &cases {
            eprintln!("{dtype:?} {name}");
            check_in::<Gpu>(case, &device, 6, dtype, &[config]);
        }
    }
}

#[test]
fn eight_threads_with_mixed_shapes_on_one_device() {
    let device = gpu();
    let threads: Vec<_> = (0..8usize)
        .map(|t| {
            let device = device.clone();
            std::thread::spawn(move || {
                for i in 0..3 {
                    let mut case = Case::new(1, 2, 1 + t % 2, 5 + 7 * t + i, 9 + 5 * i + t, 32);
                    case.opts.causal = (t + i) % 2 == 0;
                    check::<Gpu>(&case, &device, (t * 10 + i) as u64);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a calling thread failed");
    }
}

#[test]
fn nan_and_inf_inputs_propagate_like_the_reference() {
    // A NaN in q poisons its row; a NaN in one key poisons exactly the rows that see that key
    // (causal: not the rows before it). An infinity gives infinite scores: +inf ones make the
    // row NaN (inf - inf in the softmax), -inf ones act as masked. Both kernels and the
    // reference path must agree with the f64 reference, and nothing hangs.
    fn run<B: FlashAttentionBackend>(device: &B::Device, poison: f32) {
        let (b, h, s, d) = (1, 2, 12, 32);
        let mut q = random_f32(b * h * s * d, 31);
        let mut k = random_f32(b * h * s * d, 32);
        let v = random_f32(b * h * s * d, 33);
        q[3 * d] = poison; // head 0, query 3
        k[(s + 5) * d + 2] = poison; // head 1, key 5
        let inputs = RefInputs::from_f32((&q, &k, &v), (b, h, h, s, s, d, d), None, None);
        let opts = RefOptions {
            causal: true,
            ..RefOptions::default()
        };
        let (want, want_lse) = attention_ref(&inputs, &opts);
        assert!(want.iter().any(|x| x.is_nan()) && want.iter().any(|x| !x.is_nan()));
        let got = flint::try_flash_attention_full(
            tensor::<B>(&q, [b, h, s, d], device),
            tensor::<B>(&k, [b, h, s, d], device),
            tensor::<B>(&v, [b, h, s, d], device),
            None,
            None,
            AttentionOptions::new().causal(),
        )
        .unwrap();
        let got_out = to_f64(got.out);
        let err = max_err(&got_out, &want);
        let first_bad = got_out
            .iter()
            .zip(&want)
            .position(|(g, w)| max_err(&[*g], &[*w]) >= 1e-4)
            .map(|i| (i / (s * d), (i / d) % s, i % d, got_out[i], want[i]));
        assert!(
            err < 1e-4,
            "{} with {poison}: output differs from the reference: {err:e}, first at (head, row, col, got, want) = {first_bad:?}",
            std::any::type_name::<B>()
        );
        let err = max_err(&to_f64(got.lse), &want_lse);
        assert!(
            err < 1e-4,
            "{poison}: LSE differs from the reference: {err:e}"
        );
    }
    for poison in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        run::<NdArray>(&Default::default(), poison);
        run::<Gpu>(&gpu(), poison);
    }
}

/// The tensor-core forward (fast math that assumes no NaN or Inf in its own arithmetic) still
/// propagates NaN and Inf inputs like the reference: the same rows are NaN, the rest agree.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: the tensor-core kernel runs on f16/bf16 with MMA (run with --features cuda)"
)]
fn nan_and_inf_inputs_propagate_through_the_tensor_core_kernel() {
    use flint::Variant;
    let device = gpu();
    let (b, h, s, d) = (1, 2, 70, 64);
    for poison in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut q = random_f32(b * h * s * d, 41);
        let mut k = random_f32(b * h * s * d, 42);
        let v = random_f32(b * h * s * d, 43);
        q[3 * d] = poison; // head 0, query 3
        k[(s + 5) * d + 2] = poison; // head 1, key 5
        let half = |x: &[f32]| tensor::<Gpu>(x, [b, h, s, d], &device).cast(FloatDType::BF16);
        // The reference sees the inputs as the kernel does: rounded to bf16.
        let rounded = |x: &[f32]| to_f64(half(x));
        let inputs = RefInputs {
            q: rounded(&q),
            k: rounded(&k),
            v: rounded(&v),
            dims: (b, h, h, s, s, d, d),
            bias: None,
        };
        let opts = RefOptions {
            causal: true,
            ..RefOptions::default()
        };
        let (want, _) = attention_ref(&inputs, &opts);
        // Unsplit, split-K in 2 parts (the merge must carry a NaN part through), and the
        // cooperative-matrix kernel.
        for (splits, variant) in [(1, Variant::Mma), (2, Variant::Mma), (1, Variant::Cmma)] {
            let config = AttentionFwdConfig {
                splits,
                ..AttentionFwdConfig::new(variant, 64, 32)
            };
            let got = flint::try_flash_attention_with(
                half(&q),
                half(&k),
                half(&v),
                AttentionOptions::new().causal().config(config),
            )
            .unwrap();
            let got = to_f64(got);
            let nan_rows = |x: &[f64]| -> Vec<usize> {
                (0..b * h * s)
                    .filter(|r| x[r * d..(r + 1) * d].iter().any(|v| v.is_nan()))
                    .collect()
            };
            assert_eq!(
                nan_rows(&got),
                nan_rows(&want),
                "{poison}, {variant:?}, {splits} parts: NaN rows differ"
            );
            let err = got
                .iter()
                .zip(&want)
                .filter(|(g, w)| !g.is_nan() && !w.is_nan())
                .map(|(g, w)| (g - w).abs())
                .fold(0f64, f64::max);
            assert!(
                err < 2e-2,
                "{poison}, {variant:?}, {splits} parts: finite outputs differ by {err}"
            );
        }
    }
}

/// The tensor-core forward on strided views, in bf16: q, k and v laid out as `[B, S, H, D]`
/// and viewed as `[B, H, S, D]` (a model's usual head split) must give what the same values
/// give densely, for GQA and MHA, causal or not, through the selector and forced tilings.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA: lavapipe has no f16/bf16 tensor cores (run with --features cuda)"
)]
fn strided_half_inputs_match_dense_on_gpu() {
    use flint::Variant;
    type B = Gpu;
    let device = gpu();
    let dtype = FloatDType::BF16;
    let mut failures = Vec::new();
    // (name, b, h, hkv, sq, sk, d, causal)
    let cases = [
        ("gqa2 causal s150", 2, 4, 2, 150, 150, 128, true),
        ("mha s150", 2, 4, 4, 150, 150, 128, false),
        ("gqa2 causal sq100 sk190", 2, 4, 2, 100, 190, 128, true),
    ];
    let config = |variant, bq, bkv| Some(AttentionFwdConfig::new(variant, bq, bkv));
    for (name, b, h, hkv, sq, sk, d, causal) in cases {
        // `x` as [B, S, H, D] viewed as [B, H, S, D], or copied densely.
        let strided = |x: &[f32], h: usize, s: usize| {
            Tensor::<B, 4>::from_data(TensorData::new(x.to_vec(), [b, s, h, d]), &device)
                .cast(dtype)
                .swap_dims(1, 2)
        };
        let dense = |x: &[f32], h: usize, s: usize| {
            let t = Tensor::<B, 4>::from_data(TensorData::new(x.to_vec(), [b, s, h, d]), &device);
            let c = t.swap_dims(1, 2).into_data();
            Tensor::<B, 4>::from_data(c, &device).cast(dtype)
        };
        let q = random_f32(b * h * sq * d, 21);
        let k = random_f32(b * hkv * sk * d, 22);
        let v = random_f32(b * hkv * sk * d, 23);
        #[cfg(feature = "cuda")]
        let wgmma = flint_kernels::wgmma::cuda_device_has_wgmma(0);
        #[cfg(not(feature = "cuda"))]
        let wgmma = false;
        for c in [
            None,
            config(Variant::Mma, 128, 64),
            config(Variant::Mma, 16, 64),
            config(Variant::Portable, 16, 16),
            // Warpgroup MMA where the device has it (the tuner's pick at D = 128 there).
            config(Variant::Wgmma, 192, 64).filter(|_| wgmma),
        ] {
            let opts = || {
                let o = AttentionOptions::new().with_causal(causal);
                match c {
                    Some(c) => o.config(c),
                    None => o,
                }
            };
            let a = flint::flash_attention_with(
                strided(&q, h, sq),
                strided(&k, hkv, sk),
                strided(&v, hkv, sk),
                opts(),
            );
            let e = flint::flash_attention_with(
                dense(&q, h, sq),
                dense(&k, hkv, sk),
                dense(&v, hkv, sk),
                opts(),
            );
            let err = max_err(&to_f64(a), &to_f64(e));
            if err > 1e-2 {
                failures.push(format!("{name} {c:?}: strided and dense differ by {err:e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn non_contiguous_inputs_are_honoured() {
    // q, k, v laid out as [B, S, H, D] and viewed as [B, H, S, D]: strided, not copied.
    fn run<B: FlashAttentionBackend>(device: &B::Device) {
        let (b, h, s, d) = (2, 4, 13, 32);
        let data = |seed| random_f32(b * h * s * d, seed);
        let strided = |x: &[f32]| {
            Tensor::<B, 4>::from_data(TensorData::new(x.to_vec(), [b, s, h, d]), device)
                .swap_dims(1, 2)
        };
        let dense = |x: &[f32]| {
            let t = Tensor::<B, 4>::from_data(TensorData::new(x.to_vec(), [b, s, h, d]), device);
            let c = t.swap_dims(1, 2).into_data();
            Tensor::<B, 4>::from_data(c, device)
        };
        let (q, k, v) = (data(1), data(2), data(3));
        let opts = || AttentionOptions::new().causal();
        let a = flint::flash_attention_with(strided(&q), strided(&k), strided(&v), opts());
        let e = flint::flash_attention_with(dense(&q), dense(&k), dense(&v), opts());
        let err = max_err(&to_f64(a), &to_f64(e));
        assert!(err < 1e-6, "strided and dense inputs differ by {err:e}");
    }
    run::<NdArray>(&Default::default());
    run::<Gpu>(&gpu());
}

#[test]
fn bad_input_is_refused_before_launch_with_the_argument_named() {
    let device = gpu();
    let t = |shape: [usize; 4]| Tensor::<Gpu, 4>::ones(shape, &device);
    let err = |q, k, v, o| {
        flint::try_flash_attention_with(q, k, v, o)
            .unwrap_err()
            .to_string()
    };
    let o = AttentionOptions::new;
    assert_eq!(
        err(t([1, 6, 4, 32]), t([1, 4, 4, 32]), t([1, 4, 4, 32]), o()),
        "`k` has shape [1, 4, 4, 32]: q's 6 heads must be a multiple of k's 4 heads (H % Hkv == 0)"
    );
    assert_eq!(
        err(t([1, 2, 4, 32]), t([2, 2, 4, 32]), t([2, 2, 4, 32]), o()),
        "`k` has shape [2, 2, 4, 32]: batch 2 must equal q's batch 1"
    );
    assert_eq!(
        err(t([1, 2, 4, 32]), t([1, 2, 4, 64]), t([1, 2, 4, 32]), o()),
        "`k` has shape [1, 2, 4, 64]: head dim 64 must equal q's head dim 32"
    );
    assert_eq!(
        err(t([1, 2, 4, 32]), t([1, 2, 5, 32]), t([1, 2, 4, 32]), o()),
        "`v` has shape [1, 2, 4, 32]: heads and sequence (2, 4) must equal k's (2, 5)"
    );
    assert!(
        err(t([1, 2, 4, 48]), t([1, 2, 4, 48]), t([1, 2, 4, 48]), o())
            .contains("head dim 48 is not supported")
    );
    assert_eq!(
        err(
            t([1, 2, 4, 32]),
            t([1, 2, 4, 32]),
            t([1, 2, 4, 32]),
            o().softcap(0.0)
        ),
        "`softcap` must be finite and > 0, got 0"
    );
    assert!(
        err(
            t([1, 2, 4, 32]),
            t([1, 2, 4, 32]),
            t([1, 2, 4, 32]),
            o().dropout(1.0, 0)
        )
        .contains("`dropout`")
    );
    // An explicit config outside the op's space is refused before launch, with the rule.
    let bad_config = AttentionFwdConfig::new(flint::Variant::Portable, 3, 8);
    let e = err(
        t([1, 2, 4, 32]),
        t([1, 2, 4, 32]),
        t([1, 2, 4, 32]),
        o().config(bad_config),
    );
    assert!(e.contains("block_q 3 is not a power of two"), "{e}");
    let bad_mask =
        Tensor::<Gpu, 4, Bool>::from_data(TensorData::new(vec![false; 8], [1, 1, 2, 4]), &device);
    let e = flint::try_flash_attention_full(
        t([1, 2, 4, 32]),
        t([1, 2, 4, 32]),
        t([1, 2, 4, 32]),
        Some(bad_mask),
        None,
        o(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "`mask` has shape [1, 1, 2, 4]: must be [1 or 1, 2 or 1, 4, 4] (broadcast over batch and heads)"
    );
    // The panicking entry point carries the same message.
    let panic = std::panic::catch_unwind(|| {
        flint::flash_attention(t([1, 3, 4, 32]), t([1, 2, 4, 32]), t([1, 2, 4, 32]))
    })
    .unwrap_err();
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.starts_with("flash attention: `k` has shape [1, 2, 4, 32]"),
        "{msg}"
    );
}

#[test]
fn empty_inputs_give_empty_outputs_without_a_launch() {
    let device = gpu();
    let out = flint::flash_attention_full(
        Tensor::<Gpu, 4>::ones([1, 2, 3, 32], &device),
        Tensor::<Gpu, 4>::ones([1, 2, 0, 32], &device),
        Tensor::<Gpu, 4>::ones([1, 2, 0, 32], &device),
        None,
        None,
        AttentionOptions::new(),
    );
    assert_eq!(to_f64(out.out), vec![0.0; 2 * 3 * 32]);
    assert!(to_f64(out.lse).iter().all(|x| *x == f64::NEG_INFINITY));
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn case() -> impl Strategy<Value = Case> {
        (
            1usize..3,
            1usize..3,
            1usize..4,
            1usize..24,
            1usize..24,
            prop::sample::select(vec![32usize, 64]),
        )
            .prop_flat_map(|(b, hkv, group, sq, sk, d)| {
                (
                    Just(Case::new(b, hkv * group, hkv, sq, sk, d)),
                    any::<bool>(),
                    any::<bool>(),
                    any::<bool>(),
                )
            })
            .prop_map(|(mut c, causal, window, softcap)| {
                c.opts.causal = causal;
                if window {
                    c.opts.window = (Some(3), Some(2));
                }
                if softcap {
                    c.opts.softcap = Some(1.5);
                }
                c
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn random_shapes_match_on_ndarray(c in case(), seed in 0u64..1000) {
            check::<NdArray>(&c, &Default::default(), seed);
        }
    }

    proptest! {
        // Each new feature combination compiles a kernel on the software device: few cases.
        #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]
        #[test]
        fn random_shapes_match_on_gpu(c in case(), seed in 0u64..1000) {
            check::<Gpu>(&c, &gpu(), seed);
        }
    }
}
