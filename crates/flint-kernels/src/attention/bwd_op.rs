//! The `attention_bwd` op: configs, heuristic, candidates, key and contract.

use std::collections::BTreeMap;

use flint_tune::{CallKey, Invocation, Op, OpSpec};

use super::op::{bucketed_key, fits, head_dims};
use crate::DeviceLimits;
use crate::attention::config::MMA_PLANES;
use crate::attention::{AttentionBwdConfig, Variant};

/// The attention backward (dQ, dK, dV and optionally the bias gradient) on one device.
pub struct AttentionBwdOp {
    limits: DeviceLimits,
}

impl AttentionBwdOp {
    /// The op for a device with `limits`.
    pub fn new(limits: DeviceLimits) -> Self {
        Self { limits }
    }

    /// The contract checked against `manifest/attention.yaml`.
    pub fn spec() -> OpSpec {
        OpSpec {
            id: "attention_bwd",
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
                let (b, h, hkv, sq, sk, d) = (
                    get("B")?,
                    get("H")?,
                    get("Hkv")?,
                    get("Sq")?,
                    get("Sk")?,
                    get("D")?,
                );
                let dv = dims.get("Dv").copied().unwrap_or(d);
                Ok(BTreeMap::from([
                    ("dq".to_string(), vec![b, h, sq, d]),
                    ("dk".to_string(), vec![b, hkv, sk, d]),
                    ("dv".to_string(), vec![b, hkv, sk, dv]),
                ]))
            },
        }
    }

    fn configs(variant: Variant, pairs: &[(u32, u32)]) -> Vec<AttentionBwdConfig> {
        pairs
            .iter()
            .map(|&(block_q, block_kv)| AttentionBwdConfig::new(variant, block_q, block_kv))
            .collect()
    }

    /// The fused dQ with 64-query tiles in 128-key cubes (sm90+).
    fn fused_wide() -> AttentionBwdConfig {
        AttentionBwdConfig::new(Variant::Mma, 64, 64)
            .with_planes(8)
            .with_fused_dq()
    }

    /// The fused grid with 128-query tiles in 128-key cubes (sm90+; D and Dv up to 64).
    fn fused_tall() -> AttentionBwdConfig {
        AttentionBwdConfig::new(Variant::Mma, 128, 64)
            .with_planes(8)
            .with_fused_dq()
            .with_grid()
    }

    /// Why the MMA variant cannot run this call, if it cannot (the device).
    fn mma_refusal(&self, inv: &Invocation) -> Option<String> {
        super::op::mma_refusal(&self.limits, inv)
    }

    /// Why the warpgroup-MMA backward cannot run `inv`: it needs the forward variant's device
    /// and has no bias, bias gradient, softcap or dropout.
    fn wgmma_refusal(&self, inv: &Invocation) -> Option<String> {
        if !self.limits.wgmma {
            return Some("the device has no warpgroup MMA (CUDA sm_90a)".into());
        }
        if let Some(why) = self.mma_refusal(inv) {
            return Some(why);
        }
        let sig = inv.signature();
        for feature in ["bias", "dbias", "softcap", "dropout"] {
            if sig.flag(feature) {
                return Some(format!("the wgmma backward has no {feature}"));
            }
        }
        None
    }

    /// Whether `inv` has the lengths the warpgroup-MMA backward is offered for: at least one
    /// 128-row block of queries and of keys.
    fn wgmma_lengths(inv: &Invocation) -> bool {
        let sig = inv.signature();
        sig.size("seq_q").is_ok_and(|x| x >= 128) && sig.size("seq_kv").is_ok_and(|x| x >= 128)
    }

    /// The portable tilings that run the call with the accumulators in registers, largest
    /// first: each whole where it fits, else sliced where that fits (small shared memories
    /// at large `D`).
    fn register_configs(&self, inv: &Invocation) -> Vec<AttentionBwdConfig> {
        Self::configs(Variant::Portable, &PORTABLE_TILINGS)
            .into_iter()
            .filter_map(|c| {
                [c.with_registers(), c.with_slices()]
                    .into_iter()
                    .find(|c| self.check(inv, c).is_ok())
            })
            .collect()
    }

    /// The portable tilings, largest first: with the accumulators in registers where the
    /// device keeps arrays across barriers, then in shared memory.
    fn portable_configs(&self) -> Vec<AttentionBwdConfig> {
        let shared = Self::configs(Variant::Portable, &PORTABLE_TILINGS);
        let mut all = Vec::new();
        if self.limits.arrays_across_barriers {
            all.extend(shared.iter().map(|c| c.with_registers()));
        }
        all.extend(shared);
        all
    }

    /// The cooperative-matrix tilings that fit the device, largest first (none where the
    /// device has no cmma for the call's dtype).
    fn cmma_configs(&self, inv: &Invocation) -> Vec<AttentionBwdConfig> {
        Self::cmma_tilings()
            .filter(|c| self.check(inv, c).is_ok())
            .collect()
    }

    /// Every cooperative-matrix tiling the op knows, most planes first, fitting or not (the
    /// benchmark's forced rows; candidates are those of them that fit the call).
    pub fn cmma_tilings() -> impl Iterator<Item = AttentionBwdConfig> {
        CMMA_TILINGS
            .iter()
            .map(|&(planes, bq, bkv, grid)| AttentionBwdConfig {
                grid,
                ..AttentionBwdConfig::new(Variant::Cmma, bq, bkv).with_planes(planes)
            })
    }

    /// Whether `inv`'s MMA backward runs its dK/dV pass in two launches ([`mma_splits_dkdv`]).
    fn splits(inv: &Invocation) -> bool {
        let softcap = inv.signature().flag("softcap");
        head_dims(inv).is_ok_and(|(d, dv)| mma_splits_dkdv(d, dv, softcap))
    }

    /// The MMA tiling for a split dK/dV pass: 8 planes (128 keys a cube) with 32-query and
    /// 32-key tiles, which fit beside D = 256's rows in shared memory.
    fn split_tiling() -> AttentionBwdConfig {
        AttentionBwdConfig::new(Variant::Mma, 32, 32).with_planes(8)
    }

    /// [`Self::split_tiling`] with dQ fused into the dK launch, its planes as a grid (4-5%
    /// ahead of the same without the grid, whose dK launch spills).
    fn split_fused() -> AttentionBwdConfig {
        Self::split_tiling().with_fused_dq().with_grid()
    }

    /// The warpgroup-MMA backward (two kernels of 128 rows per cube).
    pub(crate) fn wgmma() -> AttentionBwdConfig {
        AttentionBwdConfig::new(Variant::Wgmma, 128, 128)
    }
}

/// The cooperative-matrix backward's tilings (planes, query tile of dK/dV, key tile of dQ,
/// planes in pairs as a grid), most planes first: 48 KiB (Vulkan) holds 4 x 32 x 32 as a
/// grid or 2 x 32 x 32 at D = 128, and 8 x 32 x 32 as a grid or 4 x 32 x 32 at D = 64.
const CMMA_TILINGS: [(u32, u32, u32, bool); 10] = [
    (8, 64, 64, true),
    (8, 32, 32, true),
    (4, 64, 64, true),
    (4, 32, 32, true),
    (4, 64, 64, false),
    (4, 32, 32, false),
    (2, 64, 64, false),
    (2, 32, 32, false),
    (2, 16, 16, false),
    (1, 16, 16, false),
];

