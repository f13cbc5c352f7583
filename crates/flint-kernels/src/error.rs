//! The crate's error type.

use flint_tune::TuneError;

/// What can go wrong when launching a flint kernel.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// An argument breaks a rule of the op (checked on the host, before any launch).
    #[error("`{arg}` {rule}")]
    Invalid {
        /// The argument's name.
        arg: &'static str,
        /// The rule it broke, with the actual value.
        rule: String,
    },
    /// No configuration could be chosen.
    #[error(transparent)]
    Tune(#[from] TuneError),
    /// The runtime refused or failed the launch.
    #[error("launch of `{kernel}` failed: {reason}")]
    Launch {
        /// The kernel.
        kernel: &'static str,
        /// The runtime's message.
        reason: String,
    },
}
