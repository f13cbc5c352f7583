//! The `flint` command: the devices flint sees, its tuning cache (readable, exportable,
//! importable), ahead-of-time tuning, benchmarks and the op manifest check.
//!
//! Exit status: 0 on success; 1 when the command ran and found problems (broken manifest
//! rules, skipped imports, failed tuning calls); 2 for bad arguments or input (a missing or
//! unreadable file, an unknown op); 3 when no device can run the work.

mod bench_cmd;
mod cache_cmd;
mod devices_cmd;
mod failure;
mod manifest_cmd;
mod tune_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Flint: tuned flash attention for Burn.
///
/// Tuned kernel configs live in a per-device cache (default: the user cache dir, e.g.
/// ~/.cache/flint; FLINT_CACHE_DIR or --cache-dir to change it). `flint tune` fills it ahead
/// of first use, `flint cache export/import` ships it to other machines.
#[derive(Parser, Debug)]
#[command(name = "flint", version, about, long_about)]
struct Cli {
    /// The cache directory (default: FLINT_CACHE_DIR, else the user cache dir).
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Print JSON for scripts instead of text for people.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Every CubeCL device found, with its fingerprint and features (tensor cores, planes,
    /// shared memory).
    Devices,
    /// The tuning cache: where it is, what it holds, clearing and shipping it.
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Tune ahead of first use: manifest workloads, given shapes or recorded invocations.
    Tune(tune_cmd::TuneArgs),
    /// Time flint's attention against Burn's: a table, a CSV and an SVG chart.
    Bench(bench_cmd::BenchArgs),
    /// Op contracts in `manifest/*.yaml`.
    #[command(subcommand)]
    Manifest(ManifestCommand),
}

#[derive(Subcommand, Debug)]
enum CacheCommand {
    /// Print the cache directory.
    Path,
    /// Every cache file: device, op, version, entry count; and unusable files.
    List,
    /// The entries of one op: key, config, source, tuned time and signature.
    Show {
        /// The op id, e.g. attention_fwd.
        op: String,
    },
    /// Remove cached configs (every op, or one with --op). Recordings are kept.
    Clear {
        /// Only this op.
        #[arg(long)]
        op: Option<String>,
    },
    /// Write the cache (or one op's part) to a bundle file (`-` for stdout).
    Export {
        /// The bundle to write.
        file: PathBuf,
        /// Only this op.
        #[arg(long)]
        op: Option<String>,
    },
    /// Merge a bundle into the cache. Every entry is validated (op, version, key,
    /// fingerprint limits, a config the op accepts); skipped entries are listed with why
    /// and make the exit status 1.
    Import {
        /// The bundle to read.
        file: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
enum ManifestCommand {
    /// Checks every entry against the ops registered in code (levels L0 to L4).
    Check {
        /// The manifest directory.
        #[arg(long, default_value = "manifest")]
        dir: PathBuf,
        /// Where `source` paths are resolved (default: the manifest directory's parent).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

fn run(cli: Cli) -> failure::Outcome {
    let json = cli.json;
    match cli.command {
        Command::Devices => devices_cmd::run(json),
        Command::Cache(command) => {
            let dir = cache_cmd::dir(cli.cache_dir)?;
            match command {
                CacheCommand::Path => cache_cmd::path(&dir, json),
                CacheCommand::List => cache_cmd::list(&dir, json),
                CacheCommand::Show { op } => cache_cmd::show(&dir, &op, json),
                CacheCommand::Clear { op } => cache_cmd::clear(&dir, op.as_deref(), json),
                CacheCommand::Export { file, op } => {
                    cache_cmd::export(&dir, &file, op.as_deref(), json)
                }
                CacheCommand::Import { file } => cache_cmd::import(&dir, &file, json),
            }
        }
        Command::Tune(args) => tune_cmd::run(&args, cli.cache_dir, json),
        Command::Bench(args) => {
            log::debug!("compiled kernels: {:?}", flint::enable_kernel_cache());
            bench_cmd::run(&args)
        }
        Command::Manifest(ManifestCommand::Check { dir, root }) => {
            manifest_cmd::check(dir, root, json)
        }
    }
}

fn main() -> ExitCode {
    let filter = std::env::var("FLINT_LOG").unwrap_or_else(|_| "warn".to_string());
    let _ = env_logger::Builder::new()
        .parse_filters(&filter)
        .format_timestamp(None)
        .try_init();
    let cli = Cli::parse();
    let name = match &cli.command {
        Command::Devices => "devices",
        Command::Cache(_) => "cache",
        Command::Tune(_) => "tune",
        Command::Bench(_) => "bench",
        Command::Manifest(_) => "manifest",
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flint {name}: {e}");
            e.code()
        }
    }
}
