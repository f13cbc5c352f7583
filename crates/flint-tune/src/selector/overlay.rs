//! Tier 2: scoped overlays, a thread-local stack of config maps popped on drop.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::{CallKey, Op};

type Erased = Arc<dyn Any + Send + Sync>;

/// A set of configs that applies, on this thread, while its guard lives.
///
/// ```
/// # use flint_tune::{overlay, Overlay};
/// # fn demo<O: flint_tune::Op>(op: &O, config: O::Config) {
/// let _guard = overlay(Overlay::new().set(op, config));
/// // calls of `op` on this thread now use `config` (after the op checks it)
/// # }
/// ```
#[derive(Default, Clone)]
pub struct Overlay {
    /// op id -> (optional key digest, config); a keyed entry beats an op-wide one.
    entries: HashMap<&'static str, Vec<(Option<String>, Erased)>>,
    /// Whether a config the op refuses for a call is an error rather than skipped.
    strict: bool,
}

impl Overlay {
    /// An empty overlay.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `config` for every call of `op`.
    pub fn set<O: Op>(self, op: &O, config: O::Config) -> Self {
        self.insert(op.id(), None, config)
    }

    /// Makes a config the op refuses for a call an error
    /// ([`TuneError::InvalidOverlay`](crate::TuneError::InvalidOverlay)) instead of a
    /// skipped tier, so that a test or benchmark forcing a config never silently runs the
    /// selector's choice in its place.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Uses `config` for calls of `op` with call key `key` only.
    pub fn set_for_key<O: Op>(self, op: &O, key: &CallKey, config: O::Config) -> Self {
        self.insert(op.id(), Some(key.digest().to_string()), config)
    }

    fn insert<C: Send + Sync + 'static>(
        mut self,
        op: &'static str,
        key: Option<String>,
        config: C,
    ) -> Self {
        let list = self.entries.entry(op).or_default();
        list.retain(|(k, _)| *k != key);
        list.push((key, Arc::new(config)));
        self
    }

    fn find(&self, op: &str, key: &CallKey) -> Option<&Erased> {
        let list = self.entries.get(op)?;
        list.iter()
            .find(|(k, _)| k.as_deref() == Some(key.digest()))
            .or_else(|| list.iter().find(|(k, _)| k.is_none()))
            .map(|(_, c)| c)
    }
}

thread_local! {
    static STACK: RefCell<Vec<Arc<Overlay>>> = const { RefCell::new(Vec::new()) };
}

/// Pushes `overlay` on this thread's stack until the returned guard is dropped (also during
/// a panic). Overlays nest: the innermost one that has an entry answers.
#[must_use = "the overlay is popped when the guard is dropped"]
pub fn overlay(overlay: Overlay) -> OverlayGuard {
    let depth = STACK.with(|s| {
        let mut stack = s.borrow_mut();
        stack.push(Arc::new(overlay));
        stack.len() - 1
    });
    OverlayGuard {
        depth,
        _not_send: PhantomData,
    }
}

/// Pops its overlay (and any pushed after it) when dropped.
pub struct OverlayGuard {
    depth: usize,
    // The stack is per thread, so the guard must stay on the thread that pushed it.
    _not_send: PhantomData<*const ()>,
}

impl Drop for OverlayGuard {
    fn drop(&mut self) {
        // `try_with`: during thread teardown the stack may already be gone.
        let _ = STACK.try_with(|s| s.borrow_mut().truncate(self.depth));
    }
}

/// The number of overlays active on this thread.
pub fn overlay_depth() -> usize {
    STACK.with(|s| s.borrow().len())
}

/// The innermost overlay config for `(op, key)` with type `C` and whether its overlay is
/// strict; `Err` when an entry exists but has another type (a programming error the
/// selector reports as a rejection).
pub(super) fn lookup<C: Clone + 'static>(
    op: &str,
    key: &CallKey,
) -> Option<(Result<C, String>, bool)> {
    STACK.with(|s| {
        let stack = s.borrow();
        stack.iter().rev().find_map(|o| {
            let c = o.find(op, key)?;
            let config = c.downcast_ref::<C>().cloned().ok_or_else(|| {
                format!(
                    "overlay config is not of type `{}`",
                    std::any::type_name::<C>()
                )
            });
            Some((config, o.strict))
        })
    })
}
