//! Training through flash attention: a tiny transformer learns to copy the token seen three
//! positions back, with flint's fused backward under Burn's autodiff and Adam.
//!
//! The same model code runs on `Autodiff<Cuda>` (with `--features cuda`), `Autodiff<Wgpu>`
//! and `Autodiff<NdArray>`; pick one with `--backend cuda|wgpu|ndarray` (default: the best
//! available, falling back to NdArray with a message).
//!
//! ```text
//! cargo run --release -p flint-examples --bin train
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;
use std::time::Instant;

use burn::backend::Autodiff;
use burn::tensor::backend::AutodiffBackend;
use flint::FlashAttentionBackend;
use flint_examples::init_logging;
use flint_examples::tiny_transformer::{TinyConfig, train};

const STEPS: usize = 40;

fn run<B: AutodiffBackend + FlashAttentionBackend>(name: &str, device: &B::Device) -> ExitCode
where
    B::InnerBackend: FlashAttentionBackend,
{
    let started = Instant::now();
    let losses = train::<B>(&TinyConfig::default(), STEPS, 5e-3, device);
    for (step, loss) in losses.iter().enumerate() {
        if step % 10 == 0 || step + 1 == losses.len() {
            println!("{name}: step {step:3}  loss {loss:.4}");
        }
    }
    let first = losses.first().copied().unwrap_or(f32::NAN);
    let last = losses.last().copied().unwrap_or(f32::NAN);
    println!(
        "{name}: loss {first:.3} -> {last:.3} in {STEPS} steps, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if last < 0.5 * first {
        ExitCode::SUCCESS
    } else {
        eprintln!("{name}: the loss did not halve");
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    init_logging();
    let backend = std::env::args()
        .skip_while(|a| a != "--backend")
        .nth(1)
        .unwrap_or_else(|| "best".to_string());
    match backend.as_str() {
        "ndarray" => {
            return run::<Autodiff<burn::backend::NdArray>>("ndarray", &Default::default());
        }
        #[cfg(feature = "wgpu")]
        "wgpu" => {
            return run::<Autodiff<burn::backend::Wgpu>>("wgpu", &Default::default());
        }
        #[cfg(feature = "cuda")]
        "cuda" => return run::<Autodiff<burn::backend::Cuda>>("cuda", &Default::default()),
        "best" => {}
        other => {
            eprintln!("train: unknown or not compiled-in backend `{other}` (cuda, wgpu, ndarray)");
            return ExitCode::from(2);
        }
    }
    #[cfg(feature = "cuda")]
    {
        let device = burn::backend::cuda::CudaDevice::default();
        if let Ok(code) = catch_unwind(AssertUnwindSafe(|| {
            run::<Autodiff<burn::backend::Cuda>>("cuda", &device)
        })) {
            return code;
        }
        eprintln!("train: no usable CUDA device, trying wgpu");
    }
    #[cfg(feature = "wgpu")]
    {
        let device = burn::backend::wgpu::WgpuDevice::DefaultDevice;
        if let Ok(code) = catch_unwind(AssertUnwindSafe(|| {
            run::<Autodiff<burn::backend::Wgpu>>("wgpu", &device)
        })) {
            return code;
        }
        eprintln!("train: no usable wgpu adapter (scripts/setup.sh installs a software one)");
    }
    eprintln!("train: falling back to the NdArray CPU backend");
    run::<Autodiff<burn::backend::NdArray>>("ndarray", &Default::default())
}
