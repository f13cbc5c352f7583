//! The f32 dQ accumulator of the fused backward: zeroed before the dK/dV kernel adds into it,
//! then scaled and cast into dQ.

use cubecl::prelude::*;

/// Zeroes `acc`, `N` elements per unit: the first `count` vectors. Grid of 1-D cubes.
#[cube(launch_unchecked)]
pub fn dq_accum_zero<N: Size>(acc: &mut Tensor<Vector<f32, N>>, count: u32) {
    let i = ABSOLUTE_POS as u32;
    if i < count {
        acc[i as usize] = Vector::new(0.0f32);
    }
}

/// `dq = scale · acc`, cast to `E`, `N` elements per unit: `count` vectors of `acc`
/// (contiguous `[B, H, Sq, D]`). With `contiguous` dQ has acc's layout and vector `i` of one
/// is vector `i` of the other; otherwise (`N = 1`) each unit finds its element's place from
/// dQ's strides.
#[cube(launch_unchecked)]
pub fn dq_accum_finish<E: Float, N: Size>(
    acc: &Tensor<Vector<f32, N>>,
    dq: &mut Tensor<Vector<E, N>>,
    scale: f32,
    count: u32,
    #[comptime] contiguous: bool,
    #[define(E)] _dtype: StorageType,
) {
    let id = ABSOLUTE_POS as u32;
    if id < count {
        let value = Vector::<E, N>::cast_from(acc[id as usize] * Vector::new(scale));
        if comptime!(contiguous) {
            dq[id as usize] = value;
        } else {
            let heads = dq.shape(1) as u32;
            let seq_q = dq.shape(2) as u32;
            let dim = dq.shape(3) as u32;
            let col = id % dim;
            let row = (id / dim) % seq_q;
            let h = (id / (dim * seq_q)) % heads;
            let b = id / (dim * seq_q * heads);
            let at = b as usize * dq.stride(0)
                + h as usize * dq.stride(1)
                + row as usize * dq.stride(2)
                + col as usize * dq.stride(3);
            dq[at] = value;
        }
    }
}
