//! The `scale` op: its config, heuristic, candidates and key.

use std::collections::BTreeMap;

use flint_tune::{CallKey, Invocation, Op, OpSpec};
use serde::{Deserialize, Serialize};

use crate::DeviceLimits;

/// How `scale` is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleConfig {
    /// Elements per load/store (1, 2 or 4).
    pub vector_size: u8,
    /// Units per cube.
    pub cube_size: u32,
}

/// The `scale` op on one device.
pub struct ScaleOp {
    limits: DeviceLimits,
}

impl ScaleOp {
    /// The op for a device with `limits`.
    pub fn new(limits: DeviceLimits) -> Self {
        Self { limits }
    }
}

impl ScaleOp {
    /// The contract of `scale`: `x: [N] -> out: [N]`, param `alpha`, f32 only.
    pub fn spec() -> OpSpec {
        OpSpec {
            id: "scale",
            params: &[("alpha", "f32")],
            accepts_dtype: |d| d == "f32",
            output_shapes: |dims| {
                let n = *dims.get("N").ok_or("missing dimension `N`")?;
                Ok(BTreeMap::from([("out".to_string(), vec![n])]))
            },
        }
    }
}

impl Op for ScaleOp {
    type Config = ScaleConfig;

    fn id(&self) -> &'static str {
        "scale"
    }

    fn version(&self) -> u32 {
        1
    }

    fn heuristic(&self, inv: &Invocation) -> Result<ScaleConfig, String> {
        let len = inv.signature().size("len")?;
        let vector_size = [4u8, 2, 1]
            .into_iter()
            .find(|&v| len % usize::from(v) == 0 && usize::from(v) <= self.limits.max_vector_size)
            .unwrap_or(1);
        Ok(ScaleConfig {
            vector_size,
            cube_size: 256.min(self.limits.max_units_per_cube),
        })
    }

    fn candidates(&self, inv: &Invocation) -> Vec<ScaleConfig> {
        let mut out = Vec::new();
        for vector_size in [1u8, 4] {
            for cube_size in [64u32, 256] {
                let c = ScaleConfig {
                    vector_size,
                    cube_size,
                };
                if self.check(inv, &c).is_ok() {
                    out.push(c);
                }
            }
        }
        out
    }

    fn key(&self, inv: &Invocation) -> CallKey {
        // The vector width must divide the exact length, so the key keeps len % 4 next to
        // the bucketed length.
        let len = inv.signature().int("len").unwrap_or(0);
        let sig = inv
            .signature()
            .clone()
            .with("len_mod_4", len.rem_euclid(4))
            .bucket_pow2("len");
        CallKey::new(self.id(), self.version(), &sig)
    }

    fn check(&self, inv: &Invocation, c: &ScaleConfig) -> Result<(), String> {
        let len = inv.signature().size("len")?;
        let v = usize::from(c.vector_size);
        if ![1, 2, 4].contains(&v) {
            return Err(format!("vector_size {v} is not 1, 2 or 4"));
        }
        if v > self.limits.max_vector_size {
            return Err(format!(
                "vector_size {v} exceeds the device's {}",
                self.limits.max_vector_size
            ));
        }
        if len % v != 0 {
            return Err(format!("vector_size {v} does not divide len {len}"));
        }
        if !c.cube_size.is_power_of_two() || c.cube_size > self.limits.max_units_per_cube {
            return Err(format!(
                "cube_size {} is not a power of two up to {}",
                c.cube_size, self.limits.max_units_per_cube
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flint_tune::{DeviceFingerprint, Signature};

    fn limits() -> DeviceLimits {
        DeviceLimits {
            shared_memory: 32768,
            max_units_per_cube: 128,
            max_vector_size: 4,
            plane_size: (8, 8),
            plane_ops: false,
            cmma: false,
            mma_16x8x16: Vec::new(),
            cmma_16x16x16: Vec::new(),
            atomic_add_f32x2: false,
            wgmma: false,
            arrays_across_barriers: false,
        }
    }

    fn inv(len: usize) -> Invocation {
        Invocation::new(
            "scale",
            Signature::new().with("len", len).with("dtype", "f32"),
            DeviceFingerprint::new("t", "t", "t", "t"),
        )
    }

    #[test]
    fn candidates_respect_length_and_device() {
        let op = ScaleOp::new(limits());
        // 256-unit cubes exceed the device; odd lengths rule out vector 4.
        assert_eq!(op.candidates(&inv(1024)).len(), 2);
        assert_eq!(
            op.candidates(&inv(1023)),
            vec![ScaleConfig {
                vector_size: 1,
                cube_size: 64
            }]
        );
        assert_eq!(op.heuristic(&inv(1023)).unwrap().vector_size, 1);
        assert_eq!(
            op.heuristic(&inv(1024)).unwrap(),
            ScaleConfig {
                vector_size: 4,
                cube_size: 128
            }
        );
        let bad = ScaleConfig {
            vector_size: 3,
            cube_size: 64,
        };
        assert!(
            op.check(&inv(9), &bad)
                .unwrap_err()
                .contains("not 1, 2 or 4")
        );
    }

    #[test]
    fn lengths_with_other_residues_do_not_share_a_key() {
        let op = ScaleOp::new(limits());
        assert_eq!(op.key(&inv(1000)), op.key(&inv(1024)));
        assert_ne!(op.key(&inv(1023)), op.key(&inv(1024)));
    }
}
