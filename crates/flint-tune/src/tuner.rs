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

    /// Called once with every candidate before any run, e.g. to compile them all at once
    /// rather than one by one on their first runs. Does nothing unless implemented.
    fn prepare(&mut self, _candidates: &[C]) {}
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
    /// The slowest sample.
    pub max: Duration,
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
    ///
    /// Every candidate is warmed up first, then the timed runs go round-robin (one run of
    /// each candidate per round), so that a drift of the device's clocks or temperature
    /// during tuning weighs on every candidate alike instead of favouring the first ones.
    pub fn tune<C: Clone + Debug>(
        &self,
        candidates: &[C],
        bench: &mut dyn Benchmark<C>,
        mut on_failure: impl FnMut(&C, &str),
    ) -> TuneReport<C> {
        bench.prepare(candidates);
        let mut times: Vec<Result<Vec<Duration>, String>> = candidates
            .iter()
            .map(|config| {
                (0..self.warmup)
                    .try_for_each(|_| bench.run(config).map(drop))
                    .map(|()| Vec::with_capacity(self.samples))
            })
            .collect();
        for _ in 0..self.samples {
            for (config, slot) in candidates.iter().zip(times.iter_mut()) {
                if let Ok(samples) = slot {
                    match bench.run(config) {
                        Ok(t) => samples.push(t),
                        Err(why) => *slot = Err(why),
                    }
                }
            }
        }
        let results: Vec<CandidateResult<C>> = candidates
            .iter()
            .zip(times)
            .map(|(config, outcome)| {
                let outcome = outcome.map(|mut t| {
                    t.sort();
                    Stats {
                        median: t[t.len() / 2],
                        min: t[0],
                        max: t[t.len() - 1],
                        samples: t.len(),
                    }
                });
                if let Err(reason) = &outcome {
                    on_failure(config, reason);
                }
                CandidateResult {
                    config: config.clone(),
                    outcome,
                }
            })
            .collect();
        let winner = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|s| (i, s)))
            .min_by_key(|(_, s)| (s.median, s.min))
            .map(|(i, _)| i);
        TuneReport { results, winner }
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

    /// The device slows down while tuning (clocks dropping, heat): measured one after the
    /// other, the first candidate would win although the second is faster at any moment.
    #[test]
    fn a_drift_during_tuning_does_not_favour_the_first_candidate() {
        let mut clock = 0u64;
        let mut bench = |c: &u64| -> Result<Duration, String> {
            clock += 1;
            // Candidate 1 costs 100, candidate 2 costs 90, both times a slowdown of 3% a run.
            Ok(Duration::from_micros(
                [0, 100, 90][*c as usize] * (100 + 3 * clock) / 100,
            ))
        };
        let report = Tuner::new(1, 5).tune(&[1u64, 2], &mut bench, |_, _| {});
        assert_eq!(report.best().map(|(c, _)| *c), Some(2));
    }

    /// A benchmark that records its calls, to check when `prepare` comes.
    struct Recorder(Vec<String>);

    impl Benchmark<u8> for Recorder {
        fn run(&mut self, config: &u8) -> Result<Duration, String> {
            self.0.push(format!("run {config}"));
            Ok(Duration::from_micros(u64::from(*config)))
        }

        fn prepare(&mut self, candidates: &[u8]) {
            self.0.push(format!("prepare {candidates:?}"));
        }
    }

    #[test]
    fn every_candidate_is_prepared_once_before_the_first_run() {
        let mut bench = Recorder(Vec::new());
        let report = Tuner::new(1, 1).tune(&[3u8, 2], &mut bench, |_, _| {});
        assert_eq!(report.best().map(|(c, _)| *c), Some(2));
        assert_eq!(
            bench.0,
            ["prepare [3, 2]", "run 3", "run 2", "run 3", "run 2"]
        );
    }

    #[test]
    fn no_winner_when_everything_fails() {
        let mut bench = |_: &u8| -> Result<Duration, String> { Err("out of memory".into()) };
        let report = Tuner::new(0, 2).tune(&[1u8, 2], &mut bench, |_, _| {});
        assert!(report.best().is_none());
        assert_eq!(report.results.len(), 2);
    }
}
