//! The Selector: answers "which config?" through seven tiers, first hit wins:
//! override, overlay, memory cache, disk cache, autotune, heuristic, error.

mod autotune;
mod bundle;
mod cache_listing;
mod disk_cache;
mod heuristic;
mod memory_cache;
mod overlay;
mod overrides;
mod warm;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};

pub use bundle::{
    BUNDLE_SCHEMA, Bundle, BundleFile, EntryCheck, ImportReport, MAX_BUNDLE_BYTES, Skipped,
};
pub use cache_listing::{Cleared, Listing, StoredFile};
pub use disk_cache::{CACHE_SCHEMA, CacheWriter, DiskCache, DiskEntry};
pub use memory_cache::{MEMORY_CACHE_CAPACITY, MemoryCache};
pub use overlay::{Overlay, OverlayGuard, overlay, overlay_depth};
pub use warm::{WarmMemo, WarmToken};

use crate::record::Recorder;
use crate::tuner::{Benchmark, TuneReport};
use crate::{
    Autotune, CacheMiss, CallKey, Event, EventKind, Hook, Invocation, Op, Policy, Tier, TuneError,
};

static GLOBAL: OnceLock<Result<Selector, TuneError>> = OnceLock::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A chosen config and the tier that answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice<C> {
    /// The config.
    pub config: C,
    /// Which tier answered.
    pub tier: Tier,
}

/// Chooses kernel configs. One per process is usual ([`Selector::global`]); tests make their
/// own on a temporary cache directory.
pub struct Selector {
    policy: Policy,
    memory: MemoryCache,
    disk: Option<DiskCache>,
    recorder: Option<Recorder>,
    hook: RwLock<Option<Hook>>,
    /// Whether `hook` holds one that is told of memory-tier hits (`set_hook`, not
    /// `set_hook_skipping_memory_hits`): read without the lock on the warm path.
    hook_sees_memory_hits: AtomicBool,
    /// Tells this selector apart from any other in the process (a [`WarmMemo`] outlives
    /// the selectors that tests make and drop).
    id: u64,
    /// One tune at a time: concurrent benchmarks would disturb each other's timings.
    tuning: Mutex<()>,
    /// The calls [`Selector::prepare`] has looked past the memory tier for, so that it
    /// prepares (or reads the disk for) each at most once: a tracked forward whose backward
    /// never runs would otherwise repeat it on every call.
    prepared: Mutex<HashSet<PreparedKey>>,
}

