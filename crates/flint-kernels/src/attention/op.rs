//! The `attention_fwd` op: configs, heuristic, candidates, key and contract.

use std::collections::BTreeMap;

use flint_tune::{CallKey, Invocation, Op, OpSpec, SigValue};

use crate::DeviceLimits;
use crate::attention::config::MAX_SPLITS;
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

/// The call key of both attention ops: sequence lengths and batch bucketed by powers of two.
pub(crate) fn bucketed_key(id: &'static str, version: u32, inv: &Invocation) -> CallKey {
    let sig = inv
        .signature()
        .clone()
        .bucket_pow2("seq_q")
        .bucket_pow2("seq_kv")
        .bucket_pow2("batch");
    CallKey::new(id, version, &sig)
}

/// `(D, Dv)` of the call, each one the kernels are compiled for.
pub(crate) fn head_dims(inv: &Invocation) -> Result<(usize, usize), String> {
    let sig = inv.signature();
    let (d, dv) = (sig.size("head_dim")?, sig.size("val_dim")?);
    for (name, x) in [("head_dim", d), ("val_dim", dv)] {
        if !SUPPORTED_HEAD_DIMS.contains(&x) {
            return Err(format!("{name} {x} is not one of {SUPPORTED_HEAD_DIMS:?}"));
        }
    }
    Ok((d, dv))
}

/// Whether a cube of `units` units using `smem` bytes of shared memory fits the device.
pub(crate) fn fits(limits: &DeviceLimits, units: u32, smem: usize) -> Result<(), String> {
    if units > limits.max_units_per_cube {
        return Err(format!(
            "{units} units exceed the device's {} per cube",
            limits.max_units_per_cube
        ));
    }
    if smem > limits.shared_memory {
        return Err(format!(
            "needs {smem} bytes of shared memory, the device has {}",
            limits.shared_memory
        ));
    }
    Ok(())
}

/// Why the MMA variants cannot run a call of `inv`'s dtype on a device with `limits`.
pub(crate) fn mma_refusal(limits: &DeviceLimits, inv: &Invocation) -> Option<String> {
    tensor_core_refusal(limits, inv, &limits.mma_16x8x16, "m16n8k16 MMA")
}

/// Why the cooperative-matrix variant cannot run a call of `inv`'s dtype on a device with
/// `limits`.
pub(crate) fn cmma_refusal(limits: &DeviceLimits, inv: &Invocation) -> Option<String> {
    tensor_core_refusal(limits, inv, &limits.cmma_16x16x16, "16x16x16 cmma into f32")
}

