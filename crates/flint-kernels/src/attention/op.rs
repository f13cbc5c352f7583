//! The `attention_fwd` op: configs, heuristic, candidates, key and contract.

use std::collections::BTreeMap;

use flint_tune::{CallKey, Invocation, Op, OpSpec};

use crate::DeviceLimits;
use crate::attention::{AttentionFwdConfig, SUPPORTED_HEAD_DIMS, Variant};

/// The attention forward on one device.
pub struct AttentionFwdOp {
    limits: DeviceLimits,
}

impl AttentionFwdOp {
    /// The op for a device with `limits`.
    pub fn new(limits: DeviceLimits) -> Self {
        Self { limits }
    }

    /// The contract checked against `manifest/attention.yaml`.
    pub fn spec() -> OpSpec {
        OpSpec {
            id: "attention_fwd",
            params: &[
                ("causal", "bool"),
                ("scale", "f64?"),
                ("softcap", "f64?"),
                ("window", "(u64?, u64?)"),
                ("dropout", "f64"),
                ("seed", "u64"),
            ],
            accepts_dtype: |d| matches!(d, "f32" | "f16" | "bf16"),
            output_shapes: |dims| {
                let get = |k: &str| {
                    dims.get(k)
                        .copied()
                        .ok_or(format!("missing dimension `{k}`"))
                };
                let (b, h, sq) = (get("B")?, get("H")?, get("Sq")?);
                let dv = dims.get("Dv").copied().map_or_else(|| get("D"), Ok)?;
                Ok(BTreeMap::from([
                    ("out".to_string(), vec![b, h, sq, dv]),
                    ("lse".to_string(), vec![b, h, sq]),
                ]))
            },
        }
    }
}

impl Op for AttentionFwdOp {
    type Config = AttentionFwdConfig;

    fn id(&self) -> &'static str {
        "attention_fwd"
    }

    fn version(&self) -> u32 {
        1
    }

    fn heuristic(&self, inv: &Invocation) -> Result<AttentionFwdConfig, String> {
        // The largest tiles that fit shared memory: 32 KiB (lavapipe, WebGPU) holds
        // block_q = block_kv = 16 up to D = 128 (4·(16·256 + 16·128 + 16·16) = 25 KiB).
        [(32u32, 32u32), (32, 16), (16, 16), (16, 8), (8, 8), (4, 4)]
            .into_iter()
            .map(|(block_q, block_kv)| AttentionFwdConfig {
                variant: Variant::Portable,
                block_q,
                block_kv,
            })
            .find(|c| self.check(inv, c).is_ok())
            .ok_or_else(|| "no portable tile fits this device's shared memory".to_string())
    }

    fn candidates(&self, inv: &Invocation) -> Vec<AttentionFwdConfig> {
        let mut out = Vec::new();
        // Small on purpose: first-use tuning compiles every candidate.
        for block_q in [16u32, 32] {
            for block_kv in [8u32, 16] {
                let c = AttentionFwdConfig {
                    variant: Variant::Portable,
                    block_q,
                    block_kv,
                };
                if self.check(inv, &c).is_ok() {
                    out.push(c);
                }
            }
        }
        out
    }

    fn key(&self, inv: &Invocation) -> CallKey {
        let sig = inv
            .signature()
            .clone()
            .bucket_pow2("seq_q")
            .bucket_pow2("seq_kv")
            .bucket_pow2("batch");
        CallKey::new(self.id(), self.version(), &sig)
    }

    fn check(&self, inv: &Invocation, c: &AttentionFwdConfig) -> Result<(), String> {
        let sig = inv.signature();
        let (d, dv) = (sig.size("head_dim")?, sig.size("val_dim")?);
        for (name, x) in [("head_dim", d), ("val_dim", dv)] {
            if !SUPPORTED_HEAD_DIMS.contains(&x) {
                return Err(format!("{name} {x} is not one of {SUPPORTED_HEAD_DIMS:?}"));
            }
        }
        if !(c.block_q.is_power_of_two() && (4..=128).contains(&c.block_q)) {
            return Err(format!(
                "block_q {} is not a power of two in 4..=128",
                c.block_q
            ));
        }
        if !(c.block_kv.is_power_of_two() && (1..=64).contains(&c.block_kv)) {
            return Err(format!(
                "block_kv {} is not a power of two in 1..=64",
                c.block_kv
            ));
        }
        if c.units() > self.limits.max_units_per_cube {
            return Err(format!(
                "{} units exceed the device's {} per cube",
                c.units(),
                self.limits.max_units_per_cube
            ));
        }
        let smem = c.smem_bytes(d, dv);
        if smem > self.limits.shared_memory {
            return Err(format!(
                "needs {smem} bytes of shared memory, the device has {}",
                self.limits.shared_memory
            ));
        }
        Ok(())
    }
}
