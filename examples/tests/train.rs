//! The training example's model learns through flint's backward: the loss of a few Adam
//! steps falls by more than half, on NdArray (the reference backward) and on wgpu over
//! lavapipe (the fused CubeCL backward through Burn's fusion type).

use burn::backend::{Autodiff, NdArray};
use flint_examples::tiny_transformer::{TinyConfig, train};

fn assert_learns(losses: &[f32]) {
    let (first, last) = (losses[0], losses[losses.len() - 1]);
    assert!(first.is_finite() && last.is_finite(), "losses {losses:?}");
    assert!(last < 0.5 * first, "the loss did not halve: {losses:?}");
}

#[test]
fn tiny_transformer_learns_on_ndarray() {
    assert_learns(&train::<Autodiff<NdArray>>(
        &TinyConfig::default(),
        30,
        5e-3,
        &Default::default(),
    ));
}

#[cfg(feature = "wgpu")]
#[test]
fn tiny_transformer_learns_on_wgpu() {
    let device = burn::backend::wgpu::WgpuDevice::Cpu;
    assert_learns(&train::<Autodiff<burn::backend::Wgpu>>(
        &TinyConfig::default(),
        30,
        5e-3,
        &device,
    ));
}
