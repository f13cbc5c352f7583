//! Register tiles of the `m16n8k16` tensor-core products, one CubeCL array per operand.
//!
//! CubeCL's register-level MMA reads whole arrays: an accumulator array of two pairs, an A
//! array of four pairs, a B array whose first two pairs it uses. The kernels therefore keep
//! each 16x8 accumulator tile and each 16x16 A fragment in an array of its own, grouped in a
//! compile-time [`Sequence`], and hand them to the MMA as they are. With flat arrays and an
//! offset per product, every product copied its operands into temporaries and its result
//! back: ptxas removed the copies, but they were half of a kernel's CUDA source and of
//! NVRTC's optimizer time (docs/PERF.md, "Accumulator tiles as arrays of their own").

use cubecl::cmma::MmaDefinition;
use cubecl::prelude::*;

use super::forward::mma::Pair;

/// Accumulator tiles: tile `t` holds a lane's two pairs of one 16x8 f32 tile, row `g` in
/// element 0 and row `g + 8` in element 1.
pub(crate) type AccTiles = Sequence<Array<Vector<f32, Pair>>>;

/// A-operand fragments: each holds a lane's four pairs of one 16x16 block.
pub(crate) type Frags<E> = Sequence<Array<Vector<E, Pair>>>;

/// `n` accumulator tiles, each set to zero.
///
/// The tiles are zeroed last to first. CubeCL declares local arrays in the order of their
/// first use, NVVM numbers the loop-carried registers in that order, and ptxas follows the
/// numbering: first to last gave the 128x64 forward's loop 38 more register moves
/// (docs/PERF.md).
#[cube]
pub(crate) fn acc_tiles(#[comptime] n: u32) -> AccTiles {
    let mut tiles = AccTiles::new();
    #[unroll]
    for _ in 0..n {
        tiles.push(Array::<Vector<f32, Pair>>::new(2usize));
    }
    #[unroll]
    for i in 0..n {
        zero_tile(tiles.index_mut(comptime!(n - 1 - i) as usize));
    }
    tiles
}

/// Sets the first `n` tiles of `tiles` to zero.
#[cube]
pub(crate) fn zero_tiles(tiles: &mut AccTiles, #[comptime] n: u32) {
    #[unroll]
    for i in 0..n {
        zero_tile(tiles.index_mut(i as usize));
    }
}

/// Sets one tile to zero.
#[cube]
fn zero_tile(tile: &mut Array<Vector<f32, Pair>>) {
    tile[0] = Vector::new(0.0f32);
    tile[1] = Vector::new(0.0f32);
}

/// The upper half of a B fragment pair from one four-matrix `ldmatrix` (its second 8-column
/// tile). The lower half is the loaded array itself: the MMA reads only its first two pairs.
#[cube]
pub(crate) fn upper_pair<E: Float>(b: &Array<Vector<E, Pair>>) -> Array<Vector<E, Pair>> {
    let mut hi = Array::<Vector<E, Pair>>::new(2usize);
    hi[0] = b[2];
    hi[1] = b[3];
    hi
}

/// `acc[m][2·jp..2·jp + 2] += A_m · b` for each of the `m_blocks` 16-row A fragments in `a`
/// and the two 8-column tiles of the B fragment pair `b`; `acc` holds `[m_blocks][n_tiles]`
/// tiles.
#[cube]
pub(crate) fn mma_blocks<E: Float>(
    a: &Frags<E>,
    b: &Array<Vector<E, Pair>>,
    acc: &mut AccTiles,
    #[comptime] m_blocks: u32,
    #[comptime] n_tiles: u32,
    #[comptime] jp: u32,
) {
    let b_hi = upper_pair::<E>(b);
    #[unroll]
    for m in 0..m_blocks {
        let tile = comptime!((m * n_tiles + jp * 2) as usize);
        mma_step::<E>(&a[m as usize], b, acc.index_mut(tile));
        mma_step::<E>(&a[m as usize], &b_hi, acc.index_mut(comptime!(tile + 1)));
    }
}

/// One `m16n8k16` product, `c += a · b`: `a` holds four pairs, `b` at least two (the first
/// two are used), `c` two.
#[cube]
pub(crate) fn mma_step<E: Float>(
    a: &Array<Vector<E, Pair>>,
    b: &Array<Vector<E, Pair>>,
    c: &mut Array<Vector<f32, Pair>>,
) {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    def.execute_inplace::<Pair, Pair, Pair>(a, b, c);
}

/// The A fragment of one `k = 16` step from accumulator tiles `t` and `t + 1` of `acc`, cast to
/// `E`: two adjacent 16x8 accumulator tiles have the layout of one 16x16 A block.
#[cube]
pub(crate) fn a_from_acc<E: Float>(acc: &AccTiles, #[comptime] t: u32) -> Array<Vector<E, Pair>> {
    let mut a = Array::<Vector<E, Pair>>::new(4usize);
    let lo = &acc[t as usize];
    let hi = &acc[comptime!(t + 1) as usize];
    a[0] = Vector::cast_from(lo[0]);
    a[1] = Vector::cast_from(lo[1]);
    a[2] = Vector::cast_from(hi[0]);
    a[3] = Vector::cast_from(hi[1]);
    a
}
