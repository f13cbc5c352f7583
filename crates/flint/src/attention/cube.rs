//! `CubeBackend`: the CubeCL kernels, with the config from the selector.

use burn::tensor::DType;
use burn::tensor::ops::{FloatTensor, FloatTensorOps};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::zeros_client;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use cubecl::server::{MemoryLayout, MemoryLayoutDescriptor};
use cubecl::zspace::metadata::Metadata;
use flint_kernels::attention::{
    AttentionBwdArgs, AttentionBwdConfig, AttentionFwdArgs, AttentionFwdConfig, AttentionProblem,
    choose_attention_bwd, choose_attention_fwd, launch_attention_bwd, launch_attention_bwd_chosen,
    launch_attention_fwd, launch_attention_fwd_chosen, prepare_attention_bwd,
    prepare_attention_fwd,
};
use flint_tune::Selector;

use super::FlashAttentionBackend;
use super::backend::{AttentionBwdInputs, AttentionGrads};
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
        forward::<R, F, I, BT>(q, k, v, bias, problem, Launch::Select(config))
    }

    fn flash_attention_fwd_chosen(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        problem: &AttentionProblem,
        config: Option<AttentionFwdConfig>,
    ) -> Result<(FloatTensor<Self>, FloatTensor<Self>), AttentionError> {
        forward::<R, F, I, BT>(q, k, v, bias, problem, Launch::chosen(config))
    }

    fn flash_attention_fwd_config(
        problem: &AttentionProblem,
        dtype: DType,
        device: &Self::Device,
        requested: Option<AttentionFwdConfig>,
    ) -> Result<Option<AttentionFwdConfig>, AttentionError> {
        let client = R::client(device);
        // Scratch tensors of the call's shapes, made once and only when the selector
        // benchmarks (a cache miss): zeros, so that timings see finite values. Made per run,
        // their fills and allocations fell inside every timed launch (a third more than the
        // kernel at D = 64, 1k on an H200).
        let scratch = std::sync::OnceLock::new();
        let make = || {
            fwd_scratch(problem, dtype)
                .map(|(shape, dt)| zeros_client(client.clone(), device.clone(), shape.into(), dt))
        };
        let choice = choose_attention_fwd(
            &client,
            device,
            selector()?,
            problem,
            dtype.into(),
            requested,
            || fwd_scratch_args(scratch.get_or_init(make).clone()),
        )?;
        Ok(Some(choice.config))
    }

    fn flash_attention_fwd_prepare(
        problem: &AttentionProblem,
        dtype: DType,
        device: &Self::Device,
    ) -> bool {
        let Ok(selector) = selector() else {
            // The forward's own call reports the environment's error.
            return false;
        };
        let client = R::client(device);
        // Nothing runs: uninitialised tensors of the forward's shapes, made once, and only
        // when there is something to compile.
        let scratch = std::sync::OnceLock::new();
        let make = || empty_on(&client, device, fwd_scratch(problem, dtype));
        prepare_attention_fwd(&client, device, selector, problem, dtype.into(), || {
            fwd_scratch_args(scratch.get_or_init(make).clone())
        })
    }

    fn flash_attention_bwd(
        inputs: AttentionBwdInputs<Self>,
        problem: &AttentionProblem,
        want_dbias: bool,
        config: Option<AttentionBwdConfig>,
    ) -> Result<AttentionGrads<Self>, AttentionError> {
        backward::<R, F, I, BT>(inputs, problem, want_dbias, Launch::Select(config))
    }

    fn flash_attention_bwd_chosen(
        inputs: AttentionBwdInputs<Self>,
        problem: &AttentionProblem,
        want_dbias: bool,
        config: Option<AttentionBwdConfig>,
    ) -> Result<AttentionGrads<Self>, AttentionError> {
        backward::<R, F, I, BT>(inputs, problem, want_dbias, Launch::chosen(config))
    }

    fn flash_attention_bwd_config(
        problem: &AttentionProblem,
        dtype: DType,
        want_dbias: bool,
        device: &Self::Device,
        requested: Option<AttentionBwdConfig>,
    ) -> Result<Option<AttentionBwdConfig>, AttentionError> {
        let client = R::client(device);
        let p = problem;
        // Scratch tensors of the call's shapes, made once and only when the selector
        // benchmarks (a cache miss): zeros, so that timings see finite values.
        let scratch = std::sync::OnceLock::new();
        let make = || {
            bwd_scratch(p, dtype, want_dbias)
                .map(|(shape, dt)| zeros_client(client.clone(), device.clone(), shape.into(), dt))
        };
        let choice = choose_attention_bwd(
            &client,
            device,
            selector()?,
            problem,
            dtype.into(),
            want_dbias,
            requested,
            || bwd_scratch_args(scratch.get_or_init(make)),
        )?;
        Ok(Some(choice.config))
    }

    fn flash_attention_bwd_prepare(
        problem: &AttentionProblem,
        dtype: DType,
        want_dbias: bool,
        device: &Self::Device,
    ) -> bool {
        let Ok(selector) = selector() else {
            // The backward's own call reports the environment's error.
            return false;
        };
        let client = R::client(device);
        // Nothing runs: uninitialised tensors of the backward's shapes, made once, and only
        // when there is something to compile.
        let scratch = std::sync::OnceLock::new();
        let make = || empty_on(&client, device, bwd_scratch(problem, dtype, want_dbias));
        prepare_attention_bwd(
            &client,
            device,
            selector,
            problem,
            dtype.into(),
            want_dbias,
            || bwd_scratch_args(scratch.get_or_init(make)),
        )
    }
}

