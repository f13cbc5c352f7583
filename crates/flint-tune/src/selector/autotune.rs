//! Tier 5: benchmark the op's candidates on the real inputs and keep the fastest.

use std::time::Instant;

use crate::tuner::{Benchmark, TuneReport, Tuner};
use crate::{EventKind, Invocation, Op};

use super::Selector;

/// Tunes `inv`: filters the candidates through the op's check, benchmarks them, and emits
/// one event per failed candidate and one for the result.
pub(super) fn run<O: Op>(
    selector: &Selector,
    op: &O,
    inv: &Invocation,
    key: &crate::CallKey,
    bench: &mut dyn Benchmark<O::Config>,
) -> Result<TuneReport<O::Config>, String> {
    let candidates: Vec<O::Config> = op
        .candidates(inv)
        .into_iter()
        .filter(|c| match op.check(inv, c) {
            Ok(()) => true,
            Err(reason) => {
                selector.emit(op.id(), key, || EventKind::CandidateFailed {
                    config: format!("{c:?}"),
                    reason: format!("invalid: {reason}"),
                });
                false
            }
        })
        .collect();
    if candidates.is_empty() {
        return Err("the op offers no valid candidate for this call".to_string());
    }
    selector.emit(op.id(), key, || EventKind::TuneStarted {
        candidates: candidates.len(),
    });
    let started = Instant::now();
    let policy = selector.policy();
    let report = Tuner::new(policy.warmup, policy.samples).tune(&candidates, bench, |c, why| {
        selector.emit(op.id(), key, || EventKind::CandidateFailed {
            config: format!("{c:?}"),
            reason: why.to_string(),
        })
    });
    for result in &report.results {
        if let Ok(stats) = &result.outcome {
            selector.emit(op.id(), key, || EventKind::CandidateTimed {
                config: format!("{:?}", result.config),
                median: stats.median,
                min: stats.min,
                max: stats.max,
                samples: stats.samples,
            });
        }
    }
    match report.best() {
        Some((config, stats)) => {
            selector.emit(op.id(), key, || EventKind::TuneFinished {
                config: format!("{config:?}"),
                median: stats.median,
                elapsed: started.elapsed(),
            });
            Ok(report)
        }
        None => Err(format!("all {} candidates failed", report.results.len())),
    }
}
