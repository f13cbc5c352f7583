//! The serde schema of a manifest entry. Unknown keys are errors.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One op's contract.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The op family (`attention`, ...).
    pub family: String,
    /// The reference API whose semantics the op matches.
    #[serde(default)]
    pub ref_api: Option<String>,
    /// Inputs, outputs, params, dtypes and shape rules.
    pub signature: Signature,
    /// Real shapes the op is checked and benchmarked on.
    pub workloads: Vec<Workload>,
    /// FLOP and byte counts, as expressions over workload dimensions and params.
    pub roofline: Roofline,
    /// The tuning space: each tunable and its values.
    #[serde(default)]
    pub tuning: BTreeMap<String, Vec<serde_yaml::Value>>,
    /// Where the kernel, its test and its bench live (repository paths).
    pub source: Source,
}

/// The op's signature.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    /// Input names and symbolic shapes, e.g. `q: "[B, H, Sq, D]"`.
    pub inputs: BTreeMap<String, String>,
    /// Output names and symbolic shapes.
    pub outputs: BTreeMap<String, String>,
    /// Parameter names and types.
    #[serde(default)]
    pub params: BTreeMap<String, Param>,
    /// Accepted dtypes.
    pub dtypes: Vec<String>,
    /// Boolean expressions every valid call satisfies.
    #[serde(default)]
    pub shape_rules: Vec<String>,
}

/// A parameter: a type (`bool`, `f64?`, ...) or a type with a default and a description.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Param {
    /// Just the type.
    Type(String),
    /// The type, a default and a description.
    Full(ParamSpec),
}

/// The long form of a parameter.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// The type.
    #[serde(rename = "type")]
    pub ty: String,
    /// The default value.
    #[serde(default)]
    pub default: Option<serde_yaml::Value>,
    /// What it does.
    #[serde(default)]
    pub doc: Option<String>,
}

impl Param {
    /// The declared type.
    pub fn ty(&self) -> &str {
        match self {
            Param::Type(t) => t,
            Param::Full(p) => &p.ty,
        }
    }

    /// The declared default, if any.
    pub fn default(&self) -> Option<&serde_yaml::Value> {
        match self {
            Param::Type(_) => None,
            Param::Full(p) => p.default.as_ref(),
        }
    }
}

/// A named shape: `label` plus dimension and param values.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "BTreeMap<String, serde_yaml::Value>")]
pub struct Workload {
    /// Its name (`llama3-8b-4k`).
    pub label: String,
    /// Dimension values (`B: 1`) and boolean params (`causal: true`).
    pub values: BTreeMap<String, WorkloadValue>,
}

/// A workload value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WorkloadValue {
    /// A dimension.
    Int(i64),
    /// A boolean param.
    Bool(bool),
}

impl TryFrom<BTreeMap<String, serde_yaml::Value>> for Workload {
    type Error = String;
    fn try_from(mut map: BTreeMap<String, serde_yaml::Value>) -> Result<Self, String> {
        let label = match map.remove("label") {
            Some(serde_yaml::Value::String(s)) => s,
            Some(other) => return Err(format!("workload `label` must be a string, got {other:?}")),
            None => return Err("workload has no `label`".into()),
        };
        let mut values = BTreeMap::new();
        for (k, v) in map {
            let value = match v {
                serde_yaml::Value::Bool(b) => WorkloadValue::Bool(b),
                serde_yaml::Value::Number(n) if n.as_i64().is_some() => {
                    WorkloadValue::Int(n.as_i64().unwrap_or_default())
                }
                other => {
                    return Err(format!(
                        "workload `{label}`: `{k}` must be an integer or a boolean, got {other:?}"
                    ));
                }
            };
            values.insert(k, value);
        }
        Ok(Self { label, values })
    }
}

/// Roofline formulas.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roofline {
    /// Floating-point operations.
    pub flops: String,
    /// Minimal bytes moved to and from device memory.
    pub bytes: String,
}

/// Repository paths of the op's pieces.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The kernel.
    pub kernel: String,
    /// Its test.
    pub test: String,
    /// Its benchmark.
    #[serde(default)]
    pub bench: Option<String>,
    /// Further kernel sources, one per variant beyond `kernel`.
    #[serde(default)]
    pub variants: Vec<String>,
}