/// The shapes and dtypes of the forward's tensors, as [`fwd_scratch_args`] reads them:
/// q, k, v, bias, out, lse.
fn fwd_scratch(p: &AttentionProblem, dtype: DType) -> [(Vec<usize>, DType); 6] {
    let (b, h, hkv, sq, sk, d, dv) = (
        p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, p.val_dim,
    );
    let bias = if p.has_bias {
        vec![1, 1, sq, sk]
    } else {
        vec![1, 1, 1, 1]
    };
    [
        (vec![b, h, sq, d], dtype),
        (vec![b, hkv, sk, d], dtype),
        (vec![b, hkv, sk, dv], dtype),
        (bias, DType::F32),
        (vec![b, h, sq, dv], dtype),
        (vec![b, h, sq, 1], DType::F32),
    ]
}

/// Launch arguments over the tensors [`fwd_scratch`] describes.
fn fwd_scratch_args<R: CubeRuntime>(t: [CubeTensor<R>; 6]) -> AttentionFwdArgs<R> {
    let [q, k, v, bias, out, lse] = t.map(|t| t.into_tensor_arg());
    AttentionFwdArgs {
        q,
        k,
        v,
        bias,
        bias_strides: (0, 0),
        out,
        lse,
    }
}

/// The shapes and dtypes of the backward's tensors, as [`bwd_scratch_args`] reads them:
/// q, k, v, out (also dout), lse, bias, delta, dq, dk, dv, dbias, lse2.
fn bwd_scratch(p: &AttentionProblem, dtype: DType, want_dbias: bool) -> [(Vec<usize>, DType); 12] {
    let (b, h, hkv, sq, sk, d, dv) = (
        p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, p.val_dim,
    );
    let one = vec![1, 1, 1, 1];
    let bias = if p.has_bias {
        vec![1, 1, sq, sk]
    } else {
        one.clone()
    };
    let dbias = if want_dbias { vec![b, h, sq, sk] } else { one };
    [
        (vec![b, h, sq, d], dtype),
        (vec![b, hkv, sk, d], dtype),
        (vec![b, hkv, sk, dv], dtype),
        (vec![b, h, sq, dv], dtype),
        (vec![b, h, sq], DType::F32),
        (bias, DType::F32),
        (vec![b, h, sq], DType::F32),
        (vec![b, h, sq, d], dtype),
        (vec![b, hkv, sk, d], dtype),
        (vec![b, hkv, sk, dv], dtype),
        (dbias, DType::F32),
        (vec![b, h, sq], DType::F32),
    ]
}

/// Launch arguments over the tensors [`bwd_scratch`] describes.
fn bwd_scratch_args<R: CubeRuntime>(t: &[CubeTensor<R>; 12]) -> AttentionBwdArgs<R> {
    let arg = |i: usize| t[i].clone().into_tensor_arg();
    AttentionBwdArgs {
        q: arg(0),
        k: arg(1),
        v: arg(2),
        out: arg(3),
        dout: arg(3),
        lse: arg(4),
        bias: arg(5),
        bias_strides: (0, 0),
        delta: arg(6),
        lse2: arg(11),
        dq: arg(7),
        dk: arg(8),
        dv: arg(9),
        dbias: arg(10),
    }
}

/// The bias as the kernels read it (f32) and its strides over batch and heads (0 where it
/// broadcasts).
fn bias_f32<R, F, I, BT>(bias: CubeTensor<R>) -> (CubeTensor<R>, (usize, usize))
where
    R: CubeRuntime,
    F: FloatElement,
    I: IntElement,
    BT: BoolElement,
{
    let bias = if bias.dtype == DType::F32 {
        bias
    } else {
        CubeBackend::<R, F, I, BT>::float_cast(bias, burn::tensor::FloatDType::F32)
    };
    let strides = {
        let (shape, strides) = (bias.meta.shape(), bias.meta.strides());
        let stride = |i: usize| if shape[i] == 1 { 0 } else { strides[i] };
        (stride(0), stride(1))
    };
    (bias, strides)
}

