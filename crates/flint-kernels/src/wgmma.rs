//! Hopper's warpgroup MMA (`wgmma.mma_async`, sm_90a) for CubeCL kernels: the primitive a
//! cuDNN-class attention needs, since CubeCL 0.10 has none.
//!
//! The workspace's patched `cubecl-cpp` (`vendor/README.md`) compiles a manual MMA of shape
//! `m = 64` to a synchronous run of `wgmma` steps with A in registers and B in shared memory,
//! and a three-matrix `ldmatrix` to the shared-memory address of a slice. This module wraps
//! both: `smem_address`, `descriptor` and `wgmma`. All 128 threads of a warpgroup (four
//! consecutive planes) must make the call together.
//!
//! Operand layouts, per thread of the warpgroup (plane `w`, lane `4g + t`):
//! - A, k-step `s`: four pairs at `4s..4s + 4`, those of `m16n8k16`'s A fragment for rows
//!   `16w..16w + 16` (rows `g`, `g + 8`; columns `2t`, `2t + 8` of the step).
//! - B: 8x8 core matrices (eight 16-byte rows, 128 contiguous bytes), without swizzle; the
//!   descriptor gives the byte distance between core matrices adjacent along K and along N
//!   ([`b_descriptor`] for this module's `core_chunk` layout).
//! - The accumulator: `n / 4` pairs; pair `2j + r` holds row `16w + g + 8r`, columns
//!   `8j + 2t` and `8j + 2t + 1`: the `m16n8` accumulator layout, tile by tile.

use cubecl::cmma::MmaDefinition;
use cubecl::ir::MatrixIdent;
use cubecl::prelude::*;

use crate::attention::forward::mma::Pair;

/// Bytes of one core matrix (eight rows of 16 bytes).
pub const CORE_BYTES: u32 = 128;

/// The 32-bit shared-memory address of the first element of `slice` (CUDA only).
#[cube]
pub(crate) fn smem_address<E: Float, N: Size>(slice: &Slice<Vector<E, N>>) -> u32 {
    let def = MmaDefinition::<E, E, f32>::new(16usize, 8usize, 16usize);
    // Three matrices: the patched compiler's request for the address (no `ldmatrix` loads three).
    let words = def.load_matrix::<Vector<E, N>, Pair>(slice, MatrixIdent::B, 3usize, false);
    u32::reinterpret(words[0])
}

/// The three words `wgmma` takes for B: a shared-memory descriptor without swizzle (`addr`
/// 16-byte aligned; `lbo` and `sbo` in bytes, multiples of 16, below 256 KiB), the bytes
/// between consecutive k-steps. Their type says how B is stored: `E`
/// (the operands' element) for a K-major B, `u16` for an MN-major one (`n` contiguous), which
/// the patched compiler turns into `wgmma`'s transposed form.
#[cube]
pub(crate) fn descriptor<B: Scalar>(
    addr: u32,
    lbo: u32,
    sbo: u32,
    #[comptime] step_bytes: u32,
) -> Array<Vector<B, Pair>> {
    let mut words = Array::<Vector<B, Pair>>::new(3usize);
    words[0] = Vector::reinterpret(((addr & 0x3ffff) >> 4) | (((lbo >> 4) & 0x3fff) << 16));
    words[1] = Vector::reinterpret((sbo >> 4) & 0x3fff);
    words[2] = Vector::reinterpret(comptime!(step_bytes >> 4));
    words
}

/// The bytes of a swizzled row of a tile `width` elements (16-bit) wide: 128 where the width
/// is a multiple of 64 (TMA's `SWIZZLE_128B`, 64 columns a box), else 64 (`SWIZZLE_64B`, 32
/// columns a box: D = 32, whose rows are 64 bytes).
pub const fn sw_row_bytes(width: u32) -> u32 {
    if width.is_multiple_of(64) { 128 } else { 64 }
}

/// The columns of one swizzled box of a tile `width` elements wide ([`sw_row_bytes`] / 2).
pub const fn sw_cols(width: u32) -> u32 {
    sw_row_bytes(width) / 2
}