/// Both tensor-core variants need their product for the call's dtype (`dtypes`, named
/// `what`) and planes of exactly 32 lanes with plane ops.
fn tensor_core_refusal(
    limits: &DeviceLimits,
    inv: &Invocation,
    dtypes: &[&'static str],
    what: &str,
) -> Option<String> {
    let dtype = match inv.signature().get("dtype") {
        Some(SigValue::Str(d)) => d.as_str(),
        _ => "?",
    };
    if !dtypes.contains(&dtype) {
        return Some(format!(
            "the device has no {what} for {dtype} (it has {dtypes:?})"
        ));
    }
    if !limits.plane_ops || limits.plane_size != (32, 32) {
        return Some(format!(
            "needs plane ops with 32 lanes (the device: ops {}, size {:?})",
            limits.plane_ops, limits.plane_size
        ));
    }
    None
}

/// The cooperative-matrix tilings `(block_q, block_kv)`, best first where shared memory
/// and registers allow (Vulkan devices often give a cube 48 KiB). 128 query rows are four
/// planes of two row fragments, which halves the K and V fragment reads per product: the
/// tuner's picks on an H100 and H200 through Vulkan (128x32 at D = 128, 128x16 at D = 64,
/// docs/PERF.md).
const CMMA_TILINGS: [(u32, u32); 4] = [(128, 32), (128, 16), (64, 32), (64, 64)];

impl AttentionFwdOp {
    fn mma_refusal(&self, inv: &Invocation) -> Option<String> {
        mma_refusal(&self.limits, inv)
    }

    fn cmma_refusal(&self, inv: &Invocation) -> Option<String> {
        cmma_refusal(&self.limits, inv)
    }

    /// Why the warpgroup-MMA variant cannot run `inv` on this device.
    fn wgmma_refusal(&self, inv: &Invocation) -> Option<String> {
        if !self.limits.wgmma {
            return Some("the device has no warpgroup MMA (CUDA sm_90a)".into());
        }
        if let Some(why) = self.mma_refusal(inv) {
            return Some(why);
        }
        let sig = inv.signature();
        for feature in ["bias", "softcap", "dropout"] {
            if sig.flag(feature) {
                return Some(format!("the wgmma variant has no {feature}"));
            }
        }
        None
    }

    /// The warpgroup-MMA tilings `(block_q, block_kv)` offered where the variant can run a
    /// call with at least one full block of queries: two consumer warpgroups with 128-key
    /// tiles (the fastest at D = 128 on an H100, docs/PERF.md) and three, with 128-key tiles
    /// where their scores and O fit, else 64-key ones.
    fn wgmma_configs(&self, inv: &Invocation) -> Vec<AttentionFwdConfig> {
        let tall = inv.signature().size("seq_q").is_ok_and(|sq| sq >= 128);
        if !tall || self.wgmma_refusal(inv).is_some() {
            return Vec::new();
        }
        // Past D = 128 only two warpgroups with 64-key tiles hold O and the scores. Below,
        // three warpgroups take 128-key tiles where `check` lets their scores and O fit (Dv
        // up to 64): on an H200 they ran 9-22% ahead of 64-key ones at every measured D = 64
        // row, causal included, and 13-16% at D = 32 (docs/PERF.md), so those only
        // lengthened first use there.
        let wide = head_dims(inv).is_ok_and(|(d, dv)| d.max(dv) > 128);
        let wide_tiles = AttentionFwdConfig::new(Variant::Wgmma, 192, 128);
        let tilings: &[(u32, u32)] = if wide {
            &[(128, 64)]
        } else if self.check(inv, &wide_tiles).is_ok() {
            &[(128, 128), (192, 128)]
        } else {
            &[(128, 128), (192, 64)]
        };
        let mut configs = Self::variant_configs(Variant::Wgmma, tilings);
        // One warpgroup of 128-key tiles, two cubes an SM, for short calls at D, Dv <= 64
        // (`short_blocks`): there a block's fixed cost weighs most, and the second cube on
        // each SM hides it. On an H200: 3-4% ahead of 128x128 at 1k causal (D = 64), 6% at
        // D = 32, level to 5% ahead at 512; behind from 2k, and at D = 128, where only 64-key
        // tiles fit (docs/PERF.md).
        if Self::short_blocks(inv) && head_dims(inv).is_ok_and(|(d, dv)| d.max(dv) <= 64) {
            configs.push(AttentionFwdConfig::new(Variant::Wgmma, 64, 128));
        }
        configs
            .into_iter()
            .filter(|c| self.check(inv, c).is_ok())
            .collect()
    }

    /// Whether the call has a window or causal mask and at most 1024 queries: few blocks a
    /// head, the heaviest of them short.
    fn short_masked(inv: &Invocation) -> bool {
        let sig = inv.signature();
        sig.flag("masked") && sig.size("seq_q").is_ok_and(|sq| sq <= 1024)
    }

    /// Whether a block's walk is short enough that its fixed cost weighs most: under a mask
    /// up to 1024 queries ([`Self::short_masked`]), without one up to 512.
    fn short_blocks(inv: &Invocation) -> bool {
        Self::short_masked(inv) || inv.signature().size("seq_q").is_ok_and(|sq| sq <= 512)
    }

    /// The portable tilings that run the call with the accumulator in registers, largest
    /// first: each whole where it fits, else sliced where that fits (small shared memories
    /// at large `D`).
    fn register_configs(&self, inv: &Invocation) -> Vec<AttentionFwdConfig> {
        Self::variant_configs(Variant::Portable, &PORTABLE_TILINGS)
            .into_iter()
            .filter_map(|c| {
                [c.with_registers(), c.with_slices()]
                    .into_iter()
                    .find(|c| self.check(inv, c).is_ok())
            })
            .collect()
    }

    /// The portable tilings, largest first: with the accumulator in registers where the
    /// device keeps arrays across barriers, then in shared memory.
    fn portable_configs(&self) -> Vec<AttentionFwdConfig> {
        let shared = Self::variant_configs(Variant::Portable, &PORTABLE_TILINGS);
        let mut all = Vec::new();
        if self.limits.arrays_across_barriers {
            all.extend(shared.iter().map(|c| c.with_registers()));
        }
        all.extend(shared);
        all
    }

    fn variant_configs(variant: Variant, pairs: &[(u32, u32)]) -> Vec<AttentionFwdConfig> {
        pairs
            .iter()
            .map(|&(block_q, block_kv)| AttentionFwdConfig::new(variant, block_q, block_kv))
            .collect()
    }

    /// Whether both head dims are at most 64: a key tile's Q·Kᵀ is then short, and 128-key
    /// tiles amortise each tile's barriers and rescaling better than 32-key ones (measured
    /// +7-9% for 128x128 over the best other tiling at D = 64, non-causal; docs/PERF.md).
    fn narrow(inv: &Invocation) -> bool {
        head_dims(inv).is_ok_and(|(d, dv)| d.max(dv) <= 64)
    }

    /// Cubes of 128 query rows `inv` launches (0 where its sizes are missing).
    fn tall_cubes(inv: &Invocation) -> usize {
        let sig = inv.signature();
        match (sig.size("batch"), sig.size("heads"), sig.size("seq_q")) {
            (Ok(b), Ok(h), Ok(sq)) => b * h * sq.div_ceil(128),
            _ => 0,
        }
    }

    /// The tensor-core tilings `(block_q, block_kv)` tuned for `inv`: four, since first-use
    /// tuning compiles each one.
    fn mma_tilings(inv: &Invocation) -> &'static [(u32, u32)] {
        if Self::narrow(inv) {
            &[(128, 128), (64, 128), (64, 64), (128, 64)]
        } else {
            &[(64, 64), (128, 64), (64, 32), (128, 32)]
        }
    }

    /// Extra configs for calls with short query blocks or too few cubes to fill the device
    /// (decoding: a query or a few against a long cache), best first: one plane per 16 rows
    /// where `Sq <= 16` (or, with GQA, where the group's `group · Sq` rows fit 16; four
    /// planes where they fit 64), and split-K with enough parts for about [`SPLIT_TARGET_CUBES`]
    /// cubes of four planes or of one (or half as many four-plane cubes, or twice or three
    /// quarters as many one-plane cubes), each part at least eight 64-key tiles; the first
    /// is the heuristic's.
    /// Empty for other calls.
    fn short_query_configs(inv: &Invocation) -> Vec<AttentionFwdConfig> {
        let sig = inv.signature();
        let (Ok(b), Ok(h), Ok(sq), Ok(sk)) = (
            sig.size("batch"),
            sig.size("heads"),
            sig.size("seq_q"),
            sig.size("seq_kv"),
        ) else {
            return Vec::new();
        };
        // Where a GQA group's queries fit one block, the launcher packs them into one cube
        // per KV head (see `MmaParams::packed`): 16 rows, or 64 when 16 are too few.
        let hkv = sig.size("kv_heads").unwrap_or(h).max(1);
        let group = h / hkv;
        let block_q = if sq * group <= 16 || (sq <= 16 && sq * group > 64) {
            16
        } else {
            64
        };
        let base = AttentionFwdConfig::new(Variant::Mma, block_q, 64);
        let packed = group > 1 && sq * group <= block_q as usize;
        let cubes = if packed {
            b * hkv
        } else {
            sq.div_ceil(block_q as usize) * b * h
        };
        // Parts for about `target` cubes, each part at least eight 64-key tiles: parts of
        // four always lost in the H100 sweep (docs/PERF.md, decode), to the prologue and the
        // merge they add.
        let parts = |target: usize| {
            target
                .div_ceil(cubes.max(1))
                .min(sk / (8 * 64))
                .min(MAX_SPLITS as usize) as u32
        };
        // One-plane cubes are small: an SM holds several. Measured on an H100: 512 of them
        // were fastest for one sequence and for an 8k cache, 1024 for a 4k cache, 2048 never.
        // On an H200 one sequence's 32k cache ran 3-5% faster in 384-320 cubes (48-40
        // parts) than in 512 (docs/PERF.md, run35); the tuner times all three counts.
        let targets: &[usize] = if block_q == 16 {
            &[
                SPLIT_TARGET_CUBES,
                2 * SPLIT_TARGET_CUBES,
                3 * SPLIT_TARGET_CUBES / 4,
            ]
        } else {
            &[SPLIT_TARGET_CUBES, SPLIT_TARGET_CUBES / 2]
        };
        let mut out: Vec<AttentionFwdConfig> = Vec::new();
        for &target in targets {
            let splits = parts(target);
            if splits >= 2 && !out.iter().any(|c| c.splits == splits) {
                out.push(AttentionFwdConfig { splits, ..base });
            }
        }
        if block_q == 16 {
            out.push(base);
        }
        out
    }
}

