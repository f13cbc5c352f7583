//! The portable kernels' sliced form, for devices whose shared memory (48 KiB through
//! Vulkan on NVIDIA) cannot hold whole rows of the tiles at large `D`: products over `D`
//! stage both operands a slice of [`SLICE`] vectors (32 columns) at a time, and products
//! whose second operand is a tile of rows stage it a chunk of rows at a time. The partial
//! sums stay in each unit's registers across the barriers between slices, so the sliced
//! form needs a device that keeps arrays across barriers, as the register accumulators do.
//!
//! Each helper stages into buffers that are free when it is called and leaves them free
//! when it returns (its last step is a barrier).

use cubecl::prelude::*;

use crate::attention::portable_tiles::{
    BlockShape, MICRO, Quad, add_block_products, add_dot_block, stage_columns, stage_vectors,
    zero_array,
};

/// Vectors of 4 f32 per slice of `D`.
pub(crate) const SLICE: u32 = 8;

/// Vectors per staged slice of a row `width` wide (at most [`SLICE`]).
pub(crate) fn slice_vectors(width: u32) -> u32 {
    width.div_ceil(MICRO).min(SLICE)
}

/// Vectors of a buffer that holds `rows` rows of a slice of rows `width` wide (padded by
/// one vector, so that units reading adjacent rows hit different banks).
pub(crate) fn slice_len(rows: u32, width: u32) -> u32 {
    rows * (slice_vectors(width) + 1)
}

/// Rows per chunk of a product's second operand, `stride` vectors per row, in a buffer of
/// `capacity` vectors: the largest power of two that fits and divides `count` (a power of
/// two), at least 1.
pub(crate) fn chunk_rows(capacity: u32, stride: u32, count: u32) -> u32 {
    let mut rows = count.max(1);
    while rows > 1 && rows * stride > capacity {
        rows /= 2;
    }
    rows
}

/// `dot` (16 values) becomes the unit's 4 x 4 block of `A·Bᵀ`: rows `row0 + r` of the
/// `a_rows` rows of `a` from `a_first`, by rows `key0 + c · b_rows / 4` of the `b_rows` rows
/// of `b` from `b_first`, over `width` columns. Both are `[B, H, S, width]` tensors at their
/// bases; rows outside `0..seq` read as zero. `a_s` and `b_s` hold a slice of each.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sliced_dot<F: Float>(
    a: &Tensor<F>,
    a_base: usize,
    a_first: i32,
    a_seq: u32,
    b: &Tensor<F>,
    b_base: usize,
    b_first: i32,
    b_seq: u32,
    a_s: &mut SharedMemory<Vector<f32, Quad>>,
    b_s: &mut SharedMemory<Vector<f32, Quad>>,
    row0: u32,
    key0: u32,
    dot: &mut Array<f32>,
    #[comptime] a_rows: u32,
    #[comptime] b_rows: u32,
    #[comptime] width: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let per = comptime!(slice_vectors(width));
    let stride = comptime!(slice_vectors(width) + 1);
    let slices = comptime!(width.div_ceil(MICRO).div_ceil(slice_vectors(width)));
    let key_step = comptime!(b_rows / MICRO);
    zero_array(dot, comptime!(MICRO * MICRO));
    for sl in 0..slices {
        let col0 = sl * per;
        stage_columns::<F>(
            a, a_base, a_first, a_seq, a_s, col0, a_rows, width, per, stride, units, tid,
        );
        stage_columns::<F>(
            b, b_base, b_first, b_seq, b_s, col0, b_rows, width, per, stride, units, tid,
        );
        sync_cube();
        add_dot_block(a_s, row0, b_s, key0, key_step, per, stride, dot);
        sync_cube();
    }
}

/// Adds the unit's share of `w · M` into `sum`, as [`add_block_products`] with shape `g`,
/// where the operand's `g.count` rows are rows `m_first..` of `m` (a `[B, H, S, width]`
/// tensor at `m_base`, zero outside `0..m_seq`), staged `chunk` rows at a time into `m_s`.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_chunked_products<F: Float>(
    w: &SharedMemory<f32>,
    w0: u32,
    m: &Tensor<F>,
    m_base: usize,
    m_first: i32,
    m_seq: u32,
    m_s: &mut SharedMemory<Vector<f32, Quad>>,
    vec0: u32,
    sum: &mut Array<f32>,
    #[comptime] width: u32,
    #[comptime] chunk: u32,
    #[comptime] g: BlockShape,
    #[comptime] units: u32,
    tid: u32,
) {
    let part = comptime!(BlockShape { count: chunk, ..g });
    for i in 0..comptime!(g.count / chunk) {
        let j0 = i * chunk;
        stage_vectors::<F>(
            m,
            m_base,
            m_first + j0 as i32,
            m_seq,
            m_s,
            chunk,
            width,
            g.m_stride,
            units,
            tid,
        );
        sync_cube();
        add_block_products(w, w0 + j0 * g.j_step, m_s, vec0, sum, part);
        sync_cube();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fit_their_buffer_and_divide_the_count() {
        // The forward's V at Dv = 128 (32 vectors) in a 32-key slice buffer (288 vectors).
        assert_eq!(chunk_rows(32 * 9, 32, 32), 8);
        assert_eq!(chunk_rows(64 * 9, 32, 64), 16);
        // Everything fits: one chunk.
        assert_eq!(chunk_rows(1024, 8, 16), 16);
        // Nothing fits: one row at a time.
        assert_eq!(chunk_rows(4, 33, 16), 1);
        assert_eq!(slice_vectors(128), 8);
        assert_eq!(slice_vectors(20), 5);
        assert_eq!(slice_len(64, 128), 576);
    }
}