/// The portable backward's tilings (query rows, keys), largest first: the heuristic takes the
/// first that fits the device, the tuner the first four (with the accumulators in registers
/// where the device allows, then two in shared memory). 32 KiB (lavapipe, WebGPU) holds
/// 16x16 up to D = 64, 8x8 at D = 128 and 4x4 at D = 256.
const PORTABLE_TILINGS: [(u32, u32); 13] = [
    (128, 32),
    (64, 64),
    (64, 32),
    (32, 64),
    (32, 32),
    (32, 16),
    (16, 32),
    (16, 16),
    (16, 8),
    (8, 16),
    (8, 8),
    (4, 8),
    (4, 4),
];

/// 32-bit registers per lane that the MMA backward's accumulators and score tiles may take
/// without spilling.
const MMA_LANE_REGISTERS: usize = 208;

/// Registers per lane of an MMA kernel's score tiles (`tile` wide): softcap keeps its
/// derivative beside them, half as much again.
fn score_registers(tile: u32, softcap: bool) -> usize {
    if softcap {
        3 * tile as usize / 2
    } else {
        tile as usize
    }
}

/// Registers per lane of the MMA dK/dV kernel: its score tiles and the accumulators of the
/// gradients one launch computes, (D + Dv) / 2 for both, the larger half where `split`.
fn mma_dkdv_registers(d: usize, dv: usize, block_q: u32, softcap: bool, split: bool) -> usize {
    let acc = if split { d.max(dv) / 2 } else { (d + dv) / 2 };
    acc + score_registers(block_q, softcap)
}

/// Whether the MMA dK/dV pass runs as two launches, dV then dK
/// ([`crate::attention::backward::mma::DkdvGrads`]): where both accumulators in one launch
/// would spill even beside the smallest query tile (D or Dv of 256). Elsewhere a tiling that
/// spills is refused, as before.
pub(crate) fn mma_splits_dkdv(d: usize, dv: usize, softcap: bool) -> bool {
    mma_dkdv_registers(d, dv, 32, softcap, false) > MMA_LANE_REGISTERS
}

impl Op for AttentionBwdOp {
    type Config = AttentionBwdConfig;

