//! `cmma_probe`: whether CubeCL's cooperative-matrix path works on each runtime of this build,
//! checked against an f64 product and timed (see `flint_benches::cmma_probe`).
//!
//! ```text
//! cargo run --release -p flint-benches --features cuda,vulkan --bin cmma_probe -- [SIZE] [ROUNDS]
//! ```
//!
//! Exits non-zero if a runtime that reports cmma computes a wrong product or fails to run it.

use flint_benches::cmma_probe::{ProbeOutcome, ProbeReport, probe};

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let parse = |arg: Option<String>, default: usize, name: &str| match arg {
        None => Ok(default),
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|v| *v > 0 && (name != "SIZE" || v % 64 == 0))
            .ok_or(format!(
                "{name} must be a positive integer{}, got `{s}`",
                if name == "SIZE" {
                    " multiple of 64"
                } else {
                    ""
                }
            )),
    };
    let (size, rounds) = match (
        parse(args.next(), 4096, "SIZE"),
        parse(args.next(), 10, "ROUNDS"),
    ) {
        (Ok(s), Ok(r)) => (s, r),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("cmma_probe: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    // Each runtime on its own: one without a device (CUDA on a machine with no GPU panics
    // when its client starts) is reported, and the others still run.
    type Run = Box<dyn Fn() -> ProbeReport>;
    let runs: Vec<(&str, Run)> = vec![
        #[cfg(feature = "cuda")]
        (
            "cuda",
            Box::new(move || probe::<cubecl::cuda::CudaRuntime>(&Default::default(), size, rounds)),
        ),
        #[cfg(feature = "wgpu")]
        (
            "wgpu",
            Box::new(move || probe::<cubecl::wgpu::WgpuRuntime>(&Default::default(), size, rounds)),
        ),
    ];
    let mut ok = true;
    for (name, run) in runs {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => {
                println!("{r}");
                ok &= match &r.outcome {
                    ProbeOutcome::Ran { rel_error, .. } => *rel_error < 1e-2,
                    ProbeOutcome::Unsupported => true,
                    ProbeOutcome::Failed(_) => false,
                };
            }
            Err(_) => println!("runtime {name}: no device (its client did not start)"),
        }
    }
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
