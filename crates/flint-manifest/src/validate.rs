//! The validator: checks a loaded manifest against the ops registered in code.
//!
//! - L0: schema and key format (the loader checks the schema; this checks names).
//! - L1: code ops and entries match one to one; params and dtypes agree.
//! - L2: shape rules hold on every workload; output shapes agree with the op's.
//! - L3: dtype names are valid and agree with the op's dtype check, which rejects one.
//! - L4: rooflines evaluate to positive numbers; every `source` path exists.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use flint_tune::OpSpec;

use crate::expr::{Env, Val};
use crate::load::{LoadedEntry, Manifest};
use crate::schema::WorkloadValue;

/// Every dtype name the manifest may use.
pub const KNOWN_DTYPES: [&str; 9] = [
    "f64", "f32", "f16", "bf16", "flex32", "i64", "i32", "u32", "bool",
];

/// A validator level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Schema and key format.
    L0,
    /// Code and manifest agree on which ops exist and their params and dtypes.
    L1,
    /// Shape rules and output shapes on the workloads.
    L2,
    /// Dtype lists.
    L3,
    /// Rooflines and source paths.
    L4,
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The op id.
    pub op: String,
    /// The level.
    pub level: Level,
    /// What is wrong.
    pub rule: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op `{}`: {:?}: {}", self.op, self.level, self.rule)
    }
}

