//! Tier 1: a config passed explicitly by the caller.

use crate::{Invocation, Op, TuneError};

/// The caller's explicit config, checked by the op. `None` when the call has no override.
/// An override of the wrong type or one the op rejects is an error, never silently ignored.
pub(super) fn lookup<O: Op>(op: &O, inv: &Invocation) -> Option<Result<O::Config, TuneError>> {
    let given = inv.override_config()?;
    let invalid = |reason: String| TuneError::InvalidOverride {
        op: op.id().to_string(),
        config: format!("{given:?}"),
        reason,
    };
    let Some(config) = given.get::<O::Config>() else {
        return Some(Err(invalid(format!(
            "expected a config of type `{}`",
            std::any::type_name::<O::Config>()
        ))));
    };
    Some(
        op.check(inv, config)
            .map(|()| config.clone())
            .map_err(invalid),
    )
}
