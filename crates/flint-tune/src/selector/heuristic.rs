//! Tier 6: the op's always-valid default.

use crate::{Invocation, Op};

/// The op's heuristic config, checked like every other tier's answer.
pub(super) fn lookup<O: Op>(op: &O, inv: &Invocation) -> Result<O::Config, String> {
    let config = op.heuristic(inv)?;
    op.check(inv, &config)
        .map_err(|why| format!("heuristic config {config:?} is invalid: {why}"))?;
    Ok(config)
}
