//! `flint bench`: flint's attention against Burn's, as a table, a CSV and an SVG chart.

use std::path::PathBuf;

use flint_benches::attention_bench::{Args, dtype, run_bench};

use crate::failure::{Failure, Outcome};

/// The arguments of `flint bench` (the same as the `attention_bench` binary's).
#[derive(Clone, Debug, clap::Args)]
pub struct BenchArgs {
    /// Head dims of the grid (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "128")]
    pub dims: Vec<usize>,
    /// Sequence lengths of the grid (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1024,4096")]
    pub seqs: Vec<usize>,
    /// Time the manifest's workloads instead of the grid.
    #[arg(long)]
    pub workloads: bool,
    /// Element type: bf16, f16 or f32.
    #[arg(long, default_value = "bf16")]
    pub dtype: String,
    /// Tokens per call in the grid (batch = tokens / seq).
    #[arg(long, default_value_t = 16384)]
    pub tokens: usize,
    /// Hidden size in the grid (heads = hidden / d).
    #[arg(long, default_value_t = 2048)]
    pub hidden: usize,
    /// Skip Burn's own attention.
    #[arg(long)]
    pub no_burn: bool,
    /// Timed runs per row (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub iters: usize,
    /// Time a training step (forward + backward) instead of the forward.
    #[arg(long)]
    pub bwd: bool,
    /// Write every row as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write an SVG chart of TFLOP/s against sequence length.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Draw `sdpa_reference.py` output (saved to a file) beside flint in the chart.
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
}

/// `flint bench`.
pub fn run(a: &BenchArgs) -> Outcome {
    if a.seqs.contains(&0) || a.dims.is_empty() || a.iters == 0 {
        return Err(Failure::Input(
            "--seqs and --iters must be positive and --dims non-empty".into(),
        ));
    }
    let args = Args {
        dims: a.dims.clone(),
        seqs: a.seqs.clone(),
        workloads: a.workloads,
        dtype: dtype(&a.dtype).map_err(Failure::Input)?,
        tokens: a.tokens,
        hidden: a.hidden,
        burn: !a.no_burn,
        iters: a.iters,
        csv: a.csv.clone(),
        svg: a.svg.clone(),
        reference: a.reference.clone(),
        bwd: a.bwd,
        ..Args::default()
    };
    if let Some(r) = &args.reference
        && !r.is_file()
    {
        return Err(Failure::Input(format!(
            "--reference {}: no such file",
            r.display()
        )));
    }
    run_bench(&args).map_err(Failure::Input)
}
