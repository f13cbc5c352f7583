//! Re-checking configs that come from outside this process (cache files, imported bundles)
//! against the op they claim, with the limits of the device they were tuned on.

use flint_tune::{DeviceFingerprint, Invocation, Op, Signature};

use crate::DeviceLimits;
use crate::attention::{AttentionBwdOp, AttentionFwdOp};
use crate::scale::ScaleOp;

/// Checks one cached or imported entry: the op exists in this build at `version`, the config
/// decodes into the op's config type, and the op's own check accepts it for `signature` on a
/// device with the limits that `fingerprint` records. This is the `flint_tune::EntryCheck`
/// that `flint cache import` uses.
///
/// # Errors
/// Why the entry cannot be used, naming the rule it broke.
pub fn check_entry(
    fingerprint: &DeviceFingerprint,
    op: &str,
    version: u32,
    signature: &Signature,
    config: &serde_yaml::Value,
) -> Result<(), String> {
    let limits = DeviceLimits::from_fingerprint(fingerprint)?;
    let inv = Invocation::new(op, signature.clone(), fingerprint.clone());
    match op {
        "scale" => check_with(&ScaleOp::new(limits), version, &inv, config),
        "attention_fwd" => check_with(&AttentionFwdOp::new(limits), version, &inv, config),
        "attention_bwd" => check_with(&AttentionBwdOp::new(limits), version, &inv, config),
        _ => Err(format!(
            "unknown op `{op}` (this build has scale, attention_fwd and attention_bwd)"
        )),
    }
}

fn check_with<O: Op>(
    op: &O,
    version: u32,
    inv: &Invocation,
    config: &serde_yaml::Value,
) -> Result<(), String> {
    if version != op.version() {
        return Err(format!(
            "{} config version {version}; this build uses version {}",
            op.id(),
            op.version()
        ));
    }
    let config: O::Config = serde_yaml::from_value(config.clone())
        .map_err(|e| format!("undecodable {} config: {e}", op.id()))?;
    op.check(inv, &config)
        .map_err(|why| format!("{config:?} refused: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fingerprint as `fingerprint()` writes it for an H100-like and a lavapipe-like device.
    fn fp(mma: &str, smem: usize) -> DeviceFingerprint {
        DeviceFingerprint::new(
            "cuda",
            "test GPU",
            format!(
                "sm_90 smem={smem} units=1024 vec=8 plane=32..32 plane_ops=true cmma=true mma={mma} sms=Some(132)"
            ),
            "12.8",
        )
    }

    fn sig(dtype: &str, d: usize) -> Signature {
        Signature::new()
            .with("batch", 1usize)
            .with("heads", 8usize)
            .with("kv_heads", 8usize)
            .with("seq_q", 1024usize)
            .with("seq_kv", 1024usize)
            .with("head_dim", d)
            .with("val_dim", d)
            .with("dtype", dtype)
            .with("masked", false)
            .with("bias", false)
            .with("softcap", false)
            .with("dropout", false)
    }

    fn yaml(text: &str) -> serde_yaml::Value {
        serde_yaml::from_str(text).expect("test YAML")
    }

    #[test]
    fn limits_round_trip_through_the_fingerprint() {
        let limits = DeviceLimits::from_fingerprint(&fp("[\"f16\", \"bf16\"]", 232448)).unwrap();
        assert_eq!(limits.shared_memory, 232448);
        assert_eq!(limits.plane_size, (32, 32));
        assert_eq!(limits.mma_16x8x16, vec!["f16", "bf16"]);
        assert!(
            !limits.atomic_add_f32x2,
            "absent from the fingerprint: assumed missing"
        );
        let none = DeviceLimits::from_fingerprint(&fp("[]", 32768)).unwrap();
        assert!(none.mma_16x8x16.is_empty());
        let with_atomics = DeviceFingerprint::new(
            "cuda",
            "test GPU",
            "sm_90 smem=232448 units=1024 vec=8 plane=32..32 plane_ops=true cmma=true \
             mma=[\"bf16\"] f32x2_add=true sms=Some(132)",
            "12.8",
        );
        assert!(
            DeviceLimits::from_fingerprint(&with_atomics)
                .unwrap()
                .atomic_add_f32x2
        );
        let hand_made = DeviceFingerprint::new("cuda", "x", "sm_90", "1");
        assert!(DeviceLimits::from_fingerprint(&hand_made).is_err());
    }

    #[test]
    fn entries_are_checked_against_the_op_and_the_device() {
        let mma = yaml("{variant: mma, block_q: 64, block_kv: 64}");
        let h100 = fp("[\"f16\", \"bf16\"]", 232448);
        let v =
            crate::attention::AttentionFwdOp::new(DeviceLimits::from_fingerprint(&h100).unwrap())
                .version();
        let current = format!("this build uses version {v}");
        check_entry(&h100, "attention_fwd", v, &sig("bf16", 128), &mma).unwrap();
        // The same config for a device without tensor cores, for f32, for an old version,
        // for an unknown op, and a config of the wrong shape or outside the space.
        let lavapipe = fp("[]", 32768);
        let refusals = [
            check_entry(&lavapipe, "attention_fwd", v, &sig("bf16", 128), &mma),
            check_entry(&h100, "attention_fwd", v, &sig("f32", 128), &mma),
            check_entry(&h100, "attention_fwd", v - 1, &sig("bf16", 128), &mma),
            check_entry(&h100, "nope", 1, &sig("bf16", 128), &mma),
            check_entry(&h100, "attention_fwd", v, &sig("bf16", 128), &yaml("[1]")),
            check_entry(
                &h100,
                "attention_fwd",
                v,
                &sig("bf16", 128),
                &yaml("{variant: mma, block_q: 96, block_kv: 64}"),
            ),
            // A portable tile too large for 32 KiB of shared memory.
            check_entry(
                &lavapipe,
                "attention_fwd",
                v,
                &sig("f32", 256),
                &yaml("{variant: portable, block_q: 128, block_kv: 64}"),
            ),
        ];
        let reasons: Vec<String> = refusals.into_iter().map(|r| r.unwrap_err()).collect();
        for (reason, wanted) in reasons.iter().zip([
            "no m16n8k16 MMA",
            "no m16n8k16 MMA",
            current.as_str(),
            "unknown op",
            "undecodable",
            "block_q 96",
            "shared memory",
        ]) {
            assert!(reason.contains(wanted), "{reason:?} lacks {wanted:?}");
        }
    }
}
