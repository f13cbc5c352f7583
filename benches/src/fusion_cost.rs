//! What Burn's fusion stream costs one custom op, apart from the op's own work.
//!
//! flint's forward reaches `Fusion<B>` (Burn's default `Cuda` and `Wgpu`) as one opaque
//! custom op. `attention_bench --overhead` times an op registered the same way that does no
//! work of its own (its output is its first input), and one that only allocates its output,
//! so that a flint call's pace through fusion can be set against the stream's own cost.

use std::marker::PhantomData;

use burn::tensor::{Tensor, TensorPrimitive};
use burn_fusion::stream::{Operation, OperationStreams};
use burn_fusion::{Fusion, FusionBackend, FusionRuntime};
use burn_ir::{CustomOpIr, HandleContainer, OperationIr, OperationOutput, TensorIr};

/// An op of three inputs whose output is its first input, or a new empty tensor of its shape.
#[derive(Clone, Debug)]
struct Passthrough<B> {
    desc: CustomOpIr,
    allocate: bool,
    _b: PhantomData<B>,
}

impl<B: FusionBackend> Operation<B::FusionRuntime> for Passthrough<B> {
    fn execute(
        &self,
        handles: &mut HandleContainer<<B::FusionRuntime as FusionRuntime>::FusionHandle>,
    ) {
        let q = handles.get_float_tensor::<B>(&self.desc.inputs[0]);
        let out = if self.allocate {
            let input = &self.desc.inputs[0];
            B::float_empty(
                input.shape.clone(),
                &B::float_device(&q),
                input.dtype.into(),
            )
        } else {
            q
        };
        handles.register_float_tensor::<B>(&self.desc.outputs[0].id, out);
    }
}

/// Registers an op that does no work of its own on `q`, `k` and `v` through the fusion
/// stream, as flint's forward registers itself, and returns its output (shaped as `q`): `q`
/// itself, or a new empty tensor of its shape where `allocate` is set.
pub fn custom_op<B: FusionBackend>(
    q: Tensor<Fusion<B>, 4>,
    k: Tensor<Fusion<B>, 4>,
    v: Tensor<Fusion<B>, 4>,
    allocate: bool,
) -> Tensor<Fusion<B>, 4> {
    let [q, k, v] = [q, k, v].map(|t| t.into_primitive().tensor());
    let client = q.client.clone();
    let mut streams = OperationStreams::default();
    for t in [&q, &k, &v] {
        streams.tensor(t);
    }
    let out = TensorIr::uninit(client.create_empty_handle(), q.shape.clone(), q.dtype);
    let inputs = [q, k, v].map(|t| t.into_ir());
    let desc = CustomOpIr::new("bench_passthrough", &inputs, &[out]);
    let op = Passthrough::<B> {
        desc: desc.clone(),
        allocate,
        _b: PhantomData,
    };
    let out = client
        .register(streams, OperationIr::Custom(desc), op)
        .output();
    Tensor::from_primitive(TensorPrimitive::Float(out))
}
