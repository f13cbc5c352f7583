//! The register-tiled pieces the portable forward and backward share: staging rows as f32
//! vectors, a unit's 4 x 4 block of dot products, and adding a block of products into a
//! shared-memory accumulator.
//!
//! A cube's units form a grid over a tile of `rows x keys`: unit `tid` takes rows
//! `4 · (tid / cols_n) ..+ 4` and keys `tid % cols_n + c · cols_n` for `c < 4`, where
//! `cols_n = keys / 4`, so that adjacent units read adjacent keys. Rows of the operands are
//! vectors of 4 f32; those read by key are padded by one vector, so that adjacent units
//! reading adjacent keys hit different banks.

use cubecl::prelude::*;

/// Rows (and keys) per unit's block of a tile, and f32 per shared-memory vector.
pub(crate) const MICRO: u32 = 4;

/// Four f32: the shared-memory vector.
pub(crate) type Quad = Const<4>;

/// Stages `rows` rows of `width` elements of `t` (a `[B, H, S, width]` tensor at `base`),
/// from row `first`, into `tile` as f32 vectors, `stride` vectors per row; rows outside
/// `0..seq` and the last vector's elements past `width` read as zero. `units` units share
/// the copy.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_vectors<F: Float>(
    t: &Tensor<F>,
    base: usize,
    first: i32,
    seq: u32,
    tile: &mut SharedMemory<Vector<f32, Quad>>,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] stride: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    stage_columns::<F>(
        t,
        base,
        first,
        seq,
        tile,
        0u32,
        rows,
        width,
        comptime!(width.div_ceil(MICRO)),
        stride,
        units,
        tid,
    );
}

/// As [`stage_vectors`], for the `per_row` vectors of each row from vector `col0`: a slice
/// of the rows' columns (elements past `width` read as zero).
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_columns<F: Float>(
    t: &Tensor<F>,
    base: usize,
    first: i32,
    seq: u32,
    tile: &mut SharedMemory<Vector<f32, Quad>>,
    col0: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
    #[comptime] per_row: u32,
    #[comptime] stride: u32,
    #[comptime] units: u32,
    tid: u32,
) {
    let mut idx = tid;
    while idx < rows * per_row {
        let r = idx / per_row;
        let c4 = col0 + idx % per_row;
        let row = first + r as i32;
        let mut x = Vector::<f32, Quad>::new(0.0f32);
        if row >= 0 && row < seq as i32 {
            let row_at = base + row as usize * t.stride(2);
            #[unroll]
            for e in 0..MICRO {
                let col = c4 * MICRO + e;
                if col < width {
                    x[e as usize] = f32::cast_from(t[row_at + col as usize * t.stride(3)]);
                }
            }
        }
        tile[(r * stride + idx % per_row) as usize] = x;
        idx += units;
    }
}

/// `dot[4 r + c] = Σ a[row0 + r] · b[key0 + c · key_step]` over the rows' `vectors`
/// vectors (both operands `stride` vectors per row).
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn dot_block(
    a: &SharedMemory<Vector<f32, Quad>>,
    row0: u32,
    b: &SharedMemory<Vector<f32, Quad>>,
    key0: u32,
    #[comptime] key_step: u32,
    #[comptime] vectors: u32,
    #[comptime] stride: u32,
    dot: &mut Array<f32>,
) {
    zero_array(dot, comptime!(MICRO * MICRO));
    add_dot_block(a, row0, b, key0, key_step, vectors, stride, dot);
}

/// As [`dot_block`], adding to `dot` instead of overwriting it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_dot_block(
    a: &SharedMemory<Vector<f32, Quad>>,
    row0: u32,
    b: &SharedMemory<Vector<f32, Quad>>,
    key0: u32,
    #[comptime] key_step: u32,
    #[comptime] vectors: u32,
    #[comptime] stride: u32,
    dot: &mut Array<f32>,
) {
    for c4 in 0..vectors {
        let mut qa = Array::<Vector<f32, Quad>>::new(MICRO as usize);
        let mut ka = Array::<Vector<f32, Quad>>::new(MICRO as usize);
        #[unroll]
        for r in 0..MICRO {
            qa[r as usize] = a[((row0 + r) * stride + c4) as usize];
            ka[r as usize] = b[((key0 + r * key_step) * stride + c4) as usize];
        }
        #[unroll]
        for r in 0..MICRO {
            #[unroll]
            for c in 0..MICRO {
                #[unroll]
                for e in 0..MICRO {
                    dot[(r * MICRO + c) as usize] +=
                        qa[r as usize][e as usize] * ka[c as usize][e as usize];
                }
            }
        }
    }
}

/// Where a block's weights, operand and accumulator lie (see [`accumulate_block`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct BlockShape {
    /// Step between the block's 4 rows in the weights.
    pub w_step: u32,
    /// Step between the weights of consecutive `j`.
    pub j_step: u32,
    /// Terms `j` of each sum.
    pub count: u32,
    /// Vectors per row of the operand.
    pub m_stride: u32,
    /// Step between a unit's vectors.
    pub vec_step: u32,
    /// Vectors of a row of the result.
    pub vectors: u32,
    /// Step between the block's 4 rows in the accumulator (in its rows).
    pub acc_step: u32,
    /// Vectors per row of the accumulator.
    pub acc_stride: u32,
    /// Rescale each accumulator row by `scale[scale0 + r]` before adding.
    pub rescale: bool,
}