/// The portable forward's tilings, largest first: the heuristic takes the first that fits
/// the device, the tuner the first four (with the accumulator in registers where the device
/// allows, then two with it in shared memory).
const PORTABLE_TILINGS: [(u32, u32); 10] = [
    (128, 64),
    (128, 32),
    (64, 64),
    (64, 32),
    (32, 64),
    (32, 32),
    (32, 16),
    (16, 16),
    (8, 16),
    (4, 16),
];

/// Cubes a split-K launch aims for: a few per SM of a large GPU.
const SPLIT_TARGET_CUBES: usize = 512;

impl Op for AttentionFwdOp {
    type Config = AttentionFwdConfig;

    fn id(&self) -> &'static str {
        "attention_fwd"
    }

    fn version(&self) -> u32 {
        // 3: asynchronous K/V copies change which tiling is fastest; re-tune.
        // 4: decoding's split-K candidates aim at fewer cubes; re-tune.
        // 5: the next K is issued before the softmax, which makes 64-row tiles 11-35% faster
        // and leaves 128-row ones as they were; re-tune.
        // 6: the warpgroup-MMA variant joins the candidates on sm_90; re-tune.
        // 7: its copies land in 128-byte swizzled rows and its warpgroups take turns, which
        // makes 128x128 the fastest tiling at D = 128 (docs/PERF.md); re-tune.
        // 8: its causal grids launch heads in groups that share K and V in L2; 9: its grid
        // is persistent, over pairs of query blocks; re-tune.
        // 10: the portable kernel is register-tiled, with new tilings; 11: its accumulator
        // in registers on CUDA and ROCm; re-tune.
        // 12: the cmma kernel reads vectors, takes 128-row tiles and skips masks and
        // rescales where it can; re-tune.
        // 13: the portable kernel's sliced form joins the candidates where whole rows do
        // not fit (48 KiB at D = 128); re-tune.
        // 14: the warpgroup kernel's output leaves by TMA where a block fits a V buffer,
        // which speeds 128x128 tiles and not 192-row ones; re-tune.
        // 15: the same tilings take Q one block ahead (causal 3-4% faster, 192-row ones
        // unchanged); re-tune.
        // 16: decoding's one-plane cubes are also timed at about 384 cubes; re-tune.
        // 17: the warpgroup variant at D = 256 (128x64), and at D = 96 in swizzled rows
        // padded to 128; re-tune.
        // 18: the warpgroup variant's D = 32 copies in 64-byte swizzled rows (16-byte columns
        // before), with O by TMA store at 128x128, and three warpgroups of 128-key tiles
        // (192x128) where Dv = 32; re-tune.
        // 19: three warpgroups take 160 registers (152 before), and 192x128 runs up to
        // Dv = 64, the heuristic's first tiling at D = 64 and a candidate in place of 192x64
        // wherever it fits; re-tune.
        // 20: one warpgroup of 128-key tiles, two cubes an SM (64x128), a candidate and the
        // heuristic's first tiling at D, Dv <= 64 under a mask up to 1k queries and without
        // one up to 512; re-tune.
        // 21: at D = 128 the two warpgroups of 128x128 store their own output and take no
        // turns (1-3% faster, a one-tile block 8%); re-tune.
        // 22: there each warpgroup waits for its output store's reads only under the next
        // block's first scores, and for a V tile only after issuing the next scores (2-3.6%
        // faster); re-tune.
        22
    }

    fn heuristic(&self, inv: &Invocation) -> Result<AttentionFwdConfig, String> {
        // MMA: the tuner's pick on an H100 (docs/PERF.md): 128x128 up to D = 64; above,
        // two 16-row tiles per plane (128x64, 30-40% ahead of 64x64 at 1k-16k) where the
        // queries fill 128-row cubes and those number at least two waves of an H100 (132
        // SMs, two cubes each), else 64-row cubes; 64-key tiles (32 where D = 256 keeps
        // registers in bounds).
        // Portable: the largest tiles that fit shared memory; 32 KiB (lavapipe, WebGPU)
        // holds 32x64 at D = 32, 32x32 at D = 64, 16x16 up to D = 128 and 4x16 at D = 256;
        // an H100's 227 KiB, 128x64 (the fastest there, docs/PERF.md) up to D = 128.
        let mut tries = Self::short_query_configs(inv);
        // Warpgroup MMA where it runs the call, from D = 64 (docs/PERF.md): 128x128, two
        // warpgroups taking turns (the tuner's pick on an H100 at D = 128, causal included
        // since its grids launch heads in groups; at D = 64, 1.2-1.4x the MMA kernel in
        // run122). At D = Dv = 32 and 64 three warpgroups of 128-key tiles come first: the
        // tuner's pick on an H200 from 2k (D = 32: 1.09-1.24x SDPA-flash, 4-14% ahead of every
        // other tiling from 4k; D = 64: 7-19% ahead of 128x128, up to 1.06x cuDNN; causal
        // included), within 2% of the best at 1k except causal (docs/PERF.md). At D = 64
        // under a mask up to 1k queries two warpgroups lead (9-10% ahead, run4 of
        // 2026-12-02): a head's six 192-row blocks leave the heaviest a third full.
        if tries.is_empty()
            && let Ok((d, dv)) = head_dims(inv)
        {
            let configs = self.wgmma_configs(inv);
            let short_masked = Self::short_masked(inv);
            if Self::short_blocks(inv) && d.max(dv) <= 64 {
                tries.extend(configs.iter().copied().filter(|c| c.block_q == 64));
            }
            if d == dv && (d == 32 || (d == 64 && !short_masked)) {
                let wide_tiles = AttentionFwdConfig::new(Variant::Wgmma, 192, 128);
                tries.extend(configs.iter().copied().filter(|c| *c == wide_tiles));
            }
            if d.max(dv) >= 64 {
                tries.extend(configs.into_iter().take(1));
            }
        }
        if Self::narrow(inv) {
            tries.push(AttentionFwdConfig::new(Variant::Mma, 128, 128));
        } else if inv.signature().size("seq_q").is_ok_and(|sq| sq >= 128)
            && Self::tall_cubes(inv) >= 2 * 264
        {
            tries.push(AttentionFwdConfig::new(Variant::Mma, 128, 64));
        }
        tries.extend(Self::variant_configs(Variant::Mma, &[(64, 64), (64, 32)]));
        tries.extend(Self::variant_configs(Variant::Cmma, &CMMA_TILINGS));
        // Portable (f32): with the accumulator in registers, 128x32 was the tuner's pick on
        // an H100 non-causal at D = 128 (run127; 64x32 causal and at D = 64, within 3-7%);
        // `check` refuses it where arrays may not be kept across barriers.
        let portable = AttentionFwdConfig::new(Variant::Portable, 128, 32);
        tries.extend([portable.with_registers(), portable.with_slices()]);
        tries.extend(self.portable_configs());
        tries
            .into_iter()
            .find(|c| self.check(inv, c).is_ok())
            .ok_or_else(|| "no tile fits this device's shared memory".to_string())
    }

    fn candidates(&self, inv: &Invocation) -> Vec<AttentionFwdConfig> {
        // Small on purpose: first-use tuning compiles every candidate.
        let mut all = Self::variant_configs(Variant::Mma, Self::mma_tilings(inv));
        let short = Self::short_query_configs(inv);
        if !short.is_empty() {
            // Decoding-like calls: their own configs beside the plain 64-row one.
            all = short;
            all.push(AttentionFwdConfig::new(Variant::Mma, 64, 64));
        } else {
            let wgmma = self.wgmma_configs(inv);
            if !wgmma.is_empty() {
                // Where the warpgroup kernels run they won every bucket of an H200 sweep
                // (bf16, D = 64 and 128, 256-8k, 2-32 heads) but a few short ones, where an
                // MMA tiling led by at most 5%: the first MMA tiling that fits stays for
                // those, and the others, which only lengthened first use (every candidate
                // compiles), go (docs/PERF.md, "Fewer candidates where the warpgroup kernels
                // run").
                all.retain(|c| self.check(inv, c).is_ok());
                all.truncate(1);
            }
            all.extend(wgmma);
        }
        if self.mma_refusal(inv).is_some() {
            all = if self.cmma_refusal(inv).is_none() {
                // The two largest that fit: on an H100 through Vulkan the tuner took 128x32
                // (D = 128) or 128x16 (D = 64) at every size and never a 64-row tiling
                // (docs/PERF.md), whose compiles only lengthened first use.
                Self::variant_configs(Variant::Cmma, &CMMA_TILINGS)
                    .into_iter()
                    .filter(|c| self.check(inv, c).is_ok())
                    .take(2)
                    .collect()
            } else {
                // The four largest portable tilings that fit with the accumulator in
                // registers (where the device keeps arrays across barriers; sliced where
                // whole rows do not fit), else the four largest with it in shared memory.
                // Where registers serve, the fastest of them ran 1.2-21x the best shared
                // form at every measured shape (CUDA and Vulkan, docs/PERF.md): the shared
                // ones only lengthened first use.
                let mut regs = self.register_configs(inv);
                regs.truncate(4);
                if regs.is_empty() {
                    regs = Self::variant_configs(Variant::Portable, &PORTABLE_TILINGS)
                        .into_iter()
                        .filter(|c| self.check(inv, c).is_ok())
                        .take(4)
                        .collect();
                }
                regs
            };
        }
        all.into_iter()
            .filter(|c| self.check(inv, c).is_ok())
            .collect()
    }

    fn key(&self, inv: &Invocation) -> CallKey {
        bucketed_key(self.id(), self.version(), inv)
    }

    fn check(&self, inv: &Invocation, c: &AttentionFwdConfig) -> Result<(), String> {
        let (d, dv) = head_dims(inv)?;
        if !(1..=MAX_SPLITS).contains(&c.splits) {
            return Err(format!("splits {} is not in 1..={MAX_SPLITS}", c.splits));
        }
        if c.registers && c.variant != Variant::Portable {
            return Err("registers applies to the portable variant only".into());
        }
        if c.sliced && !c.registers {
            return Err(
                "sliced needs registers (the portable variant's sliced form keeps \
                        its sums in registers)"
                    .into(),
            );
        }
        if c.splits > 1 && c.variant != Variant::Mma {
            return Err(format!(
                "splits {} needs the mma variant (the portable kernel does not split)",
                c.splits
            ));
        }
        match c.variant {
            Variant::Portable => {
                if !(c.block_q.is_power_of_two() && (4..=128).contains(&c.block_q)) {
                    return Err(format!(
                        "block_q {} is not a power of two in 4..=128",
                        c.block_q
                    ));
                }
                // Each unit computes 4 x 4 scores and one unit per query row keeps its
                // running maximum and sum: `block_q · block_kv / 16` units, at least `block_q`.
                if !(c.block_kv.is_power_of_two() && (16..=64).contains(&c.block_kv)) {
                    return Err(format!(
                        "block_kv {} is not a power of two in 16..=64",
                        c.block_kv
                    ));
                }
                if c.registers {
                    if !self.limits.arrays_across_barriers {
                        return Err("registers needs a device that keeps arrays across cube \
                                    barriers (CUDA, ROCm, GPUs through wgpu; not lavapipe)"
                            .into());
                    }
                    // Per unit, in f32: 4 rows by `Dv / block_kv` vectors of 4.
                    let per_unit = 16 * dv.div_ceil(4).div_ceil(c.block_kv as usize / 4);
                    if per_unit > 128 {
                        return Err(format!(
                            "registers with block_kv {} and val_dim {dv} would spill \
                             registers",
                            c.block_kv
                        ));
                    }
                }
            }
            Variant::Mma => {
                if let Some(why) = self.mma_refusal(inv) {
                    return Err(why);
                }
                if !matches!(c.block_q, 16 | 64 | 128) {
                    return Err(format!(
                        "block_q {} is not 16, 64 or 128 (one plane, or four planes of one or \
                         two 16-row tiles)",
                        c.block_q
                    ));
                }
                if !(c.block_kv.is_power_of_two() && (16..=128).contains(&c.block_kv)) {
                    return Err(format!(
                        "block_kv {} is not a power of two in 16..=128",
                        c.block_kv
                    ));
                }
                // Scores, the output accumulator and (with one tile per plane) Q live in
                // registers: at most 208 32-bit values per lane for them (measured: D = 256
                // with 64-key tiles, 224, is refused).
                let per_lane = c.m_tiles() as usize * (c.block_kv as usize + dv) / 2;
                let q_regs = if c.m_tiles() == 1 { d / 4 } else { 0 };
                if per_lane + q_regs > 208 {
                    return Err(format!(
                        "block_q {} x block_kv {} with head dims {d}/{dv} would spill registers",
                        c.block_q, c.block_kv
                    ));
                }
            }
            Variant::Wgmma => {
                if let Some(why) = self.wgmma_refusal(inv) {
                    return Err(why);
                }
                if !matches!(c.block_q, 64 | 128 | 192) {
                    return Err(format!(
                        "block_q {} is not 64, 128 or 192 (one to three warpgroups of 64 rows)",
                        c.block_q
                    ));
                }
                if !matches!(c.block_kv, 64 | 128) {
                    return Err(format!("block_kv {} is not 64 or 128", c.block_kv));
                }
                for (name, x) in [("head_dim", d), ("val_dim", dv)] {
                    if !x.is_multiple_of(32) || (x > 128 && x != 256) {
                        return Err(format!(
                            "{name} {x} is not a multiple of 32 up to 128, or 256 (the wgmma \
                             variant)"
                        ));
                    }
                }
                // Per consumer thread, in 32-bit registers: the scores (f32), the current and
                // the next tile's probabilities (16-bit pairs) and O, within what `setmaxnreg`
                // gives it (measured with ptxas: 160 of 160 and 192 of 232 run without spills).
                let p = c.wgmma_params(d, dv);
                let values = (c.block_kv + p.val_dim / 2) as usize;
                if values > p.consumer_registers() as usize {
                    return Err(format!(
                        "block_q {} x block_kv {} with val_dim {dv} needs {values} registers \
                         per thread for its tiles; the variant gives {}",
                        c.block_q,
                        c.block_kv,
                        p.consumer_registers()
                    ));
                }
                // One warpgroup runs two cubes an SM (`WgmmaFwdParams::cubes_per_sm`), each
                // within half the SM's shared memory.
                let shared = c.smem_bytes(d, dv);
                if p.cubes_per_sm() > 1 && shared > p.shared_limit() as usize {
                    return Err(format!(
                        "block_q {} x block_kv {} with head dims {d}/{dv} needs {shared} bytes \
                         of shared memory per cube; two cubes an SM leave each {}",
                        c.block_q,
                        c.block_kv,
                        p.shared_limit()
                    ));
                }
            }
            Variant::Cmma => {
                if let Some(why) = self.cmma_refusal(inv) {
                    return Err(why);
                }
                if !matches!(c.block_q, 16 | 32 | 64 | 128) {
                    return Err(format!(
                        "block_q {} is not 16, 32, 64 or 128 (one to four planes of 16 rows, \
                         or four of 32)",
                        c.block_q
                    ));
                }
                if !matches!(c.block_kv, 16 | 32 | 64) {
                    return Err(format!("block_kv {} is not 16, 32 or 64", c.block_kv));
                }
                // Q and O stay in 16 x 16 fragments: whole fragments, and at most 256 wide.
                for (name, x) in [("head_dim", d), ("val_dim", dv)] {
                    if !x.is_multiple_of(16) || x > 256 {
                        return Err(format!(
                            "{name} {x} is not a multiple of 16 up to 256 (cmma fragments)"
                        ));
                    }
                }
                // Per lane, each row fragment holds Q in D / 4 registers (16-bit pairs) and O
                // in Dv / 2 (f32): two fragments fit beside the rest up to D = Dv = 128.
                let held = c.m_tiles() as usize * (d / 4 + dv / 2);
                if held > 192 {
                    return Err(format!(
                        "block_q {} holds {held} registers per lane of Q and O fragments at \
                         head_dim {d}, val_dim {dv}; at most 192 fit",
                        c.block_q
                    ));
                }
            }
        }
        fits(&self.limits, c.units(), c.smem_bytes(d, dv))
    }
}

