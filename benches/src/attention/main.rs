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
    if let Ok(selector) = flint::Selector::global() {
        selector.set_hook_skipping_memory_hits(Some(std::sync::Arc::new(
            |e: &flint::tune::Event<'_>| {
                use flint::tune::EventKind;
                match &e.kind {
                    EventKind::TuneFinished {
                        config, elapsed, ..
                    } => println!(
                        "# tuned {} in {:.2} s -> {config}",
                        e.op,
                        elapsed.as_secs_f64()
                    ),
                    // The selector's own wording of each candidate's timing or failure.
                    EventKind::CandidateTimed { .. } | EventKind::CandidateFailed { .. } => {
                        println!("#   {e}")
                    }
                    _ => {}
                }
            },
        )));
    }
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