/// The unit's share of a block of products: for its 4 rows `r` and its vectors
/// `vec = vec0 + c · vec_step` (`vec < vectors`),
/// `sum[(r · n_vecs + c) · 4 + e] += Σ_j w[w0 + r · w_step + j · j_step] · m[j][vec][e]`,
/// where `n_vecs = ceil(vectors / vec_step)`.
#[cube]
pub(crate) fn add_block_products(
    w: &SharedMemory<f32>,
    w0: u32,
    m: &SharedMemory<Vector<f32, Quad>>,
    vec0: u32,
    sum: &mut Array<f32>,
    #[comptime] g: BlockShape,
) {
    let n_vecs = comptime!(g.vectors.div_ceil(g.vec_step));
    for j in 0..g.count {
        let mut wa = Array::<f32>::new(MICRO as usize);
        #[unroll]
        for r in 0..MICRO {
            wa[r as usize] = w[(w0 + r * g.w_step + j * g.j_step) as usize];
        }
        #[unroll]
        for c in 0..n_vecs {
            // Vectors past the row (where the step does not divide it) read its first.
            let vc = vec0 + c * g.vec_step;
            let mv = m[(j * g.m_stride + select(vc < g.vectors, vc, 0u32)) as usize];
            #[unroll]
            for r in 0..MICRO {
                #[unroll]
                for e in 0..MICRO {
                    sum[((r * n_vecs + c) * MICRO + e) as usize] += wa[r as usize] * mv[e as usize];
                }
            }
        }
    }
}

/// Sets the `len` elements of `a` to zero.
#[cube]
pub(crate) fn zero_array(a: &mut Array<f32>, #[comptime] len: u32) {
    #[unroll]
    for i in 0..len {
        a[i as usize] = 0.0;
    }
}

/// Multiplies each of the unit's 4 rows of a block held in registers (see
/// [`add_block_products`]) by `scale[scale0 + r]`.
#[cube]
pub(crate) fn scale_block(
    sum: &mut Array<f32>,
    scale: &SharedMemory<f32>,
    scale0: u32,
    #[comptime] g: BlockShape,
) {
    let per_row = comptime!(MICRO * g.vectors.div_ceil(g.vec_step));
    #[unroll]
    for r in 0..MICRO {
        let factor = scale[(scale0 + r) as usize];
        #[unroll]
        for i in 0..per_row {
            sum[(r * per_row + i) as usize] *= factor;
        }
    }
}

/// Elements of a unit's share of a block (see [`add_block_products`]).
pub(crate) fn block_len(g: BlockShape) -> u32 {
    MICRO * g.vectors.div_ceil(g.vec_step) * MICRO
}

/// For the unit's 4 rows `r` and its vectors `vec = vec0 + c · vec_step` (`vec < vectors`):
/// `acc[acc0 + r · acc_step][vec] (· scale) += Σ_j w[w0 + r · w_step + j · j_step] · m[j][vec]`.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn accumulate_block(
    w: &SharedMemory<f32>,
    w0: u32,
    m: &SharedMemory<Vector<f32, Quad>>,
    vec0: u32,
    acc: &mut SharedMemory<Vector<f32, Quad>>,
    acc0: u32,
    scale: &SharedMemory<f32>,
    scale0: u32,
    #[comptime] g: BlockShape,
) {
    let n_vecs = comptime!(g.vectors.div_ceil(g.vec_step));
    let mut sum = Array::<f32>::new(comptime!(block_len(g) as usize));
    zero_array(&mut sum, comptime!(block_len(g)));
    add_block_products(w, w0, m, vec0, &mut sum, g);
    #[unroll]
    for r in 0..MICRO {
        let mut factor = 1.0f32;
        if comptime!(g.rescale) {
            factor = scale[(scale0 + r) as usize];
        }
        #[unroll]
        for c in 0..n_vecs {
            let vc = vec0 + c * g.vec_step;
            if vc < g.vectors {
                let at = ((acc0 + r * g.acc_step) * g.acc_stride + vc) as usize;
                let mut o = acc[at];
                #[unroll]
                for e in 0..MICRO {
                    let add = sum[((r * n_vecs + c) * MICRO + e) as usize];
                    if comptime!(g.rescale) {
                        o[e as usize] = o[e as usize] * factor + add;
                    } else {
                        o[e as usize] += add;
                    }
                }
                acc[at] = o;
            }
        }
    }
}

/// Writes a unit's share of a block held in registers (see [`add_block_products`]): its 4
/// rows `first + row0 + r · acc_step` (those below `seq`) of `t`, a `[B, H, S, width]`
/// tensor at `base`, at the vectors `vec0 + c · vec_step`.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_block<F: Float>(
    sum: &Array<f32>,
    t: &mut Tensor<F>,
    base: usize,
    first: u32,
    seq: u32,
    row0: u32,
    vec0: u32,
    #[comptime] width: u32,
    #[comptime] g: BlockShape,
) {
    let n_vecs = comptime!(g.vectors.div_ceil(g.vec_step));
    #[unroll]
    for r in 0..MICRO {
        let row = first + row0 + r * g.acc_step;
        if row < seq {
            let at = base + row as usize * t.stride(2);
            #[unroll]
            for c in 0..n_vecs {
                let vc = vec0 + c * g.vec_step;
                #[unroll]
                for e in 0..MICRO {
                    let col = vc * MICRO + e;
                    if vc < g.vectors && col < width {
                        t[at + col as usize * t.stride(3)] =
                            F::cast_from(sum[((r * n_vecs + c) * MICRO + e) as usize]);
                    }
                }
            }
        }
    }
}
