//! Tier 3: the in-process cache, `(fingerprint, op@version, call key) -> config`.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::{CallKey, DeviceFingerprint};

/// At most this many configs are kept; past it an arbitrary entry is evicted. A process
/// sees far fewer distinct shape buckets than this, so eviction is a safety bound only.
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

/// A thread-safe map of chosen configs, type-erased so that one cache serves every op.
#[derive(Default)]
pub struct MemoryCache {
    map: RwLock<HashMap<MemKey, Arc<dyn Any + Send + Sync>>>,
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
        map.get(&MemKey::new(fp, op, version, key))
            .and_then(|c| c.downcast_ref::<C>().cloned())
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
        if map.len() >= MEMORY_CACHE_CAPACITY
            && let Some(victim) = map.keys().next().cloned()
        {
            map.remove(&victim);
        }
        map.insert(MemKey::new(fp, op, version, key), Arc::new(config));
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
        self.map.write().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
