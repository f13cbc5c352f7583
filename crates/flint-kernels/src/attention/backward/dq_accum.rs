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

/// `dq = scale · acc`, cast to `E`, `N` elements per unit (1, or 4 when dQ's rows are
/// contiguous and its strides multiples of 4): `count` vectors of `acc`, which holds each
/// head in 8x8 blocks, `[B, H, ceil(Sq / 8), D / 8, 8, 8]` (see `dq_block_offset`). Units
/// read `acc` in order; padding rows past `Sq` are skipped.
#[cube(launch_unchecked)]
pub fn dq_accum_finish<E: Float, N: Size>(
    acc: &Tensor<Vector<f32, N>>,
    dq: &mut Tensor<Vector<E, N>>,
    scale: f32,
    count: u32,
    #[comptime] width: u32,
    #[define(E)] _dtype: StorageType,
) {
    let id = ABSOLUTE_POS as u32;
    if id < count {
        let heads = dq.shape(1) as u32;
        let seq_q = dq.shape(2) as u32;
        let dim = dq.shape(3) as u32;
        let per_head = seq_q.div_ceil(8) * 8 * dim;
        let e = id * width;
        let within = e % per_head;
        let bh = e / per_head;
        let in_block = within % 64;
        let row = (within / (8 * dim)) * 8 + in_block / 8;
        let col = ((within / 64) % (dim / 8)) * 8 + in_block % 8;
        if row < seq_q {
            let h = bh % heads;
            let b = bh / heads;
            let at = b as usize * dq.stride(0)
                + h as usize * dq.stride(1)
                + row as usize * dq.stride(2)
                + col as usize * dq.stride(3);
            dq[at / width as usize] =
                Vector::<E, N>::cast_from(acc[id as usize] * Vector::new(scale));
        }
    }
}