#[cfg(test)]
mod tests {
    use flint_tune::{DeviceFingerprint, Signature};

    use super::*;

    fn h100() -> AttentionFwdOp {
        AttentionFwdOp::new(DeviceLimits {
            shared_memory: 232_448,
            max_units_per_cube: 1024,
            max_vector_size: 16,
            plane_size: (32, 32),
            plane_ops: true,
            cmma: true,
            mma_16x8x16: vec!["f16", "bf16"],
            cmma_16x16x16: vec!["f16", "bf16"],
            atomic_add_f32x2: false,
            wgmma: false,
            arrays_across_barriers: false,
        })
    }

    /// A call with four query heads per KV head.
    fn call(batch: usize, heads: usize, seq_q: usize, seq_kv: usize) -> Invocation {
        call_kv(batch, heads, heads / 4, seq_q, seq_kv)
    }

    fn call_kv(
        batch: usize,
        heads: usize,
        kv_heads: usize,
        seq_q: usize,
        seq_kv: usize,
    ) -> Invocation {
        let sig = Signature::new()
            .with("batch", batch)
            .with("heads", heads)
            .with("kv_heads", kv_heads)
            .with("seq_q", seq_q)
            .with("seq_kv", seq_kv)
            .with("head_dim", 128usize)
            .with("val_dim", 128usize)
            .with("dtype", "bf16")
            .with("masked", false)
            .with("bias", false)
            .with("softcap", false)
            .with("dropout", false);
        Invocation::new(
            "attention_fwd",
            sig,
            DeviceFingerprint::new("cuda", "H100", "sm_90", "12"),
        )
    }

