//! `Fusion<B>`: Burn's default `Wgpu`/`Cuda` types. The op is registered as an opaque
//! custom op that runs the inner backend's kernels.

use std::marker::PhantomData;

use burn::tensor::ops::FloatTensor;
use burn::tensor::{DType, Shape};
use burn_fusion::stream::{Operation, OperationStreams};
use burn_fusion::{Fusion, FusionBackend, FusionRuntime};
use burn_ir::{CustomOpIr, HandleContainer, OperationIr, OperationOutput, TensorIr};
use flint_kernels::attention::{AttentionBwdConfig, AttentionFwdConfig, AttentionProblem};

use super::FlashAttentionBackend;
use super::backend::{AttentionBwdInputs, AttentionGrads};
use crate::AttentionError;

#[derive(Clone, Debug)]
struct FlashFwd<B> {
    desc: CustomOpIr,
    problem: AttentionProblem,
    config: Option<AttentionFwdConfig>,
    _b: PhantomData<B>,
}

impl<B: FusionBackend + FlashAttentionBackend> Operation<B::FusionRuntime> for FlashFwd<B> {
    fn execute(
        &self,
        handles: &mut HandleContainer<<B::FusionRuntime as FusionRuntime>::FusionHandle>,
    ) {
        let inputs: Vec<_> = self
            .desc
            .inputs
            .iter()
            .map(|t| handles.get_float_tensor::<B>(t))
            .collect();
        let mut inputs = inputs.into_iter();
        let (Some(q), Some(k), Some(v)) = (inputs.next(), inputs.next(), inputs.next()) else {
            unreachable!("flash attention registers q, k and v as its first inputs");
        };
        let bias = inputs.next();
        // Inputs were validated and the config chosen (or checked) before registration, on
        // the caller's thread, so it launches as it is: a failure here is a kernel-layer bug,
        // not bad input.
        let (out, lse) = B::flash_attention_fwd_chosen(q, k, v, bias, &self.problem, self.config)
            .unwrap_or_else(|e| panic!("flash attention failed: {e}"));
        handles.register_float_tensor::<B>(&self.desc.outputs[0].id, out);
        handles.register_float_tensor::<B>(&self.desc.outputs[1].id, lse);
    }
}

#[derive(Clone, Debug)]
struct FlashBwd<B> {
    desc: CustomOpIr,
    problem: AttentionProblem,
    want_dbias: bool,
    config: Option<AttentionBwdConfig>,
    _b: PhantomData<B>,
}

impl<B: FusionBackend + FlashAttentionBackend> Operation<B::FusionRuntime> for FlashBwd<B> {
    fn execute(
        &self,
        handles: &mut HandleContainer<<B::FusionRuntime as FusionRuntime>::FusionHandle>,
    ) {
        let mut t = self
            .desc
            .inputs
            .iter()
            .map(|t| handles.get_float_tensor::<B>(t))
            .collect::<Vec<_>>()
            .into_iter();
        let mut next = || {
            t.next()
                .unwrap_or_else(|| unreachable!("the backward registers its six inputs"))
        };
        let inputs = AttentionBwdInputs::<B> {
            q: next(),
            k: next(),
            v: next(),
            out: next(),
            lse: next(),
            dout: next(),
            bias: t.next(),
        };
        let g = B::flash_attention_bwd_chosen(inputs, &self.problem, self.want_dbias, self.config)
            .unwrap_or_else(|e| panic!("flash attention backward failed: {e}"));
        let outs = &self.desc.outputs;
        handles.register_float_tensor::<B>(&outs[0].id, g.dq);
        handles.register_float_tensor::<B>(&outs[1].id, g.dk);
        handles.register_float_tensor::<B>(&outs[2].id, g.dv);
        if let (Some(out), Some(dbias)) = (outs.get(3), g.dbias) {
            handles.register_float_tensor::<B>(&out.id, dbias);
        }
    }
}

