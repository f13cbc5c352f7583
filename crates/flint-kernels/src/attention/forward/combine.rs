//! Merging the partial results of a forward split over the keys (split-K, for short query
//! blocks against long key sequences, as in decoding).
//!
//! Split `z` of the tensor-core forward writes, for each row, the output normalised over its
//! own keys `O_z` (f32) and their log-sum-exp `L_z` (`-inf` when it saw no visible key). The
//! row's result is `L = log Σ exp(L_z)` and `O = Σ exp(L_z − L) · O_z`.

use cubecl::prelude::*;

/// Planes of a merge cube: plane `p` takes parts `p`, `p + COMBINE_PLANES`, ...
pub(crate) const COMBINE_PLANES: u32 = 8;

/// One cube per `(batch, head, row)`, of [`COMBINE_PLANES`] planes: each plane merges every
/// eighth part of the row over all `val_dim` columns (lane `l` takes columns `l`, `l + 32`,
/// ...), then the planes' sums meet in shared memory. `o_part: [splits·B, H, Sq, Dv]` and
/// `lse_part: [splits·B, H, Sq]` (split `z` at batch `z·B + b`), both f32; writes `out` and
/// `lse`. A row that no split saw gives 0 and `-inf`, as the unsplit kernel does; a NaN in
/// any split's LSE gives NaN in both.
///
/// A unit's loads (its parts' LSEs and outputs) are independent of each other and issued
/// before any is used, so that it waits for memory once. The earlier form, one unit per
/// output element looping over all the parts, kept 32 SMs busy for a 32-head decode and
/// took 6-8 µs of its 48 (H200).
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
    #[comptime] val_dim: u32,
    #[define(E)] _dtype: StorageType,
) {
    let planes = comptime!(COMBINE_PLANES);
    let per = comptime!(splits.div_ceil(COMBINE_PLANES));
    let cols = comptime!(val_dim.div_ceil(32));
    let batch = out.shape(0) as u32;
    let heads = out.shape(1) as u32;
    let seq_q = out.shape(2) as u32;
    let lane = UNIT_POS_X;
    let plane = UNIT_POS_Y;
    let mut m_s = SharedMemory::<f32>::new(comptime!(planes as usize));
    let mut sum_s = SharedMemory::<f32>::new(comptime!(planes as usize));
    let mut nan_s = SharedMemory::<u32>::new(comptime!(planes as usize));
    let mut acc_s = SharedMemory::<f32>::new(comptime!((planes * val_dim) as usize));
    let r = CUBE_POS_X;
    // The same for every unit of the cube, so the barriers below are reached by all or none.
    if r < batch * heads * seq_q {
        let row = r % seq_q;
        let h = (r / seq_q) % heads;
        let b = r / (seq_q * heads);
        // Split z's row lies z·B batches after split 0's.
        let l_step = batch as usize * lse_part.stride(0);
        let o_step = batch as usize * o_part.stride(0);
        let l0 = b as usize * lse_part.stride(0)
            + h as usize * lse_part.stride(1)
            + row as usize * lse_part.stride(2);
        let o0 = b as usize * o_part.stride(0)
            + h as usize * o_part.stride(1)
            + row as usize * o_part.stride(2);
        let o_col = o_part.stride(3);

        // This plane's parts: LSEs and outputs, all loads issued up front.
        let mut ls = Array::<f32>::new(comptime!(per as usize));
        let mut os = Array::<f32>::new(comptime!((per * cols) as usize));
        let mut m = neg_inf;
        let mut bad = false;
        #[unroll]
        for i in 0..per {
            let z = plane + i * planes;
            let mut l = neg_inf;
            if z < splits {
                l = lse_part[l0 + z as usize * l_step];
            }
            ls[i as usize] = l;
            bad = bad || l.is_nan();
            m = max(m, l);
            #[unroll]
            for j in 0..cols {
                let c = lane + j * 32;
                let mut o = 0.0f32;
                if z < splits && c < val_dim {
                    o = o_part[o0 + z as usize * o_step + c as usize * o_col];
                }
                os[(i * cols + j) as usize] = o;
            }
        }
        if lane == 0 {
            m_s[plane as usize] = m;
            nan_s[plane as usize] = select(bad, 1u32, 0u32);
        }
        sync_cube();
        let mut row_m = neg_inf;
        let mut any_nan = false;
        #[unroll]
        for p in 0..planes {
            row_m = max(row_m, m_s[p as usize]);
            any_nan = any_nan || nan_s[p as usize] == 1u32;
        }

        // Weights relative to the row's largest part; a part that saw no key weighs 0.
        let mut sum = 0.0f32;
        let mut acc = Array::<f32>::new(comptime!(cols as usize));
        #[unroll]
        for j in 0..cols {
            acc[j as usize] = 0.0f32;
        }
        if row_m != neg_inf {
            #[unroll]
            for i in 0..per {
                let l = ls[i as usize];
                let w = select(l == neg_inf, 0.0f32, (l - row_m).exp());
                sum += w;
                #[unroll]
                for j in 0..cols {
                    acc[j as usize] += w * os[(i * cols + j) as usize];
                }
            }
        }
        #[unroll]
        for j in 0..cols {
            let c = lane + j * 32;
            if c < val_dim {
                acc_s[(plane * val_dim + c) as usize] = acc[j as usize];
            }
        }
        if lane == 0 {
            sum_s[plane as usize] = sum;
        }
        sync_cube();

        let mut total = 0.0f32;
        #[unroll]
        for p in 0..planes {
            total += sum_s[p as usize];
        }
        let out_at =
            b as usize * out.stride(0) + h as usize * out.stride(1) + row as usize * out.stride(2);
        let mut c = plane * 32 + lane;
        while c < val_dim {
            let mut value = 0.0f32;
            #[unroll]
            for p in 0..planes {
                value += acc_s[(p * val_dim + c) as usize];
            }
            let mut result = 0.0f32;
            if any_nan {
                result = nan;
            } else if row_m != neg_inf {
                result = value / total;
            }
            out[out_at + c as usize * out.stride(3)] = E::cast_from(result);
            c += planes * 32;
        }
        if plane == 0 && lane == 0 {
            let mut row_lse = neg_inf;
            if any_nan {
                row_lse = nan;
            } else if row_m != neg_inf {
                row_lse = row_m + total.ln();
            }
            lse[b as usize * lse.stride(0)
                + h as usize * lse.stride(1)
                + row as usize * lse.stride(2)] = row_lse;
        }
    }
}

