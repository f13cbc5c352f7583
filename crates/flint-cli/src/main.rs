//! The `flint` command. This version has `flint manifest check`, the manifest validator; the
//! cache, tune, bench and devices subcommands arrive with the CLI issue.
//!
//! Exit status: 0 when the check passes, 1 when it finds broken rules, 2 when the manifest
//! cannot be loaded or the arguments are wrong.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use flint_manifest::{Manifest, validate};

/// Flint: tuned flash attention for Burn.
#[derive(Parser, Debug)]
#[command(name = "flint", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Op contracts in `manifest/*.yaml`.
    #[command(subcommand)]
    Manifest(ManifestCommand),
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
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn manifest_check(dir: PathBuf, root: Option<PathBuf>, json: bool) -> ExitCode {
    let manifest = match Manifest::load_dir(&dir) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("flint manifest check: {e}");
            return ExitCode::from(2);
        }
    };
    let root = root.unwrap_or_else(|| {
        dir.canonicalize()
            .ok()
            .and_then(|d| d.parent().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("."))
    });
    let findings = validate(&manifest, &flint_kernels::op_specs(), &root);
    if json {
        let list: Vec<_> = findings
            .iter()
            .map(|f| {
                serde_json::json!({
                    "op": f.op,
                    "level": format!("{:?}", f.level),
                    "rule": f.rule,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "entries": manifest.entries.len(),
                "ok": findings.is_empty(),
                "findings": list,
            })
        );
    } else if findings.is_empty() {
        println!(
            "manifest {}: {} entries, every level (L0-L4) holds",
            dir.display(),
            manifest.entries.len()
        );
    } else {
        for f in &findings {
            eprintln!("{f}");
        }
        eprintln!("{} broken rule(s)", findings.len());
    }
    if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Manifest(ManifestCommand::Check { dir, root, json }) => {
            manifest_check(dir, root, json)
        }
    }
}
