//! Tuned on first use, cached afterwards: runs flint's `scale` kernel through the selector
//! on the best available device (CUDA if built with `--features cuda` and a GPU is present,
//! else the default wgpu adapter), twice, and shows which tier answered each call.
//!
//! Run it twice: the second process answers from the disk cache without benchmarking.
//!
//! ```text
//! cargo run --release -p flint-examples --bin tuned_scale
//! ```

use std::process::ExitCode;
use std::time::Instant;

use cubecl::Runtime;
use flint_examples::init_logging;
use flint_kernels::scale::launch_scale;

fn main() -> ExitCode {
    init_logging();
    #[cfg(feature = "cuda")]
    {
        let device = cubecl::cuda::CudaDevice::new(0);
        match std::panic::catch_unwind(|| cubecl::cuda::CudaRuntime::client(&device)) {
            Ok(client) => return run::<cubecl::cuda::CudaRuntime>(client, device),
            Err(_) => eprintln!("no usable CUDA device; falling back to wgpu"),
        }
    }
    #[cfg(feature = "wgpu")]
    {
        let device = cubecl::wgpu::WgpuDevice::DefaultDevice;
        match std::panic::catch_unwind(|| cubecl::wgpu::WgpuRuntime::client(&device)) {
            Ok(client) => return run::<cubecl::wgpu::WgpuRuntime>(client, device),
            Err(_) => eprintln!(
                "no wgpu adapter found: install a Vulkan driver (`scripts/setup.sh` installs Mesa's lavapipe)"
            ),
        }
    }
    ExitCode::FAILURE
}

fn run<R: Runtime>(client: cubecl::prelude::ComputeClient<R>, device: R::Device) -> ExitCode {
    let selector = match flint_tune::Selector::global() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("flint: {e}");
            return ExitCode::FAILURE;
        }
    };
    let fp = flint_kernels::fingerprint::<R>(&client, &device);
    println!("device: {fp}");
    match selector.disk() {
        Some(disk) => println!("cache:  {}", disk.dir().display()),
        None => println!("cache:  off"),
    }
    let len = 1 << 20;
    let input: Vec<f32> = (0..len).map(|i| ((i % 97) as f32 - 48.0) / 16.0).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let x = client.create_from_slice(&bytes);
    let out = client.empty(len * 4);
    for call in 1..=2 {
        let started = Instant::now();
        let choice = match launch_scale(&client, &device, selector, &x, &out, len, 0.5, None) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("flint: {e}");
                return ExitCode::FAILURE;
            }
        };
        let result = match client.read_one(out.clone()) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("flint: reading the result failed: {e:?}");
                return ExitCode::FAILURE;
            }
        };
        let first = f32::from_le_bytes([result[0], result[1], result[2], result[3]]);
        println!(
            "call {call}: {:?} from the {} tier in {:.1} ms; out[0] = {first} (expected {})",
            choice.config,
            choice.tier,
            started.elapsed().as_secs_f64() * 1e3,
            input[0] * 0.5
        );
        if (first - input[0] * 0.5).abs() > 1e-6 {
            eprintln!("flint: wrong result");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
