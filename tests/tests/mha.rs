//! `FlashMultiHeadAttention` against Burn's `MultiHeadAttention` with the same weights
//! (forward, masks, gradients), GQA and rotary embeddings against a composition of Burn ops,
//! dropout only while training, config errors, and the same module on the GPU backend.

use burn::backend::{Autodiff, NdArray};
use burn::module::{AutodiffModule, Module};
use burn::nn::attention::{MhaInput, MultiHeadAttentionConfig, generate_autoregressive_mask};
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::module::attention as burn_attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, Tensor, TensorData};
use flint::nn::{
    FlashMhaInput, FlashMultiHeadAttention, FlashMultiHeadAttentionConfig, RopeConfig,
};

use crate::attention_fwd::{Gpu, gpu, max_err, to_f64};

type Cpu = NdArray;
type Train = Autodiff<NdArray>;

fn input<B: burn::tensor::backend::Backend>(shape: [usize; 3], device: &B::Device) -> Tensor<B, 3> {
    let n = shape.iter().product();
    let values = flint_tests::random_f32(n, shape.iter().sum::<usize>() as u64);
    Tensor::from_data(TensorData::new(values, shape), device)
}

/// `module` with its parameters initialised: Burn initialises parameters lazily, so clones
/// taken before the first use would each draw their own weights.
fn settled<B: burn::tensor::backend::Backend, M: Module<B>>(module: M) -> M {
    let record = module.clone().into_record();
    module.load_record(record)
}

#[test]
fn matches_burns_multi_head_attention_with_the_same_weights() {
    let device = Default::default();
    let mha = MultiHeadAttentionConfig::new(64, 2)
        .with_dropout(0.0)
        .init::<Cpu>(&device);
    let mha = settled(mha);
    let mut flash = FlashMultiHeadAttention::from(mha.clone());
    let x = input::<Cpu>([2, 11, 64], &device);
    let want = mha.forward(MhaInput::self_attn(x.clone())).context;
    let got = flash.forward(FlashMhaInput::self_attn(x.clone())).context;
    let err = max_err(&to_f64(got), &to_f64(want));
    assert!(err < 1e-4, "plain: {err}");

    // A padding mask (the last 4 keys of the second sequence) and cross-attention lengths.
    let pad: Vec<bool> = (0..2 * 11).map(|i| i >= 11 + 7).collect();
    let pad = Tensor::<Cpu, 2, Bool>::from_data(TensorData::new(pad, [2, 11]), &device);
    let want = mha
        .forward(MhaInput::self_attn(x.clone()).mask_pad(pad.clone()))
        .context;
    let got = flash
        .forward(FlashMhaInput::self_attn(x.clone()).mask_pad(pad))
        .context;
    let err = max_err(&to_f64(got), &to_f64(want));
    assert!(err < 1e-4, "mask_pad: {err}");

    // Causal: Burn's autoregressive mask against the module's causal flag.
    let mask = generate_autoregressive_mask::<Cpu>(2, 11, &device);
    let want = mha
        .forward(MhaInput::self_attn(x.clone()).mask_attn(mask.clone()))
        .context;
    flash.causal = true;
    let got = flash.forward(FlashMhaInput::self_attn(x.clone())).context;
    let err = max_err(&to_f64(got.clone()), &to_f64(want.clone()));
    assert!(err < 1e-4, "causal: {err}");
    flash.causal = false;
    let got = flash
        .forward(FlashMhaInput::self_attn(x).mask_attn(mask))
        .context;
    let err = max_err(&to_f64(got), &to_f64(want));
    assert!(err < 1e-4, "mask_attn: {err}");
}

#[test]
fn gradients_match_burns_multi_head_attention() {
    let device = Default::default();
    let mha = MultiHeadAttentionConfig::new(64, 2)
        .with_dropout(0.0)
        .init::<Train>(&device);
    let mha = settled(mha);
    let flash = FlashMultiHeadAttention::from(mha.clone());
    let x = input::<Train>([2, 9, 64], &device).require_grad();
    let g = input::<Train>([2, 9, 64], &device).mul_scalar(0.5);
    let grads_burn = (mha.forward(MhaInput::self_attn(x.clone())).context * g.clone())
        .sum()
        .backward();
    let grads_flash = (flash.forward(FlashMhaInput::self_attn(x.clone())).context * g)
        .sum()
        .backward();
    let pairs = [
        ("x", x.grad(&grads_burn), x.grad(&grads_flash)),
        (
            "query.weight",
            mha.query
                .weight
                .val()
                .grad(&grads_burn)
                .map(|t| t.reshape([1, 64, 64])),
            flash
                .query
                .weight
                .val()
                .grad(&grads_flash)
                .map(|t| t.reshape([1, 64, 64])),
        ),
        (
            "key.weight",
            mha.key
                .weight
                .val()
                .grad(&grads_burn)
                .map(|t| t.reshape([1, 64, 64])),
            flash
                .key
                .weight
                .val()
                .grad(&grads_flash)
                .map(|t| t.reshape([1, 64, 64])),
        ),
        (
            "value.weight",
            mha.value
                .weight
                .val()
                .grad(&grads_burn)
                .map(|t| t.reshape([1, 64, 64])),
            flash
                .value
                .weight
                .val()
                .grad(&grads_flash)
                .map(|t| t.reshape([1, 64, 64])),
        ),
    ];
    for (name, want, got) in pairs {
        let (want, got) = (to_f64(want.expect(name)), to_f64(got.expect(name)));
        let scale = want.iter().fold(0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1e-3, "{name}: the gradient must not vanish");
        let err = max_err(&got, &want);
        assert!(err < 1e-4 * scale.max(1.0), "{name}: {err} (scale {scale})");
    }
}