#[cfg(all(test, feature = "wgpu"))]
mod tests {
    use super::*;
    use cubecl::wgpu::{WgpuDevice, WgpuRuntime};

    /// Deterministic, irregular values in [-1, 1].
    fn values(len: usize, seed: u64) -> Vec<f32> {
        (0..len)
            .map(|i| ((i as f64 + 0.37 * seed as f64) * 12.9898).sin() as f32)
            .collect()
    }

    fn floats(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    }

    /// The merge on lavapipe against an f64 merge of the same parts: 11 parts (not a multiple
    /// of the planes), 48 columns (not a multiple of a plane's lanes), parts that saw no key
    /// (LSE `-inf`) and a row that no part saw.
    #[test]
    fn merge_matches_an_f64_merge_on_lavapipe() {
        let (b, h, sq, dv, splits) = (2usize, 3usize, 2usize, 48usize, 11u32);
        let rows = b * h * sq;
        let z_n = splits as usize;
        // LSEs in [-8, 8), spread so that the weights differ by orders of magnitude.
        let mut lse_part: Vec<f32> = values(z_n * rows, 7).iter().map(|v| 8.0 * v).collect();
        let o_part = values(z_n * rows * dv, 8);
        // Part z of row r sits at z·rows + r (batch z·B + b, rows contiguous within a batch).
        let at = |z: usize, r: usize| z * rows + r;
        for z in [0, 3, 10] {
            lse_part[at(z, 1)] = f32::NEG_INFINITY; // row 1: three empty parts
        }
        for z in 0..z_n {
            lse_part[at(z, 5)] = f32::NEG_INFINITY; // row 5: no part saw a key
        }

        let client = WgpuRuntime::client(&WgpuDevice::Cpu);
        let o_h = client.create_from_slice(f32::as_bytes(&o_part));
        let l_h = client.create_from_slice(f32::as_bytes(&lse_part));
        let out_h = client.create_from_slice(f32::as_bytes(&vec![7.0; rows * dv]));
        let lse_h = client.create_from_slice(f32::as_bytes(&vec![7.0; rows]));
        let f32_type = f32::as_type_native_unchecked().storage_type();
        let contiguous = |shape: &[usize]| {
            let mut strides = vec![1usize; shape.len()];
            for i in (0..shape.len() - 1).rev() {
                strides[i] = strides[i + 1] * shape[i + 1];
            }
            strides
        };
        let arg = |handle: &cubecl::server::Handle, shape: Vec<usize>| {
            let strides = contiguous(&shape);
            // SAFETY: every buffer was made above for exactly this contiguous shape.
            unsafe {
                TensorArg::<WgpuRuntime>::from_raw_parts(
                    handle.clone(),
                    strides.into(),
                    shape.into(),
                )
            }
        };
        // SAFETY: the shapes match the buffers; the kernel guards its rows and columns.
        unsafe {
            attention_fwd_combine::launch_unchecked::<WgpuRuntime>(
                &client,
                CubeCount::Static(rows as u32, 1, 1),
                CubeDim::new_2d(32, COMBINE_PLANES),
                arg(&o_h, vec![z_n * b, h, sq, dv]),
                arg(&l_h, vec![z_n * b, h, sq]),
                arg(&out_h, vec![b, h, sq, dv]),
                arg(&lse_h, vec![b, h, sq]),
                f32::NEG_INFINITY,
                f32::NAN,
                splits,
                dv as u32,
                f32_type,
            );
        }
        let out = floats(&client.read_one(out_h).expect("read the output"));
        let lse = floats(&client.read_one(lse_h).expect("read the LSE"));

        for r in 0..rows {
            let ls: Vec<f64> = (0..z_n).map(|z| f64::from(lse_part[at(z, r)])).collect();
            let m = ls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if m == f64::NEG_INFINITY {
                assert_eq!(lse[r], f32::NEG_INFINITY, "row {r}: no part saw a key");
                assert!(
                    out[r * dv..(r + 1) * dv].iter().all(|&x| x == 0.0),
                    "row {r}"
                );
                continue;
            }
            let w: Vec<f64> = ls.iter().map(|l| (l - m).exp()).collect();
            let sum: f64 = w.iter().sum();
            let want_lse = m + sum.ln();
            assert!(
                (f64::from(lse[r]) - want_lse).abs() < 1e-5 * want_lse.abs().max(1.0),
                "row {r}: LSE {} against {want_lse}",
                lse[r]
            );
            for c in 0..dv {
                let want: f64 = (0..z_n)
                    .map(|z| w[z] * f64::from(o_part[at(z, r) * dv + c]))
                    .sum::<f64>()
                    / sum;
                let got = f64::from(out[r * dv + c]);
                assert!(
                    (got - want).abs() < 1e-5,
                    "row {r} column {c}: {got} against {want}"
                );
            }
        }
    }
}