    fn id(&self) -> &'static str {
        "attention_bwd"
    }

    fn version(&self) -> u32 {
        // 2: double-buffered tiles (twice the shared memory) change which tiling is
        // fastest; 3: the fused dQ joined the candidates; 4: three candidates, measured on
        // an H100 (docs/PERF.md); 5: eight-plane cubes; 6: the fused dQ with its planes as
        // a grid; 7: the fused grid with 128-query tiles up to D = 64; 8: the warpgroup-MMA
        // backward joins the candidates on sm_90; 9: its tiles in 128-byte swizzled rows
        // (30-38% faster); 10: its causal grids in head groups sharing L2; 11: the portable
        // kernels are register-tiled, with new tilings; 12: their accumulators in
        // registers on CUDA and ROCm, and 128x32. Re-tune.
        // 13: their sliced form joins the candidates where whole rows do not fit (48 KiB
        // at D = 128); re-tune. 14: the cooperative-matrix backward joins them where the
        // register-level MMA is missing (Vulkan). 15: the warpgroup kernels' gradients
        // leave by TMA (faster at short sequences); re-tune. 16: the warpgroup backward
        // with dQ fused joins the candidates up to D = 64. 17: its dQ kernel a persistent
        // grid (the next block's Q and dO copied under this one's keys); re-tune. 18: its
        // dK/dV kernel one too (the next block's K and V under this one's queries). 19: the
        // MMA backward at D = 256, its dK/dV pass in two launches (it ran the portable
        // kernel there, 20x slower). 20: the warpgroup backward at D = 256 (its dK/dV pass
        // split, dQ fused into the dK launch). 21: the warpgroup backward at D = 32 (64-byte
        // swizzled rows; it ran MMA 64x64 there); re-tune.
        21
    }

    fn heuristic(&self, inv: &Invocation) -> Result<AttentionBwdConfig, String> {
        // The H100's tuned choices (docs/PERF.md): at D >= 128 the fused dQ in 128-key
        // cubes with planes as a grid from 1k queries (without the grid, from 2k), 64x32
        // below, where the atomics weigh more than the matmuls they save; below D = 128
        // (measured at 64, where the per-tile work that does not scale with D weighs twice
        // as much) the fused grid with 128-query tiles from 1k queries where it fits, else
        // the two-kernel 64x64, which the tuner also picked at D = 32.
        // Before all of them, the warpgroup-MMA backward where it runs the call (sm_90a, D
        // and Dv 32, 64, 96 or 128; `check` refuses it elsewhere): the tuner's pick there,
        // 1.4-1.6x the fused grid at D = 128 (run122). At D = 32 its fused dQ first: the
        // tuner's pick at every size of an H200 sweep, 1.11-1.19x the two kernels (bf16,
        // 1k-8k, causal and not; docs/PERF.md).
        let seq_q = inv.signature().size("seq_q").unwrap_or(0);
        let (d, dv) = head_dims(inv).unwrap_or((0, 0));
        let (wide, tall) = (d >= 128, d == 64);
        let mut tries = Vec::new();
        if Self::wgmma_lengths(inv) {
            if d.max(dv) == 32 {
                tries.push(Self::wgmma().with_fused_dq());
            }
            tries.push(Self::wgmma());
        }
        // Where the dK/dV pass splits in two launches (D = 256), 8 planes of 32x32: 5-11%
        // ahead of the other MMA tilings on an H200 at 2k and 8k, and with dQ fused into its
        // dK launch as a grid (where the atomics are) 25-28% ahead of that (docs/PERF.md).
        // Before them, the warpgroup backward's split pass with dQ fused where it runs:
        // 1.9-2.05x the fused grid on an H200 at 2k and 8k (docs/PERF.md).
        if Self::splits(inv) {
            if Self::wgmma_lengths(inv) {
                tries.push(Self::wgmma().with_fused_dq());
            }
            tries.extend([Self::split_fused(), Self::split_tiling()]);
        }
        if tall && seq_q >= 1024 {
            tries.push(Self::fused_tall());
        }
        if wide && seq_q >= 1024 {
            tries.push(Self::fused_wide().with_grid());
        }
        if wide && seq_q >= 2048 {
            tries.push(Self::fused_wide());
        }
        let two_kernel: &[(u32, u32)] = if wide || seq_q < 1024 {
            &[(64, 32), (64, 64), (32, 32)]
        } else {
            &[(64, 64), (64, 32), (32, 32)]
        };
        tries.extend(Self::configs(Variant::Mma, two_kernel));
        // Where the register-level MMA is missing (Vulkan) but cooperative matrices serve
        // the dtype: the largest cmma tiling that fits.
        tries.extend(self.cmma_configs(inv).into_iter().take(1));
        // Portable (f32): the tuner's pick on an H100 at D = 64 and 128, 1k-4k (run129):
        // 64x64 with the accumulators in registers and dQ fused, 1.4-1.5x the same unfused
        // and 2.5x the shared-memory 64x32; `check` refuses the first two where the device
        // lacks the atomics or live arrays.
        let regs = AttentionBwdConfig::new(Variant::Portable, 64, 64).with_registers();
        tries.extend([regs.with_fused_dq(), regs]);
        // Where that does not fit (48 KiB through Vulkan at D = 64 and 128): sliced 32x64,
        // the tuner's pick there (run137, 4-5% ahead of 64x32), else the largest tiling in
        // registers, whole or sliced.
        tries.push(AttentionBwdConfig::new(Variant::Portable, 32, 64).with_slices());
        tries.extend(self.register_configs(inv).into_iter().take(1));
        tries.extend(self.portable_configs());
        tries
            .into_iter()
            .find(|c| self.check(inv, c).is_ok())
            .ok_or_else(|| "no tile fits this device's shared memory".to_string())
    }

    fn candidates(&self, inv: &Invocation) -> Vec<AttentionBwdConfig> {
        // Small on purpose: first-use tuning compiles two or three kernels per candidate.
        // On an H100 (bf16, D = 128, 1k-16k; docs/PERF.md) the fastest was the fused dQ
        // with 8 planes as a grid (sm90+), 8-9% ahead of the same without the grid, which
        // stays only where the grid's extra tile does not fit; 64x32 and 64x64 where the
        // atomics are missing; 32x32 only where no 64-query tile fits the shared memory.
        let fitting = |all: Vec<AttentionBwdConfig>| -> Vec<AttentionBwdConfig> {
            all.into_iter()
                .filter(|c| self.check(inv, c).is_ok())
                .collect()
        };
        if self.mma_refusal(inv).is_some() {
            // Cooperative matrices where they serve the dtype (Vulkan, f16/bf16): the tiling
            // with the most planes that fits, and the portable kernels' largest register
            // form. On an H100 through Vulkan (bf16, 1k-4k) the most planes in pairs ran
            // 2.2-2.7x the best tiling without pairs and 3.9-6.7x the portable backward
            // (docs/PERF.md); each candidate compiles two kernels.
            let mut cmma = self.cmma_configs(inv);
            cmma.truncate(1);
            if !cmma.is_empty() {
                cmma.extend(self.register_configs(inv).into_iter().take(1));
                return cmma;
            }
            // The three largest portable tilings that fit with the accumulators in registers
            // (where the device keeps arrays across barriers; sliced where whole rows do not
            // fit) and the two largest of those with dQ fused (where the atomics are); else
            // the four largest with the accumulators in shared memory. Where registers
            // serve, the fastest of them ran 1.6-28x the best shared form at every measured
            // shape (CUDA and Vulkan, docs/PERF.md): the shared ones only lengthened first
            // use (16x8 at D = 128 through Vulkan took 1.15 s a call).
            let mut regs = self.register_configs(inv);
            regs.truncate(3);
            if regs.is_empty() {
                let mut shared = fitting(Self::configs(Variant::Portable, &PORTABLE_TILINGS));
                shared.truncate(4);
                return shared;
            }
            let mut fused = fitting(regs.iter().map(|c| c.with_fused_dq()).collect());
            fused.truncate(2);
            regs.extend(fused);
            return regs;
        }
        if Self::wgmma_lengths(inv) && self.check(inv, &Self::wgmma()).is_ok() {
            // Where the warpgroup backward runs it won every bucket of an H200 sweep (bf16,
            // D = 64 and 128, 256-8k, 2-32 heads) but three with two to four heads, where MMA
            // 64x64 led by at most 7%: that tiling stays beside it, and the other MMA tilings,
            // which only lengthened first use, go (docs/PERF.md, "Fewer candidates where the
            // warpgroup kernels run").
            let mut all = vec![AttentionBwdConfig::new(Variant::Mma, 64, 64), Self::wgmma()];
            // With dQ fused, up to D = 64: 2-12% ahead of the two kernels in most rows there
            // on an H200. At D = 128, even summed over the cube's keys (dQ's f32 size in
            // reductions per 128-key block), 0.91-1.04x the two kernels at 1k-8k: the
            // reductions and the warpgroups' lockstep outweigh the dQ kernel's two
            // recomputed products (docs/PERF.md).
            if head_dims(inv).is_ok_and(|(d, _)| d <= 64) {
                all.push(Self::wgmma().with_fused_dq());
            }
            return fitting(all);
        }
        // At D = 256 the warpgroup backward's split pass (dQ fused) ran 1.9-2.05x the MMA
        // split's fused grid on an H200 at 2k and 8k, plain and causal (docs/PERF.md): the
        // fused grid stays beside it, and the other MMA tilings, which only lengthened first
        // use, go.
        let split_wgmma = Self::wgmma().with_fused_dq();
        if Self::splits(inv) && Self::wgmma_lengths(inv) && self.check(inv, &split_wgmma).is_ok() {
            return fitting(vec![Self::split_fused(), split_wgmma]);
        }
        let mut all = Self::configs(Variant::Mma, &[(64, 32), (64, 64)]);
        all.push(AttentionBwdConfig::new(Variant::Mma, 64, 32).with_planes(8));
        if Self::splits(inv) {
            all.extend([Self::split_tiling(), Self::split_fused()]);
        }
        // Up to D = 64 a 128-query tile fits the grid's registers (FlashAttention-2's
        // 128x128 tiling there): 3-12% ahead of the 64-query grid at D = 64, which it
        // replaces.
        let tall = Self::fused_tall();
        let grid = Self::fused_wide().with_grid();
        if self.check(inv, &tall).is_ok() {
            all.push(tall);
        } else if self.check(inv, &grid).is_ok() {
            all.push(grid);
        } else {
            all.push(Self::fused_wide());
        }
        let fit = fitting(all);
        if fit.is_empty() {
            fitting(Self::configs(Variant::Mma, &[(32, 32)]))
        } else {
            fit
        }
    }

    fn key(&self, inv: &Invocation) -> CallKey {
        bucketed_key(self.id(), self.version(), inv)
    }

    fn check(&self, inv: &Invocation, c: &AttentionBwdConfig) -> Result<(), String> {
        let (d, dv) = head_dims(inv)?;
        if c.fused_dq {
            if c.variant == Variant::Cmma {
                return Err("fused_dq needs the MMA, wgmma or portable variant".into());
            }
            if !self.limits.atomic_add_f32x2 {
                return Err("fused_dq needs two-element f32 atomic adds (CUDA sm90+)".into());
            }
        }
        if c.fused_dq && c.variant == Variant::Portable {
            if !c.registers {
                return Err("the portable fused_dq needs registers".into());
            }
            // The accumulator holds each head in 8x8 blocks.
            if !d.is_multiple_of(8) {
                return Err(format!(
                    "the portable fused_dq needs head_dim {d} to be a multiple of 8"
                ));
            }
        } else if c.fused_dq && c.variant == Variant::Mma {
            // Each plane takes a 16-query tile and a share of dQ's columns in whole
            // 16-column steps.
            let per_tile = c.planes as usize / (c.block_q as usize / 16).max(1);
            if !(d / per_tile).is_multiple_of(16) {
                return Err(format!(
                    "fused_dq with block_q {} needs head_dim {d} to split into {per_tile} \
                     multiples of 16",
                    c.block_q
                ));
            }
        }
        if c.grid {
            if c.variant == Variant::Cmma {
                // Pairs of planes, each taking whole 16-row steps of half a tile.
                if c.planes < 2 || c.block_q.min(c.block_kv) < 32 {
                    return Err(format!(
                        "the cmma grid needs at least 2 planes and tiles of 32 rows or more; \
                         got planes {}, block_q {}, block_kv {}",
                        c.planes, c.block_q, c.block_kv
                    ));
                }
            } else if c.variant != Variant::Mma {
                return Err("grid needs the MMA or cmma variant".into());
            }
            // Each plane takes 32 keys by half the tile, then half of D and of Dv, in whole
            // 16-column steps.
            let mma = c.variant == Variant::Mma;
            for (name, x) in [("head_dim", d), ("val_dim", dv)]
                .into_iter()
                .filter(|_| mma)
            {
                if !x.is_multiple_of(32) {
                    return Err(format!("grid needs {name} {x} to be a multiple of 32"));
                }
            }
        }
        if c.sliced && !c.registers {
            return Err(
                "sliced needs registers (the portable variant's sliced form keeps \
                        its sums in registers)"
                    .into(),
            );
        }
        if c.registers && c.variant != Variant::Portable {
            return Err("registers applies to the portable variant only".into());
        }
        match c.variant {
            Variant::Cmma => {
                if let Some(why) = super::op::cmma_refusal(&self.limits, inv) {
                    return Err(why);
                }
                if !matches!(c.planes, 1 | 2 | 4 | 8) {
                    return Err(format!("planes {} is not 1, 2, 4 or 8 (cmma)", c.planes));
                }
                for (name, x) in [("block_q", c.block_q), ("block_kv", c.block_kv)] {
                    if !matches!(x, 16 | 32 | 64) {
                        return Err(format!("{name} {x} is not 16, 32 or 64 (cmma)"));
                    }
                }
                // Per lane, the gradient fragments (dK and dV) take (D + Dv) / 4 registers:
                // past 128 each they would spill.
                for (name, x) in [("head_dim", d), ("val_dim", dv)] {
                    if !(x.is_multiple_of(16) && (16..=128).contains(&x)) {
                        return Err(format!(
                            "{name} {x} is not a multiple of 16 up to 128 (the cmma backward)"
                        ));
                    }
                }
            }
            Variant::Wgmma => {
                if let Some(why) = self.wgmma_refusal(inv) {
                    return Err(why);
                }
                if (c.block_q, c.block_kv) != (128, 128) || c.planes != MMA_PLANES {
                    return Err(format!(
                        "the wgmma backward runs 128 queries (dQ) and 128 keys (dK/dV) per cube \
                         with the default planes; got block_q {}, block_kv {}, planes {}",
                        c.block_q, c.block_kv, c.planes
                    ));
                }
                for (name, x) in [("head_dim", d), ("val_dim", dv)] {
                    if !matches!(x, 32 | 64 | 96 | 128 | 256) {
                        return Err(format!(
                            "{name} {x} is not 32, 64, 96, 128 or 256 (the wgmma backward; 96 \
                             runs padded to 128)"
                        ));
                    }
                }
                // The fused dQ's accumulator and its atomics have no padded columns.
                if c.fused_dq && (d == 96 || dv == 96) {
                    return Err(format!(
                        "the wgmma fused_dq needs head dims 32, 64, 128 or 256; got {d}/{dv}"
                    ));
                }
                // At 256 the dK/dV pass splits in two launches and dQ rides in the second:
                // the dQ kernel would need Q, dO and dQ's accumulator in one thread's
                // registers.
                if d.max(dv) > 128 && !c.fused_dq {
                    return Err(format!(
                        "the wgmma backward at head dims {d}/{dv} needs fused_dq (its dQ kernel \
                         stops at 128)"
                    ));
                }
            }
            Variant::Portable => {
                if c.planes != MMA_PLANES {
                    return Err(format!(
                        "planes {} applies to the MMA variant only (keep {MMA_PLANES})",
                        c.planes
                    ));
                }
                // Each unit computes 4 x 4 blocks of a tile.
                for (name, x) in [("block_q", c.block_q), ("block_kv", c.block_kv)] {
                    if !(x.is_power_of_two() && (4..=128).contains(&x)) {
                        return Err(format!("{name} {x} is not a power of two in 4..=128"));
                    }
                }
                if c.registers {
                    if !self.limits.arrays_across_barriers {
                        return Err("registers needs a device that keeps arrays across cube \
                                    barriers (CUDA, ROCm, GPUs through wgpu; not lavapipe)"
                            .into());
                    }
                    // Per unit, in f32: dK and dV keep 16 per 4 of the tile's query rows
                    // that share a row's vectors; dQ the same by the tile's keys.
                    let share = |dim: usize, across: u32| {
                        16 * dim.div_ceil(4).div_ceil(across as usize / 4)
                    };
                    // The fused dQ sums each tile's share beside them.
                    let fused = if c.fused_dq { share(d, c.block_kv) } else { 0 };
                    let (dkdv, dq) = (
                        share(d, c.block_q) + share(dv, c.block_q) + fused,
                        share(d, c.block_kv),
                    );
                    if dkdv.max(dq) > 128 {
                        return Err(format!(
                            "registers with block_q {} / block_kv {} and head dims {d}/{dv} \
                             would spill registers",
                            c.block_q, c.block_kv
                        ));
                    }
                }
            }
            Variant::Mma => {
                if let Some(why) = self.mma_refusal(inv) {
                    return Err(why);
                }
                if !matches!(c.block_q, 32 | 64 | 128) {
                    return Err(format!("block_q {} is not 32, 64 or 128", c.block_q));
                }
                // The only 128-query tiling tested: the planes split the tile in halves.
                if c.block_q == 128 && !c.grid {
                    return Err("block_q 128 needs grid".into());
                }
                if !matches!(c.block_kv, 32 | 64) {
                    return Err(format!("block_kv {} is not 32 or 64", c.block_kv));
                }
                if !matches!(c.planes, 4 | 8) {
                    return Err(format!("planes {} is not 4 or 8", c.planes));
                }
                // Per lane, in 32-bit registers: dQ keeps D / 2 of accumulators and block_kv
                // of score tiles; dK/dV see `mma_dkdv_registers`, which a split into two
                // launches (dV, then dK) brings within the limit at D = 256.
                let softcap = inv.signature().flag("softcap");
                // Split, the fused dQ is the dK launch's (it holds dSᵀ).
                let split = mma_splits_dkdv(d, dv, softcap);
                let dkdv = mma_dkdv_registers(d, dv, c.block_q, softcap, split);
                let dq = d / 2 + score_registers(c.block_kv, softcap);
                if dkdv.max(dq) > MMA_LANE_REGISTERS {
                    return Err(format!(
                        "block_q {} / block_kv {} with head dims {d}/{dv} would spill registers",
                        c.block_q, c.block_kv
                    ));
                }
            }
        }
        fits(&self.limits, c.units(), c.smem_bytes(d, dv))
    }
}

