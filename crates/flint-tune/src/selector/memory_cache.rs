//! Tier 3: the in-process cache, `(fingerprint, op@version, call key) -> config`.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use crate::{CallKey, DeviceFingerprint};

/// At most this many configs are kept; past it the least recently used one is evicted (it
/// stays on disk). A process sees far fewer distinct shape buckets than this, so eviction
/// bounds memory under adversarial shape streams rather than shaping normal use.
pub const MEMORY_CACHE_CAPACITY: usize = 4096;

#[derive(Clone, PartialEq, Eq, Hash)]
struct MemKey {
    fingerprint: [u8; 16],
    op: &'static str,
    version: u32,
    call: [u8; 16],
}

impl MemKey {
    // Plain bytes and a static id: building a key allocates nothing on the warm path.
    fn new(fp: &DeviceFingerprint, op: &'static str, version: u32, key: &CallKey) -> Self {
        Self {
            fingerprint: fp.raw(),
            op,
            version,
            call: key.raw(),
        }
    }
}

struct Slot {
    config: Arc<dyn Any + Send + Sync>,
    /// The clock value of the last hit: hits update it under the read lock, so the warm
    /// path never takes the write lock.
    used: AtomicU64,
}

/// A thread-safe LRU map of chosen configs, type-erased so that one cache serves every op.
#[derive(Default)]
pub struct MemoryCache {
    map: RwLock<HashMap<MemKey, Slot>>,
    clock: AtomicU64,
    /// Counts inserts and clears, so that a [`WarmMemo`](super::WarmMemo) entry taken at one
    /// count is known to hold what the map holds while the count stands.
    generation: AtomicU64,
}

impl MemoryCache {
    /// The cached config, if any and of type `C`.
    pub fn get<C: Clone + 'static>(
        &self,
        fp: &DeviceFingerprint,
        op: &'static str,
        version: u32,
        key: &CallKey,
    ) -> Option<C> {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        let slot = map.get(&MemKey::new(fp, op, version, key))?;
        let config = slot.config.downcast_ref::<C>().cloned()?;
        slot.used.store(
            self.clock.fetch_add(1, Ordering::Relaxed),
            Ordering::Relaxed,
        );
        Some(config)
    }

    /// Stores a config.
    pub fn insert<C: Send + Sync + 'static>(
        &self,
        fp: &DeviceFingerprint,
        op: &'static str,
        version: u32,
        key: &CallKey,
        config: C,
    ) {
        // A poisoned lock only means another thread panicked mid-insert of a whole value;
        // the map itself is still consistent.
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        let key = MemKey::new(fp, op, version, key);
        // A full scan, but only on an insert into a full cache (a tuning or disk miss).
        if map.len() >= MEMORY_CACHE_CAPACITY
            && !map.contains_key(&key)
            && let Some(victim) = map
                .iter()
                .min_by_key(|(_, slot)| slot.used.load(Ordering::Relaxed))
                .map(|(k, _)| k.clone())
        {
            map.remove(&victim);
        }
        let used = AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed));
        // Under the write lock: a reader that sees the new count also sees the new entry.
        self.generation.fetch_add(1, Ordering::Release);
        map.insert(
            key,
            Slot {
                config: Arc::new(config),
                used,
            },
        );
    }

    /// The number of cached configs.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets everything.
    pub fn clear(&self) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, Ordering::Release);
        map.clear();
    }

    /// How many times the cache has changed (inserts and clears). While it stands, every
    /// key maps to what it mapped to when it was read.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}
