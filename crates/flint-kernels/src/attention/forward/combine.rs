//! Merging the partial results of a forward split over the keys (split-K, for short query
//! blocks against long key sequences, as in decoding).
//!
//! Split `z` of the tensor-core forward writes, for each row, the output normalised over its
//! own keys `O_z` (f32) and their log-sum-exp `L_z` (`-inf` when it saw no visible key). The
//! row's result is `L = log Σ exp(L_z)` and `O = Σ exp(L_z − L) · O_z`.

use cubecl::prelude::*;

/// Element offset of `(batch b of split z, head h, row)` in a tensor laid out
/// `[splits·B, H, Sq, ..]`.
#[cube]
fn part_offset(t: &Tensor<f32>, z: u32, batch: u32, b: u32, h: u32, row: u32) -> usize {
    (z * batch + b) as usize * t.stride(0) + h as usize * t.stride(1) + row as usize * t.stride(2)
}

/// One unit per `(batch, head, row, column)`: every unit of a row re-reads the row's few
/// LSEs (cached), so the merge runs as wide as the output. `o_part: [splits·B, H, Sq, Dv]`
/// and `lse_part: [splits·B, H, Sq]` (split `z` at batch `z·B + b`), both f32; writes `out`
/// and (column 0) `lse`. A row that no split saw gives 0 and `-inf`, as the unsplit kernel
/// does; a NaN in any split gives NaN in both.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd_combine<E: Float>(
    o_part: &Tensor<f32>,
    lse_part: &Tensor<f32>,
    out: &mut Tensor<E>,
    lse: &mut Tensor<f32>,
    neg_inf: f32,
    nan: f32,
    #[comptime] splits: u32,
    #[define(E)] _dtype: StorageType,
) {
    let batch = out.shape(0) as u32;
    let heads = out.shape(1) as u32;
    let seq_q = out.shape(2) as u32;
    let val_dim = out.shape(3) as u32;
    let id = ABSOLUTE_POS as u32;
    if id < batch * heads * seq_q * val_dim {
        let c = id % val_dim;
        let r = id / val_dim;
        let row = r % seq_q;
        let h = (r / seq_q) % heads;
        let b = r / (seq_q * heads);
        let mut m = neg_inf;
        let mut has_nan = false;
        for z in 0..splits {
            let l = lse_part[part_offset(lse_part, z, batch, b, h, row)];
            has_nan = has_nan || l.is_nan();
            m = max(m, l);
        }
        let lse_at =
            b as usize * lse.stride(0) + h as usize * lse.stride(1) + row as usize * lse.stride(2);
        let out_at = b as usize * out.stride(0)
            + h as usize * out.stride(1)
            + row as usize * out.stride(2)
            + c as usize * out.stride(3);
        let mut value = 0.0f32;
        let mut row_lse = neg_inf;
        if has_nan {
            value = nan;
            row_lse = nan;
        } else if m != neg_inf {
            // Weights relative to the largest split; a split that saw no key weighs 0.
            let mut sum = 0.0f32;
            let mut acc = 0.0f32;
            for z in 0..splits {
                let w = (lse_part[part_offset(lse_part, z, batch, b, h, row)] - m).exp();
                sum += w;
                let o_at = part_offset(o_part, z, batch, b, h, row) + c as usize * o_part.stride(3);
                acc += w * o_part[o_at];
            }
            value = acc / sum;
            row_lse = m + sum.ln();
        }
        out[out_at] = E::cast_from(value);
        if c == 0 {
            lse[lse_at] = row_lse;
        }
    }
}