#[cfg(test)]
mod tests {
    use flint_tune::{Invocation, Signature};

    use super::*;
    use crate::DeviceLimits;
    use crate::attention::SUPPORTED_HEAD_DIMS;

    fn h100(atomics: bool) -> AttentionBwdOp {
        AttentionBwdOp::new(DeviceLimits {
            shared_memory: 232_448,
            max_units_per_cube: 1024,
            max_vector_size: 16,
            plane_size: (32, 32),
            plane_ops: true,
            cmma: true,
            mma_16x8x16: vec!["f16", "bf16"],
            cmma_16x16x16: vec!["f16", "bf16"],
            atomic_add_f32x2: atomics,
            wgmma: false,
            arrays_across_barriers: false,
        })
    }

    fn call(d: usize) -> Invocation {
        call_with(d, &[])
    }

    /// A call with the named features (`bias`, `dbias`, `softcap`, `dropout`) switched on.
    fn call_with(d: usize, features: &[&str]) -> Invocation {
        let on = |f: &str| features.contains(&f);
        let sig = Signature::new()
            .with("dtype", "bf16")
            .with("batch", 1usize)
            .with("heads", 8usize)
            .with("kv_heads", 8usize)
            .with("seq_q", 1024usize)
            .with("seq_kv", 1024usize)
            .with("head_dim", d)
            .with("val_dim", d)
            .with("masked", false)
            .with("bias", on("bias"))
            .with("dbias", on("dbias"))
            .with("softcap", on("softcap"))
            .with("dropout", on("dropout"));
        Invocation::new(
            "attention_bwd",
            sig,
            flint_tune::DeviceFingerprint::new("cuda", "x", "sm_90", "1"),
        )
    }