/// [`descriptor`]'s words for an operand in swizzled rows of `row_bytes` (128 or 64,
/// [`sw_row_bytes`]; TMA's `SWIZZLE_128B` or `SWIZZLE_64B`, atoms of eight such rows, `addr`
/// aligned to the atom at each box): the layout type of that swizzle (1 for 128 bytes, 2 for
/// 64) in bits 62-63 and `sbo` = eight rows. K-major, k-steps of 32 bytes within a row; or
/// MN-major, `lbo` the bytes to the next box along N (64 elements, or 32) and k-steps of
/// sixteen rows ([`mn_sw`]).
#[cube]
pub(crate) fn sw_descriptor<B: Scalar>(
    addr: u32,
    lbo: u32,
    #[comptime] step_bytes: u32,
    #[comptime] row_bytes: u32,
) -> Array<Vector<B, Pair>> {
    let mut words = Array::<Vector<B, Pair>>::new(3usize);
    words[0] = Vector::reinterpret(((addr & 0x3ffff) >> 4) | (((lbo >> 4) & 0x3fff) << 16));
    if comptime!(row_bytes == 128) {
        // SBO = 1024 bytes; layout type 1 (128-byte swizzle) in bits 62-63.
        words[1] = Vector::reinterpret((1024u32 >> 4) | (1u32 << 30));
    } else {
        // SBO = 512 bytes; layout type 2 (64-byte swizzle).
        words[1] = Vector::reinterpret((512u32 >> 4) | (2u32 << 30));
    }
    words[2] = Vector::reinterpret(comptime!(step_bytes >> 4));
    words
}

/// Issues `acc = A · Bᵀ` in the SS form with both operands K-major in swizzled rows
/// ([`sw_descriptor`], rows of [`sw_row_bytes`]`(width)`): A is the warpgroup's 64 rows from
/// `a_addr` in a buffer of `a_rows` rows, B `n` rows from `b_addr` in one of `b_rows`, each
/// `width` wide (the buffers hold [`sw_cols`] columns a box, one box after the other), `acc`
/// overwritten. One commit group per box: a descriptor's k-steps advance within a row only.
/// `proxy_fence` as in [`wgmma_issue`].
#[cube]
#[allow(clippy::too_many_arguments)]
pub(crate) fn issue_ss_sw<E: Float>(
    a_addr: u32,
    b_addr: u32,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] a_rows: u32,
    #[comptime] b_rows: u32,
    #[comptime] n: u32,
    #[comptime] width: u32,
    #[comptime] proxy_fence: bool,
) {
    let row_bytes = comptime!(sw_row_bytes(width));
    let cols = comptime!(sw_cols(width));
    // The first box starts the product from zero (`wgmma_ss_start`).
    let a0 = sw_descriptor::<u16>(a_addr, 16u32, 32u32, row_bytes);
    let b0 = sw_descriptor::<E>(b_addr, 16u32, 32u32, row_bytes);
    wgmma_ss_start::<E>(&a0, &b0, acc, n, cols, proxy_fence);
    #[unroll]
    for c in 1..comptime!(width / cols) {
        let a = sw_descriptor::<u16>(
            a_addr + c * comptime!(a_rows * row_bytes),
            16u32,
            32u32,
            row_bytes,
        );
        let b = sw_descriptor::<E>(
            b_addr + c * comptime!(b_rows * row_bytes),
            16u32,
            32u32,
            row_bytes,
        );
        wgmma_ss_issue::<E>(&a, &b, acc, n, cols, proxy_fence);
    }
}

/// [`issue_ss_sw`] with A in registers: `a` holds the warpgroup's `width / 16` k-steps of
/// four pairs (as `ldmatrix` loads them from the swizzled tile), so that only B is read from
/// shared memory. One commit group per box, `acc` overwritten.
#[cube]
pub(crate) fn issue_rs_sw<E: Float>(
    a: &Array<Vector<E, Pair>>,
    b_addr: u32,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] b_rows: u32,
    #[comptime] n: u32,
    #[comptime] width: u32,
    #[comptime] proxy_fence: bool,
) {
    let row_bytes = comptime!(sw_row_bytes(width));
    let cols = comptime!(sw_cols(width));
    let a0 = a_block::<E>(a, 0u32, cols);
    let b0 = sw_descriptor::<E>(b_addr, 16u32, 32u32, row_bytes);
    wgmma_start::<E, E>(&a0, &b0, acc, n, cols, proxy_fence);
    #[unroll]
    for c in 1..comptime!(width / cols) {
        let ac = a_block::<E>(a, c, cols);
        let b = sw_descriptor::<E>(
            b_addr + c * comptime!(b_rows * row_bytes),
            16u32,
            32u32,
            row_bytes,
        );
        wgmma_issue::<E, E>(&ac, &b, acc, n, cols, proxy_fence);
    }
}

