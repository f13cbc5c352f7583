//! Attention forward timings: flint against Burn's own `attention`, in the columns of
//! `../shared/bench/sdpa_reference.py` (name d causal seq batch heads fwd_ms fwd_tflops), so
//! the outputs sit side by side when both run in one device call.
//!
//! Shapes follow the FlashAttention convention: heads = hidden / d, batch = tokens / seq,
//! FLOPs = 4·B·H·S²·D, halved when causal.
//!
//! ```text
//! cargo run --release -p flint-benches --features cuda --bin attention_bench -- \
//!     --dims 128 --seqs 1024,4096 [--dtype bf16|f16|f32] [--no-burn]
//! ```

use std::time::Instant;

use burn::tensor::backend::Backend;
use burn::tensor::module::attention as burn_attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{DType, Distribution, Tensor};
use flint::{AttentionOptions, FlashAttentionBackend};

struct Args {
    dims: Vec<usize>,
    seqs: Vec<usize>,
    dtype: DType,
    tokens: usize,
    hidden: usize,
    burn: bool,
    iters: usize,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        dims: vec![128],
        seqs: vec![1024, 4096],
        dtype: DType::BF16,
        tokens: 16384,
        hidden: 2048,
        burn: true,
        iters: 5,
    };
    let list = |v: &str| -> Result<Vec<usize>, String> {
        v.split(',')
            .map(|x| x.parse().map_err(|_| format!("bad number `{x}`")))
            .collect()
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("`{flag}` needs a value"));
        match flag.as_str() {
            "--dims" => a.dims = list(&value()?)?,
            "--seqs" => a.seqs = list(&value()?)?,
            "--tokens" => a.tokens = value()?.parse().map_err(|_| "bad --tokens")?,
            "--hidden" => a.hidden = value()?.parse().map_err(|_| "bad --hidden")?,
            "--iters" => a.iters = value()?.parse().map_err(|_| "bad --iters")?,
            "--no-burn" => a.burn = false,
            "--dtype" => {
                a.dtype = match value()?.as_str() {
                    "bf16" => DType::BF16,
                    "f16" | "fp16" => DType::F16,
                    "f32" => DType::F32,
                    other => return Err(format!("unknown dtype `{other}`")),
                }
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(a)
}

/// Median milliseconds of `iters` synced runs of `f`, after one untimed run (which compiles
/// and, for flint on a cache miss, tunes).
fn time<B: Backend>(device: &B::Device, iters: usize, mut f: impl FnMut() -> Tensor<B, 4>) -> f64 {
    let _ = f();
    let _ = B::sync(device);
    let mut ms: Vec<f64> = (0..iters.max(1))
        .map(|_| {
            let started = Instant::now();
            let out = f();
            let _ = B::sync(device);
            drop(out);
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn run<B: FlashAttentionBackend>(name: &str, device: &B::Device, a: &Args) {
    println!("# flint attention_bench on {name}, dtype {:?}", a.dtype);
    println!("name d causal seq batch heads fwd_ms fwd_tflops");
    for &d in &a.dims {
        for causal in [false, true] {
            for &s in &a.seqs {
                let (b, h) = ((a.tokens / s).max(1), (a.hidden / d).max(1));
                let flops =
                    4.0 * (b * h) as f64 * (s * s * d) as f64 / if causal { 2.0 } else { 1.0 };
                let rand = |shape: [usize; 4]| {
                    Tensor::<B, 4>::random(shape, Distribution::Normal(0.0, 1.0), device)
                        .cast(a.dtype)
                };
                let (q, k, v) = (rand([b, h, s, d]), rand([b, h, s, d]), rand([b, h, s, d]));
                let ms = time::<B>(device, a.iters, || {
                    flint::flash_attention_with(
                        q.clone(),
                        k.clone(),
                        v.clone(),
                        AttentionOptions::new().with_causal(causal),
                    )
                });
                println!(
                    "flint {d} {} {s} {b} {h} {ms:.4} {:.1}",
                    causal as u8,
                    flops / ms / 1e9
                );
                if a.burn {
                    let ms = time::<B>(device, a.iters, || {
                        burn_attention(
                            q.clone(),
                            k.clone(),
                            v.clone(),
                            None,
                            None,
                            AttentionModuleOptions {
                                scale: None,
                                softcap: None,
                                is_causal: causal,
                            },
                        )
                    });
                    println!(
                        "burn {d} {} {s} {b} {h} {ms:.4} {:.1}",
                        causal as u8,
                        flops / ms / 1e9
                    );
                }
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("attention_bench: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    #[cfg(feature = "cuda")]
    run::<burn::backend::Cuda>("cuda", &Default::default(), &args);
    #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
    run::<burn::backend::Wgpu>("wgpu", &Default::default(), &args);
    std::process::ExitCode::SUCCESS
}