/// Checks `manifest` against `specs`, resolving `source` paths under `root`. Returns every
/// finding; an empty list means the manifest and the code agree.
pub fn validate(manifest: &Manifest, specs: &[OpSpec], root: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |op: &str, level, rule: String| {
        out.push(Finding {
            op: op.to_string(),
            level,
            rule,
        })
    };
    let spec_by_id: BTreeMap<&str, &OpSpec> = specs.iter().map(|s| (s.id, s)).collect();
    for spec in specs {
        if specs.iter().filter(|s| s.id == spec.id).count() > 1 {
            push(
                spec.id,
                Level::L1,
                "registered more than once in code".into(),
            );
        }
        if !manifest.entries.contains_key(spec.id) {
            push(
                spec.id,
                Level::L1,
                "registered in code but has no manifest entry".into(),
            );
        }
    }
    for (id, entry) in &manifest.entries {
        let mut add = |level, rule: String| push(id, level, rule);
        check_names(entry, &mut add);
        let Some(spec) = spec_by_id.get(id.as_str()) else {
            add(
                Level::L1,
                "has a manifest entry but no op registered in code".into(),
            );
            continue;
        };
        check_params(entry, spec, &mut add);
        check_workloads(entry, spec, &mut add);
        check_dtypes(entry, spec, &mut add);
        check_sources(entry, root, &mut add);
    }
    out
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_names(e: &LoadedEntry, add: &mut impl FnMut(Level, String)) {
    let id_ok = e.id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && e.id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !id_ok {
        add(
            Level::L0,
            format!("op id `{}` must match [a-z][a-z0-9_]*", e.id),
        );
    }
    let sig = &e.entry.signature;
    for name in sig
        .inputs
        .keys()
        .chain(sig.outputs.keys())
        .chain(sig.params.keys())
    {
        if !is_ident(name) {
            add(Level::L0, format!("name `{name}` is not an identifier"));
        }
    }
    if e.entry.workloads.is_empty() {
        add(Level::L0, "has no workloads".into());
    }
    let mut labels = BTreeSet::new();
    for w in &e.entry.workloads {
        if !labels.insert(&w.label) {
            add(
                Level::L0,
                format!("workload label `{}` is used twice", w.label),
            );
        }
    }
}

fn check_params(e: &LoadedEntry, spec: &OpSpec, add: &mut impl FnMut(Level, String)) {
    let code: BTreeMap<&str, &str> = spec.params.iter().copied().collect();
    let manifest: BTreeMap<&str, &str> = e
        .entry
        .signature
        .params
        .iter()
        .map(|(k, p)| (k.as_str(), p.ty()))
        .collect();
    for (name, ty) in &code {
        match manifest.get(name) {
            None => add(
                Level::L1,
                format!("param `{name}` is accepted by the op but missing from the manifest"),
            ),
            Some(m) if m != ty => add(
                Level::L1,
                format!("param `{name}` has type `{m}` in the manifest but `{ty}` in code"),
            ),
            Some(_) => {}
        }
    }
    for name in manifest.keys().filter(|n| !code.contains_key(*n)) {
        add(
            Level::L1,
            format!("param `{name}` is in the manifest but the op does not accept it"),
        );
    }
}

/// The names and values a workload's expressions see: param defaults, then the workload.
pub fn env_of(e: &LoadedEntry, values: &BTreeMap<String, WorkloadValue>) -> Env {
    let mut env = Env::new();
    for (name, p) in &e.entry.signature.params {
        let default = match p.default() {
            Some(serde_yaml::Value::Bool(b)) => Some(Val::Bool(*b)),
            Some(serde_yaml::Value::Number(n)) => n
                .as_i64()
                .map(Val::Int)
                .or_else(|| n.as_f64().map(Val::Float)),
            // An optional param with no default reads as absent; a bool as false.
            _ if p.ty() == "bool" => Some(Val::Bool(false)),
            _ => None,
        };
        if let Some(v) = default {
            env.insert(name.clone(), v);
        }
    }
    for (k, v) in values {
        let v = match v {
            WorkloadValue::Int(i) => Val::Int(*i),
            WorkloadValue::Bool(b) => Val::Bool(*b),
        };
        env.insert(k.clone(), v);
    }
    env
}

fn check_workloads(e: &LoadedEntry, spec: &OpSpec, add: &mut impl FnMut(Level, String)) {
    for w in &e.entry.workloads {
        let env = env_of(e, &w.values);
        for rule in &e.shape_rules {
            match rule.eval(&env).and_then(Val::as_bool) {
                Ok(true) => {}
                Ok(false) => add(
                    Level::L2,
                    format!("shape rule `{rule}` fails on workload `{}`", w.label),
                ),
                Err(why) => add(
                    Level::L2,
                    format!("shape rule `{rule}` on workload `{}`: {why}", w.label),
                ),
            }
        }
        let dims: BTreeMap<String, i64> = w
            .values
            .iter()
            .filter_map(|(k, v)| match v {
                WorkloadValue::Int(i) => Some((k.clone(), *i)),
                WorkloadValue::Bool(_) => None,
            })
            .collect();
        let code = match (spec.output_shapes)(&dims) {
            Ok(shapes) => shapes,
            Err(why) => {
                add(
                    Level::L2,
                    format!(
                        "the op's output shapes fail on workload `{}`: {why}",
                        w.label
                    ),
                );
                continue;
            }
        };
        for (name, exprs) in &e.outputs {
            let manifest: Result<Vec<i64>, String> = exprs
                .iter()
                .map(|x| match x.eval(&env)? {
                    Val::Int(i) => Ok(i),
                    other => Err(format!("dimension `{x}` is {other}, not an integer")),
                })
                .collect();
            match (manifest, code.get(name)) {
                (Err(why), _) => add(
                    Level::L2,
                    format!("output `{name}` on workload `{}`: {why}", w.label),
                ),
                (Ok(_), None) => add(
                    Level::L2,
                    format!("output `{name}` is not produced by the op"),
                ),
                (Ok(m), Some(c)) if m != *c => add(
                    Level::L2,
                    format!(
                        "output `{name}` on workload `{}`: manifest says {m:?}, the op says {c:?}",
                        w.label
                    ),
                ),
                _ => {}
            }
        }
        for name in code.keys().filter(|n| !e.outputs.contains_key(*n)) {
            add(
                Level::L2,
                format!("the op produces `{name}`, which the manifest does not list"),
            );
        }
        for (what, expr) in [("flops", &e.flops), ("bytes", &e.bytes)] {
            match expr.eval(&env).and_then(Val::as_f64) {
                Ok(v) if v.is_finite() && v > 0.0 => {}
                Ok(v) => add(
                    Level::L4,
                    format!("roofline {what} `{expr}` is {v} on workload `{}`", w.label),
                ),
                Err(why) => add(
                    Level::L4,
                    format!("roofline {what} `{expr}` on workload `{}`: {why}", w.label),
                ),
            }
        }
    }
}

fn check_dtypes(e: &LoadedEntry, spec: &OpSpec, add: &mut impl FnMut(Level, String)) {
    let listed = &e.entry.signature.dtypes;
    if listed.is_empty() {
        add(Level::L3, "lists no dtypes".into());
    }
    for d in listed {
        if !KNOWN_DTYPES.contains(&d.as_str()) {
            add(
                Level::L3,
                format!("dtype `{d}` is not one of {KNOWN_DTYPES:?}"),
            );
        } else if !(spec.accepts_dtype)(d) {
            add(
                Level::L3,
                format!("dtype `{d}` is listed but the op rejects it"),
            );
        }
    }
    for d in KNOWN_DTYPES {
        if (spec.accepts_dtype)(d) && !listed.iter().any(|l| l == d) {
            add(
                Level::L3,
                format!("the op accepts dtype `{d}` but the manifest does not list it"),
            );
        }
    }
    if KNOWN_DTYPES.iter().all(|d| (spec.accepts_dtype)(d)) {
        add(Level::L3, "the op's dtype check rejects nothing".into());
    }
}

fn check_sources(e: &LoadedEntry, root: &Path, add: &mut impl FnMut(Level, String)) {
    let s = &e.entry.source;
    let listed = [
        ("kernel", Some(&s.kernel)),
        ("test", Some(&s.test)),
        ("bench", s.bench.as_ref()),
    ];
    let variants = s.variants.iter().map(|v| ("variant", Some(v)));
    for (what, path) in listed.into_iter().chain(variants) {
        if let Some(path) = path
            && !root.join(path).exists()
        {
            add(Level::L4, format!("source {what} `{path}` does not exist"));
        }
    }
}
