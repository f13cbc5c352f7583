//! `wgmma_probe`: checks one warpgroup product (`flint_kernels::wgmma`) against the f64
//! product, with the module's descriptor offsets or given ones, or times a loop of them.
//!
//! ```text
//! cargo run --release -p flint-benches --features cuda --bin wgmma_probe -- [ITERS]
//! cargo run --release -p flint-benches --features cuda --bin wgmma_probe -- product N K MN_MAJOR [LBO SBO]
//! cargo run --release -p flint-benches --features cuda --bin wgmma_probe -- attention
//! ```
//!
//! `attention` checks and times the warpgroup-MMA attention kernels: the synchronous
//! prototype (`flint_kernels::wgmma::attention`) and the pipelined one
//! (`flint_kernels::wgmma::pipelined`).
//!
//! Exits non-zero if the product is wrong or the loop fails.

#[cfg(feature = "cuda")]
fn main() -> std::process::ExitCode {
    use cubecl::Runtime;
    use cubecl::cuda::CudaRuntime;
    use flint_kernels::wgmma::{b_descriptor, check, cuda_device_has_wgmma};

    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: u32| -> Result<u32, String> {
        args.get(i).map_or(Ok(default), |s| {
            s.parse::<u32>()
                .map_err(|_| format!("argument {} must be an unsigned integer, got `{s}`", i + 1))
        })
    };
    if !cuda_device_has_wgmma(0) {
        println!("wgmma_probe: CUDA device 0 is not sm_90; nothing to run");
        return std::process::ExitCode::SUCCESS;
    }
    let client = CudaRuntime::client(&Default::default());
    // One product per process: a descriptor that reads outside shared memory faults, and a
    // fault ends the process's CUDA context.
    if args.first().map(String::as_str) == Some("product") {
        let parsed = (|| Ok::<_, String>((num(1, 64)?, num(2, 64)?, num(3, 0)? == 1)))();
        let Ok((n, k, mn_major)) = parsed else {
            eprintln!("usage: wgmma_probe product N K MN_MAJOR(0|1) [LBO SBO]");
            return std::process::ExitCode::from(2);
        };
        let (lbo, sbo, _) = b_descriptor(n, k, mn_major);
        let offsets = match (num(4, lbo), num(5, sbo)) {
            (Ok(l), Ok(s)) => (l, s),
            _ => {
                eprintln!("usage: wgmma_probe product N K MN_MAJOR(0|1) [LBO SBO]");
                return std::process::ExitCode::from(2);
            }
        };
        let major = if mn_major { "MN" } else { "K" };
        let err = check::product_error(&client, n, k, mn_major, Some(offsets));
        println!(
            "64x{n}x{k} {major}-major B, lbo {} sbo {} (module's: {lbo} {sbo}): rel. error {err:?}",
            offsets.0, offsets.1
        );
        return if matches!(err, Ok(e) if e < 1e-4) {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::FAILURE
        };
    }
    if args.first().map(String::as_str) == Some("attention") {
        return attention(&client);
    }
    let iters = match num(0, 20_000) {
        Ok(v) if v > 0 => v,
        _ => {
            eprintln!("usage: wgmma_probe [ITERS] | wgmma_probe product N K MN_MAJOR [LBO SBO]");
            return std::process::ExitCode::from(2);
        }
    };
    let mut ok = true;
    let sms = client
        .properties()
        .hardware
        .num_streaming_multiprocessors
        .unwrap_or(132);
    // The register-level MMA of the attention kernels, in the same loop, for comparison.
    for (per_sm, planes) in [(1, 4), (2, 4), (1, 8), (2, 8)] {
        let label = format!(
            "mma.sync loop 16x64x16: {per_sm} cube(s) of {planes} planes per SM, {iters} steps"
        );
        ok &= report(
            &label,
            check::mma_loop_speed(&client, (sms * per_sm, planes), iters, 5),
        );
    }
    // 64x256 with four warpgroups needs more than the 128 registers a thread of 512 may have.
    // The attention's two other forms (MN-major B: P·V; both operands in shared memory:
    // Q·Kᵀ in the pipelined kernel) at its tile shapes.
    use check::LoopForm::{KMajor, MnMajor, Shared};
    for (n, k, form, configs) in [
        (
            128,
            64,
            KMajor,
            &[(1, 1), (1, 2), (2, 2), (1, 3), (1, 4)][..],
        ),
        (256, 64, KMajor, &[(1, 1), (1, 2), (2, 2), (1, 3)][..]),
        (128, 128, MnMajor, &[(1, 2), (1, 3)][..]),
        (64, 128, MnMajor, &[(1, 2), (1, 3)][..]),
        (128, 128, Shared, &[(1, 2), (1, 3)][..]),
        (64, 128, Shared, &[(1, 2), (1, 3)][..]),
    ] {
        for &(per_sm, warpgroups) in configs {
            let label = format!(
                "loop 64x{n}x{k} {form:?}: {per_sm} cube(s) of {warpgroups} warpgroup(s) per SM, {iters} calls"
            );
            let speed =
                check::loop_speed(&client, (n, k, form), (sms * per_sm, warpgroups), iters, 5);
            ok &= report(&label, speed);
        }
    }
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Prints one timing, `(milliseconds, TFLOP/s)`, or its failure; whether it ran.
#[cfg(feature = "cuda")]
fn report(label: &str, timing: Result<(f64, f64), String>) -> bool {
    match timing {
        Ok((ms, tflops)) => {
            println!("{label}: {ms:.3} ms, {tflops:.1} TFLOP/s");
            true
        }
        Err(e) => {
            println!("{label}: FAILED {e}");
            false
        }
    }
}

/// The warpgroup-MMA attention kernels (the synchronous prototype and the pipelined one):
/// checked against f64 at small sizes, then timed at 16k tokens and hidden 2048, bf16.
#[cfg(feature = "cuda")]
fn attention(
    client: &cubecl::prelude::ComputeClient<cubecl::cuda::CudaRuntime>,
) -> std::process::ExitCode {
    use flint_kernels::wgmma::attention::WgmmaFwdParams;
    use flint_kernels::wgmma::check::{attention_error, attention_speed};
    let params = |warpgroups, block_kv, d, pipelined| WgmmaFwdParams {
        warpgroups,
        block_kv,
        head_dim: d,
        val_dim: d,
        pipelined,
        ablation: Default::default(),
        out_vec: 2,
        ..Default::default()
    };
    // The synchronous prototype takes no tiling with block_kv = D = Dv: both products would
    // share a shape, which it refuses (ptxas then loses Q; docs/PERF.md). The pipelined
    // kernel reads Q from shared memory and takes them.
    let configs = [
        params(2, 64, 128, false),
        params(3, 64, 128, false),
        params(2, 128, 64, false),
        params(2, 64, 128, true),
        params(2, 128, 128, true),
        params(3, 64, 128, true),
        params(3, 128, 128, true),
        params(3, 96, 128, true),
        params(2, 64, 64, true),
        params(3, 64, 64, true),
        params(2, 128, 64, true),
        params(3, 128, 64, true),
        params(2, 64, 256, true),
        // The same kernel copying by TMA.
        WgmmaFwdParams {
            tma: true,
            ..params(3, 64, 128, true)
        },
        WgmmaFwdParams {
            tma: true,
            ..params(2, 128, 128, true)
        },
        WgmmaFwdParams {
            tma: true,
            ..params(3, 64, 64, true)
        },
        WgmmaFwdParams {
            tma: true,
            ..params(2, 128, 64, true)
        },
    ];
    let mut ok = true;
    for p in configs {
        let shape = [1, 2, 768, p.head_dim as usize];
        let err = attention_error(client, shape, p);
        println!("check {p:?} at {shape:?}: (output rel. error, LSE abs. error) {err:?}");
        ok &= matches!(err, Ok((o, l)) if o < 2e-2 && l < 1e-3);
    }
    // Timed even where the check failed: the speed of a wrong kernel is still a bound.
    // The bench's and sdpa_reference.py's workloads: 16k tokens, hidden 2048 (H = 2048 / D);
    // three warpgroups' 192-row cubes take lengths they divide.
    for p in configs.into_iter().filter(|p| p.head_dim <= 128) {
        let seqs: &[usize] = if p.warpgroups == 3 {
            &[1536, 3072, 6144]
        } else {
            &[1024, 2048, 4096, 8192]
        };
        for &s in seqs {
            let shape = [
                16384 / s,
                2048 / p.head_dim as usize,
                s,
                p.head_dim as usize,
            ];
            let label = format!(
                "speed {} {}x{} D={} S={s}",
                if p.tma {
                    "pipelined-tma"
                } else if p.pipelined {
                    "pipelined"
                } else {
                    "prototype"
                },
                64 * p.warpgroups,
                p.block_kv,
                p.head_dim
            );
            ok &= report(&label, attention_speed(client, shape, p, 20));
        }
    }
    // What the pipelined kernel's time is made of: the same launches without K/V copies past
    // the first use of each buffer (wrong results; timings only).
    use flint_kernels::wgmma::attention::Ablation;
    for base in [
        params(2, 64, 128, true),
        params(3, 64, 128, true),
        params(2, 128, 64, true),
    ] {
        for ablation in [Ablation::None, Ablation::NoLoads] {
            let p = WgmmaFwdParams { ablation, ..base };
            let s = if p.warpgroups == 3 { 3072 } else { 4096 };
            let shape = [
                16384 / s,
                2048 / p.head_dim as usize,
                s,
                p.head_dim as usize,
            ];
            let label = format!(
                "ablation {ablation:?} {}x{} D={} S={s}",
                64 * p.warpgroups,
                p.block_kv,
                p.head_dim
            );
            ok &= report(&label, attention_speed(client, shape, p, 20));
        }
    }
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("wgmma_probe: build with --features cuda");
    std::process::exit(2);
}
