//! Warm calls: the selector's memory-tier answers kept by problem, so that a call that asks
//! for a config it was given before skips building its invocation (signature, device
//! fingerprint, call key digest), which cost more than the rest of the selector's work.

use std::any::TypeId;
use std::sync::LazyLock;

use cubecl::device::{Device, DeviceId};
use cubecl::ir::StorageType;
use cubecl::prelude::{ComputeClient, Runtime};
use flint_tune::{Choice, Invocation, Op, Selector, Tier, WarmMemo};

use super::{AttentionBwdConfig, AttentionFwdConfig, AttentionProblem};
use crate::{CubeclBenchmark, Dispatch, KernelError};

/// One call as a launcher sees it: the runtime and device, the problem and the element type
/// (and, for the backward, whether it makes the bias gradient).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct WarmKey {
    runtime: TypeId,
    device: DeviceId,
    problem: AttentionProblem,
    dtype: StorageType,
    dbias: bool,
}

impl WarmKey {
    pub(crate) fn new<R: Runtime>(
        device: &R::Device,
        problem: &AttentionProblem,
        dtype: StorageType,
        dbias: bool,
    ) -> Self {
        Self {
            runtime: TypeId::of::<R>(),
            device: device.to_id(),
            problem: problem.clone(),
            dtype,
            dbias,
        }
    }
}

/// The forward's kept answers.
pub(crate) static FWD: LazyLock<WarmMemo<WarmKey, AttentionFwdConfig>> =
    LazyLock::new(WarmMemo::default);

/// The backward's kept answers.
pub(crate) static BWD: LazyLock<WarmMemo<WarmKey, AttentionBwdConfig>> =
    LazyLock::new(WarmMemo::default);

/// The config of a call from `memo` where it holds the memory tier's current answer (`key` is
/// `None` for a call that gave its own config), else from `choose` (the selector's tiers),
/// keeping a memory-tier answer for the next call.
pub(crate) fn choose_warm<C: Clone>(
    memo: &WarmMemo<WarmKey, C>,
    selector: &Selector,
    key: Option<WarmKey>,
    choose: impl FnOnce() -> Result<Choice<C>, KernelError>,
) -> Result<Choice<C>, KernelError> {
    if let Some(key) = &key
        && let Some(config) = memo.get(selector, key)
    {
        return Ok(Choice {
            config,
            tier: Tier::Memory,
        });
    }
    // Read before choosing: a change of the memory tier meanwhile leaves the entry stale.
    let token = selector.warm_token();
    let choice = choose()?;
    if let Some(key) = key {
        memo.remember(token, key, &choice);
    }
    Ok(choice)
}

/// Starts compiling `op`'s candidates for `inv` ahead of its first call (the forward's and
/// the backward's `prepare_*`), where the runtime compiles in the background and that call
/// would tune: not when `memo` holds the call's answer, nor where [`Selector::prepare`] finds
/// it answered otherwise. `compile` enqueues one candidate on an empty grid; nothing runs.
/// Returns whether it started any.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare_cold<R: Runtime, O: Op>(
    memo: &WarmMemo<WarmKey, O::Config>,
    selector: &Selector,
    key: &WarmKey,
    client: &ComputeClient<R>,
    name: &'static str,
    op: &O,
    inv: &Invocation,
    mut compile: impl FnMut(&O::Config) -> Result<(), String> + Send,
) -> bool
where
    O::Config: Clone + Sync,
{
    if !crate::compiles_in_background(client) || memo.get(selector, key).is_some() {
        return false;
    }
    let mut bench = CubeclBenchmark::new(client, name, |c: &O::Config, d| match d {
        Dispatch::CompileOnly => compile(c),
        Dispatch::Run => Err("prepare never runs a candidate".to_string()),
    });
    selector.prepare(op, inv, &mut bench)
}