/// The module's GQA + rotary path against the same projections composed by hand with Burn's
/// attention on repeated heads.
fn check_gqa_rope<B: flint::FlashAttentionBackend>(device: &B::Device) {
    let mha = FlashMultiHeadAttentionConfig::new(128, 4)
        .with_n_kv_heads(Some(2))
        .with_causal(true)
        .with_rope(Some(RopeConfig::new(64)))
        .init::<B>(device);
    let (batch, seq, d_k) = (2, 13, 32);
    let x = input::<B>([batch, seq, 128], device);
    let got = mha
        .forward(FlashMhaInput::self_attn(x.clone()).rope_offset(3))
        .context;

    let heads = |t: Tensor<B, 3>, h: usize| t.reshape([batch, seq, h, d_k]).swap_dims(1, 2);
    let rope = mha.rope.as_ref().expect("rope configured");
    let q = rope.apply(heads(mha.query.forward(x.clone()), 4), 3);
    let k = rope.apply(heads(mha.key.forward(x.clone()), 2), 3);
    let v = heads(mha.value.forward(x), 2);
    let repeat = |t: Tensor<B, 4>| {
        t.unsqueeze_dim::<5>(2)
            .expand([batch, 2, 2, seq, d_k])
            .reshape([batch, 4, seq, d_k])
    };
    let out = burn_attention(
        q,
        repeat(k),
        repeat(v),
        None,
        None,
        AttentionModuleOptions {
            scale: None,
            softcap: None,
            is_causal: true,
        },
    );
    let want = mha
        .output
        .forward(out.swap_dims(1, 2).reshape([batch, seq, 128]));
    let err = max_err(&to_f64(got), &to_f64(want));
    assert!(err < tolerance::<B>(), "GQA + rope: {err}");
}

/// Burn's f32 matmuls (the projections, and the reference's attention) run on TF32 tensor
/// cores on CUDA, about 1e-3 relative; elsewhere they are f32.
fn tolerance<B: burn::tensor::backend::Backend>() -> f64 {
    let cuda = cfg!(feature = "cuda") && std::any::type_name::<B>().contains("Cuda");
    if cuda { 1e-2 } else { 2e-4 }
}

#[test]
fn gqa_and_rotary_embeddings_match_a_composition_of_burn_ops() {
    check_gqa_rope::<Cpu>(&Default::default());
    check_gqa_rope::<Gpu>(&gpu());
}

#[test]
fn the_same_module_runs_on_the_gpu_backend() {
    let device = Default::default();
    let config = FlashMultiHeadAttentionConfig::new(64, 2).with_causal(true);
    let cpu = settled(config.init::<Cpu>(&device));
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let bytes = recorder
        .record(cpu.clone().into_record(), ())
        .expect("recording the module");
    let gpu_device = gpu();
    let record = recorder
        .load(bytes, &gpu_device)
        .expect("loading the record on the GPU backend");
    let on_gpu = config.init::<Gpu>(&gpu_device).load_record(record);
    let want = cpu
        .forward(FlashMhaInput::self_attn(input::<Cpu>([1, 10, 64], &device)))
        .context;
    let got = on_gpu
        .forward(FlashMhaInput::self_attn(input::<Gpu>(
            [1, 10, 64],
            &gpu_device,
        )))
        .context;
    let err = max_err(&to_f64(got), &to_f64(want));
    assert!(err < tolerance::<Gpu>(), "cpu vs gpu: {err}");
}

#[test]
fn dropout_applies_while_training_only() {
    let device = Default::default();
    let config = FlashMultiHeadAttentionConfig::new(64, 2).with_dropout(0.5);
    let x = input::<Train>([1, 16, 64], &device);
    let training = settled(config.init::<Train>(&device));
    let mut plain = training.clone();
    plain.dropout = 0.0;
    let reference = to_f64(plain.forward(FlashMhaInput::self_attn(x.clone())).context);
    let first = to_f64(
        training
            .forward(FlashMhaInput::self_attn(x.clone()))
            .context,
    );
    let second = to_f64(
        training
            .forward(FlashMhaInput::self_attn(x.clone()))
            .context,
    );
    assert!(
        max_err(&first, &reference) > 1e-3,
        "dropout changed nothing"
    );
    assert!(
        max_err(&first, &second) > 1e-3,
        "two calls drew the same mask"
    );
    // Inference (the inner backend, no autodiff): no dropout.
    let inference = training.valid();
    let got = to_f64(
        inference
            .forward(FlashMhaInput::self_attn(x.inner()))
            .context,
    );
    assert!(max_err(&got, &reference) < 1e-5);
}

#[test]
#[should_panic(expected = "n_kv_heads (3) must divide n_heads (8)")]
fn a_bad_head_split_panics_with_the_rule() {
    let _ = FlashMultiHeadAttentionConfig::new(256, 8)
        .with_n_kv_heads(Some(3))
        .init::<Cpu>(&Default::default());
}

#[test]
#[should_panic(expected = "d_model (100) must be a positive multiple of n_heads (8)")]
fn a_width_that_does_not_split_panics_with_the_rule() {
    let _ = FlashMultiHeadAttentionConfig::new(100, 8).init::<Cpu>(&Default::default());
}
