//! `AttentionOptions`: everything about an attention call except its tensors.

use flint_kernels::attention::AttentionFwdConfig;

/// Options of [`crate::flash_attention_with`], built by value:
///
/// ```
/// use flint::AttentionOptions;
/// let options = AttentionOptions::new().causal().softcap(30.0).window(Some(128), Some(0));
/// assert!(options.is_causal());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttentionOptions {
    pub(crate) causal: bool,
    pub(crate) scale: Option<f64>,
    pub(crate) softcap: Option<f64>,
    pub(crate) window: (Option<usize>, Option<usize>),
    pub(crate) dropout: Option<(f64, u64)>,
    pub(crate) config: Option<AttentionFwdConfig>,
}

impl AttentionOptions {
    /// No mask, scale `1/sqrt(D)`, no softcap, no dropout, config from the selector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Masks keys after each query, aligned bottom-right like `burn::tensor::module::attention`
    /// (query `i` sees keys `j <= i + Sk - Sq`).
    pub fn causal(mut self) -> Self {
        self.causal = true;
        self
    }

    /// Sets causal masking on or off.
    pub fn with_causal(mut self, causal: bool) -> Self {
        self.causal = causal;
        self
    }

    /// Whether causal masking is on.
    pub fn is_causal(&self) -> bool {
        self.causal
    }

    /// Scales `q·k` by `scale` instead of `1/sqrt(D)`.
    pub fn scale(mut self, scale: f64) -> Self {
        self.scale = Some(scale);
        self
    }

    /// Caps scores smoothly: `softcap · tanh(s / softcap)` (must be > 0).
    pub fn softcap(mut self, softcap: f64) -> Self {
        self.softcap = Some(softcap);
        self
    }

    /// A sliding window: query `i` sees keys from `i + Sk - Sq - left` to
    /// `i + Sk - Sq + right` (`None` = unbounded on that side).
    pub fn window(mut self, left: Option<usize>, right: Option<usize>) -> Self {
        self.window = (left, right);
        self
    }

    /// Dropout on the attention probabilities with probability `p` in `[0, 1)`, drawn from
    /// `seed` so that the same seed gives the same mask (forward and backward).
    pub fn dropout(mut self, p: f64, seed: u64) -> Self {
        self.dropout = Some((p, seed));
        self
    }

    /// Runs this kernel config instead of asking the selector (it is still checked).
    pub fn config(mut self, config: AttentionFwdConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// The window after folding in `causal` (which bounds the right side at 0).
    pub(crate) fn effective_window(&self) -> (Option<usize>, Option<usize>) {
        let (left, right) = self.window;
        // Causal hides every key after the diagonal, whatever the window allows.
        let right = if self.causal { Some(0) } else { right };
        (left, right)
    }
}
