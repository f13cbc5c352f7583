//! The `#[cube]` kernel.

use cubecl::prelude::*;

/// `output[i] = alpha * input[i]` for the first `num_vectors` vectors.
#[cube(launch_unchecked)]
pub(super) fn scale_kernel<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    alpha: f32,
    num_vectors: usize,
) {
    let i = ABSOLUTE_POS;
    if i < num_vectors {
        output[i] = input[i] * Vector::new(F::cast_from(alpha));
    }
}