/// The k-steps of A's box `c` of `cols` columns (four pairs a step): a descriptor's k-steps
/// stay within a box, so each box is a product of its own.
#[cube]
fn a_block<E: Float>(
    a: &Array<Vector<E, Pair>>,
    c: u32,
    #[comptime] cols: u32,
) -> Array<Vector<E, Pair>> {
    let pairs = comptime!(cols / 4);
    let mut part = Array::<Vector<E, Pair>>::new(pairs as usize);
    #[unroll]
    for x in 0..pairs {
        part[x as usize] = a[(c * pairs + x) as usize];
    }
    part
}

/// An MN-major B in swizzled rows of a tile `width` wide ([`sw_row_bytes`]): `rows` rows (K)
/// from `addr`, boxes of [`sw_cols`] elements of N `rows` rows apart, k-steps of sixteen
/// rows.
#[cube]
pub(crate) fn mn_sw(
    addr: u32,
    #[comptime] rows: u32,
    #[comptime] width: u32,
) -> Array<Vector<u16, Pair>> {
    let row_bytes = comptime!(sw_row_bytes(width));
    sw_descriptor::<u16>(
        addr,
        comptime!(rows * row_bytes),
        comptime!(16 * row_bytes),
        row_bytes,
    )
}

/// `acc += A · B` for one warpgroup: `64 x n x k`, A's `k / 16` steps in `a` (four pairs
/// each), B as `descriptor` words (`B` = `E`: K-major, `u16`: MN-major), `acc` `n / 4` f32
/// pairs. `n` a multiple of 8 up to 256, `k` of 16. Returns with the product complete.
#[cube]
pub(crate) fn wgmma<E: Float, B: Scalar>(
    a: &Array<Vector<E, Pair>>,
    b: &Array<Vector<B, Pair>>,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] n: u32,
    #[comptime] k: u32,
) {
    wgmma_issue::<E, B>(a, b, acc, n, k, true);
    let mut token = SharedMemory::<f32>::new(1usize);
    wgmma_wait(acc, &mut token, false);
}

/// Issues `acc += A · B` as [`wgmma`] does and returns at once, the product one commit group
/// in flight: `acc` (and `a`) must not be touched until `wgmma_wait` has covered it.
///
/// With `proxy_fence`, a `fence.proxy.async` comes first, which shared memory written
/// through the generic proxy (stores, `cp.async`) needs before `wgmma` reads it through the
/// async proxy. Operands that only TMA copies wrote (the async proxy too) need none, and the
/// fence costs a `MEMBAR` on the issuing warpgroup's path (`docs/PERF.md`).
#[cube]
pub(crate) fn wgmma_issue<E: Float, B: Scalar>(
    a: &Array<Vector<E, Pair>>,
    b: &Array<Vector<B, Pair>>,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] proxy_fence: bool,
) {
    rs_product::<E, B>(a, b, acc, n, k, false, proxy_fence);
}

/// [`wgmma_issue`] of `acc = A · B`, from zero (see [`wgmma_ss_start`]).
#[cube]
pub(crate) fn wgmma_start<E: Float, B: Scalar>(
    a: &Array<Vector<E, Pair>>,
    b: &Array<Vector<B, Pair>>,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] proxy_fence: bool,
) {
    rs_product::<E, B>(a, b, acc, n, k, true, proxy_fence);
}

/// The RS form (A in registers) of [`wgmma_issue`] and [`wgmma_start`].
#[cube]
fn rs_product<E: Float, B: Scalar>(
    a: &Array<Vector<E, Pair>>,
    b: &Array<Vector<B, Pair>>,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] from_zero: bool,
    #[comptime] proxy_fence: bool,
) {
    let def = MmaDefinition::<E, B, f32>::new(
        64usize,
        n as usize,
        comptime!(request_k(k, from_zero, proxy_fence)),
    );
    def.execute_inplace::<Pair, Pair, Pair>(a, b, acc);
}