    #[test]
    fn decoding_gets_one_plane_per_16_rows_and_split_keys_when_cubes_are_few() {
        let op = h100();
        // One query, 32 heads in 8 groups, a 32k cache: 8 packed one-plane cubes unsplit;
        // 64 parts make 512 (and 128 would leave parts of four tiles), 48 make 384.
        let inv = call(1, 32, 1, 32_768);
        let c = op.heuristic(&inv).unwrap();
        assert_eq!((c.variant, c.block_q, c.splits), (Variant::Mma, 16, 64));
        let cands = op.candidates(&inv);
        assert!(cands.contains(&AttentionFwdConfig::new(Variant::Mma, 16, 64)));
        let mut parts: Vec<u32> = cands.iter().map(|c| c.splits).collect();
        parts.sort_unstable();
        parts.dedup();
        assert_eq!(parts, [1, 48, 64]);
        assert!(cands.iter().all(|c| op.check(&inv, c).is_ok()));
        // 16 sequences without GQA: 512 one-plane cubes already, so two parts (1024).
        let inv = call_kv(16, 32, 32, 1, 8192);
        let c = op.heuristic(&inv).unwrap();
        assert_eq!((c.block_q, c.splits), (16, 2));
        assert!(op.candidates(&inv).iter().all(|c| c.splits <= 2));
        // With GQA 4 the launcher packs each group into one cube: 128 cubes, 4 parts first,
        // then 8 and 3; 16 would leave parts of four tiles.
        let inv = call(16, 32, 1, 8192);
        let c = op.heuristic(&inv).unwrap();
        assert_eq!((c.block_q, c.splits), (16, 4));
        let mut parts: Vec<u32> = op.candidates(&inv).iter().map(|c| c.splits).collect();
        parts.sort_unstable();
        parts.dedup();
        assert_eq!(parts, [1, 3, 4, 8]);
        // Eight queries of a group of four (32 rows) pack into four-plane blocks.
        let c = op.heuristic(&call(16, 32, 8, 8192)).unwrap();
        assert_eq!((c.block_q, c.splits), (64, 4));
        // Without GQA the same eight queries keep one-plane blocks.
        let c = op.heuristic(&call_kv(16, 32, 32, 8, 8192)).unwrap();
        assert_eq!(c.block_q, 16);
        // 64 query rows per cube where Sq > 16: 8 cubes, 64 parts make 512.
        let c = op.heuristic(&call(1, 8, 64, 65_536)).unwrap();
        assert_eq!((c.block_q, c.splits), (64, 64));
        // A short cache cannot be split into parts of eight tiles.
        let c = op.heuristic(&call(1, 32, 1, 256)).unwrap();
        assert_eq!((c.block_q, c.splits), (16, 1));
        // Prefill-sized calls keep the plain tilings.
        let c = op.heuristic(&call(4, 16, 4096, 4096)).unwrap();
        assert_eq!((c.block_q, c.splits), (128, 1));
        assert!(
            op.candidates(&call(4, 16, 4096, 4096))
                .iter()
                .all(|c| c.splits == 1)
        );
    }

