//! One model, every backend: a `FlashMultiHeadAttention` block written once as generic code
//! over `B: FlashAttentionBackend`, run on NdArray (CPU), wgpu and (with `--features cuda`)
//! CUDA, each with and without `Autodiff`, with the same weights. Outputs are compared with
//! the CPU run; a backend that is not available is reported and skipped.
//!
//! ```text
//! cargo run --release -p flint-examples --bin backends
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use flint::FlashAttentionBackend;
use flint::nn::{
    FlashMhaInput, FlashMultiHeadAttention, FlashMultiHeadAttentionConfig, RopeConfig,
};
use flint_examples::init_logging;

/// The model code: nothing in it names a backend.
fn block<B: FlashAttentionBackend>(
    mha: &FlashMultiHeadAttention<B>,
    x: Tensor<B, 3>,
) -> Tensor<B, 3> {
    let y = mha.forward(FlashMhaInput::self_attn(x.clone())).context;
    x + y
}

fn config() -> FlashMultiHeadAttentionConfig {
    FlashMultiHeadAttentionConfig::new(128, 4)
        .with_n_kv_heads(Some(2))
        .with_causal(true)
        .with_rope(Some(RopeConfig::new(256)))
}

const SHAPE: [usize; 3] = [2, 64, 128];

fn input<B: Backend>(device: &B::Device) -> Tensor<B, 3> {
    let n: usize = SHAPE.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0)
        .collect();
    Tensor::from_data(TensorData::new(values, SHAPE), device)
}

/// Runs the block on `B` with the weights in `bytes`; returns the output as f32 values.
fn run_on<B: FlashAttentionBackend>(bytes: &[u8], device: &B::Device) -> Vec<f32> {
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let record = recorder
        .load(bytes.to_vec(), device)
        .expect("the record was written by the same module");
    let mha = config().init::<B>(device).load_record(record);
    block(&mha, input::<B>(device))
        .into_data()
        .convert::<f32>()
        .to_vec()
        .expect("f32 output")
}

fn report(name: &str, reference: &[f32], got: Result<Vec<f32>, String>) -> bool {
    match got {
        Ok(values) => {
            let diff = values
                .iter()
                .zip(reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            println!("{name:<22} max |out - ndarray| = {diff:.2e}");
            diff < 1e-3
        }
        Err(why) => {
            println!("{name:<22} skipped: {why}");
            true
        }
    }
}

fn attempt(f: impl FnOnce() -> Vec<f32>) -> Result<Vec<f32>, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the backend is not available".into())
    })
}

fn main() -> ExitCode {
    init_logging();
    let cpu = Default::default();
    // Burn initialises parameters lazily: record them once, then every backend loads them.
    let mha = config().init::<NdArray>(&cpu);
    let bytes = BinBytesRecorder::<FullPrecisionSettings>::default()
        .record(mha.into_record(), ())
        .expect("recording the weights");
    let reference = run_on::<NdArray>(&bytes, &cpu);
    println!("NdArray                output {SHAPE:?} (the reference)");
    let mut ok = report(
        "Autodiff<NdArray>",
        &reference,
        attempt(|| run_on::<Autodiff<NdArray>>(&bytes, &cpu)),
    );
    #[cfg(feature = "wgpu")]
    {
        let device = burn::backend::wgpu::WgpuDevice::DefaultDevice;
        ok &= report(
            "Wgpu",
            &reference,
            attempt(|| run_on::<burn::backend::Wgpu>(&bytes, &device)),
        );
        ok &= report(
            "Autodiff<Wgpu>",
            &reference,
            attempt(|| run_on::<Autodiff<burn::backend::Wgpu>>(&bytes, &device)),
        );
    }
    #[cfg(feature = "cuda")]
    {
        let device = burn::backend::cuda::CudaDevice::default();
        ok &= report(
            "Cuda",
            &reference,
            attempt(|| run_on::<burn::backend::Cuda>(&bytes, &device)),
        );
        ok &= report(
            "Autodiff<Cuda>",
            &reference,
            attempt(|| run_on::<Autodiff<burn::backend::Cuda>>(&bytes, &device)),
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("backends: a backend disagreed with the CPU reference");
        ExitCode::FAILURE
    }
}