/// Issues `acc += A · Bᵀ` with both operands in shared memory and K-major (the SS form): A
/// as `descriptor::<u16>` words of the warpgroup's 64 rows, B as `descriptor::<E>` words.
/// Asynchronous, and `proxy_fence`, as [`wgmma_issue`].
#[cube]
pub(crate) fn wgmma_ss_issue<E: Float>(
    a: &Array<Vector<u16, Pair>>,
    b: &Array<Vector<E, Pair>>,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] proxy_fence: bool,
) {
    let def = MmaDefinition::<u16, E, f32>::new(
        64usize,
        n as usize,
        comptime!(request_k(k, false, proxy_fence)),
    );
    def.execute_inplace::<Pair, Pair, Pair>(a, b, acc);
}

/// Waits until at most one commit group (`one_left`) or none is in flight, and fences
/// `acc`, whose product must then be complete: no read of it moves above the wait. `token`
/// is any shared memory of the kernel (the request's syntax needs one; nothing touches it).
#[cube]
pub(crate) fn wgmma_wait(
    acc: &mut Array<Vector<f32, Pair>>,
    token: &mut SharedMemory<f32>,
    #[comptime] one_left: bool,
) {
    let def = MmaDefinition::<f32, f32, f32>::new(16usize, 8usize, 16usize);
    // Three matrices: the patched compiler's request for the wait (no `stmatrix` stores three).
    def.store_matrix::<f32, Pair>(
        &mut token.slice_mut(0usize, 1usize),
        acc,
        MatrixIdent::Accumulator,
        3usize,
        one_left,
    );
}

/// Keeps the instructions that compute `values` ahead of the next [`wgmma_wait`]: ptxas
/// otherwise schedules a wait as early as its block allows, and the work meant to overlap the
/// products in flight runs after them. The patched compiler emits a shared-memory store of
/// `values` into `token` that never runs; stores stay on their side of a wait.
#[cube]
pub(crate) fn order_before_wait(values: &Array<Vector<f32, Pair>>, token: &mut SharedMemory<f32>) {
    let def = MmaDefinition::<f32, f32, f32>::new(16usize, 8usize, 16usize);
    // Five matrices: the patched compiler's request for the fence (no `stmatrix` stores five).
    def.store_matrix::<f32, Pair>(
        &mut token.slice_mut(0usize, 1usize),
        values,
        MatrixIdent::Accumulator,
        5usize,
        false,
    );
}

/// Named barrier `id` (1 to 15; 0 is `sync_cube`'s) for `threads` threads in all: waits there
/// (`bar.sync`) or, with `arrive`, counts this warp's arrival and goes on (`bar.arrive`).
/// Warpgroups take turns through a pair of these.
#[cube]
pub(crate) fn named_barrier(id: u32, #[comptime] threads: u32, #[comptime] arrive: bool) {
    // k = 1 or 2: the patched compiler's request for `bar.sync` or `bar.arrive` (no product
    // has such a k); the barrier's number travels in A's first element.
    let k = comptime!(if arrive { 2usize } else { 1usize });
    let def = MmaDefinition::<f32, f32, f32>::new(64usize, threads as usize, k);
    let mut a = Array::<Vector<f32, Pair>>::new(1usize);
    a[0] = Vector::new(id as f32);
    let b = Array::<Vector<f32, Pair>>::new(1usize);
    let mut c = Array::<Vector<f32, Pair>>::new(1usize);
    def.execute_inplace::<Pair, Pair, Pair>(&a, &b, &mut c);
}

/// [`wgmma_ss_issue`] of `acc = A · Bᵀ`, from zero: the accumulators are only written, so
/// they need no zeros beforehand. Zeros written into them make ptxas wait for another product
/// in flight when it gives the zero's register to that product's accumulators.
#[cube]
pub(crate) fn wgmma_ss_start<E: Float>(
    a: &Array<Vector<u16, Pair>>,
    b: &Array<Vector<E, Pair>>,
    acc: &mut Array<Vector<f32, Pair>>,
    #[comptime] n: u32,
    #[comptime] k: u32,
    #[comptime] proxy_fence: bool,
) {
    let def = MmaDefinition::<u16, E, f32>::new(
        64usize,
        n as usize,
        comptime!(request_k(k, true, proxy_fence)),
    );
    def.execute_inplace::<Pair, Pair, Pair>(a, b, acc);
}

