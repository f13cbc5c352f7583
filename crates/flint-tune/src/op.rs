//! The `Op` trait: one tunable operation.

use std::fmt::Debug;
use std::hash::Hash;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{CallKey, Invocation};

/// One tunable operation, e.g. `attention_fwd`.
///
/// An op names its config type, knows an always-valid default (the heuristic), a small
/// autotune space (the candidates) and which invocations share a config (the key).
pub trait Op: Send + Sync {
    /// The kernel configuration: plain data, a cache value and a `#[comptime]` argument.
    type Config: Clone + Debug + Eq + Hash + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// The op id, as in the manifest (`attention_fwd`).
    fn id(&self) -> &'static str;

    /// The config format version. Bumping it invalidates every cached config of the op.
    fn version(&self) -> u32;

    /// An always-valid default for `inv`, or why there is none.
    fn heuristic(&self, inv: &Invocation) -> Result<Self::Config, String>;

    /// The autotune space for `inv`: small, and already filtered by device limits.
    fn candidates(&self, inv: &Invocation) -> Vec<Self::Config>;

    /// Which invocations share a config. The default hashes the whole signature; ops bucket
    /// sizes (see [`crate::Signature::bucket_pow2`]) so that each new length does not retune.
    fn key(&self, inv: &Invocation) -> CallKey {
        CallKey::new(self.id(), self.version(), inv.signature())
    }

    /// Checks that `config` can run `inv` on its device. Configs from overlays, caches and
    /// imports all pass through here, so a poisoned entry never reaches a launch.
    fn check(&self, inv: &Invocation, config: &Self::Config) -> Result<(), String>;
}
