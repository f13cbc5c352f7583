//! Writes the CUDA C++ of the tensor-core kernels (forward and backward) for the tilings the
//! tuner tries,
//! generated without a GPU, one file per kernel, for NVRTC and `ptxas` to check
//! (`scripts/device/local_ptxas.sh` runs all three).
//!
//! ```text
//! cargo run -p flint-benches --features cuda --bin cuda_source -- OUT_DIR
//! ```

#[cfg(feature = "cuda")]
fn main() -> Result<(), String> {
    use flint_kernels::attention::cuda_source::{
        BwdSourceSpec, FwdSourceSpec, backward_cuda_sources, forward_cuda_source,
        wgmma_cuda_sources,
    };
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: cuda_source OUT_DIR")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{dir}: {e}"))?;
    let write = |name: String, source: String| -> Result<(), String> {
        let path = format!("{dir}/{name}.cu");
        std::fs::write(&path, source).map_err(|e| format!("{path}: {e}"))?;
        println!("{path}");
        Ok(())
    };
    for (d, tiles) in [
        (64, [(128, 128), (64, 128), (64, 64), (128, 64)]),
        (128, [(64, 64), (128, 64), (64, 32), (128, 32)]),
    ] {
        for (block_q, block_kv) in tiles {
            for (causal, features) in [(false, false), (true, false), (false, true)] {
                let spec = FwdSourceSpec {
                    dtype: "bf16",
                    head_dim: d,
                    val_dim: d,
                    block_q,
                    block_kv,
                    causal,
                    features,
                };
                let (kernel, source) = forward_cuda_source(&spec)?;
                let tag = format!(
                    "d{d}_q{block_q}_kv{block_kv}{}{}",
                    if causal { "_causal" } else { "" },
                    if features { "_features" } else { "" },
                );
                write(format!("{kernel}_{tag}"), source)?;
            }
        }
    }
    let plain = BwdSourceSpec {
        dtype: "bf16",
        head_dim: 128,
        val_dim: 128,
        block_q: 64,
        block_kv: 64,
        fused_dq: false,
        causal: false,
        bias: false,
        softcap: false,
        dropout: false,
        planes: 4,
        grid: false,
    };
    let mut specs = Vec::new();
    for d in [64, 128] {
        for block_q in [32, 64] {
            for fused_dq in [false, true] {
                for causal in [false, true] {
                    specs.push(BwdSourceSpec {
                        head_dim: d,
                        val_dim: d,
                        block_q,
                        block_kv: block_q,
                        fused_dq,
                        causal,
                        ..plain.clone()
                    });
                }
            }
        }
    }
    // The eight-plane tilings the tuner tries (128 keys per dK/dV cube), the fused dQ also
    // with its planes as a grid.
    for (block_q, fused_dq, grid) in [(32, false, false), (64, true, false), (64, true, true)] {
        for causal in [false, true] {
            specs.push(BwdSourceSpec {
                block_q,
                block_kv: block_q,
                fused_dq,
                causal,
                planes: 8,
                grid,
                ..plain.clone()
            });
        }
    }
    // The fused grid with 128-query tiles at D = 64 (its register rule's edge), plain and
    // with bias and dropout (softcap is refused there).
    for (causal, features) in [(false, false), (true, false), (true, true)] {
        specs.push(BwdSourceSpec {
            head_dim: 64,
            val_dim: 64,
            block_q: 128,
            block_kv: 64,
            fused_dq: true,
            causal,
            bias: features,
            dropout: features,
            planes: 8,
            grid: true,
            ..plain.clone()
        });
    }
    // The grid with every feature, two-kernel, at D = 64.
    specs.push(BwdSourceSpec {
        head_dim: 64,
        val_dim: 64,
        causal: true,
        bias: true,
        softcap: true,
        dropout: true,
        grid: true,
        ..plain.clone()
    });
    // Every feature at once, at the tiles the op allows for them.
    for (d, block_q) in [(64, 64), (128, 32)] {
        for fused_dq in [false, true] {
            specs.push(BwdSourceSpec {
                head_dim: d,
                val_dim: d,
                block_q,
                block_kv: block_q,
                fused_dq,
                causal: true,
                bias: true,
                softcap: true,
                dropout: true,
                ..plain.clone()
            });
        }
    }
    // D = 256, whose dK/dV pass runs as two launches (dV, then dK): the tilings the tuner
    // tries, plain and causal, and every feature at the 32-query tile softcap needs.
    for (block_q, block_kv, causal, features) in [
        (64, 32, false, false),
        (64, 32, true, false),
        (64, 64, false, false),
        (32, 32, true, true),
    ] {
        specs.push(BwdSourceSpec {
            head_dim: 256,
            val_dim: 256,
            block_q,
            block_kv,
            causal,
            bias: features,
            softcap: features,
            dropout: features,
            ..plain.clone()
        });
    }
    // And the tuner's split tiling, 8 planes of 32x32, with dQ fused into the dK launch,
    // plain and as a grid.
    for grid in [false, true] {
        specs.push(BwdSourceSpec {
            head_dim: 256,
            val_dim: 256,
            block_q: 32,
            block_kv: 32,
            fused_dq: true,
            planes: 8,
            grid,
            ..plain.clone()
        });
    }
    for spec in &specs {
        let tag = format!(
            "d{}_q{}_kv{}_p{}{}{}{}{}",
            spec.head_dim,
            spec.block_q,
            spec.block_kv,
            spec.planes,
            if spec.fused_dq { "_fused" } else { "" },
            if spec.grid { "_grid" } else { "" },
            if spec.causal { "_causal" } else { "" },
            if spec.bias { "_features" } else { "" },
        );
        for (kernel, source) in backward_cuda_sources(spec)? {
            write(format!("{kernel}_{tag}"), source)?;
        }
    }
    // The warpgroup-MMA check kernels (`flint_kernels::wgmma::check`).
    for (name, source) in wgmma_cuda_sources()? {
        write(name, source)?;
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("cuda_source: build with --features cuda");
    std::process::exit(2);
}