/// The `k` a warpgroup product asks the patched compiler for: the product's `k` (a multiple
/// of 16), plus 1 for a product from zero and plus 2 for one without the proxy fence (no
/// product's `k` has those low bits; `vendor/README.md`).
const fn request_k(k: u32, from_zero: bool, proxy_fence: bool) -> usize {
    (k + from_zero as u32 + 2 * !proxy_fence as u32) as usize
}

/// `setmaxnreg` for the calling warpgroup (all its warps together): at most `count` registers
/// per thread from here on, a multiple of 8 in 24..=256, released to the cube's pool below
/// 128 and taken from it otherwise (waiting until another warpgroup has released them).
#[cube]
pub(crate) fn set_max_registers(#[comptime] count: u32) {
    // k = 0: the patched compiler's request for `setmaxnreg` (no product has k = 0).
    compiler_request(count, 0u32);
}

/// Asks for at least `count` cubes of this kernel per SM in its launch bounds, so that ptxas
/// caps the registers a thread starts with at `65536 / (count · threads)`; the warpgroups
/// then move them with [`set_max_registers`]. Emits no instruction.
#[cube]
pub(crate) fn min_cubes_per_sm(#[comptime] count: u32) {
    // k = 3: the patched compiler's launch-bound request (no product has k = 3; 1 and 2 are
    // named barriers).
    compiler_request(count, 3u32);
}

/// A manual MMA of `m = 64` and `k` below 16 with unused operands: no product has such a
/// `k`, so the patched compiler reads it as a request with argument `n` (`vendor/README.md`).
#[cube]
fn compiler_request(#[comptime] n: u32, #[comptime] k: u32) {
    let def = MmaDefinition::<f32, f32, f32>::new(64usize, n as usize, k as usize);
    let a = Array::<Vector<f32, Pair>>::new(1usize);
    let b = Array::<Vector<f32, Pair>>::new(1usize);
    let mut c = Array::<Vector<f32, Pair>>::new(1usize);
    def.execute_inplace::<Pair, Pair, Pair>(&a, &b, &mut c);
}

/// Where this module's B layout puts the 16-byte chunk `chunk` of row `row` of a tile whose
/// rows hold `row_chunks` chunks, in chunks: core matrix `(row / 8, chunk)` at
/// `((row / 8) · row_chunks + chunk) · 8`, row `row % 8` within it.
#[cube]
pub(crate) fn core_chunk(row: u32, chunk: u32, #[comptime] row_chunks: u32) -> u32 {
    ((row / 8) * row_chunks + chunk) * 8 + row % 8
}

/// The `(lbo, sbo, step)` bytes of a B operand staged by `core_chunk`: K-major B (stored as
/// its transpose, `n` rows of `k` elements) or MN-major B (`k` rows of `n` elements), 2-byte
/// elements. Without swizzle, either way, the leading offset is the distance between core
/// matrices adjacent along K and the stride offset along N (measured on the H100: the other
/// reading gives a wrong product, or reads past the tile). K-major: 128 bytes along K,
/// `k / 8 · 128` along N; MN-major: `n / 8 · 128` along K, 128 along N. A k-step (16
/// elements of K) is two core matrices along K.
pub const fn b_descriptor(n: u32, k: u32, mn_major: bool) -> (u32, u32, u32) {
    let (k_dist, n_dist) = if mn_major {
        (n / 8 * CORE_BYTES, CORE_BYTES)
    } else {
        (CORE_BYTES, k / 8 * CORE_BYTES)
    };
    (k_dist, n_dist, 2 * k_dist)
}

/// `(k_dist, n_dist, step_bytes)` like [`b_descriptor`], for a tile that TMA wrote as
/// 16-byte columns: `rows` rows of one 8-element column after another (column `c`, row `r`
/// at byte `16 · (c · rows + r)`). With `mn_major` false the rows are N (K-major B, or A);
/// with it true they are K (an MN-major B whose columns run along N).
pub const fn tma_descriptor(rows: u32, mn_major: bool) -> (u32, u32, u32) {
    if mn_major {
        (16 * 8, 16 * rows, 2 * 16 * 8)
    } else {
        (16 * rows, 16 * 8, 2 * 16 * rows)
    }
}

