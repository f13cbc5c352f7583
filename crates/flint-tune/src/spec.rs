//! Op specs: what the code says an op accepts, for checking against the manifest.

use std::collections::BTreeMap;

/// Named output shapes (`out -> [B, H, Sq, Dv]`) for named dimensions (`B -> 1`, ...).
pub type OutputShapesFn = fn(&BTreeMap<String, i64>) -> Result<BTreeMap<String, Vec<i64>>, String>;

/// The contract of a registered op as the code states it: its params, which dtypes it
/// accepts and how it shapes its outputs. The manifest validator compares these with
/// `manifest/*.yaml`, so code and manifest cannot drift apart.
#[derive(Clone, Debug)]
pub struct OpSpec {
    /// The op id.
    pub id: &'static str,
    /// Parameter names and types (`bool`, `f64`, `f64?`, `u64`, `(u64?, u64?)`, ...).
    pub params: &'static [(&'static str, &'static str)],
    /// Whether the op accepts a dtype name (`f32`, `f16`, `bf16`, ...).
    pub accepts_dtype: fn(&str) -> bool,
    /// The shapes of the outputs, by name, for the given symbolic dimensions.
    pub output_shapes: OutputShapesFn,
}
