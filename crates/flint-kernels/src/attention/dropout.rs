//! Counter-based dropout: whether element `(bh, i, j)` is kept is a pure function of the
//! seed, so the backward regenerates the forward's mask instead of storing it.

use cubecl::prelude::*;

/// A 32-bit integer mix (a "lowbias32" style finaliser): cheap and well distributed.
pub fn mix(x: u32) -> u32 {
    let mut h = x;
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    h
}

/// The uniform draw in `[0, 1)` for score `(bh, i, j)` under `seed` (24 bits of precision).
pub fn uniform(seed: u64, bh: u32, i: u32, j: u32) -> f32 {
    let h = mix(kernel_seed(seed) ^ mix(bh ^ mix(i ^ mix(j))));
    (h >> 8) as f32 / 16_777_216.0
}

/// Whether score `(bh, i, j)` is kept with dropout probability `p`.
pub fn keep(seed: u64, p: f64, bh: u32, i: u32, j: u32) -> bool {
    f64::from(uniform(seed, bh, i, j)) >= p
}

/// The 64-bit seed folded to the 32-bit word the kernel receives: `low ^ mix(high)`.
pub fn kernel_seed(seed: u64) -> u32 {
    (seed as u32) ^ mix((seed >> 32) as u32)
}

/// [`mix`] on the device.
#[cube]
pub(crate) fn mix_cube(x: u32) -> u32 {
    let mut h = x;
    h ^= h >> 16;
    h *= 0x7feb_352du32;
    h ^= h >> 15;
    h *= 0x846c_a68bu32;
    h ^= h >> 16;
    h
}

/// [`uniform`] on the device, with the seed already folded by [`kernel_seed`].
#[cube]
pub(crate) fn uniform_cube(seed: u32, bh: u32, i: u32, j: u32) -> f32 {
    let h = mix_cube(seed ^ mix_cube(bh ^ mix_cube(i ^ mix_cube(j))));
    f32::cast_from(h >> 8) / 16_777_216.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_uniform_and_reproducible() {
        let n = 100_000u32;
        let kept = (0..n).filter(|&j| keep(42, 0.25, 3, 7, j)).count() as f64 / f64::from(n);
        assert!((kept - 0.75).abs() < 0.01, "kept {kept}");
        assert_eq!(uniform(42, 1, 2, 3), uniform(42, 1, 2, 3));
        assert_ne!(uniform(42, 1, 2, 3), uniform(43, 1, 2, 3));
        assert_ne!(uniform(42, 1, 2, 3), uniform(42, 1, 3, 2));
    }
}
