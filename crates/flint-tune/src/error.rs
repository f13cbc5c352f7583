//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while choosing a kernel configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TuneError {
    /// Every tier of the selector missed; `misses` says why, tier by tier.
    #[error("no configuration for op `{op}` (key {key}): {}", format_misses(.misses))]
    NoConfig {
        /// The op id.
        op: String,
        /// The call key, as `digest (canonical signature)`.
        key: String,
        /// One line per tier that was consulted: `(tier, reason)`.
        misses: Vec<(crate::Tier, String)>,
    },
    /// A config given explicitly by the caller is not valid for this invocation.
    #[error("override config {config} for op `{op}` is invalid: {reason}")]
    InvalidOverride {
        /// The op id.
        op: String,
        /// The rejected config, as `Debug` text.
        config: String,
        /// Why the op rejected it.
        reason: String,
    },
    /// A strict overlay's config (see [`Overlay::strict`](crate::Overlay::strict)) is not
    /// valid for this invocation.
    #[error("strict overlay config {config} for op `{op}` is invalid: {reason}")]
    InvalidOverlay {
        /// The op id.
        op: String,
        /// The rejected config, as `Debug` text.
        config: String,
        /// Why the op rejected it.
        reason: String,
    },
    /// An invocation was passed to an op it does not belong to.
    #[error("invocation is for op `{got}` but was given to op `{expected}`")]
    WrongOp {
        /// The op the selector was asked about.
        expected: String,
        /// The op the invocation names.
        got: String,
    },
    /// An environment variable holds a value the policy does not understand.
    #[error("environment variable `{var}` has value {value:?}: {rule}")]
    BadEnv {
        /// The variable's name.
        var: &'static str,
        /// Its value.
        value: String,
        /// What values are accepted.
        rule: &'static str,
    },
    /// A cache or recording file could not be read or written.
    #[error("cache file {path}: {reason}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

fn format_misses(misses: &[(crate::Tier, String)]) -> String {
    misses
        .iter()
        .map(|(tier, why)| format!("{tier}: {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}