    #[test]
    fn fused_dq_needs_the_atomics_and_the_mma_variant() {
        let fused = |bq| AttentionBwdConfig::new(Variant::Mma, bq, 64).with_fused_dq();
        let op = h100(true);
        op.check(&call(128), &fused(64)).unwrap();
        op.check(&call(128), &fused(32)).unwrap();
        op.check(&call(64), &fused(32)).unwrap();
        // Tuned in 128-key cubes only, and only with the atomics.
        let tuned: Vec<_> = op
            .candidates(&call(128))
            .into_iter()
            .filter(|c| c.fused_dq)
            .collect();
        assert_eq!(tuned, vec![fused(64).with_planes(8).with_grid()]);
        // The tallest grid that fits; where no grid does, the fused dQ without it; where the
        // dK/dV pass splits (D = 256), in the split tiling's dK launch.
        for d in SUPPORTED_HEAD_DIMS {
            let grid = fused(64).with_planes(8).with_grid();
            let tall = AttentionBwdConfig::new(Variant::Mma, 128, 64)
                .with_planes(8)
                .with_fused_dq()
                .with_grid();
            let want = if mma_splits_dkdv(d, d, false) {
                vec![
                    AttentionBwdConfig::new(Variant::Mma, 32, 32)
                        .with_planes(8)
                        .with_fused_dq()
                        .with_grid(),
                ]
            } else if op.check(&call(d), &tall).is_ok() {
                vec![tall]
            } else if op.check(&call(d), &grid).is_ok() {
                vec![grid]
            } else {
                let plain = fused(64).with_planes(8);
                op.check(&call(d), &plain).map_or(vec![], |()| vec![plain])
            };
            let got: Vec<_> = op
                .candidates(&call(d))
                .into_iter()
                .filter(|c| c.fused_dq)
                .collect();
            assert_eq!(got, want, "head_dim {d}");
        }
        assert!(
            !h100(false)
                .candidates(&call(128))
                .iter()
                .any(|c| c.fused_dq)
        );
        // Without two-element atomics, and on the portable kernels.
        let no_atomics = h100(false);
        let err = no_atomics.check(&call(128), &fused(64)).unwrap_err();
        assert!(err.contains("atomic"), "{err}");
        let portable = AttentionBwdConfig::new(Variant::Portable, 16, 16).with_fused_dq();
        let err = op.check(&call(128), &portable).unwrap_err();
        assert!(err.contains("registers"), "{err}");
        // Every supported head dim splits evenly: D = 32 and 96 at block_q 32 give 16 and 48.
        op.check(&call(32), &fused(32)).unwrap();
        op.check(&call(96), &fused(32)).unwrap();
    }

    /// f32 on a device that keeps arrays across barriers: the accumulators in registers
    /// first, the fused dQ where the atomics are, one shared-memory tiling last; elsewhere the
    /// register configs are refused.
    #[test]
    fn portable_registers_need_arrays_across_barriers() {
        let f32_call = |d: usize| {
            let base = call(d);
            let sig = base.signature().clone().with("dtype", "f32");
            Invocation::new("attention_bwd", sig, base.fingerprint().clone())
        };
        let portable = |bq, bkv| AttentionBwdConfig::new(Variant::Portable, bq, bkv);
        let cuda = AttentionBwdOp::new(DeviceLimits {
            arrays_across_barriers: true,
            ..h100(true).limits
        });
        let got = cuda.candidates(&f32_call(128));
        let regs = |bq, bkv| portable(bq, bkv).with_registers();
        assert_eq!(
            got,
            vec![
                regs(128, 32),
                regs(64, 64),
                regs(64, 32),
                regs(128, 32).with_fused_dq(),
                regs(64, 64).with_fused_dq(),
            ]
        );
        assert_eq!(
            cuda.heuristic(&f32_call(128)).unwrap(),
            regs(64, 64).with_fused_dq()
        );
        // Without the atomics: no fused dQ; without live arrays: no registers.
        let no_atomics = AttentionBwdOp::new(DeviceLimits {
            atomic_add_f32x2: false,
            ..cuda.limits.clone()
        });
        assert!(
            !no_atomics
                .candidates(&f32_call(128))
                .iter()
                .any(|c| c.fused_dq)
        );
        let wgpu = h100(true);
        let err = wgpu.check(&f32_call(128), &regs(64, 64)).unwrap_err();
        assert!(err.contains("barrier"), "{err}");
        assert!(!wgpu.candidates(&f32_call(128)).iter().any(|c| c.registers));
        // Registers are bounded.
        let err = cuda.check(&f32_call(128), &regs(16, 16)).unwrap_err();
        assert!(err.contains("spill"), "{err}");
        let err = cuda
            .check(
                &call(128),
                &AttentionBwdConfig::new(Variant::Mma, 64, 64).with_registers(),
            )
            .unwrap_err();
        assert!(err.contains("portable"), "{err}");
    }

    /// f32 through Vulkan (48 KiB, no two-element atomics) at D = 128: no whole-row tiling
    /// with registers fits, so the sliced form serves, the heuristic's pick included.
    #[test]
    fn the_sliced_form_serves_f32_where_whole_rows_do_not_fit() {
        let base = call(128);
        let inv = Invocation::new(
            "attention_bwd",
            base.signature().clone().with("dtype", "f32"),
            base.fingerprint().clone(),
        );
        let vulkan = AttentionBwdOp::new(DeviceLimits {
            shared_memory: 49_152,
            atomic_add_f32x2: false,
            arrays_across_barriers: true,
            plane_ops: true,
            mma_16x8x16: Vec::new(),
            ..h100(false).limits
        });
        let sliced = |bq, bkv| AttentionBwdConfig::new(Variant::Portable, bq, bkv).with_slices();
        assert_eq!(vulkan.heuristic(&inv).unwrap(), sliced(32, 64));
        let got = vulkan.candidates(&inv);
        assert_eq!(&got[..3], &[sliced(64, 32), sliced(32, 64), sliced(32, 32)]);
        for c in &got {
            assert!(c.smem_bytes(128, 128) <= 49_152, "{c:?} exceeds 48 KiB");
        }
    }

