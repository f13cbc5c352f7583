//! Warm calls: the selector's memory-tier answers kept by problem, so that a call that asks
//! for a config it was given before skips building its invocation (signature, device
//! fingerprint, call key digest), which cost more than the rest of the selector's work.

use std::any::TypeId;
use std::sync::LazyLock;

use cubecl::device::{Device, DeviceId};
use cubecl::ir::StorageType;
use cubecl::prelude::Runtime;
use flint_tune::WarmMemo;

use super::{AttentionBwdConfig, AttentionFwdConfig, AttentionProblem};

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
