//! A launcher's shortcut to the memory tier: a warm call asks for the same config again and
//! again, and building its invocation (signature, fingerprint, call key digest) costs more
//! than the lookup itself.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::RwLock;

use super::{MEMORY_CACHE_CAPACITY, Selector};
use crate::{Choice, Tier};

/// What a [`WarmMemo`] entry is valid under: one selector's memory tier at one
/// [generation](super::MemoryCache::generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarmToken {
    selector: u64,
    generation: u64,
}

/// Memory-tier answers keyed by whatever a launcher can build cheaply (its problem struct),
/// valid while the selector's memory tier is unchanged.
///
/// [`WarmMemo::get`] answers only where [`Selector::choose`] would answer from memory with
/// the same config and report nothing: no overlay on this thread, no hook that is told of
/// memory hits, memory hits not logged, and no config passed by the caller (the caller's own rule: it asks the memo only
/// without one). Anything else goes through the tiers as before.
pub struct WarmMemo<K, C> {
    map: RwLock<HashMap<K, (WarmToken, C)>>,
}

impl<K, C> Default for WarmMemo<K, C> {
    fn default() -> Self {
        Self {
            map: RwLock::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq, C: Clone> WarmMemo<K, C> {
    /// The config `selector`'s memory tier gave for `key`, if it still holds it and nothing
    /// would take a call's answer elsewhere or watch it (see the type's docs).
    pub fn get(&self, selector: &Selector, key: &K) -> Option<C> {
        let token = selector.warm_token()?;
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        let (at, config) = map.get(key)?;
        (*at == token).then(|| config.clone())
    }

    /// Keeps `choice` for `key` when the memory tier gave it. `token` is
    /// [`Selector::warm_token`] read *before* the call chose, so that a change of the memory
    /// tier while it chose leaves the entry stale rather than wrong.
    pub fn remember(&self, token: Option<WarmToken>, key: K, choice: &Choice<C>) {
        let Some(token) = token else { return };
        if choice.tier != Tier::Memory {
            // Any other tier's answer either is not kept (override, overlay, heuristic) or
            // was just stored in memory, which changed its generation: the next call's
            // memory hit is kept instead.
            return;
        }
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        // Bounded like the memory tier; forgetting only means one more call through the tiers.
        if map.len() >= MEMORY_CACHE_CAPACITY && !map.contains_key(&key) {
            map.clear();
        }
        map.insert(key, (token, choice.config.clone()));
    }

    /// The number of entries, stale ones included.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Selector {
    /// The token under which a memory-tier answer may be reused without the tiers
    /// ([`WarmMemo`]); `None` when a call must go through them: an overlay is active on this
    /// thread, a hook is told of memory hits ([`Selector::set_hook`]), or memory hits are
    /// logged.
    pub fn warm_token(&self) -> Option<WarmToken> {
        if self.hook_sees_memory_hits()
            || super::overlay_depth() > 0
            || log::log_enabled!(crate::events::hit_level(Tier::Memory))
        {
            return None;
        }
        Some(WarmToken {
            selector: self.id,
            generation: self.memory.generation(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{
        DeviceFingerprint, Invocation, Op, Overlay, Policy, Signature, overlay as push_overlay,
    };

    struct Threads;
    impl Op for Threads {
        type Config = u32;
        fn id(&self) -> &'static str {
            "threads"
        }
        fn version(&self) -> u32 {
            1
        }
        fn heuristic(&self, _: &Invocation) -> Result<u32, String> {
            Ok(256)
        }
        fn candidates(&self, _: &Invocation) -> Vec<u32> {
            vec![64, 128, 256]
        }
        fn check(&self, _: &Invocation, c: &u32) -> Result<(), String> {
            if c.is_power_of_two() {
                Ok(())
            } else {
                Err(format!("{c} is not a power of two"))
            }
        }
    }

    fn inv(len: usize) -> Invocation {
        Invocation::new(
            "threads",
            Signature::new().with("len", len),
            DeviceFingerprint::new("test", "dev", "-", "-"),
        )
    }

    fn selector() -> Selector {
        Selector::new(Policy::default().with_disk_cache(false))
    }

    /// Puts `config` in the memory tier for `len`, then asks the selector once, as a
    /// launcher does, and keeps its answer in `memo`.
    fn warm(sel: &Selector, memo: &WarmMemo<usize, u32>, len: usize, config: u32) {
        let key = Threads.key(&inv(len));
        sel.memory()
            .insert(inv(len).fingerprint(), "threads", 1, &key, config);
        let token = sel.warm_token();
        let choice = sel.choose(&Threads, &inv(len), None).expect("a memory hit");
        assert_eq!(
            choice,
            Choice {
                config,
                tier: Tier::Memory
            }
        );
        memo.remember(token, len, &choice);
    }

    #[test]
    fn answers_what_the_memory_tier_holds_until_it_changes() {
        let (sel, memo) = (selector(), WarmMemo::default());
        assert_eq!(memo.get(&sel, &1000), None, "nothing kept yet");
        warm(&sel, &memo, 1000, 128);
        assert_eq!(memo.get(&sel, &1000), Some(128));
        assert_eq!(memo.get(&sel, &2000), None, "another key");

        // Retuning the same key: the memo must not answer the old config.
        let key = Threads.key(&inv(1000));
        sel.memory()
            .insert(inv(1000).fingerprint(), "threads", 1, &key, 64u32);
        assert_eq!(memo.get(&sel, &1000), None);
        warm(&sel, &memo, 1000, 64);
        assert_eq!(memo.get(&sel, &1000), Some(64));

        sel.memory().clear();
        assert_eq!(memo.get(&sel, &1000), None, "the memory tier was cleared");
    }

    #[test]
    fn another_selector_is_not_answered() {
        let (a, b, memo) = (selector(), selector(), WarmMemo::default());
        warm(&a, &memo, 1000, 128);
        assert_eq!(memo.get(&a, &1000), Some(128));
        assert_eq!(memo.get(&b, &1000), None);
    }

    #[test]
    fn an_overlay_or_a_hook_takes_the_call_through_the_tiers() {
        let (sel, memo) = (selector(), WarmMemo::default());
        warm(&sel, &memo, 1000, 128);
        {
            let _guard = push_overlay(Overlay::new().set(&Threads, 32));
            assert_eq!(memo.get(&sel, &1000), None);
            let choice = sel.choose(&Threads, &inv(1000), None).expect("the overlay");
            assert_eq!((choice.config, choice.tier), (32, Tier::Overlay));
        }
        assert_eq!(memo.get(&sel, &1000), Some(128));

        sel.set_hook(Some(Arc::new(|_| {})));
        assert_eq!(memo.get(&sel, &1000), None, "a hook sees every hit");
        sel.set_hook(None);
        assert_eq!(memo.get(&sel, &1000), Some(128));
    }

    #[test]
    fn a_hook_that_skips_memory_hits_keeps_the_shortcut_and_sees_the_rest() {
        let (sel, memo) = (selector(), WarmMemo::default());
        warm(&sel, &memo, 1000, 128);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        sel.set_hook_skipping_memory_hits(Some(Arc::new(move |e: &crate::Event<'_>| {
            if let crate::EventKind::Hit { tier, .. } = e.kind {
                sink.lock().unwrap().push(tier);
            }
        })));
        assert_eq!(memo.get(&sel, &1000), Some(128));
        sel.choose(&Threads, &inv(1000), None)
            .expect("a memory hit");
        sel.choose(&Threads, &inv(2000), None)
            .expect("the heuristic");
        assert_eq!(*seen.lock().unwrap(), vec![Tier::Heuristic]);

        sel.set_hook(Some(Arc::new(move |e: &crate::Event<'_>| {
            if let crate::EventKind::Hit { tier, .. } = e.kind {
                seen.lock().unwrap().push(tier);
            }
        })));
        assert_eq!(memo.get(&sel, &1000), None, "a hook told of every hit");
    }

    #[test]
    fn readers_racing_a_retune_end_on_the_last_config() {
        let (sel, memo) = (selector(), WarmMemo::default());
        warm(&sel, &memo, 1000, 1);
        let key = Threads.key(&inv(1000));
        let last = 1u32 << 12;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2000 {
                        // As a launcher: the memo, else the tiers, then keep the answer.
                        if let Some(c) = memo.get(&sel, &1000) {
                            assert!(c.is_power_of_two() && c <= last, "{c} was never stored");
                            continue;
                        }
                        let token = sel.warm_token();
                        let choice = sel.choose(&Threads, &inv(1000), None).expect("a hit");
                        memo.remember(token, 1000, &choice);
                    }
                });
            }
            s.spawn(|| {
                for shift in 1..=12 {
                    sel.memory()
                        .insert(inv(1000).fingerprint(), "threads", 1, &key, 1u32 << shift);
                    std::thread::yield_now();
                }
            });
        });
        // Whatever the interleaving, the memo never answers a config the tier has replaced.
        let after = memo.get(&sel, &1000);
        assert!(after.is_none() || after == Some(last), "stale: {after:?}");
        let token = sel.warm_token();
        let choice = sel.choose(&Threads, &inv(1000), None).expect("a hit");
        memo.remember(token, 1000, &choice);
        assert_eq!(memo.get(&sel, &1000), Some(last));
    }

    #[test]
    fn only_memory_hits_are_kept() {
        let (sel, memo) = (selector(), WarmMemo::default());
        let token = sel.warm_token();
        let choice = sel
            .choose(&Threads, &inv(1000), None)
            .expect("the heuristic");
        assert_eq!(choice.tier, Tier::Heuristic);
        memo.remember(token, 1000, &choice);
        assert!(memo.is_empty());
        memo.remember(
            None,
            1000,
            &Choice {
                config: 64,
                tier: Tier::Memory,
            },
        );
        assert!(memo.is_empty(), "no token: nothing kept");
    }
}
