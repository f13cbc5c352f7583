//! Pre-warming and shipping the tuning cache: a "build machine" process tunes a few shapes
//! into one cache directory, the cache is exported to a bundle and imported (every entry
//! validated) into a second directory, and a "fleet machine" process with autotuning off
//! answers every call from that disk cache.
//!
//! ```text
//! cargo run --release -p flint-examples --bin ship_cache
//! ```
//!
//! The same steps with the CLI:
//!
//! ```text
//! FLINT_CACHE_DIR=build flint tune --shape 1,8,2,256,256,64:causal
//! FLINT_CACHE_DIR=build flint cache export bundle.yaml
//! FLINT_CACHE_DIR=fleet flint cache import bundle.yaml
//! ```

use std::process::{Command, ExitCode};
use std::sync::{Arc, Mutex};

use burn::tensor::{Distribution, Tensor};
use flint::{AttentionOptions, FlashAttentionBackend};
use flint_examples::init_logging;
use flint_tune::{Bundle, DiskCache, EventKind, Selector, Tier};

/// The shapes the application uses: `(heads, kv heads, seq, head dim, causal)`.
const SHAPES: [(usize, usize, usize, usize, bool); 2] =
    [(8, 2, 256, 64, true), (4, 4, 128, 32, false)];

/// Calls flash attention on every shape; returns the tier that answered each forward call.
fn calls<B: FlashAttentionBackend>(device: &B::Device) -> Vec<Tier> {
    let tiers = Arc::new(Mutex::new(Vec::new()));
    let sink = tiers.clone();
    if let Ok(selector) = Selector::global() {
        selector.set_hook(Some(Arc::new(move |e: &flint_tune::Event<'_>| {
            let tier = match &e.kind {
                // The fused op re-chooses with the config passed explicitly: not news.
                EventKind::Hit { tier, .. } if *tier != Tier::Override => *tier,
                EventKind::TuneFinished { .. } => Tier::Autotune,
                _ => return,
            };
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(tier);
        })));
    }
    for (h, hkv, s, d, causal) in SHAPES {
        let rand = |heads| Tensor::<B, 4>::random([1, heads, s, d], Distribution::Default, device);
        let out = flint::flash_attention_with(
            rand(h),
            rand(hkv),
            rand(hkv),
            AttentionOptions::new().with_causal(causal),
        );
        let _ = out.into_data();
    }
    tiers.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// A child process: `--run` calls flint on the default GPU backend and prints the tiers.
fn child() -> ExitCode {
    #[cfg(feature = "cuda")]
    let tiers = calls::<burn::backend::Cuda>(&Default::default());
    #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
    let tiers = calls::<burn::backend::Wgpu>(&Default::default());
    #[cfg(not(any(feature = "wgpu", feature = "cuda")))]
    let tiers: Vec<Tier> = {
        eprintln!("ship_cache needs a GPU backend (features wgpu or cuda)");
        return ExitCode::FAILURE;
    };
    let names: Vec<String> = tiers.iter().map(Tier::to_string).collect();
    println!("tiers: {}", names.join(", "));
    ExitCode::SUCCESS
}

/// Runs this binary as a child with the given cache and autotune setting.
fn machine(name: &str, cache: &std::path::Path, autotune: &str) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("--run")
        .env("FLINT_CACHE_DIR", cache)
        .env("FLINT_AUTOTUNE", autotune)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(format!(
            "{name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    println!(
        "{name} ({}, FLINT_AUTOTUNE={autotune}): {stdout}",
        cache.display()
    );
    Ok(stdout)
}

fn ship() -> Result<(), String> {
    let root = std::env::temp_dir().join(format!("flint-ship-cache-{}", std::process::id()));
    let (build, fleet) = (root.join("build"), root.join("fleet"));
    let result = (|| {
        machine("build machine", &build, "on")?;
        let bundle = DiskCache::new(&build).export(None);
        let file = root.join("bundle.yaml");
        std::fs::write(&file, bundle.to_yaml()?).map_err(|e| e.to_string())?;
        println!("exported {} entries to {}", bundle.len(), file.display());
        let report =
            DiskCache::new(&fleet).import(&Bundle::read(&file)?, &flint_kernels::check_entry)?;
        println!(
            "imported into {}: {} added, {} skipped",
            fleet.display(),
            report.added,
            report.skipped.len()
        );
        let tiers = machine("fleet machine", &fleet, "off")?;
        if tiers.contains("autotune") || tiers.contains("heuristic") || !tiers.contains("disk") {
            return Err(format!(
                "the fleet machine did not answer from its cache: {tiers}"
            ));
        }
        println!("every call on the fleet machine came from the shipped cache");
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&root);
    result
}

fn main() -> ExitCode {
    init_logging();
    if std::env::args().nth(1).as_deref() == Some("--run") {
        return child();
    }
    match ship() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ship_cache: {e}");
            ExitCode::FAILURE
        }
    }
}