/// `(fingerprint, op, version, call key)` in plain bytes, as the memory tier keys them.
type PreparedKey = ([u8; 16], &'static str, u32, [u8; 16]);

impl Selector {
    /// A selector with `policy`. Without a usable cache directory the disk tier is off.
    pub fn new(policy: Policy) -> Self {
        let dir = policy.resolved_cache_dir();
        if policy.disk_cache && dir.is_none() {
            log::warn!(
                "flint: no cache directory on this platform; set FLINT_CACHE_DIR to persist tuned configs"
            );
        }
        let disk = dir
            .as_deref()
            .filter(|_| policy.disk_cache)
            .map(DiskCache::new);
        let recorder = dir.as_deref().filter(|_| policy.record).map(Recorder::new);
        Self {
            policy,
            memory: MemoryCache::default(),
            disk,
            recorder,
            hook: RwLock::new(None),
            hook_sees_memory_hits: AtomicBool::new(false),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            tuning: Mutex::new(()),
            prepared: Mutex::new(HashSet::new()),
        }
    }

    /// The process-wide selector, with the policy read from the environment once.
    ///
    /// # Errors
    /// The environment holds a value the policy does not accept (see [`Policy::from_env`]).
    pub fn global() -> Result<&'static Selector, &'static TuneError> {
        GLOBAL
            .get_or_init(|| Policy::from_env().map(Selector::new))
            .as_ref()
    }

    /// Makes the process-wide selector use `policy` instead of the environment's (a tool
    /// such as `flint tune --cache-dir` sets it before the first call).
    ///
    /// # Errors
    /// The global selector already exists; `policy` is returned unused.
    pub fn init_global(policy: Policy) -> Result<(), Policy> {
        let mut unused = Some(policy);
        GLOBAL.get_or_init(|| Ok(Selector::new(unused.take().unwrap_or_default())));
        unused.map_or(Ok(()), Err)
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The memory tier.
    pub fn memory(&self) -> &MemoryCache {
        &self.memory
    }

    /// The disk tier, if enabled.
    pub fn disk(&self) -> Option<&DiskCache> {
        self.disk.as_ref()
    }

    /// Sends every event to `hook` as well as to `log` (replacing any previous hook).
    ///
    /// A hook that is told of every memory-tier hit also takes warm calls off their shortcut
    /// ([`WarmMemo`]); one that watches tuning and the caches can use
    /// [`set_hook_skipping_memory_hits`](Self::set_hook_skipping_memory_hits) instead.
    pub fn set_hook(&self, hook: Option<Hook>) {
        self.install_hook(hook, true);
    }

    /// Sends every event but memory-tier hits (a warm call's answer) to `hook` as well as to
    /// `log`, replacing any previous hook: disk hits, tuning, rejections and failures reach it,
    /// and warm calls keep their shortcut ([`WarmMemo`]).
    pub fn set_hook_skipping_memory_hits(&self, hook: Option<Hook>) {
        self.install_hook(hook, false);
    }

    fn install_hook(&self, hook: Option<Hook>, memory_hits: bool) {
        let mut slot = self.hook.write().unwrap_or_else(|p| p.into_inner());
        self.hook_sees_memory_hits
            .store(memory_hits && hook.is_some(), Ordering::Release);
        *slot = hook;
    }

    /// Whether a hook is set that is told of memory-tier hits.
    fn hook_sees_memory_hits(&self) -> bool {
        self.hook_sees_memory_hits.load(Ordering::Acquire)
    }

    /// Reports an event to `log` and to the hook.
    pub(crate) fn emit(&self, op: &str, key: &CallKey, kind: impl FnOnce() -> EventKind) {
        self.emit_to(op, key, true, kind);
    }

    /// Reports an event to `log`, and to the hook when `to_hook`.
    fn emit_to(&self, op: &str, key: &CallKey, to_hook: bool, kind: impl FnOnce() -> EventKind) {
        let hook = if to_hook {
            self.hook.read().unwrap_or_else(|p| p.into_inner()).clone()
        } else {
            None
        };
        let event = Event {
            op,
            key,
            kind: kind(),
        };
        log::log!(event.kind.level(), "{event}");
        if let Some(hook) = hook {
            hook(&event);
        }
    }

    /// Reports a hit; skips building the event when neither the hook nor the logger wants
    /// it, which keeps a warm call free of formatting.
    fn emit_hit<C: std::fmt::Debug>(&self, op: &str, key: &CallKey, tier: Tier, config: &C) {
        let to_hook = if tier == Tier::Memory {
            self.hook_sees_memory_hits()
        } else {
            self.hook
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
        };
        if to_hook || log::log_enabled!(crate::events::hit_level(tier)) {
            self.emit_to(op, key, to_hook, || EventKind::Hit {
                tier,
                config: format!("{config:?}"),
            });
        }
    }

    /// Chooses the config for `inv`. `bench` runs the op on the real inputs; without it the
    /// autotune tier is skipped.
    ///
    /// # Errors
    /// [`TuneError::InvalidOverride`] for a bad explicit config,
    /// [`TuneError::InvalidOverlay`] for a strict overlay's config the op refuses,
    /// [`TuneError::WrongOp`] for
    /// an invocation of another op, and [`TuneError::NoConfig`] when every tier missed.
    pub fn choose<O: Op>(
        &self,
        op: &O,
        inv: &Invocation,
        bench: Option<&mut dyn Benchmark<O::Config>>,
    ) -> Result<Choice<O::Config>, TuneError> {
        if inv.op() != op.id() {
            return Err(TuneError::WrongOp {
                expected: op.id().to_string(),
                got: inv.op().to_string(),
            });
        }
        let key = op.key(inv);
        let hit = |tier: Tier, config: O::Config| {
            self.emit_hit(op.id(), &key, tier, &config);
            Choice { config, tier }
        };
        let mut misses = Vec::new();

        if let Some(result) = overrides::lookup(op, inv) {
            return result.map(|config| hit(Tier::Override, config));
        }
        if let Some((found, strict)) = overlay::lookup::<O::Config>(op.id(), &key) {
            let why = match found {
                Ok(config) => match op.check(inv, &config) {
                    Ok(()) => return Ok(hit(Tier::Overlay, config)),
                    Err(why) if strict => {
                        return Err(TuneError::InvalidOverlay {
                            op: op.id().to_string(),
                            config: format!("{config:?}"),
                            reason: why,
                        });
                    }
                    Err(why) => why,
                },
                Err(why) => why,
            };
            self.reject(op, &key, Tier::Overlay, &mut misses, why);
        }
        if let Some(config) = self
            .memory
            .get(inv.fingerprint(), op.id(), op.version(), &key)
        {
            return Ok(hit(Tier::Memory, config));
        }
        misses.push((Tier::Memory, "no entry".to_string()));
        if let Some(recorder) = &self.recorder
            && let Err(why) = recorder.record(inv, &key)
        {
            log::warn!("flint: could not record invocation: {why}");
        }
        if let Some(config) = self.disk_lookup(op, inv, &key, &mut misses) {
            self.memory.insert(
                inv.fingerprint(),
                op.id(),
                op.version(),
                &key,
                config.clone(),
            );
            return Ok(hit(Tier::Disk, config));
        }

        match (self.policy.autotune, self.policy.cache_miss, bench) {
            (Autotune::On, CacheMiss::Autotune, Some(bench)) => {
                match self.tune_and_store(op, inv, &key, bench) {
                    Ok(choice) => return Ok(choice),
                    Err(why) => misses.push((Tier::Autotune, why)),
                }
            }
            (Autotune::Off, ..) => misses.push((Tier::Autotune, "disabled by policy".into())),
            (_, CacheMiss::Heuristic, _) => misses.push((
                Tier::Autotune,
                "policy answers misses with the heuristic".into(),
            )),
            (_, _, None) => misses.push((Tier::Autotune, "no benchmark for this call".into())),
        }

        if self.policy.heuristics {
            match heuristic::lookup(op, inv) {
                Ok(config) => return Ok(hit(Tier::Heuristic, config)),
                Err(why) => misses.push((Tier::Heuristic, why)),
            }
        } else {
            misses.push((Tier::Heuristic, "disabled by policy".into()));
        }

        let err = TuneError::NoConfig {
            op: op.id().to_string(),
            key: key.to_string(),
            misses,
        };
        self.emit(op.id(), &key, || EventKind::Failed {
            reason: err.to_string(),
        });
        Err(err)
    }

    /// Gets ready for a first [`choose`](Self::choose) of `inv` without choosing: when that
    /// call would autotune (no override, overlay or cached config, and a policy that tunes
    /// misses), hands the op's valid candidates to [`Benchmark::prepare`] now, e.g. so that
    /// a training step's forward starts compiling its backward's candidates. Each call key is
    /// prepared at most once per selector. Returns whether it did. It records, caches and
    /// reports nothing; the later `choose` does.
    pub fn prepare<O: Op>(
        &self,
        op: &O,
        inv: &Invocation,
        bench: &mut dyn Benchmark<O::Config>,
    ) -> bool {
        if inv.op() != op.id()
            || self.policy.autotune != Autotune::On
            || self.policy.cache_miss != CacheMiss::Autotune
            || overrides::lookup(op, inv).is_some()
        {
            return false;
        }
        let key = op.key(inv);
        // Any overlay entry answers or fails the call before the autotune tier, save a
        // lenient one the op refuses, which the caches or the tuner then answer.
        if let Some((found, strict)) = overlay::lookup::<O::Config>(op.id(), &key)
            && (strict || found.is_ok_and(|c| op.check(inv, &c).is_ok()))
        {
            return false;
        }
        let (fp, id, version) = (inv.fingerprint(), op.id(), op.version());
        if self
            .memory
            .get::<O::Config>(fp, id, version, &key)
            .is_some()
        {
            return false;
        }
        {
            let mut prepared = self.prepared.lock().unwrap_or_else(|p| p.into_inner());
            // Bounded like the memory tier; forgetting only means preparing again.
            if prepared.len() >= MEMORY_CACHE_CAPACITY {
                prepared.clear();
            }
            if !prepared.insert((fp.raw(), id, version, key.raw())) {
                return false;
            }
        }
        let on_disk = self
            .disk
            .as_ref()
            .and_then(|d| d.get(fp, id, version, &key));
        if on_disk.is_some_and(|entry| {
            serde_yaml::from_value::<O::Config>(entry.config)
                .is_ok_and(|c| op.check(inv, &c).is_ok())
        }) {
            return false;
        }
        let candidates: Vec<O::Config> = op
            .candidates(inv)
            .into_iter()
            .filter(|c| op.check(inv, c).is_ok())
            .collect();
        if candidates.is_empty() {
            return false;
        }
        bench.prepare(&candidates);
        true
    }

    /// Benchmarks the candidates of `inv` now, whatever the caches hold, and stores the
    /// winner in memory and on disk (e.g. `flint tune`).
    ///
    /// # Errors
    /// [`TuneError::NoConfig`] when autotuning is off or every candidate failed.
    pub fn tune<O: Op>(
        &self,
        op: &O,
        inv: &Invocation,
        bench: &mut dyn Benchmark<O::Config>,
    ) -> Result<TuneReport<O::Config>, TuneError> {
        let key = op.key(inv);
        let fail = |why: String| TuneError::NoConfig {
            op: op.id().to_string(),
            key: key.to_string(),
            misses: vec![(Tier::Autotune, why)],
        };
        if self.policy.autotune == Autotune::Off {
            return Err(fail("disabled by policy".into()));
        }
        let _one_at_a_time = self.tuning.lock().unwrap_or_else(|p| p.into_inner());
        let report = autotune::run(self, op, inv, &key, bench).map_err(fail)?;
        if let Some((config, stats)) = report.best() {
            self.store(
                op,
                inv,
                &key,
                config.clone(),
                stats.median.as_secs_f64() * 1e6,
            );
        }
        Ok(report)
    }

    fn tune_and_store<O: Op>(
        &self,
        op: &O,
        inv: &Invocation,
        key: &CallKey,
        bench: &mut dyn Benchmark<O::Config>,
    ) -> Result<Choice<O::Config>, String> {
        let _one_at_a_time = self.tuning.lock().unwrap_or_else(|p| p.into_inner());
        // Another thread may have tuned this key while we waited.
        if let Some(config) = self
            .memory
            .get(inv.fingerprint(), op.id(), op.version(), key)
        {
            self.emit_hit(op.id(), key, Tier::Memory, &config);
            return Ok(Choice {
                config,
                tier: Tier::Memory,
            });
        }
        let report = autotune::run(self, op, inv, key, bench)?;
        let (config, stats) = report
            .best()
            .ok_or_else(|| "no candidate ran".to_string())?;
        self.store(
            op,
            inv,
            key,
            config.clone(),
            stats.median.as_secs_f64() * 1e6,
        );
        Ok(Choice {
            config: config.clone(),
            tier: Tier::Autotune,
        })
    }

    fn store<O: Op>(
        &self,
        op: &O,
        inv: &Invocation,
        key: &CallKey,
        config: O::Config,
        median_us: f64,
    ) {
        self.memory.insert(
            inv.fingerprint(),
            op.id(),
            op.version(),
            key,
            config.clone(),
        );
        let Some(disk) = &self.disk else { return };
        let value = match serde_yaml::to_value(&config) {
            Ok(v) => v,
            Err(e) => {
                self.emit(op.id(), key, || EventKind::CacheWriteFailed {
                    reason: format!("config does not serialise: {e}"),
                });
                return;
            }
        };
        let entry = DiskEntry::tuned(key, value, median_us);
        if let Err(reason) = disk.put(inv.fingerprint(), op.id(), op.version(), key, entry) {
            self.emit(op.id(), key, || EventKind::CacheWriteFailed { reason });
        }
    }

    fn disk_lookup<O: Op>(
        &self,
        op: &O,
        inv: &Invocation,
        key: &CallKey,
        misses: &mut Vec<(Tier, String)>,
    ) -> Option<O::Config> {
        let Some(disk) = &self.disk else {
            misses.push((Tier::Disk, "disabled by policy".into()));
            return None;
        };
        let Some(entry) = disk.get(inv.fingerprint(), op.id(), op.version(), key) else {
            misses.push((Tier::Disk, "no entry".into()));
            return None;
        };
        let config = match serde_yaml::from_value::<O::Config>(entry.config) {
            Ok(config) => config,
            Err(e) => {
                self.reject(
                    op,
                    key,
                    Tier::Disk,
                    misses,
                    format!("undecodable config: {e}"),
                );
                return None;
            }
        };
        match op.check(inv, &config) {
            Ok(()) => Some(config),
            Err(why) => {
                self.reject(op, key, Tier::Disk, misses, format!("{config:?}: {why}"));
                None
            }
        }
    }

    fn reject<O: Op>(
        &self,
        op: &O,
        key: &CallKey,
        tier: Tier,
        misses: &mut Vec<(Tier, String)>,
        reason: String,
    ) {
        self.emit(op.id(), key, || EventKind::Rejected {
            tier,
            reason: reason.clone(),
        });
        misses.push((tier, format!("rejected: {reason}")));
    }
}
