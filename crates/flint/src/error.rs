//! The crate's error type.

/// Why an attention call was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttentionError {
    /// A tensor argument has a shape that breaks a rule.
    #[error("`{arg}` has shape {got:?}: {rule}")]
    Shape {
        /// The argument.
        arg: &'static str,
        /// Its shape.
        got: Vec<usize>,
        /// The rule it broke.
        rule: String,
    },
    /// An option has a value that breaks a rule.
    #[error("`{arg}` {rule}")]
    Option {
        /// The option.
        arg: &'static str,
        /// The rule it broke, with the value.
        rule: String,
    },
    /// Arguments disagree on dtype or device.
    #[error("`{arg}` {rule}")]
    Mismatch {
        /// The argument that disagrees with `q`.
        arg: &'static str,
        /// How.
        rule: String,
    },
    /// A `FLINT_*` environment variable holds a value flint does not accept.
    #[error(transparent)]
    Environment(&'static flint_tune::TuneError),
    /// The kernel layer could not run the call.
    #[error(transparent)]
    Kernel(#[from] flint_kernels::KernelError),
}
