//! The `flint` command: cache, tune, bench, devices and manifest tools.
//!
//! Not built yet: the subcommands arrive with the CLI issue. Until then the binary says so
//! and exits with status 2 rather than pretending to succeed.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!(
        "flint: the command-line tool is not implemented yet; \
         use the `flint` library (see README.md)"
    );
    ExitCode::from(2)
}