    #[test]
    fn cooperative_matrices_serve_half_precision_where_mma_is_missing() {
        // A Vulkan device: 48 KiB, cmma for f16 and bf16, no register-level MMA.
        let vulkan = AttentionBwdOp::new(DeviceLimits {
            shared_memory: 49_152,
            atomic_add_f32x2: false,
            arrays_across_barriers: true,
            mma_16x8x16: Vec::new(),
            ..h100(false).limits
        });
        let cmma =
            |planes, bq, bkv| AttentionBwdConfig::new(Variant::Cmma, bq, bkv).with_planes(planes);
        for (d, best, next) in [
            (128, cmma(4, 32, 32).with_grid(), cmma(2, 32, 32)),
            (64, cmma(8, 32, 32).with_grid(), cmma(4, 64, 64).with_grid()),
        ] {
            let inv = call(d);
            assert_eq!(vulkan.heuristic(&inv).unwrap(), best, "d{d}");
            assert_eq!(vulkan.cmma_configs(&inv)[..2], [best, next], "d{d}");
            let got = vulkan.candidates(&inv);
            assert_eq!(got[0], best, "d{d}");
            // The portable kernels' largest register form stays beside it.
            assert_eq!(got.len(), 2, "d{d}: {got:?}");
            assert_eq!(got[1].variant, Variant::Portable, "d{d}");
            for c in &got {
                assert!(c.smem_bytes(d, d) <= 49_152, "{c:?} exceeds 48 KiB at d{d}");
            }
        }
        // Refused, each with its reason: shapes the kernels do not take, f32, D past 128.
        let inv = call(128);
        for (c, why) in [
            (cmma(2, 64, 64), "shared memory"),
            (cmma(3, 32, 32), "planes 3"),
            (cmma(2, 48, 32), "block_q 48"),
            (cmma(1, 32, 32).with_grid(), "at least 2 planes"),
            (cmma(4, 16, 32).with_grid(), "32 rows or more"),
            (cmma(2, 32, 32).with_fused_dq(), "fused_dq"),
        ] {
            let err = vulkan.check(&inv, &c).unwrap_err();
            assert!(err.contains(why), "{c:?}: {err}");
        }
        let f32_call = Invocation::new(
            "attention_bwd",
            inv.signature().clone().with("dtype", "f32"),
            inv.fingerprint().clone(),
        );
        assert!(
            vulkan
                .check(&f32_call, &cmma(2, 32, 32))
                .unwrap_err()
                .contains("cmma")
        );
        let err = vulkan.check(&call(256), &cmma(1, 16, 16)).unwrap_err();
        assert!(err.contains("head_dim 256"), "{err}");
        assert!(vulkan.cmma_configs(&call(256)).is_empty());
        // Where the register-level MMA exists, it is preferred; cmma stays an explicit choice.
        let h100 = h100(true);
        assert!(h100.check(&inv, &cmma(4, 64, 64)).is_ok());
        assert!(
            h100.candidates(&inv)
                .iter()
                .all(|c| c.variant != Variant::Cmma)
        );
        assert_ne!(h100.heuristic(&inv).unwrap().variant, Variant::Cmma);
    }

    #[test]
    fn the_heuristic_fuses_dq_from_1k_queries_where_the_atomics_exist() {
        let at = |seq: usize| {
            let base = call(128);
            let sig = base.signature().clone().with("seq_q", seq);
            Invocation::new("attention_bwd", sig, base.fingerprint().clone())
        };
        let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
        let wide = mma(64, 64).with_planes(8).with_fused_dq().with_grid();
        assert_eq!(h100(true).heuristic(&at(4096)).unwrap(), wide);
        assert_eq!(h100(true).heuristic(&at(1024)).unwrap(), wide);
        assert_eq!(h100(true).heuristic(&at(512)).unwrap(), mma(64, 32));
        // At D = 64 the fused grid with 128-query tiles from 1k queries, the two-kernel
        // 64x64 without the atomics.
        let narrow = |seq: usize| {
            let base = call(64);
            let sig = base.signature().clone().with("seq_q", seq);
            Invocation::new("attention_bwd", sig, base.fingerprint().clone())
        };
        let tall = mma(128, 64).with_planes(8).with_fused_dq().with_grid();
        assert_eq!(h100(true).heuristic(&narrow(4096)).unwrap(), tall);
        assert_eq!(h100(true).heuristic(&narrow(1024)).unwrap(), tall);
        assert_eq!(h100(false).heuristic(&narrow(4096)).unwrap(), mma(64, 64));
        assert_eq!(h100(true).heuristic(&narrow(512)).unwrap(), mma(64, 32));
        // At D = 32 the tuner picked the two-kernel 64x64 over it.
        let base = call(32);
        let sig = base.signature().clone().with("seq_q", 4096usize);
        let d32 = Invocation::new("attention_bwd", sig, base.fingerprint().clone());
        assert_eq!(h100(true).heuristic(&d32).unwrap(), mma(64, 64));
        assert_eq!(h100(false).heuristic(&at(4096)).unwrap(), mma(64, 32));
        // Softcap at D = 128 leaves only 32-query tiles.
        let capped = call_with(128, &["softcap"]);
        assert_eq!(h100(true).heuristic(&capped).unwrap(), mma(32, 32));
        assert_eq!(h100(true).candidates(&capped), vec![mma(32, 32)]);
    }

    #[test]
    fn eight_planes_fit_and_other_counts_are_refused() {
        let op = h100(true);
        let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
        for c in [mma(64, 64), mma(64, 32), mma(32, 32)] {
            op.check(&call(128), &c.with_planes(8)).unwrap();
        }
        op.check(&call(128), &mma(64, 64).with_planes(8).with_fused_dq())
            .unwrap();
        // 128 keys per cube: twice the K and V of 4 planes in shared memory.
        let (four, eight) = (mma(64, 64), mma(64, 64).with_planes(8));
        assert!(eight.smem_bytes(128, 128) > four.smem_bytes(128, 128));
        assert_eq!(eight.units(), 256);
        for planes in [2, 6, 16] {
            let err = op
                .check(&call(128), &mma(64, 64).with_planes(planes))
                .unwrap_err();
            assert!(err.contains("planes"), "{err}");
        }
        let portable = AttentionBwdConfig::new(Variant::Portable, 16, 16).with_planes(8);
        assert!(op.check(&call(64), &portable).unwrap_err().contains("MMA"));
        // A stored config from before the field deserializes with 4 planes.
        let old: AttentionBwdConfig =
            serde_yaml::from_str("variant: mma\nblock_q: 64\nblock_kv: 32\n").unwrap();
        assert_eq!(old, mma(64, 32));
    }