    /// An NVIDIA GPU through Vulkan: cooperative matrices for f16 only, no register-level
    /// MMA, 48 KiB of shared memory per cube.
    fn vulkan() -> AttentionFwdOp {
        AttentionFwdOp::new(DeviceLimits {
            shared_memory: 49_152,
            max_units_per_cube: 1024,
            max_vector_size: 4,
            plane_size: (32, 32),
            plane_ops: true,
            cmma: true,
            mma_16x8x16: Vec::new(),
            cmma_16x16x16: vec!["f16"],
            atomic_add_f32x2: false,
            wgmma: false,
            arrays_across_barriers: false,
        })
    }

    fn with_dtype(inv: &Invocation, dtype: &str) -> Invocation {
        let sig = inv.signature().clone().with("dtype", dtype);
        Invocation::new("attention_fwd", sig, inv.fingerprint().clone())
    }

    /// f32 through Vulkan at D = 128: whole rows of Q leave only small tilings in 48 KiB,
    /// so the sliced form serves the large ones, and the heuristic takes it.
    #[test]
    fn the_sliced_form_serves_f32_where_whole_rows_do_not_fit() {
        let op = AttentionFwdOp::new(DeviceLimits {
            arrays_across_barriers: true,
            ..vulkan().limits
        });
        let f32_call = with_dtype(&call(4, 16, 1024, 1024), "f32");
        let portable = |bq, bkv| AttentionFwdConfig::new(Variant::Portable, bq, bkv);
        assert_eq!(
            op.heuristic(&f32_call).unwrap(),
            portable(128, 32).with_slices()
        );
        let cands = op.candidates(&f32_call);
        assert_eq!(
            &cands[..4],
            &[
                portable(128, 32).with_slices(),
                portable(64, 64).with_slices(),
                portable(64, 32).with_slices(),
                portable(32, 64).with_slices(),
            ]
        );
        for c in &cands {
            assert!(c.smem_bytes(128, 128) <= 49_152, "{c:?} exceeds 48 KiB");
        }
        // Where whole rows fit, they are preferred; sliced needs registers.
        let cuda = h100();
        let cuda = AttentionFwdOp::new(DeviceLimits {
            arrays_across_barriers: true,
            ..cuda.limits
        });
        let on_cuda = with_dtype(&call(4, 16, 1024, 1024), "f32");
        assert!(!cuda.candidates(&on_cuda).iter().any(|c| c.sliced));
        let no_regs = AttentionFwdConfig {
            registers: false,
            ..portable(64, 32).with_slices()
        };
        let why = op.check(&f32_call, &no_regs).unwrap_err();
        assert!(why.contains("sliced needs registers"), "{why}");
    }

    #[test]
    fn cooperative_matrices_serve_half_precision_where_register_mma_is_missing() {
        let op = vulkan();
        let f16 = with_dtype(&call(4, 16, 4096, 4096), "f16");
        let c = op.heuristic(&f16).unwrap();
        assert_eq!(c, AttentionFwdConfig::new(Variant::Cmma, 128, 32));
        let cands = op.candidates(&f16);
        // The tuner's picks there; the 64-row tilings were never picked.
        let cmma = |bq, bkv| AttentionFwdConfig::new(Variant::Cmma, bq, bkv);
        assert_eq!(cands, [cmma(128, 32), cmma(128, 16)]);
        for c in &cands {
            assert_eq!(c.variant, Variant::Cmma);
            assert!(c.smem_bytes(128, 128) <= 49_152, "{c:?} exceeds 48 KiB");
        }
        // Two row fragments per plane up to D = 128; above, their registers are refused.
        assert!(
            op.check(&f16, &AttentionFwdConfig::new(Variant::Cmma, 128, 32))
                .is_ok()
        );
        let d256 = Invocation::new(
            "attention_fwd",
            f16.signature()
                .clone()
                .with("head_dim", 256usize)
                .with("val_dim", 256usize),
            f16.fingerprint().clone(),
        );
        // At D = 256, 48 KiB holds only the 64x32 tiling.
        assert_eq!(op.candidates(&d256), [cmma(64, 32)]);
        let why = op
            .check(&d256, &AttentionFwdConfig::new(Variant::Cmma, 128, 16))
            .unwrap_err();
        assert!(why.contains("registers"), "{why}");
        // There the heuristic falls back to one fragment per plane.
        assert_eq!(
            op.heuristic(&d256).unwrap(),
            AttentionFwdConfig::new(Variant::Cmma, 64, 32)
        );
        // 64-key tiles for 64 rows need 60 KiB at D = 128: refused, naming the limit.
        let why = op
            .check(&f16, &AttentionFwdConfig::new(Variant::Cmma, 64, 64))
            .unwrap_err();
        assert!(why.contains("shared memory"), "{why}");
        // No bf16 cooperative matrix there, and none for f32: the portable kernel.
        for dtype in ["bf16", "f32"] {
            let inv = with_dtype(&f16, dtype);
            assert!(
                op.candidates(&inv)
                    .iter()
                    .all(|c| c.variant == Variant::Portable)
            );
            assert_eq!(op.heuristic(&inv).unwrap().variant, Variant::Portable);
            assert!(
                op.check(&inv, &AttentionFwdConfig::new(Variant::Cmma, 64, 32))
                    .unwrap_err()
                    .contains("cmma")
            );
        }
        // Where the register-level MMA exists it is preferred; cmma stays an explicit choice.
        let h100 = h100();
        assert!(
            h100.candidates(&f16)
                .iter()
                .all(|c| c.variant == Variant::Mma)
        );
        assert!(
            h100.check(&f16, &AttentionFwdConfig::new(Variant::Cmma, 32, 64))
                .is_ok()
        );
        // Split-K is the MMA kernel's alone.
        let split = AttentionFwdConfig {
            splits: 2,
            ..AttentionFwdConfig::new(Variant::Cmma, 32, 32)
        };
        assert!(h100.check(&f16, &split).unwrap_err().contains("splits"));
    }

