//! Selector events: every decision is reported to `log` and to an optional user hook.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::CallKey;

/// The tiers of the selector, in the order they are consulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// A config passed explicitly by the caller.
    Override,
    /// A scoped overlay (see [`crate::overlay`]).
    Overlay,
    /// The in-process cache.
    Memory,
    /// The persistent cache.
    Disk,
    /// Benchmarking the candidates.
    Autotune,
    /// The op's default.
    Heuristic,
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Override => "override",
            Self::Overlay => "overlay",
            Self::Memory => "memory cache",
            Self::Disk => "disk cache",
            Self::Autotune => "autotune",
            Self::Heuristic => "heuristic",
        })
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum EventKind {
    /// A tier answered with a config (its `Debug` text).
    Hit {
        /// The tier that answered.
        tier: Tier,
        /// The config.
        config: String,
    },
    /// A tier had an answer but it was rejected (e.g. a cached config the op no longer accepts).
    Rejected {
        /// The tier.
        tier: Tier,
        /// Why.
        reason: String,
    },
    /// Autotuning started.
    TuneStarted {
        /// The number of candidates.
        candidates: usize,
    },
    /// A candidate failed and was skipped.
    CandidateFailed {
        /// The candidate.
        config: String,
        /// Why it failed.
        reason: String,
    },
    /// A candidate's timing (one event per candidate that ran), before the winner's
    /// [`EventKind::TuneFinished`]: what the choice was made on.
    CandidateTimed {
        /// The candidate.
        config: String,
        /// Its median sample.
        median: Duration,
        /// Its fastest sample.
        min: Duration,
        /// Its slowest sample.
        max: Duration,
        /// How many samples it took: more than the policy's where a close race was run
        /// again.
        samples: usize,
    },
    /// Autotuning finished with a winner.
    TuneFinished {
        /// The winner.
        config: String,
        /// Its median time.
        median: Duration,
        /// Wall time spent tuning.
        elapsed: Duration,
    },
    /// The persistent cache could not be written; the config lives in memory only.
    CacheWriteFailed {
        /// Why.
        reason: String,
    },
    /// Every tier missed.
    Failed {
        /// The error message.
        reason: String,
    },
}

/// One selector decision.
#[derive(Clone, Debug)]
pub struct Event<'a> {
    /// The op id.
    pub op: &'a str,
    /// The call key.
    pub key: &'a CallKey,
    /// What happened.
    pub kind: EventKind,
}

/// A user callback that receives every event.
pub type Hook = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

impl fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, key) = (self.op, self.key);
        match &self.kind {
            EventKind::Hit { tier, config } => write!(f, "{op} {key}: {tier} -> {config}"),
            EventKind::Rejected { tier, reason } => {
                write!(f, "{op} {key}: {tier} entry rejected: {reason}")
            }
            EventKind::TuneStarted { candidates } => {
                write!(f, "{op} {key}: autotuning {candidates} candidates")
            }
            EventKind::CandidateFailed { config, reason } => {
                write!(f, "{op} {key}: candidate {config} skipped: {reason}")
            }
            EventKind::CandidateTimed {
                config,
                median,
                min,
                max,
                samples,
            } => write!(
                f,
                "{op} {key}: candidate {config}: median {median:?} of {samples} (min {min:?}, \
                 max {max:?})"
            ),
            EventKind::TuneFinished {
                config,
                median,
                elapsed,
            } => write!(
                f,
                "{op} {key}: tuned -> {config} (median {median:?}, tuning took {elapsed:?})"
            ),
            EventKind::CacheWriteFailed { reason } => {
                write!(f, "{op} {key}: cache not persisted: {reason}")
            }
            EventKind::Failed { reason } => write!(f, "{op} {key}: {reason}"),
        }
    }
}

impl EventKind {
    /// The log level of this kind of event: one info line per tune, warnings for failures,
    /// and hot-path hits at trace level so that a warm call logs nothing by default.
    pub fn level(&self) -> log::Level {
        match self {
            Self::Hit { tier, .. } => hit_level(*tier),
            Self::TuneStarted { .. } | Self::CandidateTimed { .. } => log::Level::Debug,
            Self::TuneFinished { .. } => log::Level::Info,
            Self::CandidateFailed { .. } | Self::Rejected { .. } => log::Level::Info,
            Self::CacheWriteFailed { .. } | Self::Failed { .. } => log::Level::Warn,
        }
    }
}

/// The level of a hit on `tier` (known before the event is built, so that a warm call
/// formats nothing when nobody listens).
pub(crate) fn hit_level(tier: Tier) -> log::Level {
    match tier {
        Tier::Memory | Tier::Override | Tier::Overlay => log::Level::Trace,
        _ => log::Level::Debug,
    }
}