    #[test]
    fn a_128_query_grid_fits_up_to_d64_and_is_tuned_there() {
        let op = h100(true);
        let tall = AttentionBwdConfig::new(Variant::Mma, 128, 64)
            .with_planes(8)
            .with_fused_dq()
            .with_grid();
        for d in [32, 64] {
            op.check(&call(d), &tall).unwrap();
            assert!(op.candidates(&call(d)).contains(&tall), "head_dim {d}");
        }
        // 96 or 128 columns of accumulators beside 128 scores per lane would spill.
        for d in [96, 128] {
            let err = op.check(&call(d), &tall).unwrap_err();
            assert!(err.contains("spill"), "head_dim {d}: {err}");
            assert!(!op.candidates(&call(d)).contains(&tall), "head_dim {d}");
        }
        // So would softcap's derivatives at D = 64.
        let err = op.check(&call_with(64, &["softcap"]), &tall).unwrap_err();
        assert!(err.contains("spill"), "{err}");
        // Only as a grid, and never as the dQ kernel's key tile.
        let plain = AttentionBwdConfig::new(Variant::Mma, 128, 64)
            .with_planes(8)
            .with_fused_dq();
        let err = op.check(&call(64), &plain).unwrap_err();
        assert!(err.contains("block_q 128 needs grid"), "{err}");
        let keys = AttentionBwdConfig::new(Variant::Mma, 64, 128).with_grid();
        let err = op.check(&call(64), &keys).unwrap_err();
        assert!(err.contains("block_kv 128"), "{err}");
        // Without the atomics the fused grid is refused like every fused config.
        assert!(!h100(false).candidates(&call(64)).contains(&tall));
    }

    #[test]
    fn the_grid_needs_the_mma_variant_and_head_dims_in_32s() {
        let op = h100(true);
        let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
        let grid = mma(64, 64).with_planes(8).with_fused_dq().with_grid();
        for d in [32, 64, 128] {
            op.check(&call(d), &grid).unwrap();
        }
        // Every supported head dim halves into whole 16-column steps (96 into 48s); the
        // multiple-of-32 rule guards dims added later.
        for d in [32, 64, 96, 128] {
            op.check(&call(d), &mma(32, 32).with_grid()).unwrap();
        }
        let portable = AttentionBwdConfig::new(Variant::Portable, 16, 16).with_grid();
        assert!(op.check(&call(64), &portable).unwrap_err().contains("MMA"));
        // Pᵀ beside dSᵀ: one more 128 x 72 tile of 16-bit elements, and still within an
        // H100's 227 KB at D = 128.
        let plain = mma(64, 64).with_planes(8).with_fused_dq();
        assert_eq!(
            grid.smem_bytes(128, 128),
            plain.smem_bytes(128, 128) + 2 * 128 * 72
        );
        // The field is absent from configs stored before it: no grid.
        let old: AttentionBwdConfig = serde_yaml::from_str(
            "variant: mma\nblock_q: 64\nblock_kv: 64\nfused_dq: true\nplanes: 8\n",
        )
        .unwrap();
        assert_eq!(old, plain);
    }

    #[test]
    fn bias_softcap_and_dropout_run_on_the_tensor_cores() {
        let op = h100(true);
        let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
        for features in [&["bias", "dbias"][..], &["dropout"], &["softcap"]] {
            let inv = call_with(128, features);
            assert!(
                op.candidates(&inv)
                    .iter()
                    .all(|c| c.variant == Variant::Mma),
                "{features:?}"
            );
            op.check(&inv, &mma(32, 32)).unwrap();
        }
        // Softcap keeps its derivative beside the scores: at D = 128 a 64-query tile would
        // spill, a 32-query one fits; at D = 64 both fit.
        let softcap = call_with(128, &["softcap"]);
        assert!(
            op.check(&softcap, &mma(64, 32))
                .unwrap_err()
                .contains("spill")
        );
        op.check(&call_with(64, &["softcap"]), &mma(64, 64))
            .unwrap();
        assert!(
            op.heuristic(&softcap)
                .is_ok_and(|c| c.variant == Variant::Mma)
        );
    }

    #[test]
    fn stored_configs_without_the_flag_are_two_kernel() {
        let c: AttentionBwdConfig =
            serde_yaml::from_str("{variant: mma, block_q: 64, block_kv: 32}").unwrap();
        assert_eq!(c, AttentionBwdConfig::new(Variant::Mma, 64, 32));
    }

    #[test]
    fn the_warpgroup_backward_joins_where_it_runs() {
        let hopper = AttentionBwdOp::new(DeviceLimits {
            wgmma: true,
            arrays_across_barriers: true,
            ..h100(true).limits
        });
        let wgmma = AttentionBwdOp::wgmma();
        assert!(hopper.candidates(&call(128)).contains(&wgmma));
        assert!(hopper.candidates(&call(64)).contains(&wgmma));
        hopper.check(&call(128), &wgmma).unwrap();
        // Not without the device, above D = 128, or with what the kernels lack.
        assert!(!h100(true).candidates(&call(128)).contains(&wgmma));
        let e = h100(true).check(&call(128), &wgmma).unwrap_err();
        assert!(e.contains("warpgroup MMA"), "{e}");
        // At D = 256 only with dQ fused (its dQ kernel stops at 128).
        let e = hopper.check(&call(256), &wgmma).unwrap_err();
        assert!(e.contains("fused_dq"), "{e}");
        hopper.check(&call(256), &wgmma.with_fused_dq()).unwrap();
        let e = hopper
            .check(&call(512), &wgmma.with_fused_dq())
            .unwrap_err();
        assert!(e.contains("head_dim 512"), "{e}");
        for feature in ["bias", "dbias", "softcap", "dropout"] {
            let e = hopper
                .check(&call_with(128, &[feature]), &wgmma)
                .unwrap_err();
            assert!(e.contains(feature), "{e}");
            assert!(
                !hopper
                    .candidates(&call_with(128, &[feature]))
                    .contains(&wgmma)
            );
        }
        let other = AttentionBwdConfig::new(Variant::Wgmma, 64, 128);
        assert!(
            hopper
                .check(&call(128), &other)
                .unwrap_err()
                .contains("block_q 64")
        );
        // It fits the device's shared memory and threads at D = 128.
        assert!(wgmma.smem_bytes(128, 128) <= 232_448 && wgmma.units() == 384);
        // The heuristic starts there, from 128 queries and keys, and where it cannot run
        // goes on to the MMA kernels.
        let at = |d: usize, seq: usize| {
            let base = call(d);
            let sig = base
                .signature()
                .clone()
                .with("seq_q", seq)
                .with("seq_kv", seq);
            Invocation::new("attention_bwd", sig, base.fingerprint().clone())
        };
        assert_eq!(hopper.heuristic(&at(128, 4096)).unwrap(), wgmma);
        assert_eq!(hopper.heuristic(&at(64, 1024)).unwrap(), wgmma);
        assert_eq!(hopper.heuristic(&at(128, 128)).unwrap(), wgmma);
        let short = hopper.heuristic(&at(128, 64)).unwrap();
        assert_eq!(short.variant, Variant::Mma);
        let capped = hopper.heuristic(&call_with(128, &["softcap"])).unwrap();
        assert_eq!(capped.variant, Variant::Mma);
        // At D = 256 its split pass with dQ fused, which the tuner weighs against the MMA
        // split's fused grid alone.
        let split = AttentionBwdOp::wgmma().with_fused_dq();
        assert_eq!(hopper.heuristic(&at(256, 4096)).unwrap(), split);
        assert_eq!(
            hopper.candidates(&at(256, 4096)),
            [AttentionBwdOp::split_fused(), split]
        );
        assert_eq!(
            hopper.heuristic(&at(256, 64)).unwrap().variant,
            Variant::Mma
        );
    }

