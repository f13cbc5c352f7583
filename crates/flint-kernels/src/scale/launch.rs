//! The `scale` launcher: choose a config through the selector, then launch.

use cubecl::prelude::*;
use cubecl::server::Handle;
use flint_tune::{Choice, Invocation, Op, Selector, Signature};

use super::kernel::scale_kernel;
use super::op::{ScaleConfig, ScaleOp};
use crate::{CubeclBenchmark, DeviceLimits, Dispatch, KernelError, fingerprint};

/// Writes `alpha * input` into `output`, both `len` f32 values, with the config the
/// selector chooses (autotuned on the real buffers on first use of a shape bucket) or with
/// `config` if given.
///
/// # Errors
/// [`KernelError::Invalid`] for an empty buffer or one too large for 32-bit indexing,
/// [`KernelError::Tune`] if no config could be chosen (including an invalid `config`),
/// [`KernelError::Launch`] if the runtime rejects the launch.
#[allow(clippy::too_many_arguments)]
pub fn launch_scale<R: Runtime>(
    client: &ComputeClient<R>,
    device: &R::Device,
    selector: &Selector,
    input: &Handle,
    output: &Handle,
    len: usize,
    alpha: f32,
    config: Option<ScaleConfig>,
) -> Result<Choice<ScaleConfig>, KernelError> {
    if len == 0 || len > u32::MAX as usize {
        return Err(KernelError::Invalid {
            arg: "len",
            rule: format!("must be in 1..=2^32-1, got {len}"),
        });
    }
    let op = ScaleOp::new(DeviceLimits::of(client));
    let mut inv = Invocation::new(
        op.id(),
        Signature::new().with("len", len).with("dtype", "f32"),
        fingerprint::<R>(client, device),
    );
    if let Some(config) = config {
        inv = inv.with_override(config);
    }
    let mut bench = CubeclBenchmark::new(client, "scale", |c: &ScaleConfig, d| {
        launch_with(client, input, output, len, alpha, c, d)
    });
    let choice = selector.choose(&op, &inv, Some(&mut bench))?;
    launch_with(
        client,
        input,
        output,
        len,
        alpha,
        &choice.config,
        Dispatch::Run,
    )
    .map_err(|reason| KernelError::Launch {
        kernel: "scale",
        reason,
    })?;
    Ok(choice)
}

fn launch_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: &Handle,
    output: &Handle,
    len: usize,
    alpha: f32,
    c: &ScaleConfig,
    dispatch: Dispatch,
) -> Result<(), String> {
    let vector_size = usize::from(c.vector_size);
    let num_vectors = len / vector_size;
    let cubes = num_vectors.div_ceil(c.cube_size as usize);
    let cubes = u32::try_from(cubes).map_err(|_| format!("{cubes} cubes exceed u32"))?;
    // SAFETY: both handles hold `len` f32 values (the caller's contract) and the kernel
    // bounds-checks against `num_vectors`, so it runs without CubeCL's own checks.
    unsafe {
        scale_kernel::launch_unchecked::<f32, R>(
            client,
            dispatch.grid(cubes, 1, 1),
            CubeDim::new_1d(c.cube_size),
            vector_size,
            ArrayArg::from_raw_parts(input.clone(), len),
            ArrayArg::from_raw_parts(output.clone(), len),
            alpha,
            num_vectors,
        );
    }
    Ok(())
}