impl<B: FusionBackend + FlashAttentionBackend> FlashAttentionBackend for Fusion<B> {
    fn flash_attention_fwd(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        problem: &AttentionProblem,
        config: Option<AttentionFwdConfig>,
    ) -> Result<(FloatTensor<Self>, FloatTensor<Self>), AttentionError> {
        let client = q.client.clone();
        let p = problem;
        // Choose (and, on a miss, autotune) or check an explicit config now, on this
        // thread: benchmarking syncs the device, which must not happen inside the fusion
        // stream that runs the op, and a refusal there could only panic.
        let config = B::flash_attention_fwd_config(problem, q.dtype, client.device(), config)?;
        let mut streams = OperationStreams::default();
        for t in [&q, &k, &v].into_iter().chain(bias.as_ref()) {
            streams.tensor(t);
        }
        let out = TensorIr::uninit(
            client.create_empty_handle(),
            Shape::new([p.batch, p.heads, p.seq_q, p.val_dim]),
            q.dtype,
        );
        let lse = TensorIr::uninit(
            client.create_empty_handle(),
            Shape::new([p.batch, p.heads, p.seq_q]),
            DType::F32,
        );
        let inputs: Vec<TensorIr> = [q, k, v]
            .into_iter()
            .chain(bias)
            .map(|t| t.into_ir())
            .collect();
        let desc = CustomOpIr::new("flint_attention_fwd", &inputs, &[out, lse]);
        let op = FlashFwd::<B> {
            desc: desc.clone(),
            problem: problem.clone(),
            config,
            _b: PhantomData,
        };
        let [out, lse] = client
            .register(streams, OperationIr::Custom(desc), op)
            .outputs();
        Ok((out, lse))
    }

    fn flash_attention_fwd_config(
        problem: &AttentionProblem,
        dtype: DType,
        device: &Self::Device,
        requested: Option<AttentionFwdConfig>,
    ) -> Result<Option<AttentionFwdConfig>, AttentionError> {
        B::flash_attention_fwd_config(problem, dtype, device, requested)
    }

    fn flash_attention_bwd(
        inputs: AttentionBwdInputs<Self>,
        problem: &AttentionProblem,
        want_dbias: bool,
        config: Option<AttentionBwdConfig>,
    ) -> Result<AttentionGrads<Self>, AttentionError> {
        let client = inputs.q.client.clone();
        let p = problem;
        let dtype = inputs.q.dtype;
        // As in the forward: tune or check the config here, outside the stream.
        let config =
            B::flash_attention_bwd_config(problem, dtype, want_dbias, client.device(), config)?;
        let bias_meta = inputs
            .bias
            .as_ref()
            .filter(|_| want_dbias)
            .map(|b| (b.shape.clone(), b.dtype));
        let AttentionBwdInputs {
            q,
            k,
            v,
            out,
            lse,
            dout,
            bias,
        } = inputs;
        let mut streams = OperationStreams::default();
        for t in [&q, &k, &v, &out, &lse, &dout]
            .into_iter()
            .chain(bias.as_ref())
        {
            streams.tensor(t);
        }
        let empty = |shape: [usize; 4], dtype| {
            TensorIr::uninit(client.create_empty_handle(), Shape::new(shape), dtype)
        };
        let mut outputs = vec![
            empty([p.batch, p.heads, p.seq_q, p.head_dim], dtype),
            empty([p.batch, p.kv_heads, p.seq_kv, p.head_dim], dtype),
            empty([p.batch, p.kv_heads, p.seq_kv, p.val_dim], dtype),
        ];
        if let Some((shape, dt)) = bias_meta {
            outputs.push(TensorIr::uninit(client.create_empty_handle(), shape, dt));
        }
        let inputs: Vec<TensorIr> = [q, k, v, out, lse, dout]
            .into_iter()
            .chain(bias)
            .map(|t| t.into_ir())
            .collect();
        let desc = CustomOpIr::new("flint_attention_bwd", &inputs, &outputs);
        let op = FlashBwd::<B> {
            desc: desc.clone(),
            problem: problem.clone(),
            want_dbias,
            config,
            _b: PhantomData,
        };
        let mut grads = client
            .register(streams, OperationIr::Custom(desc), op)
            .into_iter();
        let mut next = || {
            grads
                .next()
                .unwrap_or_else(|| unreachable!("the backward registers three or four outputs"))
        };
        let (dq, dk, dv) = (next(), next(), next());
        Ok(AttentionGrads {
            dq,
            dk,
            dv,
            dbias: grads.next(),
        })
    }

    fn flash_attention_bwd_config(
        problem: &AttentionProblem,
        dtype: DType,
        want_dbias: bool,
        device: &Self::Device,
        requested: Option<AttentionBwdConfig>,
    ) -> Result<Option<AttentionBwdConfig>, AttentionError> {
        B::flash_attention_bwd_config(problem, dtype, want_dbias, device, requested)
    }

    fn flash_attention_fwd_prepare(
        problem: &AttentionProblem,
        dtype: DType,
        device: &Self::Device,
    ) -> bool {
        B::flash_attention_fwd_prepare(problem, dtype, device)
    }

    fn flash_attention_bwd_prepare(
        problem: &AttentionProblem,
        dtype: DType,
        want_dbias: bool,
        device: &Self::Device,
    ) -> bool {
        B::flash_attention_bwd_prepare(problem, dtype, want_dbias, device)
    }
}
