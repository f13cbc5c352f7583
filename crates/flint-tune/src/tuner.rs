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
    ///
    /// A close race is run again: where another candidate's fastest sample beats the
    /// leader's median, a stall that hit a few runs of one candidate may have decided the
    /// ranking. The leader and every such candidate then take `samples` more rounds among
    /// themselves (once), and are ranked on all their samples. A choice made on noise would
    /// be kept in the disk cache until the next re-tune.
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
        let everyone: Vec<usize> = (0..candidates.len()).collect();
        self.rounds(candidates, &everyone, &mut times, bench);
        let contenders = close_race(&times);
        if contenders.len() > 1 {
            self.rounds(candidates, &contenders, &mut times, bench);
        }
        let results: Vec<CandidateResult<C>> = candidates
            .iter()
            .zip(times)
            .map(|(config, outcome)| {
                let outcome = outcome.map(|t| stats(&t));
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
            .min_by_key(|(_, s)| rank(s))
            .map(|(i, _)| i);
        TuneReport { results, winner }
    }

    /// `samples` timed rounds over the candidates `which` (indices), one run of each per
    /// round; a candidate that fails is dropped with the reason.
    fn rounds<C>(
        &self,
        candidates: &[C],
        which: &[usize],
        times: &mut [Result<Vec<Duration>, String>],
        bench: &mut dyn Benchmark<C>,
    ) {
        for _ in 0..self.samples {
            for &i in which {
                if let Ok(samples) = &mut times[i] {
                    match bench.run(&candidates[i]) {
                        Ok(t) => samples.push(t),
                        Err(why) => times[i] = Err(why),
                    }
                }
            }
        }
    }
}

/// The statistics of a non-empty set of samples.
fn stats(samples: &[Duration]) -> Stats {
    let mut t = samples.to_vec();
    t.sort();
    Stats {
        median: t[t.len() / 2],
        min: t[0],
        max: t[t.len() - 1],
        samples: t.len(),
    }
}

/// The order candidates are ranked in: lowest median, ties to the lowest minimum.
fn rank(s: &Stats) -> (Duration, Duration) {
    (s.median, s.min)
}

/// The leader (by [`rank`]) and every candidate whose fastest sample beats its median;
/// empty if nothing ran.
fn close_race(times: &[Result<Vec<Duration>, String>]) -> Vec<usize> {
    let timed: Vec<(usize, Stats)> = times
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.as_ref().ok().map(|t| (i, stats(t))))
        .collect();
    let Some(&(leader, best)) = timed.iter().min_by_key(|(_, s)| rank(s)) else {
        return Vec::new();
    };
    timed
        .iter()
        .filter(|(i, s)| *i == leader || s.min < best.median)
        .map(|(i, _)| *i)
        .collect()
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

    /// A benchmark in which candidate 0 costs 40 µs but its first three timed runs hit a
    /// stall (60 µs), candidate 1 costs 56 µs and candidate 2 costs 90 µs; it counts each
    /// candidate's runs.
    struct Stalled {
        runs: [usize; 3],
    }

    impl Benchmark<usize> for Stalled {
        fn run(&mut self, config: &usize) -> Result<Duration, String> {
            self.runs[*config] += 1;
            // One warmup run, then the stall.
            let stalled = *config == 0 && (2..=4).contains(&self.runs[0]);
            let micros = match config {
                0 if stalled => 60,
                0 => 40,
                1 => 56,
                _ => 90,
            };
            Ok(Duration::from_micros(micros))
        }
    }

    /// Five samples alone would crown candidate 1 (candidate 0's median is a stalled 60 µs),
    /// and the disk cache would keep that choice. Candidate 0's fastest sample beats the
    /// leader's median, so the two run five more rounds and candidate 0 wins on ten samples.
    #[test]
    fn a_close_race_is_run_again_and_a_stall_does_not_decide_it() {
        let mut bench = Stalled { runs: [0; 3] };
        let report = Tuner::new(1, 5).tune(&[0usize, 1, 2], &mut bench, |_, _| {});
        let (winner, stats) = report.best().unwrap();
        assert_eq!(*winner, 0);
        assert_eq!(stats.samples, 10);
        assert_eq!(stats.median, Duration::from_micros(40));
        assert_eq!(stats.max, Duration::from_micros(60));
        // The clear loser is not run again: one warmup and five samples.
        assert_eq!(bench.runs, [11, 11, 6]);
        let loser = report.results[2].outcome.as_ref().unwrap();
        assert_eq!(loser.samples, 5);
    }

    /// Without a stall nobody's fastest sample beats the leader's median: one pass only.
    #[test]
    fn a_clear_race_is_not_run_again() {
        let mut runs = [0usize; 3];
        let mut bench = |c: &usize| -> Result<Duration, String> {
            runs[*c] += 1;
            Ok(Duration::from_micros(
                [40, 56, 90][*c] + runs[*c] as u64 % 2,
            ))
        };
        let report = Tuner::new(1, 5).tune(&[0usize, 1, 2], &mut bench, |_, _| {});
        assert_eq!(report.best().map(|(c, _)| *c), Some(0));
        assert_eq!(runs, [6, 6, 6]);
    }

    /// A candidate that fails while a close race is run again is dropped, and the other
    /// contender wins.
    #[test]
    fn a_contender_that_fails_in_the_second_pass_is_skipped() {
        let mut runs = [0usize; 2];
        let mut bench = |c: &usize| -> Result<Duration, String> {
            runs[*c] += 1;
            match (*c, runs[*c]) {
                (0, 8) => Err("device lost".into()),
                (0, n) => Ok(Duration::from_micros(if n % 2 == 0 { 30 } else { 70 })),
                _ => Ok(Duration::from_micros(50)),
            }
        };
        let mut failed = Vec::new();
        let report = Tuner::new(0, 4).tune(&[0usize, 1], &mut bench, |c, why| {
            failed.push((*c, why.to_string()))
        });
        assert_eq!(report.best().map(|(c, _)| *c), Some(1));
        assert_eq!(failed, vec![(0, "device lost".to_string())]);
        assert_eq!(report.best().unwrap().1.samples, 8);
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
