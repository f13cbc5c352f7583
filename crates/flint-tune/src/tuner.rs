//! The Tuner: benchmarks candidates through a timing trait.

use std::fmt::Debug;
use std::time::Duration;

/// Runs an op once with a given config on the real inputs and times it.
///
/// `flint-kernels` implements this with CubeCL's profiling; tests implement it with fakes.
pub trait Benchmark<C> {
    /// Runs `config` once and returns its duration (device time where available), or why it
    /// could not run. Errors are per-candidate: the tuner skips that candidate.
    fn run(&mut self, config: &C) -> Result<Duration, String>;
}

impl<C, F: FnMut(&C) -> Result<Duration, String>> Benchmark<C> for F {
    fn run(&mut self, config: &C) -> Result<Duration, String> {
        self(config)
    }
}

/// Timing statistics of one candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The median sample.
    pub median: Duration,
    /// The fastest sample.
    pub min: Duration,
    /// How many samples were taken.
    pub samples: usize,
}

/// The outcome of one candidate.
#[derive(Clone, Debug)]
pub struct CandidateResult<C> {
    /// The candidate.
    pub config: C,
    /// Its statistics, or why it was skipped.
    pub outcome: Result<Stats, String>,
}

/// Every candidate's outcome, and the winner (lowest median, ties to the lowest minimum).
#[derive(Clone, Debug)]
pub struct TuneReport<C> {
    /// All candidates, in the order they were given.
    pub results: Vec<CandidateResult<C>>,
    /// The index of the winner in `results`, if any candidate ran.
    pub winner: Option<usize>,
}

impl<C> TuneReport<C> {
    /// The winning config and its statistics.
    pub fn best(&self) -> Option<(&C, Stats)> {
        let result = &self.results[self.winner?];
        result.outcome.as_ref().ok().map(|s| (&result.config, *s))
    }
}

/// Benchmarks candidates: `warmup` untimed runs, then `samples` timed runs each.
#[derive(Clone, Copy, Debug)]
pub struct Tuner {
    warmup: usize,
    samples: usize,
}

impl Tuner {
    /// A tuner with `warmup` untimed and `samples` (at least 1) timed runs per candidate.
    pub fn new(warmup: usize, samples: usize) -> Self {
        Self {
            warmup,
            samples: samples.max(1),
        }
    }

    /// Benchmarks every candidate. A candidate that fails in any run is skipped with the
    /// reason, and `on_failure` is told.
    pub fn tune<C: Clone + Debug>(
        &self,
        candidates: &[C],
        bench: &mut dyn Benchmark<C>,
        mut on_failure: impl FnMut(&C, &str),
    ) -> TuneReport<C> {
        let mut results = Vec::with_capacity(candidates.len());
        for config in candidates {
            let outcome = self.measure(config, bench);
            if let Err(reason) = &outcome {
                on_failure(config, reason);
            }
            results.push(CandidateResult {
                config: config.clone(),
                outcome,
            });
        }
        let winner = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|s| (i, s)))
            .min_by_key(|(_, s)| (s.median, s.min))
            .map(|(i, _)| i);
        TuneReport { results, winner }
    }

    fn measure<C>(&self, config: &C, bench: &mut dyn Benchmark<C>) -> Result<Stats, String> {
        for _ in 0..self.warmup {
            bench.run(config)?;
        }
        let mut times = (0..self.samples)
            .map(|_| bench.run(config))
            .collect::<Result<Vec<_>, _>>()?;
        times.sort();
        Ok(Stats {
            median: times[times.len() / 2],
            min: times[0],
            samples: times.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_lowest_median_and_skips_failures() {
        let mut calls = Vec::new();
        let mut bench = |c: &u32| -> Result<Duration, String> {
            calls.push(*c);
            match c {
                0 => Err("needs cmma".into()),
                n => Ok(Duration::from_micros(100 / u64::from(*n))),
            }
        };
        let mut failed = Vec::new();
        let report = Tuner::new(1, 3).tune(&[0, 1, 4, 2], &mut bench, |c, why| {
            failed.push((*c, why.to_string()))
        });
        assert_eq!(report.best().map(|(c, _)| *c), Some(4));
        assert_eq!(failed, vec![(0, "needs cmma".to_string())]);
        // candidate 0 fails in warmup; the others run 1 warmup + 3 samples.
        assert_eq!(calls.len(), 1 + 3 * 4);
        let stats = report.best().unwrap().1;
        assert_eq!(stats.samples, 3);
        assert_eq!(stats.median, Duration::from_micros(25));
    }

    #[test]
    fn median_and_min_come_from_the_samples() {
        let mut times = vec![9u64, 1, 5, 7, 3].into_iter();
        let mut bench = |_: &u8| -> Result<Duration, String> {
            Ok(Duration::from_micros(times.next().unwrap()))
        };
        let report = Tuner::new(0, 5).tune(&[0u8], &mut bench, |_, _| {});
        let stats = report.best().unwrap().1;
        assert_eq!(stats.median, Duration::from_micros(5));
        assert_eq!(stats.min, Duration::from_micros(1));
    }

    #[test]
    fn no_winner_when_everything_fails() {
        let mut bench = |_: &u8| -> Result<Duration, String> { Err("out of memory".into()) };
        let report = Tuner::new(0, 2).tune(&[1u8, 2], &mut bench, |_, _| {});
        assert!(report.best().is_none());
        assert_eq!(report.results.len(), 2);
    }
}