    #[test]
    fn narrow_heads_tune_128_key_tiles_and_wide_ones_do_not() {
        let op = h100();
        let with_dims = |d: usize| {
            let inv = call(4, 16, 4096, 4096);
            let sig = inv
                .signature()
                .clone()
                .with("head_dim", d)
                .with("val_dim", d);
            Invocation::new("attention_fwd", sig, inv.fingerprint().clone())
        };
        let tilings = |d| -> Vec<(u32, u32)> {
            op.candidates(&with_dims(d))
                .iter()
                .map(|c| (c.block_q, c.block_kv))
                .collect()
        };
        assert_eq!(
            tilings(64),
            vec![(128, 128), (64, 128), (64, 64), (128, 64)]
        );
        assert_eq!(tilings(128), vec![(64, 64), (128, 64), (64, 32), (128, 32)]);
        let c = op.heuristic(&with_dims(64)).unwrap();
        assert_eq!((c.block_q, c.block_kv), (128, 128));
        // 4 x 16 heads x 32 blocks of 128 rows: about four H100 waves of 128-row cubes.
        let c = op.heuristic(&with_dims(128)).unwrap();
        assert_eq!((c.block_q, c.block_kv), (128, 64));
        // One sequence of 2k with 8 heads: 128 such cubes, under one wave: 64-row cubes.
        let few = call(1, 8, 2048, 2048);
        let c = op.heuristic(&few).unwrap();
        assert_eq!((c.block_q, c.block_kv), (64, 64));
        // 128x128 would spill registers at D = 128: refused, never tuned.
        let e = op
            .check(
                &with_dims(128),
                &AttentionFwdConfig::new(Variant::Mma, 128, 128),
            )
            .unwrap_err();
        assert!(e.contains("spill"), "{e}");
    }

    #[test]
    fn splits_are_refused_outside_their_range_and_on_the_portable_kernel() {
        let op = h100();
        let inv = call(1, 32, 1, 4096);
        let with = |variant, splits| AttentionFwdConfig {
            splits,
            ..AttentionFwdConfig::new(variant, 16, 64)
        };
        assert!(
            op.check(&inv, &with(Variant::Mma, 0))
                .unwrap_err()
                .contains("splits 0")
        );
        assert!(
            op.check(&inv, &with(Variant::Mma, MAX_SPLITS + 1))
                .unwrap_err()
                .contains(&format!("splits {}", MAX_SPLITS + 1))
        );
        let e = op.check(&inv, &with(Variant::Portable, 2)).unwrap_err();
        assert!(e.contains("needs the mma variant"), "{e}");
        assert!(op.check(&inv, &with(Variant::Mma, MAX_SPLITS)).is_ok());
        let e = op
            .check(&inv, &AttentionFwdConfig::new(Variant::Mma, 32, 64))
            .unwrap_err();
        assert!(e.contains("block_q 32"), "{e}");
    }

    #[test]
    fn a_stored_config_without_splits_reads_as_unsplit() {
        let c: AttentionFwdConfig =
            serde_yaml::from_str("{variant: mma, block_q: 64, block_kv: 64}").unwrap();
        assert_eq!(c, AttentionFwdConfig::new(Variant::Mma, 64, 64));
    }

    /// The call of `call_kv` with `name` set to `value` and head dims `d`.
    fn with_sig(inv: &Invocation, name: &'static str, value: SigValue, d: usize) -> Invocation {
        let sig = inv
            .signature()
            .clone()
            .with(name, value)
            .with("head_dim", d)
            .with("val_dim", d);
        Invocation::new("attention_fwd", sig, inv.fingerprint().clone())
    }

