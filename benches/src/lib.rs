//! Helpers shared by Flint's benchmark binaries.

use std::time::Duration;

pub mod attention_bench;
pub mod chart;
pub mod cmma_probe;
pub mod fusion_cost;

/// The median of `samples` (sorted in place). Zero for an empty slice.
pub fn median(samples: &mut [Duration]) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.sort();
    samples[samples.len() / 2]
}

/// A duration in the unit that reads best (ns, µs or ms).
pub fn human(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 10_000 {
        format!("{ns} ns")
    } else if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}
