//! What an attention call asks for, independent of any tensor library.

use flint_tune::Signature;

/// Head dims the kernels are compiled for (`D` and `Dv`).
pub const SUPPORTED_HEAD_DIMS: [usize; 5] = [32, 64, 96, 128, 256];

/// One attention call, already validated by the caller: `q: [B, H, Sq, D]`,
/// `k: [B, Hkv, Sk, D]`, `v: [B, Hkv, Sk, Dv]`, output `[B, H, Sq, Dv]` and LSE `[B, H, Sq]`.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionProblem {
    /// `B`.
    pub batch: usize,
    /// `H`.
    pub heads: usize,
    /// `Hkv` (divides `H`).
    pub kv_heads: usize,
    /// `Sq`.
    pub seq_q: usize,
    /// `Sk`.
    pub seq_kv: usize,
    /// `D`.
    pub head_dim: usize,
    /// `Dv`.
    pub val_dim: usize,
    /// Element type name (`f32`, `f16`, `bf16`).
    pub dtype: &'static str,
    /// Softmax scale applied to `q·k`.
    pub scale: f64,
    /// `softcap · tanh(s / softcap)` on the scores, if set.
    pub softcap: Option<f64>,
    /// Keys visible to query `i`: `j ≥ i + Sk − Sq − left` and `j ≤ i + Sk − Sq + right`
    /// (`None` = unbounded). Causal is `right = 0`, aligned bottom-right like Burn's.
    pub window: (Option<usize>, Option<usize>),
    /// Whether an additive score bias (which also carries a bool mask as `-inf`) is given.
    pub has_bias: bool,
    /// Dropout probability and seed.
    pub dropout: Option<(f64, u64)>,
}

// `NaN` never reaches a validated problem, so `==` is an equivalence (a `WarmKey` needs it).
impl Eq for AttentionProblem {}

// By value, with the floats by their bits, so that equal problems hash alike (`NaN` never
// reaches a validated problem).
impl std::hash::Hash for AttentionProblem {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (
            [self.batch, self.heads, self.kv_heads, self.seq_q],
            [self.seq_kv, self.head_dim, self.val_dim],
            self.dtype,
            self.scale.to_bits(),
            self.softcap.map(f64::to_bits),
            self.window,
            self.has_bias,
            self.dropout.map(|(p, seed)| (p.to_bits(), seed)),
        )
            .hash(state);
    }
}

impl AttentionProblem {
    /// The selector signature. Sequence lengths are bucketed by the op's key.
    pub fn signature(&self) -> Signature {
        Signature::new()
            .with("batch", self.batch)
            .with("heads", self.heads)
            .with("kv_heads", self.kv_heads)
            .with("seq_q", self.seq_q)
            .with("seq_kv", self.seq_kv)
            .with("head_dim", self.head_dim)
            .with("val_dim", self.val_dim)
            .with("dtype", self.dtype)
            .with("masked", self.window != (None, None))
            .with("bias", self.has_bias)
            .with("softcap", self.softcap.is_some())
            .with("dropout", self.dropout.is_some())
    }

    /// The FlashAttention FLOP count of the forward: `4·B·H·Sq·Sk·D` (D and Dv averaged),
    /// halved for causal.
    pub fn flops(&self) -> f64 {
        let d = (self.head_dim + self.val_dim) as f64 / 2.0;
        let full =
            4.0 * (self.batch * self.heads) as f64 * self.seq_q as f64 * self.seq_kv as f64 * d;
        if self.window.1 == Some(0) && self.window.0.is_none() {
            full / 2.0
        } else {
            full
        }
    }
}