    #[test]
    fn warpgroup_mma_joins_where_it_runs() {
        let hopper = AttentionFwdOp::new(DeviceLimits {
            wgmma: true,
            arrays_across_barriers: true,
            ..h100().limits
        });
        let wg = |bq, bkv| AttentionFwdConfig::new(Variant::Wgmma, bq, bkv);
        let inv = call_kv(2, 16, 16, 4096, 4096);
        // From D = 64 the heuristic starts there (128x128, masked or not); both tilings are
        // tuned beside the MMA ones.
        assert_eq!(hopper.heuristic(&inv).unwrap(), wg(128, 128));
        let masked = with_sig(&inv, "masked", SigValue::Bool(true), 128);
        assert_eq!(hopper.heuristic(&masked).unwrap(), wg(128, 128));
        let cands = hopper.candidates(&inv);
        assert!(cands.contains(&wg(192, 64)) && cands.contains(&wg(128, 128)));
        // Three warpgroups of 128-key tiles only where a Dv of 32 or 64 leaves them the
        // registers.
        assert!(!cands.contains(&wg(192, 128)));
        let d64 = with_sig(&inv, "masked", SigValue::Bool(false), 64);
        assert!(hopper.candidates(&d64).contains(&wg(192, 128)));
        // There they replace three warpgroups of 64-key tiles, which lost to them everywhere.
        assert!(!hopper.candidates(&d64).contains(&wg(192, 64)));
        let d32 = with_sig(&inv, "masked", SigValue::Bool(false), 32);
        assert!(hopper.candidates(&d32).contains(&wg(192, 128)));
        assert_eq!(hopper.heuristic(&d32).unwrap(), wg(192, 128));
        // Beside them one MMA tiling, for the short calls where it can lead: 128x128 up to
        // D = 64, else 64x64. Without the warpgroup kernels, all four.
        let mma = |cands: &[AttentionFwdConfig]| {
            cands
                .iter()
                .filter(|c| c.variant == Variant::Mma)
                .copied()
                .collect::<Vec<_>>()
        };
        assert_eq!(mma(&cands), [AttentionFwdConfig::new(Variant::Mma, 64, 64)]);
        let narrow = with_sig(&inv, "head_dim", SigValue::Int(64), 64);
        assert_eq!(
            mma(&hopper.candidates(&narrow)),
            [AttentionFwdConfig::new(Variant::Mma, 128, 128)]
        );
        assert_eq!(mma(&h100().candidates(&inv)).len(), 4);
        let capped = with_sig(&inv, "softcap", SigValue::Bool(true), 128);
        assert_eq!(mma(&hopper.candidates(&capped)).len(), 4);
        // Not on a device without it, and not for what the kernel lacks.
        assert!(
            h100()
                .candidates(&inv)
                .iter()
                .all(|c| c.variant != Variant::Wgmma)
        );
        let e = h100().check(&inv, &wg(192, 64)).unwrap_err();
        assert!(e.contains("warpgroup MMA"), "{e}");
        for feature in ["bias", "softcap", "dropout"] {
            let with = with_sig(&inv, feature, SigValue::Bool(true), 128);
            let e = hopper.check(&with, &wg(192, 64)).unwrap_err();
            assert!(e.contains(feature), "{e}");
            assert!(
                hopper
                    .candidates(&with)
                    .iter()
                    .all(|c| c.variant != Variant::Wgmma)
            );
        }
        let f32_call = with_sig(&inv, "dtype", SigValue::Str("f32".into()), 128);
        assert!(hopper.check(&f32_call, &wg(192, 64)).is_err());
        // D = 256: two warpgroups of 64-key tiles only (O and the scores fill them).
        let wide = with_sig(&inv, "dtype", SigValue::Str("bf16".into()), 256);
        hopper.check(&wide, &wg(128, 64)).unwrap();
        let e = hopper.check(&wide, &wg(128, 128)).unwrap_err();
        assert!(e.contains("registers"), "{e}");
        assert_eq!(
            hopper
                .candidates(&wide)
                .into_iter()
                .filter(|c| c.variant == Variant::Wgmma)
                .collect::<Vec<_>>(),
            [wg(128, 64)]
        );
        // D = 96 runs as 128 (32 zero columns, swizzled rows); 32 keeps its own width.
        let p = wg(128, 128).wgmma_params(96, 96);
        assert_eq!((p.head_dim, p.val_dim, p.val_pad), (128, 128, 32));
        let p = wg(128, 128).wgmma_params(32, 32);
        assert_eq!((p.head_dim, p.val_pad), (32, 0));
        let e = hopper
            .check(
                &with_sig(&inv, "dtype", SigValue::Str("bf16".into()), 192),
                &wg(128, 64),
            )
            .unwrap_err();
        assert!(e.contains("head_dim 192"), "{e}");
        // Three warpgroups hold 128-key tiles only with at most Dv = 64 of output.
        let e = hopper.check(&inv, &wg(192, 128)).unwrap_err();
        assert!(e.contains("registers"), "{e}");
        for bad in [wg(256, 64), wg(128, 32)] {
            assert!(hopper.check(&inv, &bad).is_err(), "{bad:?}");
        }
        // One warpgroup runs two cubes an SM, each in half its shared memory: 64-key tiles
        // fit at D = 128, 128-key tiles only up to D = 64.
        hopper.check(&inv, &wg(64, 64)).unwrap();
        let e = hopper.check(&inv, &wg(64, 128)).unwrap_err();
        assert!(e.contains("shared memory per cube"), "{e}");
        // At D = 64 and 32 the heuristic starts with three warpgroups of 128-key tiles, and
        // at D = 64 two warpgroups are tuned beside them. Decoding keeps its own configs.
        let narrow = with_sig(&inv, "dtype", SigValue::Str("bf16".into()), 64);
        assert_eq!(hopper.heuristic(&narrow).unwrap(), wg(192, 128));
        assert!(hopper.candidates(&narrow).contains(&wg(128, 128)));
        assert!(hopper.candidates(&narrow).contains(&wg(192, 128)));
        let d32 = with_sig(&inv, "dtype", SigValue::Str("bf16".into()), 32);
        assert_eq!(hopper.heuristic(&d32).unwrap(), wg(192, 128));
        // Masked at D = 64 up to 1k queries two warpgroups lead; from 2k, and unmasked at 1k,
        // three.
        let at = |sq: usize, masked: bool| {
            let call = with_sig(&call_kv(2, 16, 16, sq, sq), "masked", masked.into(), 64);
            hopper
                .heuristic(&with_sig(&call, "dtype", SigValue::Str("bf16".into()), 64))
                .unwrap()
        };
        assert_eq!(at(1024, true), wg(64, 128));
        assert_eq!(at(2048, true), wg(192, 128));
        assert_eq!(at(1024, false), wg(192, 128));
        // Unmasked one warpgroup of 128-key tiles, two cubes an SM, leads up to 512 queries.
        assert_eq!(at(512, false), wg(64, 128));
        // It is tuned only where it leads, at D = 32 too.
        let cands_at = |sq: usize, masked: bool, d: usize| {
            let call = with_sig(&call_kv(2, 16, 16, sq, sq), "masked", masked.into(), d);
            hopper.candidates(&with_sig(&call, "dtype", SigValue::Str("bf16".into()), d))
        };
        for (sq, masked) in [(1024, true), (512, false)] {
            assert!(cands_at(sq, masked, 64).contains(&wg(64, 128)));
            assert!(cands_at(sq, masked, 32).contains(&wg(64, 128)));
        }
        for (sq, masked, d) in [(2048, true, 64), (1024, false, 64), (1024, true, 128)] {
            assert!(
                cands_at(sq, masked, d)
                    .iter()
                    .all(|c| c.variant != Variant::Wgmma || c.block_q != 64),
                "{sq} {masked} {d}"
            );
        }
        // Beside a Dv of 64 two warpgroups lead, as from D = 64.
        let d32_dv64 = Invocation::new(
            "attention_fwd",
            d32.signature().clone().with("val_dim", 64usize),
            d32.fingerprint().clone(),
        );
        assert_eq!(hopper.heuristic(&d32_dv64).unwrap(), wg(128, 128));
        let decode = call_kv(1, 32, 8, 1, 8192);
        assert!(
            hopper
                .candidates(&decode)
                .iter()
                .all(|c| c.variant != Variant::Wgmma)
        );
    }
}
