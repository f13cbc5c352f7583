//! Quick start: `flint::flash_attention` on the best available backend.
//!
//! Tries CUDA (when built with `--features cuda`), then the default wgpu adapter, then falls
//! back, saying so, to the NdArray CPU backend. The model code is the same generic function
//! for all three: only the backend type changes.
//!
//! ```text
//! cargo run --release -p flint-examples --bin quickstart
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use burn::tensor::module::attention as burn_attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Distribution, Tensor};
use flint::{AttentionOptions, FlashAttentionBackend};
use flint_examples::init_logging;

/// A causal GQA attention call: 8 query heads sharing 2 key/value heads.
fn demo<B: FlashAttentionBackend>(name: &str, device: &B::Device) {
    let (b, h, hkv, s, d) = (1, 8, 2, 256, 64);
    let q = Tensor::<B, 4>::random([b, h, s, d], Distribution::Normal(0.0, 1.0), device);
    let k = Tensor::<B, 4>::random([b, hkv, s, d], Distribution::Normal(0.0, 1.0), device);
    let v = Tensor::<B, 4>::random([b, hkv, s, d], Distribution::Normal(0.0, 1.0), device);

    for call in 1..=2 {
        let started = Instant::now();
        let out = flint::flash_attention_with(
            q.clone(),
            k.clone(),
            v.clone(),
            AttentionOptions::new().causal(),
        );
        let out = out.into_data();
        println!(
            "{name}: call {call}: out {:?} in {:.1} ms (call 1 includes compiling and, on a GPU, tuning)",
            out.shape,
            started.elapsed().as_secs_f64() * 1e3
        );
    }

    // Same answer as Burn's own attention (which needs the heads repeated for GQA).
    let expand = |t: Tensor<B, 4>| {
        t.unsqueeze_dim::<5>(2)
            .expand([b, hkv, h / hkv, s, d])
            .reshape([b, h, s, d])
    };
    let ours = flint::flash_attention_with(
        q.clone(),
        k.clone(),
        v.clone(),
        AttentionOptions::new().causal(),
    );
    let theirs = burn_attention(
        q,
        expand(k),
        expand(v),
        None,
        None,
        AttentionModuleOptions {
            scale: None,
            softcap: None,
            is_causal: true,
        },
    );
    let diff: f32 = (ours - theirs).abs().max().into_scalar().elem();
    println!("{name}: max |flint - burn::attention| = {diff:.2e}");
}

use burn::tensor::ElementConversion;

fn main() {
    init_logging();
    #[cfg(feature = "cuda")]
    {
        let device = burn::backend::cuda::CudaDevice::default();
        if catch_unwind(AssertUnwindSafe(|| {
            demo::<burn::backend::Cuda>("cuda", &device)
        }))
        .is_ok()
        {
            return;
        }
        eprintln!("quickstart: no usable CUDA device, trying wgpu");
    }
    #[cfg(feature = "wgpu")]
    {
        let device = burn::backend::wgpu::WgpuDevice::DefaultDevice;
        if catch_unwind(AssertUnwindSafe(|| {
            demo::<burn::backend::Wgpu>("wgpu", &device)
        }))
        .is_ok()
        {
            return;
        }
        eprintln!("quickstart: no usable wgpu adapter (scripts/setup.sh installs a software one)");
    }
    eprintln!("quickstart: falling back to the NdArray CPU backend");
    demo::<burn::backend::NdArray>("ndarray", &Default::default());
}