/// Whether CUDA device `index` runs warpgroup MMA: compute capability 9.0 (`sm_90a`; the
/// instructions are not in later architectures).
#[cfg(feature = "cuda")]
pub fn cuda_device_has_wgmma(index: usize) -> bool {
    crate::device::cuda_identity(index).is_some_and(|(_, cc, _)| cc == "sm_90")
}

/// Whether this build's CUDA compiler turns a manual MMA of `m = 64` into `wgmma`: flint's
/// patched `cubecl-cpp` does, the published one does not (a workspace that depends on flint
/// without repeating its `[patch.crates-io]` entries gets the latter). Answered once per
/// process by compiling, not launching, a one-product kernel through `client`.
#[cfg(feature = "cuda")]
pub fn compiler_emits_wgmma<R: Runtime>(client: &ComputeClient<R>) -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        // An unpatched compiler may panic on the shape rather than return an error.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            product_source(client).is_ok_and(|s| s.contains("wgmma.mma_async.sync.aligned"))
        }))
        .unwrap_or(false)
    })
}

/// The CUDA source of a 64 x 64 x 16 warpgroup product (bf16 into f32), compiled for sm_90.
#[cfg(feature = "cuda")]
pub(crate) fn product_source<R: Runtime>(client: &ComputeClient<R>) -> Result<String, String> {
    // Allocated here, on the caller's stream: a CubeCL stream (and its memory pools) belongs
    // to a thread, and the probe's own thread only registers the handle.
    let handle = client.create_from_slice(&[0u8; 64]);
    crate::compile_only::on_own_thread(move || {
        use check::wgmma_product as m;
        use cubecl::ir::{ElemType, FloatKind};
        use cubecl::prelude::{DynamicScalar, DynamicSize, KernelLauncher, KernelSettings};
        let dtype = StorageType::Scalar(ElemType::Float(FloatKind::BF16));
        let settings = KernelSettings::default().cube_dim(CubeDim::new_2d(32, 4));
        let mut launcher = KernelLauncher::<R>::new(settings.clone());
        launcher.with_scope(|scope| {
            scope.device_properties(client.properties());
            scope.register_type::<DynamicScalar<m::_E>>(dtype);
            scope.register_size::<DynamicSize<m::_N>>(8);
        });
        // SAFETY: nothing launches; the handle only stands in for each array's binding.
        let array = || unsafe { ArrayArg::<R>::from_raw_parts(handle.clone(), 16) };
        let a = <Array<m::E> as LaunchArg>::register(array(), &mut launcher);
        let b = <Array<Vector<m::E, m::N>> as LaunchArg>::register(array(), &mut launcher);
        let c = <Array<f32> as LaunchArg>::register(array(), &mut launcher);
        <u32 as LaunchArg>::register(0u32, &mut launcher);
        <u32 as LaunchArg>::register(0u32, &mut launcher);
        let kernel = m::WgmmaProduct::<R>::new(
            settings,
            client.clone(),
            a,
            b,
            c,
            (),
            (),
            8usize,
            64,
            16,
            false,
            dtype,
        );
        cuda_kernel_source(kernel)
    })
}

/// A kernel's CUDA source as the CUDA runtime compiles it for an sm_90 device (CUDA 12.8+).
// The options type is only reachable as the compiler's associated type: no struct literal.
#[cfg(feature = "cuda")]
#[allow(clippy::field_reassign_with_default)]
pub(crate) fn cuda_kernel_source<K: cubecl::prelude::CubeKernel>(
    kernel: K,
) -> Result<String, String> {
    use cubecl::prelude::{ExecutionMode, KernelTask};
    let task = KernelTask::<cubecl::cuda::CudaCompiler, _>::new(kernel);
    let mut options =
        <cubecl::cuda::CudaCompiler as cubecl::Compiler>::CompilationOptions::default();
    options.warp_size = 32;
    let features = &mut options.supports_features;
    features.fast_math = true;
    features.fast_tanh = true;
    features.grid_constants = true;
    features.clusters = true;
    features.elect_sync = true;
    let u32_type = u32::as_type_native_unchecked().storage_type();
    cubecl::CubeTask::compile(
        &task,
        &mut Default::default(),
        &options,
        ExecutionMode::Unchecked,
        u32_type,
    )
    .map(|k| k.source)
    .map_err(|e| e.to_string())
}

pub mod attention;
pub mod backward;
pub mod check;
pub mod pipelined;
