//! How a subcommand fails: a message for people and the exit status for scripts.

use std::process::ExitCode;

/// A failed subcommand.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The work ran and found problems (broken manifest rules, skipped imports): exit 1.
    #[error("{0}")]
    Found(String),
    /// Bad arguments, a missing or unreadable file, an unknown op: exit 2.
    #[error("{0}")]
    Input(String),
    /// Nothing to run on, or the device failed: exit 3.
    #[error("{0}")]
    Device(String),
}

impl Failure {
    /// The process exit status.
    pub fn code(&self) -> ExitCode {
        ExitCode::from(match self {
            Self::Found(_) => 1,
            Self::Input(_) => 2,
            Self::Device(_) => 3,
        })
    }
}

/// The result of a subcommand.
pub type Outcome = Result<(), Failure>;