/// `[B, H, Sq, Dv]`: the forward's output.
fn out_shape(p: &AttentionProblem) -> Vec<usize> {
    vec![p.batch, p.heads, p.seq_q, p.val_dim]
}

/// `[B, H, Sq]`: the log-sum-exp rows, always f32.
fn lse_shape(p: &AttentionProblem) -> Vec<usize> {
    vec![p.batch, p.heads, p.seq_q]
}

/// How a CubeCL launch gets its config.
enum Launch<C> {
    /// Through the selector's tiers, with an optional requested config to check.
    Select(Option<C>),
    /// Already chosen or checked for this problem on this device by the backend's
    /// `*_config` method (a deferred launch through the fusion stream).
    Chosen(C),
}

impl<C> Launch<C> {
    /// `Chosen` where a config is given; with none, the selector chooses.
    fn chosen(config: Option<C>) -> Self {
        match config {
            Some(c) => Self::Chosen(c),
            None => Self::Select(None),
        }
    }
}

/// `CubeBackend`'s forward: the outputs, then the launch.
fn forward<R, F, I, BT>(
    q: CubeTensor<R>,
    k: CubeTensor<R>,
    v: CubeTensor<R>,
    bias: Option<CubeTensor<R>>,
    problem: &AttentionProblem,
    how: Launch<AttentionFwdConfig>,
) -> Result<(CubeTensor<R>, CubeTensor<R>), AttentionError>
where
    R: CubeRuntime,
    F: FloatElement,
    I: IntElement,
    BT: BoolElement,
{
    let (q, k, v) = (unit_last(q), unit_last(k), unit_last(v));
    let client = q.client.clone();
    let device = q.device.clone();
    let p = problem;
    // One allocation task for the outputs and the 1-element bias stand-in (unused when a
    // bias is given): each task is a round through CubeCL's device thread.
    let [out, lse, stand_in] = empty_many(
        &q,
        [
            (out_shape(p), q.dtype),
            (lse_shape(p), DType::F32),
            (vec![1, 1, 1, 1], DType::F32),
        ],
    );
    let (bias, bias_strides) = match bias {
        Some(b) => bias_f32::<R, F, I, BT>(b),
        None => (stand_in, (0, 0)),
    };
    let args = || AttentionFwdArgs {
        q: q.clone().into_tensor_arg(),
        k: k.clone().into_tensor_arg(),
        v: v.clone().into_tensor_arg(),
        bias: bias.clone().into_tensor_arg(),
        bias_strides,
        out: out.clone().into_tensor_arg(),
        lse: lse.clone().into_tensor_arg(),
    };
    match how {
        Launch::Select(config) => {
            launch_attention_fwd(
                &client,
                &device,
                selector()?,
                problem,
                q.dtype.into(),
                config,
                args,
            )?;
        }
        Launch::Chosen(config) => {
            launch_attention_fwd_chosen(&client, problem, q.dtype.into(), &config, args())?;
        }
    }
    Ok((out, lse))
}

