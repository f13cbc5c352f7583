//! The selector's policy: which tiers may answer, read from env or set in code.

use std::path::PathBuf;

use crate::TuneError;

/// Whether benchmarking is allowed at all in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Autotune {
    /// Candidates may be benchmarked.
    On,
    /// Never benchmark.
    Off,
}

/// What a cache miss does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMiss {
    /// Benchmark the candidates (if [`Autotune::On`]).
    Autotune,
    /// Use the op's heuristic; explicit tuning (e.g. `flint tune`) still works.
    Heuristic,
}

/// How the selector answers. `Policy::default()` autotunes on a miss and persists to disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Whether benchmarking is allowed.
    pub autotune: Autotune,
    /// Whether the heuristic tier may answer.
    pub heuristics: bool,
    /// What a cache miss does.
    pub cache_miss: CacheMiss,
    /// Whether the persistent cache is read and written.
    pub disk_cache: bool,
    /// The cache directory; `None` means `dirs::cache_dir()/flint`.
    pub cache_dir: Option<PathBuf>,
    /// Whether invocations are recorded for offline tuning.
    pub record: bool,
    /// Untimed runs per candidate before sampling.
    pub warmup: usize,
    /// Timed runs per candidate.
    pub samples: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            autotune: Autotune::On,
            heuristics: true,
            cache_miss: CacheMiss::Autotune,
            disk_cache: true,
            cache_dir: None,
            record: false,
            warmup: 2,
            samples: 5,
        }
    }
}

impl Policy {
    /// The default policy adjusted by the process environment:
    /// - `FLINT_AUTOTUNE=on|off|heuristic`: `heuristic` answers misses with the heuristic,
    ///   `off` also forbids explicit tuning;
    /// - `FLINT_CACHE=off` (or `on`): the persistent cache;
    /// - `FLINT_CACHE_DIR=path`: the cache directory;
    /// - `FLINT_RECORD=1` (or `0`): record invocations.
    ///
    /// # Errors
    /// [`TuneError::BadEnv`] names the variable and the accepted values.
    pub fn from_env() -> Result<Self, TuneError> {
        Self::from_lookup(|var| std::env::var(var).ok())
    }

    /// Like [`Policy::from_env`], reading variables through `lookup` (tests use a map).
    ///
    /// # Errors
    /// [`TuneError::BadEnv`] names the variable and the accepted values.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, TuneError> {
        let mut policy = Self::default();
        if let Some(value) = lookup("FLINT_AUTOTUNE") {
            match value.trim().to_ascii_lowercase().as_str() {
                "on" | "1" | "" => {
                    policy.autotune = Autotune::On;
                    policy.cache_miss = CacheMiss::Autotune;
                }
                "heuristic" => {
                    policy.autotune = Autotune::On;
                    policy.cache_miss = CacheMiss::Heuristic;
                }
                "off" | "0" => {
                    policy.autotune = Autotune::Off;
                    policy.cache_miss = CacheMiss::Heuristic;
                }
                _ => {
                    return Err(TuneError::BadEnv {
                        var: "FLINT_AUTOTUNE",
                        value,
                        rule: "expected `on`, `off` or `heuristic`",
                    });
                }
            }
        }
        if let Some(value) = lookup("FLINT_CACHE") {
            policy.disk_cache = parse_switch("FLINT_CACHE", value)?;
        }
        if let Some(dir) = lookup("FLINT_CACHE_DIR").filter(|d| !d.is_empty()) {
            policy.cache_dir = Some(PathBuf::from(dir));
        }
        if let Some(value) = lookup("FLINT_RECORD") {
            policy.record = parse_switch("FLINT_RECORD", value)?;
        }
        Ok(policy)
    }

    /// Sets the cache directory.
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Sets what a cache miss does.
    pub fn with_cache_miss(mut self, miss: CacheMiss) -> Self {
        self.cache_miss = miss;
        self
    }

    /// Sets whether benchmarking is allowed.
    pub fn with_autotune(mut self, autotune: Autotune) -> Self {
        self.autotune = autotune;
        self
    }

    /// Sets whether the heuristic tier may answer.
    pub fn with_heuristics(mut self, heuristics: bool) -> Self {
        self.heuristics = heuristics;
        self
    }

    /// Sets whether the persistent cache is used.
    pub fn with_disk_cache(mut self, on: bool) -> Self {
        self.disk_cache = on;
        self
    }

    /// Sets whether invocations are recorded.
    pub fn with_record(mut self, on: bool) -> Self {
        self.record = on;
        self
    }

    /// Sets the warmup and sample counts of each candidate's benchmark.
    pub fn with_samples(mut self, warmup: usize, samples: usize) -> Self {
        self.warmup = warmup;
        self.samples = samples.max(1);
        self
    }

    /// The directory of the persistent cache: `cache_dir`, else `dirs::cache_dir()/flint`.
    /// `None` when the platform has no cache directory.
    pub fn resolved_cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir
            .clone()
            .or_else(|| dirs::cache_dir().map(|d| d.join("flint")))
    }
}

fn parse_switch(var: &'static str, value: String) -> Result<bool, TuneError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Ok(true),
        "0" | "off" | "false" | "no" | "" => Ok(false),
        _ => Err(TuneError::BadEnv {
            var,
            value,
            rule: "expected `on`/`1` or `off`/`0`",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, &str)]) -> Result<Policy, TuneError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Policy::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn empty_env_is_the_default() {
        assert_eq!(from(&[]).unwrap(), Policy::default());
    }

    #[test]
    fn env_values_are_read() {
        let p = from(&[
            ("FLINT_AUTOTUNE", "heuristic"),
            ("FLINT_CACHE", "off"),
            ("FLINT_CACHE_DIR", "/tmp/x"),
            ("FLINT_RECORD", "1"),
        ])
        .unwrap();
        assert_eq!(p.autotune, Autotune::On);
        assert_eq!(p.cache_miss, CacheMiss::Heuristic);
        assert!(!p.disk_cache);
        assert_eq!(p.resolved_cache_dir(), Some(PathBuf::from("/tmp/x")));
        assert!(p.record);
        let off = from(&[("FLINT_AUTOTUNE", "OFF")]).unwrap();
        assert_eq!(off.autotune, Autotune::Off);
        assert_eq!(off.cache_miss, CacheMiss::Heuristic);
    }

    #[test]
    fn bad_env_values_name_the_variable() {
        let err = from(&[("FLINT_AUTOTUNE", "sometimes")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "environment variable `FLINT_AUTOTUNE` has value \"sometimes\": \
             expected `on`, `off` or `heuristic`"
        );
        let err = from(&[("FLINT_CACHE", "maybe")]).unwrap_err();
        assert!(err.to_string().contains("`FLINT_CACHE`"));
    }

    #[test]
    fn code_setters_apply() {
        let p = Policy::default()
            .with_cache_miss(CacheMiss::Heuristic)
            .with_autotune(Autotune::Off)
            .with_heuristics(false)
            .with_disk_cache(false)
            .with_record(true)
            .with_samples(0, 0);
        assert_eq!(p.cache_miss, CacheMiss::Heuristic);
        assert_eq!(p.autotune, Autotune::Off);
        assert!(!p.heuristics && !p.disk_cache && p.record);
        assert_eq!((p.warmup, p.samples), (0, 1));
    }
}
