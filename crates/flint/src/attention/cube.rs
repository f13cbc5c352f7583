//! `CubeBackend`: the CubeCL kernels, with the config from the selector.

use burn::tensor::DType;
use burn::tensor::ops::{FloatTensor, FloatTensorOps};
use burn_cubecl::ops::numeric::{empty_device_contiguous_dtype, zeros_client};
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use flint_kernels::attention::{
    AttentionFwdArgs, AttentionFwdConfig, AttentionProblem, choose_attention_fwd,
    launch_attention_fwd,
};
use flint_tune::Selector;

use super::FlashAttentionBackend;
use crate::AttentionError;

fn selector() -> Result<&'static Selector, AttentionError> {
    Selector::global().map_err(AttentionError::Environment)
}

impl<R, F, I, BT> FlashAttentionBackend for CubeBackend<R, F, I, BT>
where
    R: CubeRuntime,
    F: FloatElement,
    I: IntElement,
    BT: BoolElement,
{
    fn flash_attention_fwd(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        problem: &AttentionProblem,
        config: Option<AttentionFwdConfig>,
    ) -> Result<(FloatTensor<Self>, FloatTensor<Self>), AttentionError> {
        let client = q.client.clone();
        let device = q.device.clone();
        let p = problem;
        let out = empty_device_contiguous_dtype(
            client.clone(),
            device.clone(),
            [p.batch, p.heads, p.seq_q, p.val_dim].into(),
            q.dtype,
        );
        let lse = empty_device_contiguous_dtype(
            client.clone(),
            device.clone(),
            [p.batch, p.heads, p.seq_q].into(),
            DType::F32,
        );
        // The kernel reads the bias in f32; with none it still needs a bound tensor.
        let bias: CubeTensor<R> = match bias {
            Some(b) if b.dtype == DType::F32 => b,
            Some(b) => Self::float_cast(b, burn::tensor::FloatDType::F32),
            None => empty_device_contiguous_dtype(
                client.clone(),
                device.clone(),
                [1, 1, 1, 1].into(),
                DType::F32,
            ),
        };
        let bias_strides = {
            let (shape, strides) = (bias.meta.shape(), bias.meta.strides());
            let stride = |i: usize| if shape[i] == 1 { 0 } else { strides[i] };
            (stride(0), stride(1))
        };
        launch_attention_fwd(
            &client,
            &device,
            selector()?,
            problem,
            q.dtype.into(),
            config,
            || AttentionFwdArgs {
                q: q.clone().into_tensor_arg(),
                k: k.clone().into_tensor_arg(),
                v: v.clone().into_tensor_arg(),
                bias: bias.clone().into_tensor_arg(),
                bias_strides,
                out: out.clone().into_tensor_arg(),
                lse: lse.clone().into_tensor_arg(),
            },
        )?;
        Ok((out, lse))
    }

    fn flash_attention_fwd_config(
        problem: &AttentionProblem,
        dtype: DType,
        device: &Self::Device,
        requested: Option<AttentionFwdConfig>,
    ) -> Result<Option<AttentionFwdConfig>, AttentionError> {
        let client = R::client(device);
        let p = problem;
        // Scratch inputs of the call's shapes, made only when the selector benchmarks (a
        // cache miss): zeros, so that timings see finite values.
        let zeros = |shape: [usize; 4], dtype| {
            zeros_client(client.clone(), device.clone(), shape.into(), dtype).into_tensor_arg()
        };
        let bias_shape = if p.has_bias {
            [1, 1, p.seq_q, p.seq_kv]
        } else {
            [1, 1, 1, 1]
        };
        let choice = choose_attention_fwd(
            &client,
            device,
            selector()?,
            problem,
            dtype.into(),
            requested,
            || AttentionFwdArgs {
                q: zeros([p.batch, p.heads, p.seq_q, p.head_dim], dtype),
                k: zeros([p.batch, p.kv_heads, p.seq_kv, p.head_dim], dtype),
                v: zeros([p.batch, p.kv_heads, p.seq_kv, p.val_dim], dtype),
                bias: zeros(bias_shape, DType::F32),
                bias_strides: (0, 0),
                out: zeros([p.batch, p.heads, p.seq_q, p.val_dim], dtype),
                lse: zeros([p.batch, p.heads, p.seq_q, 1], DType::F32),
            },
        )?;
        Ok(Some(choice.config))
    }
}
