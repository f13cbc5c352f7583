//! `Autodiff<B, C>`: the forward runs the inner backend's fused kernel and records one node
//! whose backward runs the inner backend's fused backward. Nothing `Sq × Sk` is stored.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use burn::backend::Autodiff;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::tensor::TensorMetadata;
use burn::tensor::backend::{AutodiffBackend, DeviceOps};
use burn::tensor::ops::FloatTensor;
use flint_kernels::attention::{AttentionBwdConfig, AttentionFwdConfig, AttentionProblem};

use super::backend::{AttentionBwdInputs, AttentionGrads, FlashAttentionBackend};
use crate::AttentionError;

/// What the backward needs, held by the node: inputs, output and LSE of the forward.
#[derive(Clone, Debug)]
struct FlashState<B: FlashAttentionBackend> {
    q: FloatTensor<B>,
    k: FloatTensor<B>,
    v: FloatTensor<B>,
    bias: Option<FloatTensor<B>>,
    out: FloatTensor<B>,
    lse: FloatTensor<B>,
    problem: AttentionProblem,
}

/// The node; `N` is 3 (q, k, v) or 4 (with the bias).
#[derive(Debug)]
struct FlashBackward;

impl<B: FlashAttentionBackend, const N: usize> Backward<B, N> for FlashBackward {
    type State = FlashState<B>;

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, _: &mut Checkpointer) {
        let dout = grads.consume::<B>(&ops.node);
        let s = ops.state;
        let want_dbias = N == 4 && ops.parents[3].is_some();
        let inputs = AttentionBwdInputs {
            q: s.q,
            k: s.k,
            v: s.v,
            out: s.out,
            lse: s.lse,
            dout,
            bias: s.bias,
        };
        // The forward validated these inputs and ran, so the backward of the same problem
        // has a config; a failure here is a strict overlay that forces a config the op
        // refuses (the error says which) or a kernel-layer bug, not bad input.
        let g = B::flash_attention_bwd(inputs, &s.problem, want_dbias, None)
            .unwrap_or_else(|e| panic!("flash attention backward failed: {e}"));
        let all = [Some(g.dq), Some(g.dk), Some(g.dv), g.dbias];
        for (parent, grad) in ops.parents.iter().zip(all) {
            if let (Some(node), Some(grad)) = (parent, grad) {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

impl<B: FlashAttentionBackend, C: CheckpointStrategy> FlashAttentionBackend for Autodiff<B, C> {
    fn flash_attention_fwd(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        problem: &AttentionProblem,
        config: Option<AttentionFwdConfig>,
    ) -> Result<(FloatTensor<Self>, FloatTensor<Self>), AttentionError> {
        // A tracked call will run the backward soon: on its first use its candidates
        // compile in the background while the forward tunes and runs. The forward's own
        // candidates are queued first: the runtime compiles a bounded number at a time, and
        // the forward's tuning waits for its own.
        let want_dbias = bias.as_ref().is_some_and(|b| !b.node.requirement.is_none());
        let tracked = want_dbias
            || !q.node.requirement.is_none()
            || !k.node.requirement.is_none()
            || !v.node.requirement.is_none();
        if tracked {
            let (device, dtype) = (B::float_device(&q.primitive), q.primitive.dtype());
            if first_tracked_call::<B>(problem, dtype, want_dbias, &device) {
                B::flash_attention_fwd_prepare(problem, dtype, &device);
                B::flash_attention_bwd_prepare(problem, dtype, want_dbias, &device);
            }
        }
        let (out, lse) = B::flash_attention_fwd(
            q.primitive.clone(),
            k.primitive.clone(),
            v.primitive.clone(),
            bias.as_ref().map(|b| b.primitive.clone()),
            problem,
            config,
        )?;
        let state = FlashState::<B> {
            q: q.primitive.clone(),
            k: k.primitive.clone(),
            v: v.primitive.clone(),
            bias: bias.as_ref().map(|b| b.primitive.clone()),
            out: out.clone(),
            lse: lse.clone(),
            problem: problem.clone(),
        };
        let out = match &bias {
            Some(b) => record(
                FlashBackward.prepare::<C>([q.node, k.node, v.node, b.node.clone()]),
                state,
                out,
            ),
            None => record(
                FlashBackward.prepare::<C>([q.node, k.node, v.node]),
                state,
                out,
            ),
        };
        // The LSE is an auxiliary output: no gradient flows through it.
        Ok((out, Self::from_inner(lse)))
    }

    fn flash_attention_fwd_config(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
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
        // Gradients of gradients are not tracked: the backward runs on the inner tensors.
        let inner = AttentionBwdInputs::<B> {
            q: inputs.q.primitive,
            k: inputs.k.primitive,
            v: inputs.v.primitive,
            out: inputs.out.primitive,
            lse: inputs.lse.primitive,
            dout: inputs.dout.primitive,
            bias: inputs.bias.map(|b| b.primitive),
        };
        let g = B::flash_attention_bwd(inner, problem, want_dbias, config)?;
        Ok(AttentionGrads {
            dq: Self::from_inner(g.dq),
            dk: Self::from_inner(g.dk),
            dv: Self::from_inner(g.dv),
            dbias: g.dbias.map(Self::from_inner),
        })
    }

    fn flash_attention_bwd_config(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        want_dbias: bool,
        device: &Self::Device,
        requested: Option<AttentionBwdConfig>,
    ) -> Result<Option<AttentionBwdConfig>, AttentionError> {
        B::flash_attention_bwd_config(problem, dtype, want_dbias, device, requested)
    }

    fn flash_attention_fwd_prepare(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        device: &Self::Device,
    ) -> bool {
        B::flash_attention_fwd_prepare(problem, dtype, device)
    }

    fn flash_attention_bwd_prepare(
        problem: &AttentionProblem,
        dtype: burn::tensor::DType,
        want_dbias: bool,
        device: &Self::Device,
    ) -> bool {
        B::flash_attention_bwd_prepare(problem, dtype, want_dbias, device)
    }
}

/// Whether this is the process's first tracked forward of `problem` with this dtype, bias
/// gradient and device: only then can the backward have something to prepare that an earlier
/// call did not already start. A set of hashes keeps a warm call to a lock and a lookup
/// (the selector's key would cost as much as the forward's own); a collision only skips an
/// optimisation.
fn first_tracked_call<B: FlashAttentionBackend>(
    problem: &AttentionProblem,
    dtype: burn::tensor::DType,
    want_dbias: bool,
    device: &B::Device,
) -> bool {
    use std::hash::{Hash, Hasher};
    static SEEN: LazyLock<Mutex<HashSet<u64>>> = LazyLock::new(Default::default);
    /// Bounded against endless new shapes; forgetting only means preparing again.
    const CAPACITY: usize = 4096;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (
        std::any::TypeId::of::<B>(),
        device.id(),
        problem,
        dtype,
        want_dbias,
    )
        .hash(&mut hasher);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen.len() >= CAPACITY {
        seen.clear();
    }
    seen.insert(hasher.finish())
}

/// Finishes the node: tracked when any input needs a gradient.
fn record<B: FlashAttentionBackend, C: CheckpointStrategy, const N: usize>(
    prep: burn::backend::autodiff::ops::OpsPrep<
        FlashBackward,
        B,
        FlashState<B>,
        C,
        N,
        burn::backend::autodiff::ops::Init,
    >,
    state: FlashState<B>,
    out: FloatTensor<B>,
) -> FloatTensor<Autodiff<B, C>> {
    match prep.compute_bound().stateful() {
        OpsKind::Tracked(prep) => prep.finish(state, out),
        OpsKind::UnTracked(prep) => prep.finish(out),
    }
}

#[cfg(test)]
mod tests {
    use burn::backend::NdArray;
    use burn::tensor::DType;

    use super::*;

    #[test]
    fn the_backward_is_prepared_on_the_first_tracked_call_of_each_problem_only() {
        let problem = AttentionProblem {
            batch: 3,
            heads: 5,
            kv_heads: 5,
            // A shape no other test uses: the set is process-wide.
            seq_q: 977,
            seq_kv: 983,
            head_dim: 64,
            val_dim: 64,
            dtype: "f32",
            scale: 0.125,
            softcap: None,
            window: (None, None),
            has_bias: false,
            dropout: None,
        };
        let device = Default::default();
        let first = |p: &AttentionProblem, dtype, dbias| {
            first_tracked_call::<NdArray>(p, dtype, dbias, &device)
        };
        assert!(first(&problem, DType::F32, false));
        assert!(!first(&problem, DType::F32, false), "a repeated call");
        assert!(first(&problem, DType::F32, true), "with the bias gradient");
        assert!(first(&problem, DType::F16, false), "another dtype");
        let causal = AttentionProblem {
            window: (None, Some(0)),
            ..problem.clone()
        };
        assert!(first(&causal, DType::F32, false), "another mask");
        let scaled = AttentionProblem {
            scale: 0.25,
            ..problem
        };
        assert!(first(&scaled, DType::F32, false), "another scale");
        assert!(!first(&scaled, DType::F32, false));
    }
}
