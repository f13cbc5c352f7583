//! `attention_bench`: flint's attention against Burn's (see `flint_benches::attention_bench`
//! for the flags, the columns and the FLOP conventions).
//!
//! ```text
//! cargo run --release -p flint-benches --features cuda --bin attention_bench -- --bwd
//! ```

fn main() -> std::process::ExitCode {
    // `--no-kernel-cache` times compilation as a first process on a machine sees it.
    if !std::env::args().any(|a| a == "--no-kernel-cache") {
        let _ = flint::enable_kernel_cache();
    }
    // Each autotuned bucket's wall time, its candidates' compiles included, after each
    // candidate's timing or why it was skipped (what the choice was made on).
    flint_benches::attention_bench::install_tuning_hook();
    let result = flint_benches::attention_bench::parse(std::env::args().skip(1))
        .and_then(|args| flint_benches::attention_bench::run_bench(&args));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("attention_bench: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
