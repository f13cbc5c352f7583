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

/// `dq = scale · acc`, cast to `E`: one unit per element of `dq: [B, H, Sq, D]` (any strides);
/// `acc` is contiguous with the same shape.
#[cube(launch_unchecked)]
pub fn dq_accum_finish<E: Float>(
    acc: &Tensor<f32>,
    dq: &mut Tensor<E>,
    scale: f32,
    #[define(E)] _dtype: StorageType,
) {
    let heads = dq.shape(1) as u32;
    let seq_q = dq.shape(2) as u32;
    let dim = dq.shape(3) as u32;
    let id = ABSOLUTE_POS as u32;
    if id < dq.shape(0) as u32 * heads * seq_q * dim {
        let col = id % dim;
        let row = (id / dim) % seq_q;
        let h = (id / (dim * seq_q)) % heads;
        let b = id / (dim * seq_q * heads);
        let at = b as usize * dq.stride(0)
            + h as usize * dq.stride(1)
            + row as usize * dq.stride(2)
            + col as usize * dq.stride(3);
        dq[at] = E::cast_from(acc[id as usize] * scale);
    }
}