    /// D = 256: the MMA backward runs with its dK/dV pass split in two launches (both
    /// accumulators in one would spill), so the tuner and the heuristic offer it rather than
    /// the portable kernels, the fused dQ (in the dK launch) among them where the atomics are.
    #[test]
    fn head_dim_256_splits_the_mma_dkdv_pass() {
        assert!(mma_splits_dkdv(256, 256, false));
        assert!(mma_splits_dkdv(256, 128, false));
        // Where a smaller tile fits both, the larger is refused rather than split.
        assert!(!mma_splits_dkdv(128, 128, false));
        assert!(!mma_splits_dkdv(128, 128, true));
        let op = h100(true);
        let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
        op.check(&call(256), &mma(64, 32)).unwrap();
        op.check(&call(256), &mma(32, 32)).unwrap();
        // The fused dQ rides in the dK launch, which holds dSᵀ.
        op.check(&call(256), &mma(32, 32).with_planes(8).with_fused_dq())
            .unwrap();
        // Softcap's derivatives fit beside the split accumulators at 32 queries, not 64.
        op.check(&call_with(256, &["softcap"]), &mma(32, 32))
            .unwrap();
        assert!(
            op.check(&call_with(256, &["softcap"]), &mma(64, 32))
                .is_err()
        );
        let candidates = op.candidates(&call(256));
        assert!(!candidates.is_empty());
        assert!(
            candidates.iter().all(|c| c.variant == Variant::Mma),
            "{candidates:?}"
        );
        let split_fused = mma(32, 32).with_planes(8).with_fused_dq().with_grid();
        assert!(candidates.contains(&split_fused));
        assert!(
            !h100(false)
                .candidates(&call(256))
                .iter()
                .any(|c| c.fused_dq)
        );
        assert!(candidates.contains(&mma(32, 32).with_planes(8)));
        assert_eq!(op.heuristic(&call(256)).unwrap(), split_fused);
        // Without the atomics, the same tiling unfused.
        assert_eq!(
            h100(false).heuristic(&call(256)).unwrap(),
            mma(32, 32).with_planes(8)
        );
    }

    /// D = 96 runs the warpgroup backward padded to 128 (32 zero columns), without the
    /// fused dQ, whose accumulator has no padded columns.
    #[test]
    fn the_warpgroup_backward_pads_head_dim_96() {
        let hopper = AttentionBwdOp::new(DeviceLimits {
            wgmma: true,
            ..h100(true).limits
        });
        let wgmma = AttentionBwdOp::wgmma();
        hopper.check(&call(96), &wgmma).unwrap();
        let e = hopper.check(&call(96), &wgmma.with_fused_dq()).unwrap_err();
        assert!(e.contains("fused_dq"), "{e}");
        assert!(hopper.check(&call(48), &wgmma).is_err());
        let p = wgmma.wgmma_params(96, 96);
        assert_eq!(
            (p.head_dim, p.head_pad, p.val_dim, p.val_pad),
            (128, 32, 128, 32)
        );
        let p = wgmma.wgmma_params(128, 64);
        assert_eq!((p.head_pad, p.val_pad), (0, 0));
        assert!(hopper.candidates(&call(96)).contains(&wgmma));
    }

    /// D = 32 runs the warpgroup backward as it is, in 64-byte swizzled rows (padding to 64
    /// would double its products), with or without the fused dQ; so does a D = 32 beside a
    /// Dv of 64, each tensor's tiles at their own width.
    #[test]
    fn the_warpgroup_backward_runs_head_dim_32_in_64_byte_rows() {
        let hopper = AttentionBwdOp::new(DeviceLimits {
            wgmma: true,
            ..h100(true).limits
        });
        let wgmma = AttentionBwdOp::wgmma();
        hopper.check(&call(32), &wgmma).unwrap();
        hopper.check(&call(32), &wgmma.with_fused_dq()).unwrap();
        let p = wgmma.wgmma_params(32, 64);
        assert_eq!(
            (p.head_dim, p.head_pad, p.val_dim, p.val_pad),
            (32, 0, 64, 0)
        );
        assert!(!p.splits() && !p.dq_by_cube());
        assert_eq!(
            (crate::wgmma::sw_row_bytes(32), crate::wgmma::sw_cols(32)),
            (64, 32)
        );
        assert_eq!(
            (crate::wgmma::sw_row_bytes(64), crate::wgmma::sw_cols(256)),
            (128, 64)
        );
        let candidates = hopper.candidates(&call(32));
        assert!(candidates.contains(&wgmma));
        assert!(candidates.contains(&wgmma.with_fused_dq()));
        // The fused form first where the atomics are, else the two kernels.
        assert_eq!(hopper.heuristic(&call(32)).unwrap(), wgmma.with_fused_dq());
        let no_atomics = AttentionBwdOp::new(DeviceLimits {
            wgmma: true,
            ..h100(false).limits
        });
        assert_eq!(no_atomics.heuristic(&call(32)).unwrap(), wgmma);
        assert_eq!(hopper.heuristic(&call(64)).unwrap(), wgmma);
    }

    #[test]
    fn the_warpgroup_backward_fuses_dq_where_the_atomics_are() {
        let hopper = AttentionBwdOp::new(DeviceLimits {
            wgmma: true,
            arrays_across_barriers: true,
            ..h100(true).limits
        });
        let fused = AttentionBwdOp::wgmma().with_fused_dq();
        for d in [64, 128] {
            hopper.check(&call(d), &fused).unwrap();
        }
        // A candidate where it wins its timings: D = 64, not 128 (docs/PERF.md). Beside the
        // warpgroup forms only MMA 64x64 stays, for the few short calls where it leads.
        let mma = AttentionBwdConfig::new(Variant::Mma, 64, 64);
        let wgmma = AttentionBwdOp::wgmma();
        assert_eq!(hopper.candidates(&call(64)), [mma, wgmma, fused]);
        assert_eq!(hopper.candidates(&call(128)), [mma, wgmma]);
        // Where the warpgroup kernel cannot run the call, the MMA tilings as before.
        let no_wgmma = AttentionBwdOp::new(DeviceLimits {
            wgmma: false,
            ..hopper.limits.clone()
        });
        for d in [64, 128] {
            let capped = call_with(d, &["softcap"]);
            assert_eq!(hopper.candidates(&capped), no_wgmma.candidates(&capped));
        }
        assert!(no_wgmma.candidates(&call_with(64, &["softcap"])).len() > 1);
        // D = 256 only fused (its split dK launch holds dSᵀ; no dQ kernel runs there).
        hopper.check(&call(256), &fused).unwrap();
        let e = hopper.check(&call(256), &wgmma).unwrap_err();
        assert!(e.contains("fused_dq"), "{e}");
        // The atomics are sm90's two-element adds.
        let no_atomics = AttentionBwdOp::new(DeviceLimits {
            atomic_add_f32x2: false,
            ..hopper.limits.clone()
        });
        let e = no_atomics.check(&call(128), &fused).unwrap_err();
        assert!(e.contains("atomic"), "{e}");
        // Its dSᵀ buffers take a Q/dO stage's room at D = 128: three stages, within the
        // device's limit.
        let p = fused.wgmma_params(128, 128);
        assert_eq!(p.stages(), 3);
        assert!(fused.smem_bytes(128, 128) <= 232_448);
        assert!(fused.smem_bytes(64, 64) <= 232_448);
        // The heuristic keeps the two-kernel form until the tuner has measured both.
        assert!(!hopper.heuristic(&call(128)).unwrap().fused_dq);
    }
}