/// `CubeBackend`'s backward: the gradients' buffers, the launch, then the bias gradient's
/// reduction over the dims it broadcasts.
fn backward<R, F, I, BT>(
    inputs: AttentionBwdInputs<CubeBackend<R, F, I, BT>>,
    problem: &AttentionProblem,
    want_dbias: bool,
    how: Launch<AttentionBwdConfig>,
) -> Result<AttentionGrads<CubeBackend<R, F, I, BT>>, AttentionError>
where
    R: CubeRuntime,
    F: FloatElement,
    I: IntElement,
    BT: BoolElement,
{
    let AttentionBwdInputs {
        q,
        k,
        v,
        out,
        lse,
        dout,
        bias,
    } = inputs;
    let [q, k, v, out, dout] = [q, k, v, out, dout].map(unit_last);
    let client = q.client.clone();
    let device = q.device.clone();
    let p = problem;
    let dtype = q.dtype;
    // Gradients arrive in the output's dtype; cast defensively so the kernel sees one.
    let dout = if dout.dtype == dtype {
        dout
    } else {
        CubeBackend::<R, F, I, BT>::float_cast(dout, dtype.into())
    };
    let (b, h, hkv, sq, sk) = (p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv);
    // One allocation task for the gradients, delta and the 1-element stand-ins.
    let [dq, dk, dv, delta, lse2, dbias_stand_in, bias_stand_in] = empty_many(
        &q,
        [
            (vec![b, h, sq, p.head_dim], dtype),
            (vec![b, hkv, sk, p.head_dim], dtype),
            (vec![b, hkv, sk, p.val_dim], dtype),
            (vec![b, h, sq], DType::F32),
            (vec![b, h, sq], DType::F32),
            (vec![1, 1, 1, 1], DType::F32),
            (vec![1, 1, 1, 1], DType::F32),
        ],
    );
    // Scores the masks hide are never written: the score gradient starts at zero.
    let dbias = if want_dbias {
        zeros_client(
            client.clone(),
            device.clone(),
            [b, h, sq, sk].into(),
            DType::F32,
        )
    } else {
        dbias_stand_in
    };
    let bias_shape = bias.as_ref().map(|b| b.meta.shape().to_vec());
    let bias_dtype = bias.as_ref().map(|b| b.dtype);
    let (bias, bias_strides) = match bias {
        Some(b) => bias_f32::<R, F, I, BT>(b),
        None => (bias_stand_in, (0, 0)),
    };
    let args = || AttentionBwdArgs {
        q: q.clone().into_tensor_arg(),
        k: k.clone().into_tensor_arg(),
        v: v.clone().into_tensor_arg(),
        out: out.clone().into_tensor_arg(),
        dout: dout.clone().into_tensor_arg(),
        lse: lse.clone().into_tensor_arg(),
        bias: bias.clone().into_tensor_arg(),
        bias_strides,
        delta: delta.clone().into_tensor_arg(),
        lse2: lse2.clone().into_tensor_arg(),
        dq: dq.clone().into_tensor_arg(),
        dk: dk.clone().into_tensor_arg(),
        dv: dv.clone().into_tensor_arg(),
        dbias: dbias.clone().into_tensor_arg(),
    };
    match how {
        Launch::Select(config) => {
            launch_attention_bwd(
                &client,
                &device,
                selector()?,
                problem,
                dtype.into(),
                want_dbias,
                config,
                args,
            )?;
        }
        Launch::Chosen(config) => {
            launch_attention_bwd_chosen(&client, problem, dtype.into(), want_dbias, &config, args)?;
        }
    }
    let dbias = match (want_dbias, bias_shape) {
        (true, Some(shape)) => {
            // Sum over the dims the bias broadcasts (batch, heads), back to its dtype.
            let mut g = dbias;
            for (dim, &size) in shape.iter().enumerate().take(2) {
                if size == 1 && g.meta.shape()[dim] != 1 {
                    g = CubeBackend::<R, F, I, BT>::float_sum_dim(g, dim);
                }
            }
            Some(match bias_dtype {
                Some(dt) if dt != DType::F32 => {
                    CubeBackend::<R, F, I, BT>::float_cast(g, dt.into())
                }
                _ => g,
            })
        }
        _ => None,
    };
    Ok(AttentionGrads { dq, dk, dv, dbias })
}

/// Contiguous uninitialised tensors of the given shapes and dtypes on `like`'s device, made
/// in one allocation task.
fn empty_many<R: CubeRuntime, const N: usize>(
    like: &CubeTensor<R>,
    specs: [(Vec<usize>, DType); N],
) -> [CubeTensor<R>; N] {
    empty_on(&like.client, &like.device, specs)
}

/// [`empty_many`] on `client`'s `device`.
fn empty_on<R: CubeRuntime, const N: usize>(
    client: &cubecl::client::ComputeClient<R>,
    device: &R::Device,
    specs: [(Vec<usize>, DType); N],
) -> [CubeTensor<R>; N] {
    let descriptors = specs
        .iter()
        .map(|(shape, dt)| MemoryLayoutDescriptor::contiguous(shape.clone().into(), dt.size()))
        .collect();
    let mut layouts = client.empty_tensors(descriptors).into_iter();
    let mut specs = specs.into_iter();
    std::array::from_fn(|_| {
        let (MemoryLayout { memory, strides }, (shape, dtype)) =
            match (layouts.next(), specs.next()) {
                (Some(layout), Some(spec)) => (layout, spec),
                _ => unreachable!("one layout per descriptor"),
            };
        CubeTensor::new(
            client.clone(),
            memory,
            Metadata::new(shape, strides),
            device.clone(),
            dtype,
        )
    })
}

/// The tensor-core kernels read rows as contiguous runs: a tensor whose last dim is strided
/// (a transposed view) is copied first. Other strides are honoured as they are.
fn unit_last<R: CubeRuntime>(t: CubeTensor<R>) -> CubeTensor<R> {
    if t.meta.strides().last() == Some(&1) {
        t
    } else {
        into_contiguous(t)
    }
}
